// Package worker consumes jobs from NATS JetStream and runs them: it claims
// a job in Postgres under a new attempt, keeps its lease and the message
// alive while it runs, checkpoints after every step, writes the result,
// settles credits and sets the terminal state in one transaction, and only
// then acknowledges the message.
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/browser"
	"github.com/webpilot/webpilot/jobs"
	"github.com/webpilot/webpilot/llm"
	"github.com/webpilot/webpilot/orchestrator"
	"github.com/webpilot/webpilot/scenario"
	"github.com/webpilot/webpilot/store"
)

// Config tunes a worker.
type Config struct {
	ID          string
	Concurrency int           // jobs run at once (one message pulled per free slot)
	AckWait     time.Duration // must match the consumer's; heartbeats every AckWait/3
	MaxAttempts int           // a job claimed more often than this fails
	DrainGrace  time.Duration // how long running jobs may finish after SIGTERM
	Prices      llm.Prices
	Limits      orchestrator.Limits
}

// Browser opens job sessions; *browser.Browser implements it.
type Browser interface {
	NewSession(ctx context.Context, o browser.SessionOptions) (*browser.Session, error)
}

// Worker runs jobs.
type Worker struct {
	cfg     Config
	store   *store.Store
	cons    jetstream.Consumer
	browser Browser
	model   orchestrator.Model // nil: deterministic tier only
	policy  browser.URLPolicy
	sealer  *jobs.Sealer
	log     *slog.Logger
	running sync.WaitGroup
}

// New builds a worker.
func New(cfg Config, st *store.Store, cons jetstream.Consumer, b Browser, model orchestrator.Model,
	policy browser.URLPolicy, sealer *jobs.Sealer, log *slog.Logger) *Worker {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 2
	}
	if cfg.AckWait == 0 {
		cfg.AckWait = 30 * time.Second
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 5
	}
	if cfg.DrainGrace == 0 {
		cfg.DrainGrace = 20 * time.Second
	}
	if cfg.Prices == nil {
		cfg.Prices = llm.DefaultPrices
	}
	if cfg.Limits.MaxIterationsPerStep == 0 {
		cfg.Limits = orchestrator.DefaultLimits()
	}
	if log == nil {
		log = slog.Default()
	}
	return &Worker{cfg: cfg, store: st, cons: cons, browser: b, model: model, policy: policy, sealer: sealer,
		log: log.With("worker", cfg.ID)}
}

// Run pulls and runs jobs until ctx is cancelled, then drains: it stops
// pulling, lets running jobs finish for DrainGrace, and hands back the rest
// (their last checkpoint stays, the message is redelivered).
func (w *Worker) Run(ctx context.Context) error {
	hard, stopHard := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHard()
	slots := make(chan struct{}, w.cfg.Concurrency)
	w.log.Info("worker started", "concurrency", w.cfg.Concurrency)
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		batch, err := w.cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			<-slots
			if ctx.Err() == nil {
				w.log.Warn("fetch failed", "err", err)
				time.Sleep(500 * time.Millisecond)
			}
			continue
		}
		got := false
		for msg := range batch.Messages() {
			got = true
			w.running.Add(1)
			go func() {
				defer func() { <-slots; w.running.Done() }()
				w.handle(hard, msg)
			}()
		}
		if !got {
			<-slots
		}
	}
	w.log.Info("draining", "grace", w.cfg.DrainGrace)
	done := make(chan struct{})
	go func() { w.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(w.cfg.DrainGrace):
		stopHard()
		<-done
	}
	w.log.Info("worker stopped")
	return nil
}

// handle runs one message's job to a terminal state, or hands it back.
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg) {
	m, err := jobs.ParseMessage(msg.Data())
	if err != nil {
		w.log.Error("dropping malformed job message", "err", err)
		_ = msg.Term()
		return
	}
	log := w.log.With("job", m.JobID)
	lease := w.cfg.AckWait
	claim, err := w.store.ClaimJob(ctx, m.JobID, w.cfg.ID, lease)
	var leased *store.LeasedError
	switch {
	case errors.As(err, &leased):
		// Its worker may be alive (or just died): look again when the lease lapses.
		_ = msg.NakWithDelay(leased.Remaining + 100*time.Millisecond)
		return
	case errors.Is(err, store.ErrStale):
		log.Debug("stale message acknowledged")
		_ = msg.Ack()
		return
	case errors.Is(err, store.ErrTenantBusy):
		_ = msg.NakWithDelay(2 * time.Second)
		return
	case err != nil:
		log.Error("claim failed", "err", err)
		_ = msg.NakWithDelay(time.Second)
		return
	}
	log = log.With("attempt", claim.Attempt, "tenant", claim.TenantID)
	if claim.Attempt > w.cfg.MaxAttempts {
		reason := fmt.Sprintf("gave up after %d attempts: the job's workers stopped or timed out each time", w.cfg.MaxAttempts)
		if err := w.store.FinishJob(ctx, store.Finish{JobID: claim.JobID, Attempt: claim.Attempt, State: store.StateFailed,
			Result: json.RawMessage(`{}`), Error: reason}); err != nil {
			log.Error("could not fail undeliverable job", "err", err)
			return
		}
		_ = msg.Ack()
		return
	}
	log.Info("job claimed", "queued_for", claim.ClaimedAt.Sub(claim.CreatedAt))

	jobCtx, cancelJob := context.WithCancel(ctx)
	defer cancelJob()
	var cancelRequested, lost atomic.Bool
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		t := time.NewTicker(w.cfg.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-jobCtx.Done():
				return
			case <-t.C:
				_ = msg.InProgress()
				cancel, err := w.store.ExtendLease(jobCtx, claim.JobID, claim.Attempt, lease)
				if errors.Is(err, store.ErrFenced) {
					log.Warn("lease lost to a newer attempt; stopping")
					lost.Store(true)
					cancelJob()
					return
				}
				if cancel {
					cancelRequested.Store(true)
				}
			}
		}
	}()

	fin := w.run(jobCtx, claim, cancelRequested.Load, log)
	cancelJob()
	<-hbDone

	if lost.Load() || errors.Is(fin.err, store.ErrFenced) {
		return // a newer attempt owns the job; its worker acks
	}
	if ctx.Err() != nil && fin.handBack {
		// Draining: keep the checkpoint, let another worker resume at once.
		_ = w.store.ReleaseLease(context.Background(), claim.JobID, claim.Attempt)
		_ = msg.NakWithDelay(time.Second)
		log.Info("job handed back during drain")
		return
	}
	fin.Finish.JobID, fin.Finish.Attempt = claim.JobID, claim.Attempt
	if err := w.store.FinishJob(context.WithoutCancel(ctx), fin.Finish); err != nil {
		if errors.Is(err, store.ErrFenced) {
			return
		}
		log.Error("finish failed; the message will be redelivered", "err", err)
		return
	}
	if err := msg.Ack(); err != nil {
		log.Warn("ack failed (the next delivery will find the job finished)", "err", err)
	}
	log.Info("job finished", "state", fin.Finish.State, "error", fin.Finish.Error)
}

type finish struct {
	store.Finish
	handBack bool // stopped by a drain, not finished
	err      error
}

// run executes the job and describes how it ended.
func (w *Worker) run(ctx context.Context, claim store.Claim, cancelled func() bool, log *slog.Logger) finish {
	failed := func(reason string) finish {
		return finish{Finish: store.Finish{State: store.StateFailed, Error: reason, Result: json.RawMessage(`{}`)}}
	}
	if claim.Kind != string(jobs.KindScenario) {
		return failed(fmt.Sprintf("job kind %q is not supported by this worker", claim.Kind))
	}
	var sc scenario.Scenario
	if err := json.Unmarshal(claim.Input, &sc); err != nil {
		return failed("the job's input cannot be decoded: " + err.Error())
	}
	secrets := map[string]string{}
	if sc.SealedSecrets != "" {
		plain, err := w.sealer.Open(sc.SealedSecrets, "secrets:"+claim.JobID)
		if err != nil {
			return failed("the job's secrets cannot be opened: " + err.Error())
		}
		if err := json.Unmarshal(plain, &secrets); err != nil {
			return failed("the job's secrets cannot be decoded: " + err.Error())
		}
	}
	resume, err := loadCheckpoint(claim.Checkpoint, claim.JobID, w.sealer)
	if err != nil {
		log.Warn("checkpoint unusable; starting over", "err", err)
		resume = nil
	}
	opts := browser.SessionOptions{Policy: w.policy, Logger: log}
	if resume != nil {
		opts.StorageState = resume.StorageState
		log.Info("resuming", "next_step", resume.NextStep+1)
	}
	sess, err := w.browser.NewSession(ctx, opts)
	if err != nil {
		return finish{handBack: true, err: err, Finish: store.Finish{State: store.StateFailed, Error: "browser unavailable: " + err.Error()}}
	}
	defer func() { _ = sess.Close() }()

	origin := sc.Origin()
	exps, err := w.store.Experiences(ctx, claim.TenantID, origin, w.cfg.Limits.ExperiencesCap)
	if err != nil {
		log.Warn("experiences unavailable", "err", err)
	}
	agent := &orchestrator.Agent{Page: sess, Recorder: &recorder{store: w.store, jobID: claim.JobID, attempt: claim.Attempt,
		prices: w.cfg.Prices, sealer: w.sealer}, Limits: w.cfg.Limits, Log: log}
	if w.model != nil {
		agent.Model = w.model
	}
	res, runErr := agent.Run(ctx, orchestrator.Input{Scenario: sc, Secrets: secrets, Experiences: exps, Resume: resume, Cancelled: cancelled})
	if errors.Is(runErr, store.ErrFenced) {
		return finish{err: runErr}
	}
	if ctx.Err() != nil {
		return finish{handBack: true, err: ctx.Err()}
	}
	if len(res.Experiences) > 0 {
		if err := w.store.AddExperiences(ctx, claim.TenantID, origin, res.Experiences, w.cfg.Limits.ExperiencesCap); err != nil {
			log.Warn("experiences not saved", "err", err)
		}
	}
	view := resultView{Result: res, QueueTime: claim.ClaimedAt.Sub(claim.CreatedAt), Attempt: claim.Attempt}
	b, err := json.Marshal(view)
	if err != nil {
		return failed("the result cannot be encoded: " + err.Error())
	}
	state := map[string]string{
		orchestrator.StatusSucceeded: store.StateSucceeded, orchestrator.StatusFailed: store.StateFailed,
		orchestrator.StatusCancelled: store.StateCancelled, orchestrator.StatusBudgetExhausted: store.StateBudgetExhausted,
	}[res.Status]
	if state == "" {
		state = store.StateFailed
	}
	manifest, _ := json.Marshal(res.Manifest)
	stored := sc
	stored.SealedSecrets = "" // the suite keeps the scenario, never its secrets
	scJSON, _ := json.Marshal(stored)
	name := sc.Name
	if name == "" {
		name = "scenario " + claim.JobID
	}
	return finish{Finish: store.Finish{State: state, Result: b, Script: res.Script, Error: res.Error,
		Test: &store.TestRecord{Name: name, Scenario: scJSON, Manifest: manifest}}}
}

// resultView is the stored result: the agent's result and where the job's
// time went before it ran.
type resultView struct {
	orchestrator.Result
	QueueTime time.Duration `json:"queue_ns"`
	Attempt   int           `json:"attempt"`
}
