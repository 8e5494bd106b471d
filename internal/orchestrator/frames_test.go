package orchestrator_test

import (
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// TestACheckFindsTextInAFrame: a check on text that a same-origin frame
// shows is taken without a model, and its spec enters the frame.
func TestACheckFindsTextInAFrame(t *testing.T) {
	t.Parallel()
	sc := scenario.Scenario{Name: "text in a frame", BaseURL: pages(t) + "/frames.html", Steps: []scenario.Step{
		{Text: `Verify "Call support" is visible`},
	}}
	res := runWithoutModel(t, sc, nil)
	if res.Status != orchestrator.StatusSucceeded || res.Usage.PromptTokens != 0 {
		t.Fatalf("%s (%d tokens): %s", res.Status, res.Usage.PromptTokens, res.Error)
	}
	if !strings.Contains(res.Script, "contentFrame()") && !strings.Contains(res.Script, "frameLocator(") {
		t.Fatalf("the spec's check does not enter the frame:\n%s", res.Script)
	}
	mustPassSpec(t, res, nil)
}

// TestAControlInACardIsTargetedByItsCard: the page the model reads names
// each product card by its heading, and "Add to cart" within the T-shirt's
// card is one locator in the spec, not the second of three.
func TestAControlInACardIsTargetedByItsCard(t *testing.T) {
	t.Parallel()
	sc := scenario.Scenario{Name: "card", BaseURL: pages(t) + "/shop.html", Steps: []scenario.Step{
		{Type: scenario.StepAIAction, Text: "Put the T-shirt in the cart"},
		{Text: `Verify "Cart: 1 item (last: T-shirt)" is visible`},
	}}
	res, _, model := runAgent(t, sc, respond(func(req llmtest.Request) map[string]any {
		return map[string]any{"status": "complete", "commands": []any{
			cmd("click", map[string]any{"role": "button", "name": "Add to cart", "within": refTarget(refNear(req, `(card "T-shirt")`))}, "")}}
	}))
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	if !strings.Contains(model.Requests()[0].Text(), `(card "T-shirt")`) {
		t.Fatal("the page the model read does not name the cards")
	}
	if strings.Contains(res.Script, "nth(") || !strings.Contains(res.Script, "T-shirt") {
		t.Fatalf("the spec does not find the button by its card:\n%s", res.Script)
	}
}
