package suite

import (
	"context"
	"encoding/json"

	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
)

// Verifier runs a spec under @playwright/test, as the job's browser would
// (behind its egress guard, its secrets in the environment only), and
// returns the runner's output; an error means the spec did not pass.
type Verifier interface {
	Verify(ctx context.Context, spec string) (output string, err error)
}

// Replayed is a replay or repair of a stored test, as it ran.
type Replayed struct {
	Test     store.Test
	Manifest []orchestrator.ManifestStep // the stored version's commands
	Result   orchestrator.Result
	// Repair says the job may repair drift; a replay changes nothing.
	Repair bool
	// AutoAccept makes a verified repair the test's script at once.
	AutoAccept bool
}

// Conclude decides how a replay or repair of a stored test ends, and what
// it keeps: the job's state and error, the test's verdict, the
// fingerprints of an imported test's first passing replay, and a proposed
// version. A repair is proposed only when it healed drift (or raised a
// flaky step's timeout), changed the spec, and the repaired spec passed
// under v; a regression is reported, never healed, and fails the job, so
// a succeeded job's spec always passes. The Finish it returns lacks the
// job's id, attempt and result.
func Conclude(ctx context.Context, r Replayed, v Verifier) (store.Finish, Report) {
	res, test := r.Result, r.Test
	rep := Summarize(test.ID, test.Version, test.Script, res)
	f := store.Finish{State: store.JobStateSucceeded, Script: test.Script, TestID: test.ID, TestStatus: string(rep.Verdict)}
	switch res.Status {
	case orchestrator.StatusCancelled:
		f.State, f.Error, f.TestStatus = store.JobStateCancelled, res.Error, ""
	case orchestrator.StatusBudgetExhausted:
		f.State, f.Error, f.TestStatus = store.JobStateBudgetExhausted, res.Error, ""
	}
	if f.State == store.JobStateSucceeded && rep.Verdict == orchestrator.VerdictPassed && lacksFingerprints(r.Manifest) {
		// An imported test's first passing replay: keep what it found.
		f.Fingerprints, _ = json.Marshal(res.Manifest)
		f.TestVersion = test.Version
	}
	if r.Repair && f.State == store.JobStateSucceeded && rep.Proposes() {
		propose(ctx, &f, &rep, r, v)
	}
	switch rep.Verdict {
	case orchestrator.VerdictRegression, orchestrator.VerdictUnrepairable, orchestrator.VerdictFailed:
		if f.State == store.JobStateSucceeded {
			f.State, f.Error = store.JobStateFailed, rep.Summary
			if res.Error != "" {
				f.Error += " — " + res.Error
			}
		}
	}
	return f, rep
}

// propose verifies a repaired spec and, if it passes, makes it the
// finish's proposed version; otherwise the repair is reported
// unrepairable and nothing is proposed.
func propose(ctx context.Context, f *store.Finish, rep *Report, r Replayed, v Verifier) {
	res := r.Result
	out, err := v.Verify(ctx, res.Script)
	rep.Verified = err == nil
	if err != nil {
		rep.Verdict, rep.VerifyOutput = orchestrator.VerdictUnrepairable, lastBytes(out, 4000)
		rep.Summary = "unrepairable: the repaired spec fails under @playwright/test (" + err.Error() + ")"
		f.TestStatus = string(rep.Verdict)
		return
	}
	scJSON, _ := json.Marshal(res.Scenario)
	man, _ := json.Marshal(res.Manifest)
	changes, _ := json.Marshal(rep.Steps)
	f.Script = res.Script
	f.Proposal = &store.Proposal{TestID: r.Test.ID, Verdict: string(rep.Verdict), Summary: rep.Summary, Changes: changes,
		Scenario: scJSON, Script: res.Script, Manifest: man, Diff: rep.Diff, Accept: r.AutoAccept}
}

// lacksFingerprints reports whether a manifest has no element fingerprint
// at all though it acts on elements: an imported test not yet replayed.
func lacksFingerprints(manifest []orchestrator.ManifestStep) bool {
	targets := false
	for _, s := range manifest {
		for _, e := range s.Entries {
			if e.Element != nil {
				return false
			}
			targets = targets || e.Command.NeedsTarget()
		}
	}
	return targets
}

// lastBytes keeps the end of a runner's output, where its failure is told.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
