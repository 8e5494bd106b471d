package orchestrator_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// TestPlainSentencesRunWithoutAModel: steps written the way people write
// them (not in the grammar) are taken by the lexical tier with no model
// configured at all, and the spec checks what the job checked.
func TestPlainSentencesRunWithoutAModel(t *testing.T) {
	t.Parallel()
	app := httptest.NewServer(demoapp.Handler(demoapp.Options{}))
	t.Cleanup(app.Close)
	sc := scenario.Scenario{Name: "plain sentences", BaseURL: app.URL + "/login",
		Data: map[string]string{"EMAIL": demoapp.Email}, Secrets: map[string]string{"PASSWORD": demoapp.Password},
		Steps: []scenario.Step{
			{Text: "Type {{EMAIL}} into the email field"},
			{Text: "Enter {{PASSWORD}} in the password field"},
			{Text: "Press the Sign in button"},
			{Text: `Check that "Welcome back" appears`},
			{Text: "Open the Shopping list"},
			{Text: `Add the items "Oat milk", "Eggs" and "Tea"`},
			{Text: "Verify the list has 4 items"},
			{Text: `Delete "Bread"`},
			{Text: `Verify the items are "Oat milk", "Eggs" and "Tea" in that order`},
			{Text: `The item count should read "3 items"`},
		}}
	a := &orchestrator.Agent{Page: browsertest.Session(t), Recorder: &memRecorder{hold: 1}}
	res, err := a.Run(context.Background(), orchestrator.Input{Scenario: sc, Secrets: sc.Secrets})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != orchestrator.StatusSucceeded {
		for _, s := range res.Steps {
			t.Logf("step %d %s %s: %s", s.Index+1, s.Tier, s.Status, s.Error)
		}
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	if res.Tiers[orchestrator.TierLexical] != len(sc.Steps) || res.Usage.PromptTokens != 0 {
		t.Fatalf("tiers %v, %d tokens: want every step lexical at 0 tokens", res.Tiers, res.Usage.PromptTokens)
	}
	for _, want := range []string{"toHaveCount(4)", ".nth(2)).toContainText('Tea')", "process.env.PASSWORD", "press('Enter')"} {
		if !strings.Contains(res.Script, want) {
			t.Errorf("the spec lacks %q:\n%s", want, res.Script)
		}
	}
	if strings.Contains(res.Script, demoapp.Password) {
		t.Fatal("the spec holds the password")
	}
	mustPassSpec(t, res, map[string]string{"PASSWORD": demoapp.Password})
}
