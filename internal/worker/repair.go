package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/specrun"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// SpecRunner runs a spec under @playwright/test; specrun.Runner implements it.
type SpecRunner interface {
	Run(ctx context.Context, spec string, o specrun.Options) (string, error)
	RunReport(ctx context.Context, spec string, o specrun.Options) ([]specrun.TestResult, error)
}

// runTest runs a replay or a repair job (kind) of a stored test: both
// replay it, and a repair also repairs its drift.
// A repair job succeeds when the test passes (as it was, healed, or flaky)
// and fails with the report when it found a regression or could not repair
// it, so a succeeded job's spec always passes. A repaired spec is proposed
// as the test's next version only after it passed under @playwright/test,
// through the job's egress guard. A replay changes nothing: it succeeds
// when the test passes and fails with per-step results when it does not.
func (w *Worker) runTest(ctx context.Context, claim store.Claim, cancelled func() bool, log *slog.Logger, kind jobs.Kind) outcome {
	repair := kind == jobs.KindRepair
	req, secrets, err := openInput[jobs.RepairRequest](w, claim)
	if err != nil {
		return failed(err.Error())
	}
	log = orchestrator.RedactLogger(log, secrets).With("test", req.TestID)
	test, err := w.store.GetTest(ctx, claim.TenantID, req.TestID)
	if errors.Is(err, store.ErrNotFound) {
		return failed("the test no longer exists")
	}
	if err != nil {
		return handedBack(err)
	}
	var sc scenario.Scenario
	var manifest []orchestrator.ManifestStep
	if err := json.Unmarshal(test.Scenario, &sc); err != nil {
		return failed("the stored test's scenario cannot be decoded: " + err.Error())
	}
	if test.Script == "" || json.Unmarshal(test.Manifest, &manifest) != nil || len(manifest) == 0 {
		return failed("the test has no passing version to replay yet")
	}
	sc.Options = req.Options
	return w.execute(ctx, execution{claim: claim, cancelled: cancelled, log: log,
		in: orchestrator.Input{Scenario: sc, Secrets: secrets, Replay: &orchestrator.Replay{Steps: manifest, Repair: repair}, StepShots: w.cfg.StepShots},
		then: func(res orchestrator.Result, tun *netguard.Tunnel) outcome {
			rep := suite.Summarize(test.ID, test.Version, test.Script, res)
			f := store.Finish{State: store.JobStateSucceeded, Script: test.Script, TestID: test.ID, TestStatus: string(rep.Verdict)}
			switch res.Status {
			case orchestrator.StatusCancelled, orchestrator.StatusBudgetExhausted:
				f.State, f.Error, f.TestStatus = jobState(res.Status), res.Error, ""
			}
			if f.State == store.JobStateSucceeded && rep.Verdict == orchestrator.VerdictPassed && lacksFingerprints(manifest) {
				// An imported test's first passing replay: keep what it found.
				f.Fingerprints, _ = json.Marshal(res.Manifest)
				f.TestVersion = test.Version
			}
			if repair && f.State == store.JobStateSucceeded && rep.Proposes() {
				w.propose(ctx, &f, &rep, res, test, req.AutoAccept, secrets, tun, log)
			}
			for _, a := range res.Artifacts {
				if err := w.store.AddArtifact(ctx, claim.JobID, a.Kind, a.Name, a.Content); err != nil {
					log.Warn("artifact not saved", "name", a.Name, "err", err)
				}
			}
			b, err := encodeResult(res, claim, rep)
			if err != nil {
				return failed("the result cannot be encoded: " + err.Error())
			}
			f.Result = b
			switch rep.Verdict {
			case orchestrator.VerdictRegression, orchestrator.VerdictUnrepairable, orchestrator.VerdictFailed:
				if f.State == store.JobStateSucceeded {
					f.State, f.Error = store.JobStateFailed, rep.Summary
					if res.Error != "" {
						f.Error += " — " + res.Error
					}
				}
			}
			return outcome{Finish: f}
		}})
}

// propose verifies a repaired spec under @playwright/test and, if it
// passes, makes it the finish's proposed version; otherwise the repair is
// reported unrepairable and nothing is proposed.
func (w *Worker) propose(ctx context.Context, f *store.Finish, rep *suite.Report, res orchestrator.Result, test store.Test,
	accept bool, secrets map[string]string, tun *netguard.Tunnel, log *slog.Logger) {
	out, err := w.verifySpec(ctx, res.Script, secrets, tun)
	rep.Verified = err == nil
	if err != nil {
		rep.Verdict, rep.VerifyOutput = orchestrator.VerdictUnrepairable, lastBytes(out, 4000)
		rep.Summary = "unrepairable: the repaired spec fails under @playwright/test (" + err.Error() + ")"
		f.TestStatus = string(rep.Verdict)
		log.Warn("repaired spec failed verification", "err", err)
		return
	}
	scJSON, _ := json.Marshal(res.Scenario)
	man, _ := json.Marshal(res.Manifest)
	changes, _ := json.Marshal(rep.Steps)
	f.Script = res.Script
	f.Proposal = &store.Proposal{TestID: test.ID, Verdict: string(rep.Verdict), Summary: rep.Summary, Changes: changes,
		Scenario: scJSON, Script: res.Script, Manifest: man, Diff: rep.Diff, Accept: accept}
}

// runSuite fans a bulk job out: one child job (a replay or a repair) per
// selected test, created once however often the fan-out is retried, then
// published. The bulk job then waits without holding this worker; it ends
// when its last child does.
func (w *Worker) runSuite(ctx context.Context, claim store.Claim, log *slog.Logger) outcome {
	req, secrets, err := openInput[jobs.SuiteRequest](w, claim)
	if err != nil {
		return failed(err.Error())
	}
	tests, _, err := w.store.SelectTests(ctx, claim.TenantID, store.Selection{TestIDs: req.TestIDs, Tags: req.Tags})
	if err != nil {
		return handedBack(err)
	}
	kind := jobs.Kind(claim.Kind).ChildKind()
	opts := req.Options
	opts.MaxCredits = 0 // the budget is the whole run's, held by this job
	children := make([]store.Child, 0, len(tests))
	for _, t := range tests {
		children = append(children, store.Child{TestID: t.ID, Kind: string(kind), Subject: jobs.Subject(kind, claim.TenantID),
			Input: func(jobID string) (json.RawMessage, error) {
				child := jobs.RepairRequest{TestID: t.ID, AutoAccept: req.AutoAccept, Options: opts}
				var err error
				child.SealedSecrets, err = w.sealFor(secrets, jobID)
				if err != nil {
					return nil, err
				}
				return json.Marshal(child)
			}})
	}
	return w.fanOut(ctx, claim, children, log)
}

// sealFor seals secrets to a child job's own id, as a submitted job's are.
func (w *Worker) sealFor(secrets map[string]string, jobID string) (string, error) {
	if len(secrets) == 0 {
		return "", nil
	}
	plain, _ := json.Marshal(secrets)
	return w.sealer.Seal(plain, "secrets:"+jobID)
}

// fanOut creates a parent's children (once, however often it is retried),
// publishes them and leaves the parent waiting for them without holding
// this worker.
func (w *Worker) fanOut(ctx context.Context, claim store.Claim, children []store.Child, log *slog.Logger) outcome {
	var items []store.OutboxItem
	err := w.retry.do(ctx, "fan out", func() error {
		var err error
		items, err = w.store.FanOut(ctx, claim.JobID, claim.Attempt, children)
		return err
	})
	if err != nil {
		if errors.Is(err, store.ErrFenced) {
			return outcome{err: err}
		}
		return handedBack(err)
	}
	w.publishWoken(ctx, items)
	log.Info("fanned out", "children", len(children), "published", len(items))
	return outcome{disposition: detached}
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

// verifySpec runs a repaired spec under @playwright/test, its browser
// behind the job's egress tunnel and its secrets in the environment only.
func (w *Worker) verifySpec(ctx context.Context, spec string, secrets map[string]string, tun *netguard.Tunnel) (string, error) {
	if w.cfg.SpecRunner == nil {
		return "", fmt.Errorf("this worker has no @playwright/test runner to verify the repaired spec (set WEBPILOT_SPEC_RUNNER)")
	}
	return w.cfg.SpecRunner.Run(ctx, spec, specrun.Options{Env: secrets,
		Proxy: &specrun.Proxy{Server: w.proxy.Server(), Username: tun.User, Password: tun.Password}})
}

// lastBytes keeps the end of a runner's output, where its failure is told.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
