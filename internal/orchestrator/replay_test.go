package orchestrator_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// listTest is the stored test of the drift corpus: generated on the
// baseline app with no model call.
var listTest = []string{
	`Click "Dismiss"`,
	`Fill "New item" with "Oat milk"`,
	`Click "Add"`,
	`Verify "Oat milk" is visible`,
	`Verify "2 items" is visible`,
}

func stuck(why string) llmtest.Reply {
	return decision(map[string]any{"status": "stuck", "reasoning": why, "commands": []any{}})
}

// TestRepairHealsDriftAndNeverRegressions generates the list test on the
// baseline demo app, changes the app one way at a time, and replays the
// stored test with repair: drift is healed (locators with no model call,
// flow through the scripted model), timing is flaky, and every regression
// is reported with evidence — never healed. Every healed spec passes under
// @playwright/test against the changed app.
func TestRepairHealsDriftAndNeverRegressions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		change  demoapp.Variation
		replies []llmtest.Reply
		verdict orchestrator.Verdict
		class   orchestrator.FailureClass
		tier    string
		change_ orchestrator.RepairChange
		calls   int
		spec    string // the healed spec says
	}{
		{change: "", verdict: orchestrator.VerdictPassed},
		{change: demoapp.Rewrapped, verdict: orchestrator.VerdictPassed},
		{change: demoapp.RenamedIDs, verdict: orchestrator.VerdictHealed, class: orchestrator.ClassLocatorDrift,
			tier: orchestrator.TierRelocate, change_: orchestrator.ChangeModified, spec: "getByTestId('add-entry-btn')"},
		{change: demoapp.Reworded, verdict: orchestrator.VerdictHealed, class: orchestrator.ClassLocatorDrift,
			tier: orchestrator.TierRelocate, change_: orchestrator.ChangeModified, spec: "'Item name'"},
		{change: demoapp.TipsGone, replies: []llmtest.Reply{respond(complete())}, calls: 1,
			verdict: orchestrator.VerdictHealed, class: orchestrator.ClassFlowDrift, tier: orchestrator.TierAgent, change_: orchestrator.ChangeRemoved},
		{change: demoapp.Interstitial, calls: 1, replies: []llmtest.Reply{respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "complete", "commands": []any{cmd("click", refTarget(ref(req, "button", "Accept cookies")), "")}}
		})}, verdict: orchestrator.VerdictHealed, class: orchestrator.ClassFlowDrift, tier: orchestrator.TierAgent,
			change_: orchestrator.ChangeInserted, spec: "Accept cookies"},
		{change: demoapp.ConfirmAdd, calls: 1, replies: []llmtest.Reply{respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "complete", "commands": []any{cmd("click", refTarget(ref(req, "button", "Confirm")), "")}}
		})}, verdict: orchestrator.VerdictHealed, class: orchestrator.ClassFlowDrift, tier: orchestrator.TierAgent,
			change_: orchestrator.ChangeInserted, spec: "Confirm"},
		{change: demoapp.SlowAdd, verdict: orchestrator.VerdictFlaky, class: orchestrator.ClassTiming, tier: orchestrator.TierSettle,
			change_: orchestrator.ChangeUnchanged, spec: "timeout: "},
		{change: demoapp.WrongCount, verdict: orchestrator.VerdictRegression, class: orchestrator.ClassRegression},
		{change: demoapp.ErrorBanner, verdict: orchestrator.VerdictRegression, class: orchestrator.ClassRegression},
		{change: demoapp.DeadAdd, verdict: orchestrator.VerdictRegression, class: orchestrator.ClassRegression},
		{change: demoapp.MissingAdd, replies: []llmtest.Reply{stuck("there is no button to add the item")}, calls: 1,
			verdict: orchestrator.VerdictRegression, class: orchestrator.ClassRegression},
	}
	for _, c := range cases {
		name := string(c.change)
		if name == "" {
			name = "baseline"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			app := demoapp.New(demoapp.Options{})
			srv := httptest.NewServer(app)
			t.Cleanup(srv.Close)
			var steps []scenario.Step
			for _, s := range listTest {
				steps = append(steps, scenario.Step{Text: s})
			}
			sc := scenario.Scenario{Name: "add an item", BaseURL: srv.URL + "/list", Steps: steps}
			rec := &memRecorder{hold: 100_000_000}
			gen, err := (&orchestrator.Agent{Page: browsertest.Session(t), Recorder: rec}).Run(context.Background(), orchestrator.Input{Scenario: sc})
			if err != nil || gen.Status != orchestrator.StatusSucceeded {
				t.Fatalf("generation: %v %s %s", err, gen.Status, gen.Error)
			}
			browsertest.MustPassSpec(t, gen.Script, nil)
			if c.change != "" {
				if err := app.SetVariant(c.change); err != nil {
					t.Fatal(err)
				}
			}
			model := llmtest.New(t, c.replies...)
			a := &orchestrator.Agent{Page: browsertest.Session(t), Recorder: &memRecorder{hold: 100_000_000},
				Model: llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"})}
			res, err := a.Run(context.Background(), orchestrator.Input{Scenario: sc,
				Replay: &orchestrator.Replay{Steps: gen.Manifest, Repair: true}})
			if err != nil {
				t.Fatal(err)
			}
			var fixed *orchestrator.StepRepair
			for _, s := range res.Steps {
				if s.Repair != nil && (s.Repair.Class != "" || s.Repair.Change != orchestrator.ChangeUnchanged) {
					fixed = s.Repair
					t.Logf("step %d: %s %s %s %s: %s", s.Index+1, s.Repair.Change, s.Repair.Class, s.Repair.Tier, s.Status, s.Repair.Reason)
					break
				}
			}
			if res.Verdict != c.verdict {
				t.Fatalf("verdict %s (%s), want %s", res.Verdict, res.Error, c.verdict)
			}
			if got := len(model.Requests()); got != c.calls {
				t.Errorf("%d model calls, want %d", got, c.calls)
			}
			if c.class != "" {
				if fixed == nil || fixed.Class != c.class {
					t.Fatalf("class %+v, want %s", fixed, c.class)
				}
				if c.tier != "" && fixed.Tier != c.tier {
					t.Errorf("tier %s, want %s", fixed.Tier, c.tier)
				}
				if c.change_ != "" && fixed.Change != c.change_ {
					t.Errorf("change %s, want %s", fixed.Change, c.change_)
				}
			}
			switch res.Verdict {
			case orchestrator.VerdictRegression:
				ev := fixed.Evidence
				if ev == nil || ev.Screenshot == "" || (ev.Observed == "" && len(ev.Problems) == 0 && !strings.Contains(fixed.Reason, "unreachable")) {
					t.Errorf("a regression without evidence: %+v", ev)
				}
				if res.Status == orchestrator.StatusSucceeded {
					t.Error("a regression was healed to green")
				}
			case orchestrator.VerdictPassed, orchestrator.VerdictHealed, orchestrator.VerdictFlaky:
				if res.Status != orchestrator.StatusSucceeded {
					t.Fatalf("%s but %s: %s", res.Verdict, res.Status, res.Error)
				}
				if !strings.Contains(res.Script, c.spec) {
					t.Errorf("spec lacks %q:\n%s", c.spec, res.Script)
				}
				for _, want := range []string{"toBeVisible()", "'Oat milk'", "'2 items'"} {
					if !strings.Contains(res.Script, want) {
						t.Errorf("the repaired spec dropped a check (%s):\n%s", want, res.Script)
					}
				}
				// Against the changed app, where the repair ran.
				browsertest.MustPassSpec(t, res.Script, nil)
			}
			if c.verdict == orchestrator.VerdictPassed && res.Script != gen.Script {
				t.Errorf("a passing replay changed the spec:\n%s\nwas\n%s", res.Script, gen.Script)
			}
		})
	}
}
