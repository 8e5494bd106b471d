package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/specrun"
	"github.com/webpilot/webpilot/internal/store"
)

// runExploration explores an app toward a goal. Findings are stored as they
// are found; when the exploration ends, every finding's reproduction and
// the journey's spec run under @playwright/test behind the job's egress
// tunnel, and how each fared is stored with it. An exploration succeeds
// when it ran, whatever it found: finding bugs is what it is for.
func (w *Worker) runExploration(ctx context.Context, claim store.Claim, cancelled func() bool, log *slog.Logger) outcome {
	req, secrets, err := openInput[jobs.ExplorationRequest](w, claim)
	if err != nil {
		return failed(err.Error())
	}
	log = orchestrator.RedactLogger(log, secrets)
	if len(req.Journeys) > 0 {
		return w.fanOutJourneys(ctx, claim, req, secrets, log)
	}
	resume, err := loadExploreCheckpoint(claim.Checkpoint, claim.JobID, w.sealer)
	if err != nil {
		log.Warn("checkpoint unusable; starting over", "err", err)
		resume = nil
	}
	cfg := w.cfg.Explore.WithDefaults()
	tun := w.proxy.Open()
	defer tun.Close()
	opts := browser.SessionOptions{SlowResponse: cfg.SlowResponse}
	if resume != nil {
		opts.StorageState = resume.StorageState
		log.Info("resuming exploration", "actions", resume.Actions, "findings", len(resume.Findings))
	}
	meter, out, ok := w.meterSession(ctx, claim, log)
	if !ok {
		return out
	}
	defer meter.Close(ctx)
	sess, closeSession, err := w.openSession(ctx, tun, log, opts)
	if err != nil {
		return handedBack(err)
	}
	defer closeSession()
	rec := &exploreRecorder{recorder: &recorder{store: w.store, jobID: claim.JobID, attempt: claim.Attempt,
		prices: w.cfg.Prices, sealer: w.sealer, retry: w.retry}}
	e := &explore.Explorer{Page: sess, Recorder: rec, Config: cfg, Log: log}
	if w.model != nil {
		e.Model = w.model
	}
	budget := req.Budget.WithDefaults()
	in := explore.Input{BaseURL: req.BaseURL, Goal: req.Goal, Data: req.Data, Secrets: secrets, MaxActions: budget.MaxActions,
		MaxDuration: time.Duration(budget.MaxMinutes) * time.Minute, Scope: req.Scope, Deny: req.Safety.Words(),
		Resume: resume, Cancelled: stopsWhen(cancelled, meter.Exhausted), Yield: w.yield.Load, CallIDPrefix: fmt.Sprintf("%s/%d", claim.JobID, claim.Attempt)}
	if l := req.Login; l != nil {
		in.Login = &explore.Login{URL: l.URL, UsernameSecret: l.UsernameSecret(), PasswordSecret: l.PasswordSecret()}
	}
	if exps, err := w.store.Experiences(ctx, claim.TenantID, (&scenario.Scenario{BaseURL: req.BaseURL}).Origin(), w.cfg.Limits.ExperiencesCap); err == nil {
		in.Experiences = exps
	}
	res, runErr := e.Run(ctx, in)
	switch {
	case errors.Is(runErr, store.ErrFenced):
		return outcome{err: runErr}
	case ctx.Err() != nil, errors.Is(runErr, explore.ErrYielded), store.Transient(runErr):
		return handedBack(errors.Join(ctx.Err(), runErr))
	case runErr != nil:
		return handedBack(runErr)
	}
	closeSession() // the browser is done; the runner takes over
	meter.Close(ctx)
	if meter.Exhausted() && res.Status == orchestrator.StatusCancelled {
		res.Status, res.Error = orchestrator.StatusBudgetExhausted, "stopped: the credit budget left cannot cover more browser time"
	}
	if len(res.Experiences) > 0 {
		origin := (&scenario.Scenario{BaseURL: req.BaseURL}).Origin()
		if err := w.store.AddExperiences(ctx, claim.TenantID, origin, res.Experiences, w.cfg.Limits.ExperiencesCap); err != nil {
			log.Warn("experiences not saved", "err", err)
		}
	}
	if res.Status != orchestrator.StatusCancelled {
		run := w.reproRunner(secrets, tun)
		w.verifyExploration(ctx, run, &res, log)
		w.compareExploration(ctx, run, claim, req, &res, log)
		w.storeOutcomes(ctx, claim, &res, log)
	}
	view := struct {
		explore.Result
		QueueTime time.Duration `json:"queue_ns"`
		Attempt   int           `json:"attempt"`
	}{res, claim.ClaimedAt.Sub(claim.CreatedAt), claim.Attempt}
	b, err := json.Marshal(view)
	if err != nil {
		return failed("the result cannot be encoded: " + err.Error())
	}
	return outcome{Finish: store.Finish{State: jobState(res.Status), Result: b, Script: res.Journey.Script, Error: res.Error}}
}

// fanOutJourneys explores each journey as a child job of its own, fanned
// out through the queue like a suite's tests: the children draw from this
// job's credit hold, and this job ends with their report when the last
// one does. Its findings are theirs (GET /v1/jobs/{id}/findings).
func (w *Worker) fanOutJourneys(ctx context.Context, claim store.Claim, req jobs.ExplorationRequest, secrets map[string]string,
	log *slog.Logger) outcome {
	children := make([]store.Child, 0, len(req.Journeys))
	for i, goal := range req.Journeys {
		children = append(children, store.Child{Key: fmt.Sprintf("journey:%02d", i+1), Kind: string(jobs.KindExploration),
			Subject: jobs.Subject(jobs.KindExploration, claim.TenantID),
			Input: func(jobID string) (json.RawMessage, error) {
				child := req
				child.Goal, child.Journeys, child.Secrets = goal, nil, nil
				child.Budget.MaxCredits, child.Options.MaxCredits = 0, 0 // the parent holds the budget
				var err error
				if child.SealedSecrets, err = w.sealFor(secrets, jobID); err != nil {
					return nil, err
				}
				return json.Marshal(child)
			}})
	}
	return w.fanOut(ctx, claim, children, false, log)
}

// reproRunner runs specs under the real runner behind the job's egress
// tunnel, with the job's secrets in their environment; nil when this
// worker has no runner.
func (w *Worker) reproRunner(secrets map[string]string, tun *netguard.Tunnel) explore.RunFunc {
	if w.cfg.SpecRunner == nil {
		return nil
	}
	return func(ctx context.Context, spec string) ([]specrun.TestResult, error) {
		return w.cfg.SpecRunner.RunReport(ctx, spec, specrun.Options{Env: secrets,
			Proxy: &specrun.Proxy{Server: w.proxy.Server(), Username: tun.User, Password: tun.Password}})
	}
}

// noRunner is what a worker without the runner says of what it could not verify.
const noRunner = "not run: this worker has no @playwright/test runner (set WEBPILOT_SPEC_RUNNER)"

// verifyExploration runs the reproductions and the journey.
func (w *Worker) verifyExploration(ctx context.Context, run explore.RunFunc, res *explore.Result, log *slog.Logger) {
	if run == nil {
		res.Journey.Detail = noRunner
		res.Verification = fmt.Sprintf("0 of %d reproductions verified: %s", len(res.Findings), noRunner)
		for i := range res.Findings {
			res.Findings[i].Reproduction.Detail = noRunner
		}
		return
	}
	if err := explore.Verify(ctx, run, res); err != nil {
		log.Warn("reproductions could not be run", "err", err)
		res.Verification = "reproductions stopped: " + err.Error()
	}
}

// compareExploration compares the findings with the tenant's previous
// exploration of the same app: new and still open; of the previous
// findings not reported again, those whose reproduction now passes were
// fixed.
func (w *Worker) compareExploration(ctx context.Context, run explore.RunFunc, claim store.Claim, req jobs.ExplorationRequest,
	res *explore.Result, log *slog.Logger) {
	var prev string
	var records []store.FindingRecord
	err := w.retry.do(ctx, "read the previous exploration", func() error {
		var err error
		prev, records, err = w.store.PriorFindings(ctx, claim.TenantID, claim.JobID, req.BaseURL, req.Scope)
		return err
	})
	if err != nil {
		log.Warn("not compared with the previous exploration", "err", err)
		return
	}
	prior := make([]explore.Prior, 0, len(records))
	for _, r := range records {
		p := explore.Prior{Seq: r.Seq, Type: explore.Type(r.Type), Title: r.Title, URL: r.URL, Signature: r.Signature}
		var rep explore.Reproduction
		if json.Unmarshal(r.Reproduction, &rep) == nil && rep.Verified {
			p.Spec, p.CheckLine = rep.Spec, rep.CheckLine
		}
		prior = append(prior, p)
	}
	explore.Compare(res, prev, prior)
	if run == nil {
		return
	}
	if err := explore.Recheck(ctx, run, res); err != nil {
		log.Warn("the previous findings could not be rechecked", "err", err)
	}
}

// storeOutcomes stores what each finding became: its title and evidence
// with every place it was seen, its reproduction, confidence and status.
func (w *Worker) storeOutcomes(ctx context.Context, claim store.Claim, res *explore.Result, log *slog.Logger) {
	for _, f := range res.Findings {
		o := store.FindingOutcome{Title: f.Title, Confidence: string(f.Confidence), Status: f.Status}
		o.Reproduction, _ = json.Marshal(f.Reproduction)
		o.Evidence, _ = json.Marshal(f.Evidence)
		if err := w.retry.do(ctx, "store finding outcome", func() error {
			return w.store.SetFindingOutcome(ctx, claim.JobID, claim.Attempt, f.Seq, o)
		}); err != nil {
			log.Warn("finding outcome not stored", "finding", f.Seq, "err", err)
		}
	}
}

// exploreRecorder is the recorder of an exploration: the scenario
// recorder's history and credits, and findings and checkpoints of its own.
type exploreRecorder struct{ *recorder }

func (r *exploreRecorder) Finding(ctx context.Context, f explore.Finding) (int, bool, error) {
	ev, err := json.Marshal(f.Evidence)
	if err != nil {
		return 0, false, err
	}
	path, err := json.Marshal(f.Path)
	if err != nil {
		return 0, false, err
	}
	rec := store.FindingRecord{JobID: r.jobID, Type: string(f.Type), Severity: string(f.Severity), Title: f.Title, URL: f.URL,
		State: f.State, Signature: f.Signature, Evidence: ev, Path: path}
	var seq int
	var isNew bool
	err = r.retry.do(ctx, "record finding", func() error {
		var err error
		seq, isNew, err = r.store.RecordFinding(ctx, r.attempt, rec, store.Occurrence{URL: f.URL, State: f.State})
		return err
	})
	return seq, isNew, err
}

func (r *exploreRecorder) Artifact(ctx context.Context, name, kind string, content []byte) error {
	return r.retry.do(ctx, "store artifact", func() error { return r.store.AddArtifact(ctx, r.jobID, kind, name, content) })
}

// storedExploreCheckpoint is an exploration's checkpoint with its storage
// state sealed.
type storedExploreCheckpoint struct {
	explore.Checkpoint
	SealedState string `json:"sealed_state,omitempty"`
}

func (r *exploreRecorder) Progress(ctx context.Context, cp explore.Checkpoint) error {
	sc := storedExploreCheckpoint{Checkpoint: cp}
	var err error
	if sc.SealedState, err = r.sealState(cp.StorageState); err != nil {
		return err
	}
	sc.StorageState = nil
	b, err := json.Marshal(sc)
	if err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	return r.retry.do(ctx, "save checkpoint", func() error { return r.store.SaveCheckpoint(ctx, r.jobID, r.attempt, b) })
}

func loadExploreCheckpoint(raw json.RawMessage, jobID string, sealer *jobs.Sealer) (*explore.Checkpoint, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var sc storedExploreCheckpoint
	if err := json.Unmarshal(raw, &sc); err != nil {
		return nil, fmt.Errorf("decode checkpoint: %w", err)
	}
	if sc.URL == "" {
		return nil, nil
	}
	if sc.SealedState != "" {
		st, err := sealer.Open(sc.SealedState, "state:"+jobID)
		if err != nil {
			return nil, fmt.Errorf("open storage state: %w", err)
		}
		sc.StorageState = st
	}
	return &sc.Checkpoint, nil
}
