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
			f, rep := suite.Conclude(ctx, suite.Replayed{Test: test, Manifest: manifest, Result: res, Repair: repair,
				AutoAccept: req.AutoAccept}, specVerifier{w: w, secrets: secrets, tun: tun})
			if rep.VerifyOutput != "" {
				log.Warn("repaired spec failed verification", "summary", rep.Summary)
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
			return outcome{Finish: f}
		}})
}

// specVerifier verifies a repaired spec for suite.Conclude, through the
// job's egress tunnel with its secrets.
type specVerifier struct {
	w       *Worker
	secrets map[string]string
	tun     *netguard.Tunnel
}

func (v specVerifier) Verify(ctx context.Context, spec string) (string, error) {
	return v.w.verifySpec(ctx, spec, v.secrets, v.tun)
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
	return w.fanOut(ctx, claim, children, false, log)
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
// With resume, the parent is queued again once they have all ended.
func (w *Worker) fanOut(ctx context.Context, claim store.Claim, children []store.Child, resume bool, log *slog.Logger) outcome {
	var items []store.OutboxItem
	err := w.retry.do(ctx, "fan out", func() error {
		var err error
		if resume {
			items, err = w.store.FanOutThenResume(ctx, claim.JobID, claim.Attempt, children)
		} else {
			items, err = w.store.FanOut(ctx, claim.JobID, claim.Attempt, children)
		}
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

// verifySpec runs a repaired spec under @playwright/test, its browser
// behind the job's egress tunnel and its secrets in the environment only.
func (w *Worker) verifySpec(ctx context.Context, spec string, secrets map[string]string, tun *netguard.Tunnel) (string, error) {
	if w.cfg.SpecRunner == nil {
		return "", fmt.Errorf("this worker has no @playwright/test runner to verify the repaired spec (set WEBPILOT_SPEC_RUNNER)")
	}
	return w.cfg.SpecRunner.Run(ctx, spec, specrun.Options{Env: secrets,
		Proxy: &specrun.Proxy{Server: w.proxy.Server(), Username: tun.User, Password: tun.Password}})
}
