package orchestrator_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

func TestAgentBatchesLoginAndFormFills(t *testing.T) {
	t.Parallel()
	app := httptest.NewServer(demoapp.Handler(demoapp.Options{}))
	t.Cleanup(app.Close)
	sc := scenario.Scenario{Name: "login then contact", BaseURL: app.URL + "/login",
		Data: map[string]string{"EMAIL": demoapp.Email}, Secrets: map[string]string{"PASSWORD": demoapp.Password},
		Steps: []scenario.Step{
			{Text: "Sign in as the demo user"},
			{Text: "Go to /form"},
			{Type: "ai_action", Text: "Send a sales question as Ada Lovelace (ada@example.com), accepting the terms"},
			{Text: `Verify "Thanks, Ada Lovelace!" is visible`},
		}}
	res, rec, model := runAgent(t, sc,
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "complete", "reasoning": "fill both fields and submit", "commands": []any{
				cmd("fill", refTarget(ref(req, "textbox", "Email")), "{{EMAIL}}"),
				cmd("fill", refTarget(ref(req, "textbox", "Password")), "{{PASSWORD}}"),
				cmd("click", refTarget(ref(req, "button", "Sign in")), ""),
			}}
		}),
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "complete", "reasoning": "fill the form", "commands": []any{
				cmd("fill", refTarget(ref(req, "textbox", "Full name")), "Ada Lovelace"),
				cmd("fill", refTarget(ref(req, "textbox", "Email address")), "ada@example.com"),
				cmd("select", refTarget(ref(req, "combobox", "Topic")), "Sales"),
				cmd("check", refTarget(ref(req, "checkbox", "I agree to the terms")), ""),
				cmd("click", refTarget(ref(req, "button", "Send message")), ""),
			}}
		}),
	)
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	if res.Steps[0].Iterations != 1 || len(res.Steps[0].Commands) != 3 || res.Steps[2].Iterations != 1 || len(res.Steps[2].Commands) != 5 {
		t.Fatalf("the batches were not run whole in one iteration each: %+v", res.Steps)
	}
	if res.Steps[2].Tier != "agent" || res.Steps[2].Type != "ai_action" || res.Steps[3].Tier != "deterministic" {
		t.Fatalf("tiers: %s/%s, %s", res.Steps[2].Type, res.Steps[2].Tier, res.Steps[3].Tier)
	}
	if res.Steps[2].Delta == nil || !strings.Contains(res.Steps[2].Delta.String(), "Thanks, Ada Lovelace") {
		t.Fatalf("the state delta does not show the confirmation: %v", res.Steps[2].Delta)
	}
	for _, want := range []string{"selectOption('Sales')", ".check();", "fill(process.env.PASSWORD ?? '')"} {
		if !strings.Contains(res.Script, want) {
			t.Errorf("spec lacks %q", want)
		}
	}
	noSecret(t, demoapp.Password, res, rec, model)
	mustPassSpec(t, res, map[string]string{"PASSWORD": demoapp.Password})
}

func TestFailedCommandStopsTheBatchAndFalseCompleteIsOverridden(t *testing.T) {
	t.Parallel()
	base := pages(t)
	// An ai_action: the fast tiers now read "Put a mug in the cart" (the
	// Mug card's own button); this test is of the agent's batch.
	sc := scenario.Scenario{Name: "cart", BaseURL: base + "/shop.html", Steps: []scenario.Step{{Type: scenario.StepAIAction, Text: "Put a mug in the cart"}}}
	mug := map[string]any{"role": "button", "name": "Add to cart", "within": map[string]any{"test_id": "product-mug"}}
	res, rec, model := runAgent(t, sc,
		// The second command cannot succeed; the model still claims completion.
		decision(map[string]any{"status": "complete", "commands": []any{
			cmd("click", mug, ""),
			cmd("click", map[string]any{"role": "button", "name": "Checkout"}, ""),
			cmd("click", map[string]any{"role": "button", "name": "Add to cart", "within": map[string]any{"test_id": "product-tee"}}, ""),
		}}),
		decision(map[string]any{"status": "complete", "commands": []any{
			verify("textContains", map[string]any{"text": "Cart:"}, "1 item (last: Mug)"),
		}}),
	)
	if res.Status != orchestrator.StatusSucceeded || res.Steps[0].Iterations != 2 {
		t.Fatalf("%s after %d iterations: %s", res.Status, res.Steps[0].Iterations, res.Error)
	}
	var first []orchestrator.Event
	for _, e := range rec.events {
		if e.Iteration == 1 && e.Kind == "command" {
			first = append(first, e)
		}
	}
	if len(first) != 2 || !first[0].OK || first[1].OK {
		t.Fatalf("iteration 1 should run the first command and stop at the failing second: %+v", first)
	}
	second := model.Requests()[1].Text()
	for _, want := range []string{"you said the step is complete, but a command failed", "command 2 (click", "1 of 3 commands completed"} {
		if !strings.Contains(second, want) {
			t.Errorf("the next prompt lacks %q", want)
		}
	}
	if !strings.Contains(browsertest.Untimed(res.Script), "page.getByTestId('product-mug').getByRole('button', { name: 'Add to cart' }).click();") ||
		strings.Contains(res.Script, "Checkout") || strings.Contains(res.Script, "product-tee") {
		t.Fatalf("spec:\n%s", res.Script)
	}
	mustPassSpec(t, res, nil)
}

// TestAFillTheFieldCutsShortFailsAndIsNotInTheSpec: a fill whose field
// keeps only part of the text (maxlength 4) fails, whether its check ran
// with the fill or with the settle after it; the model is told, and the
// spec holds only the fills that took.
func TestAFillTheFieldCutsShortFailsAndIsNotInTheSpec(t *testing.T) {
	t.Parallel()
	base := browsertest.Serve(t, "../browser/testdata")
	sc := scenario.Scenario{Name: "voucher", BaseURL: base + "/voucher.html", Steps: []scenario.Step{
		{Text: "Write the card holder's name"}, {Text: "Enter the voucher SPRING2026"}}}
	code := map[string]any{"label": "Voucher code"}
	res, _, model := runAgent(t, sc,
		decision(map[string]any{"status": "complete", "commands": []any{cmd("fill", map[string]any{"label": "Name on card"}, "Ada Lovelace")}}),
		// The last command of its batch, after a representation: its check
		// is the settle's.
		decision(map[string]any{"status": "complete", "commands": []any{cmd("fill", code, "SPRING2026")}}),
		decision(map[string]any{"status": "complete", "commands": []any{cmd("fill", code, "SPRI")}}),
	)
	if res.Status != orchestrator.StatusSucceeded || res.Steps[1].Iterations != 2 {
		t.Fatalf("%s after %d iterations: %s", res.Status, res.Steps[1].Iterations, res.Error)
	}
	if first := res.Steps[1].Commands[0]; first.OK || !strings.Contains(first.Error, `had no effect: the field holds "SPRI"`) {
		t.Fatalf("the cut-short fill is reported %+v", first)
	}
	if next := model.Requests()[2].Text(); !strings.Contains(next, "had no effect") {
		t.Errorf("the model is not told the fill had no effect:\n%s", next)
	}
	if spec := browsertest.Untimed(res.Script); strings.Contains(spec, "fill('SPRING2026')") || !strings.Contains(spec, ".fill('SPRI');") || !strings.Contains(spec, ".fill('Ada Lovelace');") {
		t.Fatalf("spec:\n%s", res.Script)
	}
	mustPassSpec(t, res, nil)
}

func TestCookieBannerIsClearedAsABlocker(t *testing.T) {
	t.Parallel()
	base := pages(t)
	// An ai_action: the fast tiers now read the sentence as the form's
	// submission, and a fast-tier click the banner covers fails the step
	// rather than going to the agent; this test is of the agent's blockers.
	sc := scenario.Scenario{Name: "newsletter", BaseURL: base + "/cookie.html", Steps: []scenario.Step{
		{Type: scenario.StepAIAction, Text: "Subscribe to the newsletter with ada@example.com"},
		{Text: `Verify "Subscribed ada@example.com" is visible`},
	}}
	res, _, model := runAgent(t, sc,
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "continue", "reasoning": "a cookie dialog covers the form",
				"blocker": map[string]any{"description": "cookie consent dialog", "commands": []any{cmd("click", refTarget(ref(req, "button", "Accept all")), "")}}}
		}),
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "complete", "commands": []any{
				cmd("fill", refTarget(ref(req, "textbox", "Email")), "ada@example.com"),
				cmd("click", refTarget(ref(req, "button", "Subscribe")), ""),
			}}
		}),
	)
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	if len(res.Steps[0].Notes) != 1 || !strings.Contains(res.Steps[0].Notes[0], "blocker cleared: cookie consent dialog") {
		t.Fatalf("notes: %v", res.Steps[0].Notes)
	}
	second := model.Requests()[1].Text()
	page := second[strings.Index(second, "PAGE (untrusted"):]
	if strings.Contains(page, "Cookie consent") {
		t.Fatal("the dialog is still in the page the model sees after clearing it")
	}
	if !strings.Contains(second, `- dialog "Cookie consent"`) {
		t.Fatalf("what changed does not say, in the page's own terms, that the dialog went:\n%s", second)
	}
	accept := strings.Index(res.Script, "name: 'Accept all' }).click()")
	fill := strings.Index(res.Script, ".fill('ada@example.com')")
	if accept < 0 || fill < accept {
		t.Fatalf("the spec must clear the banner before filling:\n%s", res.Script)
	}
	mustPassSpec(t, res, nil)
}

func TestExtractedDataIsValidatedAndUsedByALaterStep(t *testing.T) {
	t.Parallel()
	base := pages(t)
	schema := json.RawMessage(`{"type":"object","required":["order_id","total"],"properties":{"order_id":{"type":"string","minLength":3},"total":{"type":"number"}}}`)
	sc := scenario.Scenario{Name: "track order", BaseURL: base + "/shop.html", Steps: []scenario.Step{
		{Type: "ai_query", Method: "extract", Text: "the last order's number and total", Schema: schema, SaveAs: "order"},
		{Text: `Fill "Order number" with "{{order.order_id}}"`},
		{Text: `Click "Track order"`},
		{Text: `Verify "Order {{order.order_id}} is on its way" is visible`},
	}}
	res, rec, model := runAgent(t, sc,
		decision(map[string]any{"status": "complete", "result": map[string]any{"order_id": "A-1042", "total": "$42.50"}}),
		decision(map[string]any{"status": "complete", "result": map[string]any{"order_id": "A-1042", "total": 42.5}}),
	)
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s\n%s", res.Status, res.Error, res.Script)
	}
	if !strings.Contains(model.Requests()[1].Text(), "$.total: want number, got string") {
		t.Fatal("the schema violation was not fed back to the model")
	}
	if got := string(rec.extracted["order"]); got != `{"order_id":"A-1042","total":42.5}` {
		t.Fatalf("extracted = %s", got)
	}
	if res.Steps[0].Tier != "agent" || res.Steps[0].Usage.PromptTokens != 3000 || res.Steps[1].Tier != "deterministic" {
		t.Fatalf("report: %+v", res.Steps[:2])
	}
	for _, want := range []string{`let order = {"order_id":"A-1042","total":42.5};`, ".fill(String(order.order_id));"} {
		if !strings.Contains(res.Script, want) {
			t.Errorf("spec lacks %q:\n%s", want, res.Script)
		}
	}
	mustPassSpec(t, res, nil)
}

func TestActsInsideIframesAndShadowRoots(t *testing.T) {
	t.Parallel()
	base := pages(t)
	pay := paymentOrigin(t)
	sc := scenario.Scenario{Name: "frames and shadow", BaseURL: base + "/frames.html?pay=" + pay + "/form", Steps: []scenario.Step{
		{Text: "Pay with card 4242 4242 4242 4242"},
		{Text: "Leave the gift message Happy birthday"},
		{Text: "Ask for help"},
	}}
	res, _, _ := runAgent(t, sc,
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "continue", "commands": []any{
				cmd("fill", refTarget(ref(req, "textbox", "Card number")), "4242 4242 4242 4242"),
				cmd("click", refTarget(ref(req, "button", "Pay now")), ""),
			}}
		}),
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "complete", "commands": []any{
				verify("textContains", refTarget(refNear(req, "Payment accepted")), "Payment accepted"),
			}}
		}),
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "complete", "commands": []any{
				cmd("fill", refTarget(ref(req, "textbox", "Gift message")), "Happy birthday"),
				cmd("click", refTarget(ref(req, "button", "Save message")), ""),
				verify("textContains", map[string]any{"role": "status"}, "Saved: Happy birthday"),
			}}
		}),
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "complete", "commands": []any{cmd("click", refTarget(ref(req, "button", "Call support")), "")}}
		}),
	)
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s\n%s", res.Status, res.Error, res.Script)
	}
	for _, want := range []string{
		"page.locator('#pay').contentFrame().getByRole('textbox', { name: 'Card number' }).fill('4242 4242 4242 4242');",
		"page.locator('#help').contentFrame().getByRole('button', { name: 'Call support' }).click();",
		"page.getByRole('textbox', { name: 'Gift message' }).fill('Happy birthday');",
	} {
		if !strings.Contains(res.Script, want) {
			t.Errorf("spec lacks %q", want)
		}
	}
	mustPassSpec(t, res, nil)
}

func TestInfeasibleStepFailsTheJobWithTheReason(t *testing.T) {
	t.Parallel()
	base := pages(t)
	sc := scenario.Scenario{Name: "refund", BaseURL: base + "/shop.html", Steps: []scenario.Step{{Text: "Refund the last order"}, {Text: "Go to /cookie.html"}}}
	res, _, model := runAgent(t, sc, decision(map[string]any{"status": "infeasible", "reasoning": "the shop has no refund function"}))
	if res.Status != orchestrator.StatusFailed || !strings.Contains(res.Error, "infeasible: the shop has no refund function") {
		t.Fatalf("%s: %q", res.Status, res.Error)
	}
	if len(res.Steps) != 1 || len(model.Requests()) != 1 {
		t.Fatalf("the run went on after an infeasible step: %d steps, %d calls", len(res.Steps), len(model.Requests()))
	}
	// The prompt says what the model cannot see for itself: that the job
	// carries no files and how they are given, and why a password shows
	// «redacted».
	prompt := model.Requests()[0].Text()
	for _, want := range []string{"No files are attached to this job", "webpilot submit --file NAME=PATH", "A password field always shows «redacted»"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt does not say %q", want)
		}
	}
	mustPassSpec(t, res, nil)
}

func TestGuardrailStopsAtMaxIterations(t *testing.T) {
	t.Parallel()
	base := pages(t)
	idle := decision(map[string]any{"status": "continue", "reasoning": "still thinking"})
	sc := scenario.Scenario{Name: "idle", BaseURL: base + "/shop.html", Options: scenario.Options{MaxIterationsPerStep: 3},
		Steps: []scenario.Step{{Text: "Find the hidden admin page"}}}
	res, _, model := runAgent(t, sc, idle, idle, idle, idle, idle)
	if res.Status != orchestrator.StatusFailed || !strings.Contains(res.Error, "guardrail: the step was not complete after 3 iterations") {
		t.Fatalf("%s: %q", res.Status, res.Error)
	}
	if n := len(model.Requests()); n != 3 {
		t.Fatalf("%d model calls, want 3", n)
	}
	mustPassSpec(t, res, nil)
}

func TestToolRoundTripScreenshotThenAction(t *testing.T) {
	t.Parallel()
	base := pages(t)
	sc := scenario.Scenario{Name: "tools", BaseURL: base + "/shop.html", Steps: []scenario.Step{
		{Text: "Remember the order number as order_no, then track that order"},
		{Text: `Verify "is on its way" is visible`},
	}}
	res, rec, model := runAgent(t, sc,
		decision(map[string]any{"status": "continue", "needs_tool_results": true,
			"tool_calls": []any{map[string]any{"name": "take_screenshot", "args": map[string]any{}}}}),
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "continue", "needs_tool_results": true, "tool_calls": []any{
				map[string]any{"name": "extract_data", "args": map[string]any{"target": map[string]any{"css": "#order"}, "name": "order_no"}}}}
		}),
		respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "complete", "commands": []any{
				cmd("fill", refTarget(ref(req, "textbox", "Order number")), "{{order_no}}"),
				cmd("click", refTarget(ref(req, "button", "Track order")), ""),
			}}
		}),
	)
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	reqs := model.Requests()
	if res.Steps[0].Iterations != 1 || len(reqs) != 3 {
		t.Fatalf("tools should be answered inside one iteration: %d iterations, %d calls", res.Steps[0].Iterations, len(reqs))
	}
	if reqs[1].Images() != 1 || !strings.Contains(reqs[1].Text(), "TOOL RESULTS") {
		t.Fatal("the screenshot did not come back to the model in the same iteration")
	}
	if !strings.Contains(reqs[2].Text(), `saved {{order_no}} = "A-1042"`) {
		t.Fatal("extract_data's result was not shown to the model")
	}
	tools := 0
	for _, e := range rec.events {
		if e.Kind == "tool" {
			tools++
		}
	}
	if tools != 2 {
		t.Fatalf("%d tool calls in history, want 2", tools)
	}
	if !strings.Contains(res.Script, "let order_no = (await page.locator('#order').innerText()).trim();") &&
		!strings.Contains(res.Script, "let order_no = (await page.getByText('A-1042').innerText()).trim();") {
		t.Fatalf("the spec does not read the value at run time:\n%s", res.Script)
	}
	if !strings.Contains(browsertest.Untimed(res.Script), ".fill(String(order_no));") {
		t.Fatalf("the spec does not use the variable:\n%s", res.Script)
	}
	mustPassSpec(t, res, nil)
}

func verify(assert string, target map[string]any, value string) map[string]any {
	return map[string]any{"action": "verify", "assert": assert, "target": target, "value": value}
}

func TestObserveAssessContinueOnFailureAndVision(t *testing.T) {
	t.Parallel()
	base := pages(t)
	sc := scenario.Scenario{Name: "queries", BaseURL: base + "/shop.html", Options: scenario.Options{Vision: true}, Steps: []scenario.Step{
		{Type: "ai_query", Method: "observe", Text: "the Add to cart buttons", SaveAs: "buttons"},
		{Type: "ai_query", Method: "assess", Text: "the cart is empty"},
		{Type: "query", Rule: "element_exists", Target: &scenario.Target{CSS: ".coupon-banner"}, OnFailure: "continue"},
		{Type: "ai_query", Method: "assess", Text: "the cart holds a poster"},
		{Text: "Go to /cookie.html"},
	}}
	res, _, model := runAgent(t, sc,
		respond(func(req llmtest.Request) map[string]any {
			var els []any
			for _, l := range strings.Split(req.Text(), "\n") {
				if strings.Contains(l, `button "Add to cart"`) {
					els = append(els, map[string]any{"ref": refOnLine(l), "role": "button", "name": "Add to cart", "description": strings.TrimSpace(l)})
				}
			}
			return map[string]any{"status": "complete", "result": els}
		}),
		decision(map[string]any{"status": "complete", "result": map[string]any{"passed": true, "evidence": "Cart: 0 items"}}),
		decision(map[string]any{"status": "complete", "result": map[string]any{"passed": false, "evidence": "the cart shows 0 items"}}),
	)
	if res.Status != orchestrator.StatusFailed || !strings.Contains(res.Error, "step 4") || !strings.Contains(res.Error, "assessment failed: the cart shows 0 items") {
		t.Fatalf("%s: %q", res.Status, res.Error)
	}
	var observed []map[string]any
	if err := json.Unmarshal(res.Steps[0].Result, &observed); err != nil || len(observed) != 3 {
		t.Fatalf("observe result: %s", res.Steps[0].Result)
	}
	if res.Steps[1].Status != orchestrator.StepPassed || res.Steps[2].Status != orchestrator.StepFailed || res.Steps[2].Tier != "deterministic" {
		t.Fatalf("steps 2-3: %+v", res.Steps[1:3])
	}
	if len(res.Steps) != 4 {
		t.Fatalf("the run should continue past the failed query and stop at the failed assessment: %d steps", len(res.Steps))
	}
	req := model.Requests()[0]
	if req.Images() != 1 || !strings.Contains(req.Text(), "ELEMENT MAP") || !strings.Contains(req.Text(), `"name":"Add to cart"`) {
		t.Fatal("vision mode did not send the marked screenshot and its element map")
	}
	mustPassSpec(t, res, nil)
}
