package orchestrator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/scenario"
)

// TestAScenarioRunsOnAPhone: a scenario on the Pixel 7 sees the phone's
// viewport and touch screen, taps with a finger (a touch event, which a
// click does not send), and its spec uses the same device descriptor and
// passes under @playwright/test.
func TestAScenarioRunsOnAPhone(t *testing.T) {
	t.Parallel()
	d, ok := browser.DeviceNamed("Pixel 7")
	if !ok {
		t.Fatal("no Pixel 7")
	}
	sc := scenario.Scenario{Name: "on a phone", BaseURL: pages(t) + "/touch.html", Options: scenario.Options{Device: "Pixel 7"},
		Steps: []scenario.Step{
			{Type: scenario.StepAction, Action: browser.ActionTap, Target: &scenario.Target{Role: "button", Name: "Reveal"}},
			{Text: `Verify "Revealed by a finger" is visible`},
			{Text: `Verify "Screen 412 wide, touch" is visible`},
		}}
	res := runWithoutModel(t, sc, browsertest.SessionWith(t, browser.SessionOptions{Device: &d}))
	mustSucceed(t, res)
	for _, want := range []string{"...devices['Pixel 7']", ".tap()"} {
		if !strings.Contains(res.Script, want) {
			t.Fatalf("the spec lacks %q:\n%s", want, res.Script)
		}
	}
	mustPassSpec(t, res, nil)
}

// TestTapNeedsATouchScreen: on a desktop browser a tap fails, saying why.
func TestTapNeedsATouchScreen(t *testing.T) {
	t.Parallel()
	s := browsertest.Session(t)
	if err := s.Navigate(context.Background(), pages(t)+"/touch.html"); err != nil {
		t.Fatal(err)
	}
	out := s.Execute(context.Background(), browser.Command{Action: browser.ActionTap, Target: browser.Target{Role: "button", Name: "Reveal"}}, browser.ExecOptions{})
	if out.Err == nil || !strings.Contains(out.Err.Error(), "touch screen") {
		t.Fatalf("a tap on a desktop: %v", out.Err)
	}
}
