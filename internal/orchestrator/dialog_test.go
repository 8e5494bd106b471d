package orchestrator_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/lexical"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// dialogPage has a Delete button that asks to confirm, a Greet button that
// prompts for a name, and a Save button that opens the page's own modal
// (no native dialog).
const dialogPage = `<!doctype html><title>Items</title>
<button id="del">Delete</button> <button id="greet">Greet</button> <button id="save">Save</button>
<p id="out">Nothing yet</p>
<div role="dialog" aria-label="Saved" id="modal" hidden><p>Saved.</p><button id="ok">OK</button></div>
<script>
const out = document.getElementById('out');
document.getElementById('del').onclick = () => { out.textContent = confirm('Delete the item?') ? 'Deleted' : 'Kept'; };
document.getElementById('greet').onclick = () => { const n = prompt('Your name?'); out.textContent = n === null ? 'No name' : 'Hello, ' + n; };
document.getElementById('save').onclick = () => { document.getElementById('modal').hidden = false; };
document.getElementById('ok').onclick = () => { document.getElementById('modal').hidden = true; };
</script>`

func dialogApp(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, dialogPage)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestADialogClauseAnswersTheDialogItsActionOpens: "… and OK the popup
// message", "then dismiss it", "answer the prompt with Bob" answer the
// native dialog the clause before opens, at 0 tokens, and the spec answers
// it the same way. A clause whose action opens no native dialog (a modal
// of the page's own), or with no action before it, goes to the agent, and
// an answer no dialog used is taken back.
func TestADialogClauseAnswersTheDialogItsActionOpens(t *testing.T) {
	t.Parallel()
	base := dialogApp(t)
	sc := scenario.Scenario{Name: "dialogs", BaseURL: base + "/", Steps: []scenario.Step{
		{Text: "Click Delete and OK the popup message"},
		{Text: `Verify "Deleted" is visible`},
		{Text: "Click Delete, then dismiss it."},
		{Text: `Verify "Kept" is visible`},
		{Text: `Press the Greet button and answer the prompt with "Bob"`},
		{Text: `Verify "Hello, Bob" is visible`},
		{Text: "Click Greet and answer the prompt with Ann"},
		{Text: `Verify "Hello, Ann" is visible`},
		{Text: "Click the Delete button; accept the confirmation"},
		{Text: `Verify "Deleted" is visible`},
	}}
	res := runWithoutModel(t, sc, nil)
	mustSucceed(t, res)
	if res.Usage.PromptTokens != 0 {
		t.Fatalf("%d tokens, want 0", res.Usage.PromptTokens)
	}
	for _, i := range []int{0, 2, 4, 6, 8} {
		cmds := res.Steps[i].Commands
		if len(cmds) != 2 || cmds[0].Command.Action != browser.ActionDialog || cmds[1].Command.Action != browser.ActionClick ||
			len(cmds[1].Dialogs) != 1 {
			t.Errorf("step %d ran %+v, want the answer then the click that opened one dialog", i+1, cmds)
		}
	}
	mustPassSpec(t, res, nil)

	for _, c := range []struct{ name, step, says string }{
		{"a modal of the page's own", "Click Save and OK the popup", "opened no native dialog"},
		{"no action before it", "OK the popup message", "no action before it"},
		{"a check before it", `Verify "Nothing yet" is visible and dismiss it`, "opened no native dialog"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			page := browsertest.Session(t)
			res := runWithoutModel(t, scenario.Scenario{Name: c.name, BaseURL: base + "/", Steps: []scenario.Step{{Text: c.step}}}, page)
			first := res.Steps[0]
			if first.Status != orchestrator.StepFailed || !strings.Contains(first.Error, c.says) {
				t.Fatalf("the step %s: %s, want the agent's, saying %q", first.Status, first.Error, c.says)
			}
			// An answer no dialog used is taken back: the next confirm in
			// the session is dismissed, as Playwright's runner does.
			res = runWithoutModel(t, scenario.Scenario{Name: "after", BaseURL: base + "/", Steps: []scenario.Step{
				{Text: `Click "Delete"`}, {Text: `Verify "Kept" is visible`}}}, page)
			if res.Status != orchestrator.StatusSucceeded {
				t.Fatalf("after the step, a confirm was not answered as the runner answers it: %s", res.Error)
			}
		})
	}
}

// TestADialogClauseIsReadOnlyAsADialogsAnswer: what reads as a dialog's
// answer, and what does not.
func TestADialogClauseIsReadOnlyAsADialogsAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ clause, trail, want string }{
		{"OK the popup message", "", "accept"},
		{"ok the alert", "", "accept"},
		{"accept the confirmation", "", "accept"},
		{"confirm the dialog", "", "accept"},
		{"click OK on the popup", "", "accept"},
		{"dismiss it", "", "dismiss"},
		{"decline the confirmation", "", "dismiss"},
		{"cancel the confirm box", "", "dismiss"},
		{"close the alert", "", "dismiss"},
		{"answer the prompt with Bob", "", "accept:Bob"},
		{`answer the prompt with "Bob Smith"`, "!", "accept:Bob Smith"},
		{"enter 42 in the prompt and OK it", "", "accept:42"},
		{"answer the prompt with Bob", "!", ""}, // "Bob!" or "Bob"?
		{"answer the prompt with Bob and the email with x", "", ""},
		{"accept the terms", "", ""},
		{"close the menu", "", ""},
		{"dismiss the cookie banner", "", ""},
		{"click OK", "", ""},
	} {
		got, ok := lexical.DialogAnswer(c.clause, c.trail)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%q (trail %q) reads as %q %v, want %q", c.clause, c.trail, got, ok, c.want)
		}
	}
}
