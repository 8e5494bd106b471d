package orchestrator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
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
	a := &orchestrator.Agent{Page: browsertest.Session(t), Recorder: &memRecorder{hold: 1}}
	res, err := a.Run(context.Background(), orchestrator.Input{Scenario: sc})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != orchestrator.StatusSucceeded || res.Usage.PromptTokens != 0 {
		t.Fatalf("%s (%d tokens): %s", res.Status, res.Usage.PromptTokens, res.Error)
	}
	if !strings.Contains(res.Script, "contentFrame()") && !strings.Contains(res.Script, "frameLocator(") {
		t.Fatalf("the spec's check does not enter the frame:\n%s", res.Script)
	}
	mustPassSpec(t, res, nil)
}
