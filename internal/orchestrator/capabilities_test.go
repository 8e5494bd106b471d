package orchestrator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// browserPages serves the browser package's testdata pages.
func browserPages(t *testing.T) string { return browsertest.Serve(t, "../browser/testdata") }

func check(assert string, target map[string]any, value string) map[string]any {
	c := map[string]any{"action": "verify", "assert": assert}
	if target != nil {
		c["target"] = target
	}
	if value != "" {
		c["value"] = value
	}
	return c
}

func complete(cmds ...any) func(req llmtest.Request) map[string]any {
	return func(req llmtest.Request) map[string]any {
		return map[string]any{"status": "complete", "commands": cmds}
	}
}

func role(r, name string) map[string]any { return map[string]any{"role": r, "name": name} }

// TestAgentCapabilitiesOnTestdataPages drives each capability through the
// agent with a scripted model, and runs every spec under @playwright/test.
func TestAgentCapabilitiesOnTestdataPages(t *testing.T) {
	t.Parallel()
	base := browserPages(t)
	status := map[string]any{"role": "status"}
	cases := []struct {
		name    string
		page    string
		files   []scenario.File
		replies []llmtest.Reply
		prompts []string // what a later prompt must say
		spec    []string // what the spec must contain
	}{
		{name: "dialogs", page: "dialogs.html",
			replies: []llmtest.Reply{
				respond(complete(cmd("dialog", nil, "accept"), cmd("click", role("button", "Delete"), ""))),
				respond(func(req llmtest.Request) map[string]any {
					return map[string]any{"status": "complete", "commands": []any{
						cmd("dialog", nil, "accept:Ada"), cmd("click", refTarget(ref(req, "button", "Greet")), ""),
						check("dialogContains", nil, "Your name"), check("textEquals", status, "hello Ada")}}
				}),
			},
			prompts: []string{`dialog confirm "Delete the item?" answered: accept`},
			spec:    []string{"page.once('dialog', dialog => { lastDialog = dialog.message(); return dialog.accept('Ada'); });", "expect.poll(() => lastDialog).toContain('Your name')"}},
		{name: "popups", page: "popup.html",
			replies: []llmtest.Reply{
				respond(func(req llmtest.Request) map[string]any {
					return map[string]any{"status": "complete", "commands": []any{cmd("click", refTarget(ref(req, "link", "Open help")), "")}}
				}),
				respond(complete(cmd("switch_page", nil, "2"))),
				respond(func(req llmtest.Request) map[string]any {
					return map[string]any{"status": "complete", "commands": []any{cmd("click", refTarget(ref(req, "button", "Was this helpful?")), ""),
						check("isVisible", role("button", "Helpful, thanks"), "")}}
				}),
			},
			prompts: []string{"page opened page 2 ", "# pages: 1 "},
			spec:    []string{"const page2Promise = page.waitForEvent('popup');", "const page2 = await page2Promise;", "await page2.getByRole('button', { name: 'Was this helpful?' }).click();"}},
		{name: "uploads", page: "upload.html",
			files: []scenario.File{{Name: "notes.txt", MimeType: "text/plain", Content: []byte("hello world")}, {Name: "me.png", MimeType: "image/png", Content: []byte("\x89PNG")}},
			replies: []llmtest.Reply{
				respond(complete(cmd("upload", map[string]any{"label": "Attachment"}, "notes.txt"), cmd("upload", role("button", "Choose avatar"), "me.png"),
					check("textEquals", map[string]any{"test_id": "attached"}, "notes.txt 11B text/plain"),
					check("textEquals", map[string]any{"test_id": "avatar-status"}, "avatar: me.png"))),
				respond(complete()),
			},
			spec: []string{"setInputFiles([{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('aGVsbG8gd29ybGQ=', 'base64') }])", "waitForEvent('filechooser')"}},
		{name: "rich text", page: "editor.html",
			replies: []llmtest.Reply{
				respond(func(req llmtest.Request) map[string]any {
					return map[string]any{"status": "complete", "commands": []any{cmd("fill", refTarget(refNear(req, "Draft text")), "Final text"),
						cmd("fill", refTarget(refNear(req, "Initial comment")), "Looks good"),
						check("textEquals", map[string]any{"css": ".editor"}, "Looks good"),
						check("textEquals", map[string]any{"css": "body", "frames": []string{"#rte"}}, "Final text")}}
				}),
				respond(complete()),
			}},
		{name: "order, select and slider", page: "sort.html",
			replies: []llmtest.Reply{
				respond(complete(cmd("click", role("button", "Price"), ""), check("sortedAscending", map[string]any{"css": "#products tbody td:nth-child(2)"}, ""))),
				respond(func(req llmtest.Request) map[string]any {
					return map[string]any{"status": "complete", "commands": []any{check("sortedAscending", refTarget(ref(req, "list", "Tags")), "text")}}
				}),
			},
			spec: []string{".allTextContents()", "parseFloat", ".getByRole('listitem')"}},
		{name: "select and slider", page: "widgets.html",
			replies: []llmtest.Reply{
				respond(complete(cmd("select", map[string]any{"label": "Size"}, "Large"), check("selectedLabel", map[string]any{"label": "Size"}, "Large"),
					cmd("fill", role("slider", "Volume"), "70"), check("valueEquals", role("slider", "Volume"), "70"))),
				respond(complete()),
			},
			spec: []string{"locator('option:checked')).toHaveText('Large')", ".evaluate("}},
		{name: "slow content and clearing", page: "slow.html",
			replies: []llmtest.Reply{
				respond(complete(cmd("click", role("button", "Build report"), ""), check("textEquals", status, "Report ready: 42 rows"))),
				respond(complete(cmd("fill", role("textbox", "Notes"), ""), check("valueEmpty", role("textbox", "Notes"), ""))),
			},
			spec: []string{"toHaveText('Report ready: 42 rows', { timeout: ", ".fill('')"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var steps []scenario.Step
			for range c.replies {
				steps = append(steps, scenario.Step{Type: scenario.StepAIAction, Text: "do what the page is for"})
			}
			sc := scenario.Scenario{Name: c.name, BaseURL: base + "/" + c.page, Steps: steps, Files: c.files}
			res, _, model := runAgent(t, sc, c.replies...)
			if res.Status != orchestrator.StatusSucceeded {
				t.Fatalf("%s: %s\n%s", res.Status, res.Error, res.Script)
			}
			var later strings.Builder
			for _, r := range model.Requests()[1:] {
				later.WriteString(r.Text())
			}
			for _, want := range c.prompts {
				if !strings.Contains(later.String(), want) {
					t.Errorf("no later prompt says %q", want)
				}
			}
			for _, want := range c.spec {
				if !strings.Contains(res.Script, want) {
					t.Errorf("spec lacks %q:\n%s", want, res.Script)
				}
			}
		})
	}
}

// A dialog that opens after its click returned is still the click's: the
// spec must answer it there, not at the check that happened to see it.
func TestLateDialogBelongsToTheActionThatOpenedIt(t *testing.T) {
	t.Parallel()
	sc := scenario.Scenario{Name: "late dialog", BaseURL: browserPages(t) + "/dialogs.html",
		Steps: []scenario.Step{{Type: scenario.StepAIAction, Text: "archive the item"}}}
	res, _, _ := runAgent(t, sc, respond(complete(cmd("dialog", nil, "accept"), cmd("click", role("button", "Archive"), ""),
		check("dialogContains", nil, "Archive the item?"), check("textEquals", map[string]any{"role": "status"}, "archived"))))
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	for _, c := range res.Steps[0].Commands {
		if got := len(c.Dialogs); (c.Command.Action == browser.ActionClick) != (got == 1) {
			t.Errorf("%s %s carries %d dialogs", c.Command.Action, c.Command.Assert, got)
		}
	}
}

// inspect_page on a ref shows what tells elements apart (id, class,
// data-test*, value), also for a role-less clickable only a handle names.
func TestInspectPageShowsAnElementsAttributes(t *testing.T) {
	t.Parallel()
	sc := scenario.Scenario{Name: "inspect", BaseURL: browserPages(t) + "/widgets.html",
		Steps: []scenario.Step{{Type: scenario.StepAIAction, Text: "open the cart"}}}
	inspect := func(req llmtest.Request, r string) map[string]any {
		return map[string]any{"name": "inspect_page", "args": map[string]any{"ref": r}}
	}
	res, _, model := runAgent(t, sc,
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "continue", "needs_tool_results": true, "tool_calls": []any{
				inspect(req, refNear(req, "cart-count")), inspect(req, ref(req, "slider", "Volume"))}}
		}),
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "complete", "commands": []any{cmd("click", refTarget(refNear(req, "cart-count")), ""),
				check("textEquals", map[string]any{"role": "status"}, "cart opened")}}
		}),
	)
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	results := model.Requests()[1].Text()
	for _, want := range []string{`attributes: tag="div" class="badge cart-badge" data-test="cart-count" id="cart"`, `attributes: tag="input" type="range" id="vol" value="30"`} {
		if !strings.Contains(results, want) {
			t.Errorf("inspect_page results lack %s:\n%s", want, results)
		}
	}
}

// A popup that opens after its click's batch ended (while the model is
// thinking) still belongs to the click: the spec waits for it there.
func TestLatePopupBelongsToTheActionThatOpenedIt(t *testing.T) {
	t.Parallel()
	sc := scenario.Scenario{Name: "late popup", BaseURL: browserPages(t) + "/popup.html", Steps: []scenario.Step{
		{Type: scenario.StepAIAction, Text: "open the help in a moment"}, {Type: scenario.StepAIAction, Text: "go to the help"},
		{Type: scenario.StepAIAction, Text: "say it helped"}}}
	slow := respond(complete(cmd("switch_page", nil, "2")))
	slow.Delay = 3 * time.Second
	res, _, _ := runAgent(t, sc, respond(complete(cmd("click", role("button", "Open in a moment"), ""))), slow,
		respond(complete(cmd("click", role("button", "Was this helpful?"), ""))))
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	if got := res.Steps[0].Commands[0].Opened; len(got) != 1 || got[0] != 2 {
		t.Fatalf("the click that opened page 2 carries %v", got)
	}
	if !strings.Contains(browsertest.Untimed(res.Script), "const page2Promise = page.waitForEvent('popup');\n  await page.getByRole('button', { name: 'Open in a moment' }).click();") {
		t.Fatalf("the spec does not wait for the popup at its click:\n%s", res.Script)
	}
}

// inspect_page's search answers every match with a ref to target it by (its
// own, or the element it is in) and that element's attributes: a price
// shown as plain text in a product card can be targeted without guessing.
func TestInspectPageSearchGivesEachMatchARefAndAttributes(t *testing.T) {
	t.Parallel()
	sc := scenario.Scenario{Name: "inspect search", BaseURL: pages(t) + "/shop.html",
		Steps: []scenario.Step{{Type: scenario.StepAIAction, Text: "look at the t-shirt's price"}}}
	res, _, model := runAgent(t, sc,
		decision(map[string]any{"status": "continue", "needs_tool_results": true, "tool_calls": []any{
			map[string]any{"name": "inspect_page", "args": map[string]any{"search": "$30.00"}}}}),
		decision(map[string]any{"status": "complete", "reasoning": "seen"}),
	)
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	results := model.Requests()[1].Text()
	i := strings.LastIndex(results, "$30.00")
	if i < 0 {
		t.Fatalf("no match in the results:\n%s", results)
	}
	line := results[i:]
	line = line[:strings.IndexByte(line+"\n", '\n')]
	start := strings.LastIndexByte(results[:i], '\n')
	line = results[start+1:i] + line
	if !strings.Contains(line, "[ref=") || !strings.Contains(line, "attributes: tag=") {
		t.Fatalf("the match %q has no ref or no attributes", line)
	}
}
