package suite

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
)

// fakeVerifier passes or fails every spec and remembers what it was given.
type fakeVerifier struct {
	fail  bool
	specs []string
}

func (v *fakeVerifier) Verify(_ context.Context, spec string) (string, error) {
	v.specs = append(v.specs, spec)
	if v.fail {
		return "1 failed\n  expect(locator).toBeVisible() failed", errors.New("exit status 1")
	}
	return "1 passed", nil
}

const storedSpec = "await page.getByRole('button', { name: 'Save' }).click();"
const healedSpec = "await page.getByRole('button', { name: 'Save changes' }).click();"

func storedTest() store.Test {
	return store.Test{ID: "t-1", Version: 3, Script: storedSpec}
}

// fingerprinted is a manifest whose click carries its element's fingerprint.
func fingerprinted() []orchestrator.ManifestStep {
	return []orchestrator.ManifestStep{{Step: 1, Entries: []orchestrator.ManifestEntry{{
		Command: browser.Command{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: "Save"}},
		Element: &browser.Fingerprint{Tag: "button"}}}}}
}

// imported is the same manifest as an import leaves it: no fingerprint.
func imported() []orchestrator.ManifestStep {
	m := fingerprinted()
	m[0].Entries[0].Element = nil
	return m
}

func result(status orchestrator.Status, verdict orchestrator.Verdict, script string, change orchestrator.RepairChange,
	class orchestrator.FailureClass) orchestrator.Result {
	st := orchestrator.StepReport{Index: 0, Goal: "Save", Status: orchestrator.StepPassed}
	if change != orchestrator.ChangeUnchanged || class != "" {
		st.Repair = &orchestrator.StepRepair{Change: change, Class: class}
	}
	if verdict == orchestrator.VerdictRegression || verdict == orchestrator.VerdictFailed {
		st.Status = orchestrator.StepFailed
	}
	return orchestrator.Result{Status: status, Verdict: verdict, Script: script, Steps: []orchestrator.StepReport{st},
		Manifest: fingerprinted()}
}

func TestConclude(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		in         Replayed
		failVerify bool

		state      store.JobState
		testStatus string
		proposed   bool   // a version is proposed
		script     string // the job's spec
		verified   int    // specs given to the verifier
		errHas     string
		keepsPrint bool // the replay's fingerprints are kept
	}{{
		name:  "a passing replay succeeds and changes nothing",
		in:    Replayed{Test: storedTest(), Manifest: fingerprinted(), Result: result(orchestrator.StatusSucceeded, orchestrator.VerdictPassed, storedSpec, orchestrator.ChangeUnchanged, "")},
		state: store.JobStateSucceeded, testStatus: "passed", script: storedSpec,
	}, {
		name:  "an imported test's first passing replay keeps its fingerprints",
		in:    Replayed{Test: storedTest(), Manifest: imported(), Result: result(orchestrator.StatusSucceeded, orchestrator.VerdictPassed, storedSpec, orchestrator.ChangeUnchanged, "")},
		state: store.JobStateSucceeded, testStatus: "passed", script: storedSpec, keepsPrint: true,
	}, {
		name: "a healed repair whose spec passes is proposed",
		in: Replayed{Test: storedTest(), Manifest: fingerprinted(), Repair: true,
			Result: result(orchestrator.StatusSucceeded, orchestrator.VerdictHealed, healedSpec, orchestrator.ChangeModified, orchestrator.ClassLocatorDrift)},
		state: store.JobStateSucceeded, testStatus: "healed", proposed: true, script: healedSpec, verified: 1,
	}, {
		name: "a healed repair whose spec fails under the runner is unrepairable and proposes nothing",
		in: Replayed{Test: storedTest(), Manifest: fingerprinted(), Repair: true,
			Result: result(orchestrator.StatusSucceeded, orchestrator.VerdictHealed, healedSpec, orchestrator.ChangeModified, orchestrator.ClassLocatorDrift)},
		failVerify: true,
		state:      store.JobStateFailed, testStatus: "unrepairable", script: storedSpec, verified: 1, errHas: "fails under @playwright/test",
	}, {
		name: "a replay never proposes, even of a healed-looking run",
		in: Replayed{Test: storedTest(), Manifest: fingerprinted(),
			Result: result(orchestrator.StatusSucceeded, orchestrator.VerdictHealed, healedSpec, orchestrator.ChangeModified, orchestrator.ClassLocatorDrift)},
		state: store.JobStateSucceeded, testStatus: "healed", script: storedSpec,
	}, {
		name: "a regression fails the job with its summary and is never healed",
		in: Replayed{Test: storedTest(), Manifest: fingerprinted(), Repair: true,
			Result: result(orchestrator.StatusSucceeded, orchestrator.VerdictRegression, healedSpec, orchestrator.ChangeUnchanged, orchestrator.ClassRegression)},
		state: store.JobStateFailed, testStatus: "app_regression", script: storedSpec, errHas: "app_regression",
	}, {
		name: "a cancelled repair is cancelled with no verdict",
		in: Replayed{Test: storedTest(), Manifest: fingerprinted(), Repair: true,
			Result: result(orchestrator.StatusCancelled, orchestrator.VerdictHealed, healedSpec, orchestrator.ChangeModified, orchestrator.ClassLocatorDrift)},
		state: store.JobStateCancelled, script: storedSpec,
	}, {
		name: "a repair out of budget ends budget-exhausted and proposes nothing",
		in: Replayed{Test: storedTest(), Manifest: fingerprinted(), Repair: true,
			Result: result(orchestrator.StatusBudgetExhausted, orchestrator.VerdictHealed, healedSpec, orchestrator.ChangeModified, orchestrator.ClassLocatorDrift)},
		state: store.JobStateBudgetExhausted, script: storedSpec,
	}, {
		name: "a flaky step's raised timeout is proposed",
		in: Replayed{Test: storedTest(), Manifest: fingerprinted(), Repair: true,
			Result: result(orchestrator.StatusSucceeded, orchestrator.VerdictFlaky, healedSpec, orchestrator.ChangeModified, orchestrator.ClassTiming)},
		state: store.JobStateSucceeded, testStatus: "flaky", proposed: true, script: healedSpec, verified: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := &fakeVerifier{fail: tc.failVerify}
			f, rep := Conclude(context.Background(), tc.in, v)
			if f.State != tc.state || f.TestStatus != tc.testStatus || f.Script != tc.script {
				t.Errorf("finish = %s, verdict %q, spec %q; want %s, %q, %q", f.State, f.TestStatus, f.Script, tc.state, tc.testStatus, tc.script)
			}
			if (f.Proposal != nil) != tc.proposed {
				t.Errorf("proposal = %+v, want one: %v", f.Proposal, tc.proposed)
			}
			if f.Proposal != nil {
				if f.Proposal.Script != tc.script || !strings.Contains(f.Proposal.Diff, "Save changes") || !rep.Verified {
					t.Errorf("proposal %+v (verified %v) is not the verified repaired spec with its diff", f.Proposal, rep.Verified)
				}
			}
			if len(v.specs) != tc.verified {
				t.Errorf("the verifier ran %d times, want %d", len(v.specs), tc.verified)
			}
			if tc.errHas != "" && !strings.Contains(f.Error, tc.errHas) {
				t.Errorf("error %q does not say %q", f.Error, tc.errHas)
			}
			if tc.errHas == "" && f.State == store.JobStateSucceeded && f.Error != "" {
				t.Errorf("a succeeded job carries an error: %q", f.Error)
			}
			if (len(f.Fingerprints) > 0) != tc.keepsPrint || (tc.keepsPrint && f.TestVersion != 3) {
				t.Errorf("fingerprints kept: %d bytes for version %d, want kept: %v", len(f.Fingerprints), f.TestVersion, tc.keepsPrint)
			}
		})
	}
}
