// Package suite is the suites pillar, for both kinds of suite a tenant
// has. Most of it is customers' own projects (@playwright/test suites as
// they wrote them): run in the sandbox with the runner's own verdicts
// (runner.go, progress.go, reports.go), their traces read (trace.go,
// snapshot.go), and a red suite repaired where the app drifted, never
// where it regressed: the repair loop (heal.go), the diagnosis of a
// failing call (diagnose.go, locators.go, spell.go), heals by kind
// (timing.go, flow.go, cssheal.go, agent.go, agentflow.go), and the
// patch (patch.go, merge.go). The rest is a tenant's stored tests: the
// reports, diffs and version proposals of their replays (report.go,
// conclude.go), the replay itself running in the orchestrator on the same
// browser and model seams as generation.
package suite

import (
	"fmt"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// Report is what a repair of one test found and changed.
type Report struct {
	TestID      string               `json:"test_id"`
	FromVersion int                  `json:"from_version"`
	Verdict     orchestrator.Verdict `json:"verdict"`
	Summary     string               `json:"summary"`
	Steps       []StepChange         `json:"steps"`
	// Diff is the unified diff of the stored spec to the repaired one.
	Diff string `json:"diff,omitempty"`
	// Verified says the repaired spec passed under @playwright/test
	// before it was proposed; VerifyOutput is the runner's output when not.
	Verified     bool          `json:"verified"`
	VerifyOutput string        `json:"verify_output,omitempty"`
	Tokens       int           `json:"agent_tokens"`
	Duration     time.Duration `json:"duration_ns"`
	changed      bool          // the repaired spec differs from the stored one
}

// StepChange is one step of the report.
type StepChange struct {
	Step     int                       `json:"step"`
	Goal     string                    `json:"goal"`
	Status   string                    `json:"status"`
	Change   orchestrator.RepairChange `json:"change"`
	Class    orchestrator.FailureClass `json:"class,omitempty"`
	Tier     string                    `json:"tier,omitempty"`
	Reason   string                    `json:"reason,omitempty"`
	Inserted []string                  `json:"inserted,omitempty"`
	Tokens   int                       `json:"agent_tokens,omitempty"`
	Seconds  float64                   `json:"seconds,omitempty"`
	Evidence *orchestrator.Evidence    `json:"evidence,omitempty"`
}

// Summarize builds the report of a replay run of a test whose stored spec
// was oldScript.
func Summarize(testID string, from int, oldScript string, res orchestrator.Result) Report {
	rep := Report{TestID: testID, FromVersion: from, Verdict: res.Verdict, Duration: res.Timing.Total, changed: res.Script != oldScript}
	var changed []string
	for _, s := range res.Steps {
		c := StepChange{Step: s.Index + 1, Goal: s.Goal, Status: s.Status, Change: orchestrator.ChangeUnchanged}
		if r := s.Repair; r != nil {
			c.Change, c.Class, c.Tier, c.Reason, c.Inserted, c.Evidence = r.Change, r.Class, r.Tier, r.Reason, r.Inserted, r.Evidence
			c.Tokens, c.Seconds = r.Tokens, r.Duration.Seconds()
			rep.Tokens += r.Tokens
		}
		if c.Change != orchestrator.ChangeUnchanged || c.Class != "" {
			what := orDefault(string(c.Change), "unchanged")
			if c.Change == orchestrator.ChangeUnchanged && c.Status == orchestrator.StepFailed {
				what = "failed"
			}
			changed = append(changed, fmt.Sprintf("step %d %s (%s)", c.Step, what, orDefault(string(c.Class), "ok")))
		}
		rep.Steps = append(rep.Steps, c)
	}
	if rep.Proposes() {
		rep.Diff = udiff.Unified("stored.spec.ts", "repaired.spec.ts", oldScript, res.Script)
	}
	rep.Summary = string(res.Verdict)
	if len(changed) > 0 {
		rep.Summary += ": " + strings.Join(changed, "; ")
	}
	return rep
}

// Proposes reports whether the repair yields a new version: drift was
// healed, or a flaky step's timeout raised, and the spec changed.
func (r Report) Proposes() bool {
	return r.changed && (r.Verdict == orchestrator.VerdictHealed || r.Verdict == orchestrator.VerdictFlaky)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
