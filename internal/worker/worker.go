// Package worker consumes jobs from NATS JetStream and runs them: it claims
// a job in Postgres under a new attempt, keeps its lease and the message
// alive while it runs, checkpoints after every step, writes the result,
// settles credits and sets the terminal state in one transaction, and only
// then acknowledges the message.
package worker

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/semaphore"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/outbox"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/tracing"
)

// Defaults of a worker's Config.
const (
	DefaultConcurrency = 2
	DefaultAckWait     = 30 * time.Second
	DefaultMaxAttempts = 5
	DefaultDrainGrace  = 20 * time.Second
	DefaultStoreRetry  = 5 * time.Minute
	// DefaultRunParts runs a project's files in as many parts as a
	// worker's default slots.
	DefaultRunParts = DefaultConcurrency
)

// Config is a worker: what it works with and how.
type Config struct {
	// Store, Consumer (the job stream's), Publisher, Browser, Policy (the
	// egress policy) and Sealer are required; Model is nil for the
	// deterministic tiers only; Logger nil means slog's default.
	Store     *store.Store
	Consumer  jetstream.Consumer
	Publisher Publisher
	Browser   Browser
	Model     orchestrator.Model
	Policy    *netguard.Policy
	Sealer    *jobs.Sealer
	Logger    *slog.Logger

	ID          string
	Concurrency int           // jobs run at once (one message pulled per free slot)
	AckWait     time.Duration // must match the consumer's; heartbeats every AckWait/3
	MaxAttempts int           // a job claimed more often than this fails
	// DrainGrace is how long running jobs may go on after SIGTERM; then each
	// is handed back at its next step boundary (zero: at once). Nil means
	// DefaultDrainGrace.
	DrainGrace *time.Duration
	// DrainHardStop is how long, after the grace, a job may take to reach
	// its step boundary before it is cancelled mid-step (its last checkpoint
	// stays). Zero means AckWait.
	DrainHardStop time.Duration
	// StoreRetry is how long a running job waits out a database outage
	// (retrying its writes) before the attempt is handed back. Zero means
	// DefaultStoreRetry.
	StoreRetry time.Duration
	Prices     llm.Prices
	Limits     orchestrator.Limits
	// SpecRunner verifies a repaired spec before it is proposed; without
	// one, repairs are reported but never proposed.
	SpecRunner SpecRunner
	// Projects runs customers' own projects in the sandbox; without it,
	// project jobs fail saying the sandbox is unavailable.
	Projects ProjectRunner
	// RunParts is how many parts a project run's files are cut into (more
	// when its tests outgrow a part: half a run's wall of the time they
	// took, or suite.PartTests): each part is one runner over its files, a
	// job of its own that any worker may take.
	RunParts int
	// Explore tunes explorations (axe-core's source, the slow-response
	// threshold).
	Explore explore.Config
	// Metrics counts claims, steps, model calls and browser contexts (nil:
	// counted in a registry nobody reads).
	Metrics *Metrics
	// StepShots pictures the page after each step of scenario, replay and
	// repair jobs, for the console's timeline.
	StepShots bool
	// Sessions carries the calls of the MCP sessions the worker holds
	// (NATS request and reply); without it, session jobs fail.
	Sessions *nats.Conn
}

// Browser opens job sessions; *browser.Browser implements it.
type Browser interface {
	NewSession(ctx context.Context, o browser.SessionOptions) (*browser.Session, error)
}

// Publisher publishes job messages (parked jobs a finished job woke);
// *jobs.Publisher implements it.
type Publisher = outbox.Publisher

// Worker runs jobs.
type Worker struct {
	cfg       Config
	store     *store.Store
	jobs      lifecycle // the store's job transitions (a fake in unit tests)
	cons      jetstream.Consumer
	pub       Publisher
	browser   Browser
	model     orchestrator.Model // nil: deterministic tier only
	policy    *netguard.Policy
	proxy     *netguard.Proxy // every job's browser traffic goes through it
	sealer    *jobs.Sealer
	log       *slog.Logger
	running   sync.WaitGroup
	yield     atomic.Bool // draining past the grace: hand jobs back at their next step boundary
	storeDown atomic.Bool // the database failed: stop pulling until it answers
	retry     *retrier
	// holder names this process in the jobs it claims: a worker restarted
	// under the same ID is another process, and a death is blamed by
	// which jobs the dead process held.
	holder string
	// share is the worker's job slots as weights: a job runs on one, a
	// job whose worker died while running it (Claim.RunAlone) on all.
	share *semaphore.Weighted
	// runners is the runner workers of the project files running here.
	runners runnerShare
}

// WithDefaults fills the zero fields with the Default… constants (and
// what follows from them: the hard stop is one AckWait).
func (c Config) WithDefaults() Config {
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	c.AckWait = cmp.Or(c.AckWait, DefaultAckWait)
	c.RunParts = cmp.Or(c.RunParts, DefaultRunParts)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, DefaultMaxAttempts)
	if c.DrainGrace == nil {
		grace := DefaultDrainGrace
		c.DrainGrace = &grace
	}
	c.DrainHardStop = cmp.Or(c.DrainHardStop, c.AckWait)
	c.StoreRetry = cmp.Or(c.StoreRetry, DefaultStoreRetry)
	if c.Prices == nil {
		c.Prices = llm.DefaultPrices
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(prometheus.NewRegistry())
	}
	if c.Limits.MaxIterationsPerStep == 0 {
		c.Limits = orchestrator.DefaultLimits()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	for name, missing := range map[string]bool{"Store": c.Store == nil, "Consumer": c.Consumer == nil, "Publisher": c.Publisher == nil,
		"Browser": c.Browser == nil, "Policy": c.Policy == nil, "Sealer": c.Sealer == nil} {
		if missing {
			errs = append(errs, fmt.Errorf("worker: Config.%s is required", name))
		}
	}
	switch {
	case c.Concurrency < 1:
		errs = append(errs, fmt.Errorf("worker: Concurrency must be at least 1, got %d", c.Concurrency))
	case c.AckWait < time.Second:
		errs = append(errs, fmt.Errorf("worker: AckWait must be at least 1s, got %s", c.AckWait))
	case c.MaxAttempts < 1:
		errs = append(errs, fmt.Errorf("worker: MaxAttempts must be at least 1, got %d", c.MaxAttempts))
	case *c.DrainGrace < 0 || c.DrainHardStop < 0 || c.StoreRetry < 0:
		errs = append(errs, errors.New("worker: DrainGrace, DrainHardStop and StoreRetry must not be negative"))
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// New builds a worker from cfg, its zero fields defaulted; a missing
// dependency or a bad value is an error naming the field.
func New(cfg Config) (*Worker, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger.With("worker", cfg.ID)
	return &Worker{cfg: cfg, store: cfg.Store, jobs: cfg.Store, cons: cfg.Consumer, pub: cfg.Publisher, browser: cfg.Browser, model: cfg.Model,
		policy: cfg.Policy, sealer: cfg.Sealer, log: log, retry: newRetrier(cfg.StoreRetry, log),
		holder: cfg.ID + "#" + bootNonce(), share: semaphore.NewWeighted(int64(cfg.Concurrency))}, nil
}

// Run pulls and runs jobs until ctx is cancelled, then drains: it stops
// pulling, lets running jobs go on for DrainGrace, then hands each back at
// its next step boundary (its checkpoint stays, the message is redelivered
// at once), cancelling any that has not reached one after DrainHardStop.
func (w *Worker) Run(ctx context.Context) error {
	proxy, err := netguard.NewProxy(w.policy, w.log)
	if err != nil {
		return err
	}
	w.proxy = proxy
	defer proxy.Close()
	hard, stopHard := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHard()
	slots := make(chan struct{}, w.cfg.Concurrency)
	w.log.Info("worker started", "concurrency", w.cfg.Concurrency)
	for ctx.Err() == nil {
		if w.storeDown.Load() {
			w.waitForStore(ctx)
			continue
		}
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
	w.log.Info("draining", "grace", *w.cfg.DrainGrace)
	done := make(chan struct{})
	go func() { w.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(*w.cfg.DrainGrace):
		w.log.Info("drain grace reached; handing jobs back at their next step boundary")
		w.yield.Store(true)
		select {
		case <-done:
		case <-time.After(w.cfg.DrainHardStop):
			stopHard()
			<-done
		}
	}
	w.log.Info("worker stopped")
	return nil
}

// waitForStore pauses pulling while the database is unreachable, so that
// an outage does not spend the deliveries of every waiting message, and
// resumes within moments of its return.
func (w *Worker) waitForStore(ctx context.Context) {
	delay := 200 * time.Millisecond
	w.log.Warn("database unavailable: pausing until it answers")
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := w.store.Ping(pctx)
		cancel()
		if err == nil {
			w.storeDown.Store(false)
			w.log.Info("database back: pulling jobs again")
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = min(delay*2, 2*time.Second)
	}
}

// publishWoken publishes outbox items the store handed back (the parked
// jobs a freed slot woke, a suite's children). A failure is left to the
// reconciler, which republishes unconfirmed outbox rows.
func (w *Worker) publishWoken(ctx context.Context, items []store.OutboxItem) {
	if len(items) == 0 {
		return
	}
	if _, err := outbox.Publish(ctx, w.pub, w.store, items); err != nil {
		w.log.Warn("could not publish woken jobs; the reconciler will", "jobs", len(items), "err", err)
	}
}

// bootNonce tells this process's claims from those of an earlier process
// with the same worker ID.
func bootNonce() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// lifecycle is what a worker asks of the store to move a job through its
// states; *store.Store implements it.
type lifecycle interface {
	ClaimJob(ctx context.Context, jobID, workerID string, lease time.Duration) (store.Claim, error)
	ExtendLease(ctx context.Context, jobID string, attempt int, lease time.Duration) (cancel bool, err error)
	ReleaseLease(ctx context.Context, jobID string, attempt int) error
	FinishJob(ctx context.Context, f store.Finish) ([]store.OutboxItem, error)
	EndAbandoned(ctx context.Context, jobID string) error
}

// handle runs one message's job to a terminal state, or hands it back.
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg) {
	m, err := jobs.ParseMessage(msg.Data())
	if err != nil {
		w.log.Error("dropping malformed job message", "err", err)
		_ = msg.Term()
		return
	}
	claim, log, ok := w.claim(ctx, msg, m.JobID)
	if !ok {
		return
	}
	log.Info("job claimed", "queued_for", claim.ClaimedAt.Sub(claim.CreatedAt))

	// The job's span continues the trace of the request that submitted it
	// (its message's traceparent); its model calls are its children.
	spanCtx, span := tracing.Tracer().Start(tracing.WithTraceParent(ctx, msg.Headers().Get(jobs.TraceParentHeader)), "job "+claim.Kind,
		trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attribute.String("webpilot.job.id", claim.JobID),
			attribute.Int("webpilot.job.attempt", claim.Attempt), attribute.String("webpilot.tenant.id", claim.TenantID)))
	defer span.End()
	jobCtx, cancelJob := context.WithCancel(spanCtx)
	defer cancelJob()
	hb := w.heartbeat(jobCtx, cancelJob, msg, claim, log)

	// A job whose worker died running it runs alone: another tenant's job
	// beside it is then never taken down with it, nor blamed for it.
	weight := int64(1)
	if claim.RunAlone {
		weight = int64(w.cfg.Concurrency)
		log.Info("running alone: a worker died while running it")
	}
	var out outcome
	if err := w.share.Acquire(jobCtx, weight); err != nil {
		out = handedBack(err)
	} else {
		out = w.run(jobCtx, claim, hb.cancelRequested.Load, log)
		w.share.Release(weight)
	}
	cancelJob()
	<-hb.done
	span.SetAttributes(attribute.String("webpilot.job.state", string(out.Finish.State)))
	if out.Finish.State == store.JobStateFailed {
		span.SetStatus(codes.Error, out.Finish.Error)
	}
	if hb.lost.Load() {
		return // a newer attempt owns the job; its worker acks
	}
	w.dispose(context.WithoutCancel(ctx), msg, claim, out, log)
}

// claim claims the message's job and, when it cannot run it now, answers
// the message as the reason requires: a job leased to a live attempt is
// looked at again when the lease lapses, a stale or parked one is
// acknowledged, a database outage or error retried later, and a job past
// its attempts is failed. ok is true for a job to run.
func (w *Worker) claim(ctx context.Context, msg jetstream.Msg, jobID string) (store.Claim, *slog.Logger, bool) {
	log := w.log.With("job", jobID)
	claim, err := w.jobs.ClaimJob(ctx, jobID, w.holder, w.cfg.AckWait)
	var leased *store.LeasedError
	switch {
	case errors.As(err, &leased):
		// Its worker may be alive (or just died): look again when the lease lapses.
		_ = msg.NakWithDelay(leased.Remaining + 100*time.Millisecond)
		return claim, log, false
	case errors.Is(err, store.ErrStale):
		log.Debug("stale message acknowledged")
		_ = msg.Ack()
		return claim, log, false
	case errors.Is(err, store.ErrCancelledAbandoned):
		// Cancelled, and its attempt stopped (its worker died, or handed
		// it back): ended as cancelled, never started again.
		if err := w.jobs.EndAbandoned(ctx, jobID); err != nil {
			log.Warn("could not end a cancelled job", "err", err)
			_ = msg.NakWithDelay(time.Second)
			return claim, log, false
		}
		log.Info("cancelled job not started again: its last attempt stopped")
		_ = msg.Ack()
		return claim, log, false
	case errors.Is(err, store.ErrTenantBusy):
		// Parked: published again when one of the tenant's jobs ends, so
		// waiting spends no delivery and no attempt.
		log.Debug("tenant at its running cap; job parked")
		_ = msg.Ack()
		return claim, log, false
	case store.Transient(err):
		log.Warn("claim failed: database unavailable", "err", err)
		w.storeDown.Store(true)
		_ = msg.NakWithDelay(2 * time.Second)
		return claim, log, false
	case err != nil:
		w.cfg.Metrics.errors.WithLabelValues("claim").Inc()
		log.Error("claim failed", "err", err)
		_ = msg.NakWithDelay(time.Second)
		return claim, log, false
	}
	if claim.Attempt == 1 {
		w.cfg.Metrics.claimLatency.Observe(claim.ClaimedAt.Sub(claim.CreatedAt).Seconds())
	}
	log = log.With("attempt", claim.Attempt, "tenant", claim.TenantID)
	reason := ""
	switch {
	case jobs.Kind(claim.Kind).RunsCustomerCode() && claim.Crashes >= jobs.CrashLimit:
		// A customer's project that takes its worker down would take down
		// every worker it is delivered to.
		reason = fmt.Sprintf("stopped: its worker died while running it %d times (its heartbeat stopped and it never ended), "+
			"so it is not run again; the project's run likely exhausted the worker (memory, a hang)", claim.Crashes)
	case claim.Attempt > w.cfg.MaxAttempts:
		reason = fmt.Sprintf("gave up after %d attempts: the job's workers stopped or timed out each time", w.cfg.MaxAttempts)
	}
	if reason != "" {
		f := store.Finish{JobID: claim.JobID, Attempt: claim.Attempt, State: store.JobStateFailed, Result: json.RawMessage(`{}`), Error: reason}
		if err := w.finish(ctx, f); err != nil {
			log.Error("could not fail undeliverable job", "err", err)
			return claim, log, false
		}
		_ = msg.Ack()
		return claim, log, false
	}
	return claim, log, true
}

// beat is a running job's heartbeat: done closes when it stops; lost says
// a newer attempt took the job (the run was cancelled), cancelRequested
// that its tenant asked to cancel it.
type beat struct {
	done                  chan struct{}
	lost, cancelRequested atomic.Bool
}

// heartbeat keeps the message in progress and the lease extended every
// AckWait/3 until ctx ends; a lease lost to a newer attempt cancels the run.
func (w *Worker) heartbeat(ctx context.Context, cancelRun func(), msg jetstream.Msg, claim store.Claim, log *slog.Logger) *beat {
	hb := &beat{done: make(chan struct{})}
	go func() {
		defer close(hb.done)
		t := time.NewTicker(w.cfg.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = msg.InProgress()
				cancel, err := w.jobs.ExtendLease(ctx, claim.JobID, claim.Attempt, w.cfg.AckWait)
				if errors.Is(err, store.ErrFenced) {
					log.Warn("lease lost to a newer attempt; stopping")
					hb.lost.Store(true)
					cancelRun()
					return
				}
				if cancel {
					hb.cancelRequested.Store(true)
				}
			}
		}
	}()
	return hb
}

// dispose does with a run's message and job what its outcome says: a
// terminal outcome is written and the message acknowledged (left for
// redelivery when the write fails); a job handed back releases its lease
// and is redelivered at once; a bulk job waiting for its children only
// acknowledges. An attempt fenced by a newer one touches nothing.
func (w *Worker) dispose(ctx context.Context, msg jetstream.Msg, claim store.Claim, out outcome, log *slog.Logger) {
	if errors.Is(out.err, store.ErrFenced) {
		return // a newer attempt owns the job; its worker acks
	}
	switch out.disposition {
	case handBack:
		// Keep the checkpoint; let another worker (or this one) resume at once.
		_ = w.jobs.ReleaseLease(ctx, claim.JobID, claim.Attempt)
		_ = msg.NakWithDelay(time.Second)
		log.Info("job handed back", "why", out.err)
	case detached:
		_ = msg.Ack()
		log.Info("job waits for its children")
	case finished:
		w.complete(ctx, msg, claim, out.Finish, log)
	}
}

// complete writes a run's terminal outcome and then acknowledges its
// message; a write that fails leaves the message for redelivery.
func (w *Worker) complete(ctx context.Context, msg jetstream.Msg, claim store.Claim, f store.Finish, log *slog.Logger) {
	f.JobID, f.Attempt = claim.JobID, claim.Attempt
	if err := w.finish(ctx, f); err != nil {
		if errors.Is(err, store.ErrFenced) {
			return
		}
		w.cfg.Metrics.errors.WithLabelValues("finish").Inc()
		log.Error("finish failed; the message will be redelivered", "err", err)
		return
	}
	w.cfg.Metrics.finished.WithLabelValues(claim.Kind, string(f.State)).Inc()
	if err := msg.Ack(); err != nil {
		log.Warn("ack failed (the next delivery will find the job finished)", "err", err)
	}
	log.Info("job finished", "state", f.State, "error", f.Error)
}

// finish writes a job's terminal outcome (retrying through a database
// outage) and publishes the parked jobs its freed slot woke.
func (w *Worker) finish(ctx context.Context, f store.Finish) error {
	var woken []store.OutboxItem
	err := w.retry.do(ctx, "finish job", func() error {
		var err error
		woken, err = w.jobs.FinishJob(ctx, f)
		return err
	})
	if err != nil {
		return err
	}
	w.publishWoken(ctx, woken)
	return nil
}

// disposition is what becomes of a job after a run.
type disposition int

const (
	// finished: the run reached a terminal outcome, to be written.
	finished disposition = iota
	// handBack: not finished; another attempt resumes it (a drain, a
	// database outage, no browser).
	handBack
	// detached: a bulk job waiting for its children; its message is done.
	detached
)

// outcome is how a run ended: its terminal Finish, or another disposition
// and why.
type outcome struct {
	store.Finish
	disposition disposition
	err         error
}

// handedBack is the outcome of a run that must resume in another attempt.
func handedBack(err error) outcome { return outcome{disposition: handBack, err: err} }

// run executes the job and describes how it ended.
func (w *Worker) run(ctx context.Context, claim store.Claim, cancelled func() bool, log *slog.Logger) outcome {
	switch jobs.Kind(claim.Kind) {
	case jobs.KindScenario:
		return w.runScenario(ctx, claim, cancelled, log)
	case jobs.KindRepair:
		return w.runTest(ctx, claim, cancelled, log, jobs.KindRepair)
	case jobs.KindReplay:
		return w.runTest(ctx, claim, cancelled, log, jobs.KindReplay)
	case jobs.KindSuiteRun, jobs.KindSuiteRepair:
		return w.runSuite(ctx, claim, log)
	case jobs.KindExploration:
		return w.runExploration(ctx, claim, cancelled, log)
	case jobs.KindProjectList:
		return w.runProjectList(ctx, claim, log)
	case jobs.KindProjectRun:
		return w.runProjectFanOut(ctx, claim, log)
	case jobs.KindProjectFile:
		return w.runProjectFile(ctx, claim, log)
	case jobs.KindProjectRepair, jobs.KindProjectRepairFile:
		return w.runProjectRepair(ctx, claim, log)
	case jobs.KindSession:
		return w.runSession(ctx, claim, cancelled, log)
	}
	return failed(fmt.Sprintf("job kind %q is not supported by this worker", claim.Kind))
}

func failed(reason string) outcome {
	return outcome{Finish: store.Finish{State: store.JobStateFailed, Error: reason, Result: json.RawMessage(`{}`)}}
}

// openInput decodes a job's input (a request of type T) and opens its
// sealed secrets.
func openInput[T any, P interface {
	*T
	Sealed() string
}](w *Worker, claim store.Claim) (T, map[string]string, error) {
	var in T
	if err := json.Unmarshal(claim.Input, &in); err != nil {
		return in, nil, fmt.Errorf("the job's input cannot be decoded: %w", err)
	}
	secrets, err := w.openSecrets(P(&in).Sealed(), claim.JobID)
	return in, secrets, err
}

// openSecrets opens a job's sealed secrets.
func (w *Worker) openSecrets(sealed, jobID string) (map[string]string, error) {
	secrets := map[string]string{}
	if sealed == "" {
		return secrets, nil
	}
	plain, err := w.sealer.Open(sealed, "secrets:"+jobID)
	if err != nil {
		return nil, fmt.Errorf("the job's secrets cannot be opened: %w", err)
	}
	if err := json.Unmarshal(plain, &secrets); err != nil {
		return nil, fmt.Errorf("the job's secrets cannot be decoded: %w", err)
	}
	return secrets, nil
}

// execution is one agent run of a job in a fresh browser session whose
// traffic goes through the egress guard.
type execution struct {
	claim     store.Claim
	in        orchestrator.Input
	cancelled func() bool
	log       *slog.Logger
	// then turns the run's result into the job's outcome while the job's
	// egress tunnel is still open.
	then func(res orchestrator.Result, tun *netguard.Tunnel) outcome
}

// execute runs the agent for a job and maps how it ended.
func (w *Worker) execute(ctx context.Context, x execution) outcome {
	claim, log := x.claim, x.log
	resume, err := loadCheckpoint(claim.Checkpoint, claim.JobID, w.sealer)
	if err != nil {
		log.Warn("checkpoint unusable; starting over", "err", err)
		resume = nil
	}
	tun := w.proxy.Open()
	defer tun.Close()
	opts, err := deviceOptions(x.in.Scenario.Options.Device)
	if err != nil {
		return failed(err.Error())
	}
	if resume != nil {
		if resume.RestoreStorage() {
			opts.StorageState = resume.StorageState
		}
		log.Info("resuming", "next_step", resume.NextStep+1)
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

	agent := &orchestrator.Agent{Page: sess, Recorder: &recorder{store: w.store, jobID: claim.JobID, attempt: claim.Attempt,
		prices: w.cfg.Prices, sealer: w.sealer, retry: w.retry, metrics: w.cfg.Metrics}, Cache: NewStepCache(w.store, claim.TenantID), Limits: w.cfg.Limits, Log: log}
	if w.model != nil {
		agent.Model = w.model
	}
	in := x.in
	in.Resume, in.Cancelled, in.Yield = resume, stopsWhen(x.cancelled, meter.Exhausted), w.yield.Load
	in.CallIDPrefix = fmt.Sprintf("%s/%d", claim.JobID, claim.Attempt)
	res, runErr := agent.Run(ctx, in)
	from := 0
	if resume != nil {
		from = resume.NextStep
	}
	w.cfg.Metrics.ran(res, from)
	switch {
	case errors.Is(runErr, store.ErrFenced):
		return outcome{err: runErr}
	case ctx.Err() != nil:
		return handedBack(ctx.Err())
	case errors.Is(runErr, orchestrator.ErrYielded):
		return handedBack(runErr)
	case store.Transient(runErr):
		// The database stayed away longer than the job waits: an outage is
		// not the job's failure, so the attempt is handed back.
		return handedBack(runErr)
	}
	closeSession() // the browser is done; what follows may run a spec
	meter.Close(ctx)
	if meter.Exhausted() && res.Status == orchestrator.StatusCancelled {
		res.Status, res.Error = orchestrator.StatusBudgetExhausted, "stopped: the credit budget left cannot cover more browser time"
	}
	return x.then(res, tun)
}

// stopsWhen is a job's cancellation check that also holds when any of more
// does (its browser time no longer covered).
func stopsWhen(cancelled func() bool, more ...func() bool) func() bool {
	return func() bool {
		if cancelled != nil && cancelled() {
			return true
		}
		for _, f := range more {
			if f() {
				return true
			}
		}
		return false
	}
}

// deviceOptions are the session options emulating the named device (none
// for a desktop). The API refuses an unknown device; a job stored before
// must not run on a desktop instead.
func deviceOptions(name string) (browser.SessionOptions, error) {
	if name == "" {
		return browser.SessionOptions{}, nil
	}
	d, ok := browser.DeviceNamed(name)
	if !ok {
		return browser.SessionOptions{}, fmt.Errorf("the device %q is not one Playwright emulates", name)
	}
	return browser.SessionOptions{Device: &d}, nil
}

// openSession opens a job's browser context with its traffic sent through
// the job's egress tunnel; closing it twice is harmless.
func (w *Worker) openSession(ctx context.Context, tun *netguard.Tunnel, log *slog.Logger, opts browser.SessionOptions) (*browser.Session, func(), error) {
	opts.Policy, opts.Logger = w.policy, log
	opts.Egress = &browser.EgressProxy{Server: w.proxy.Server(), Username: tun.User, Password: tun.Password, Blocked: tun.Blocked}
	sess, err := w.browser.NewSession(ctx, opts)
	if err != nil {
		w.cfg.Metrics.errors.WithLabelValues("session").Inc()
		return nil, nil, fmt.Errorf("browser unavailable: %w", err)
	}
	w.cfg.Metrics.contexts.Inc()
	return sess, sync.OnceFunc(func() {
		_ = sess.Close()
		w.cfg.Metrics.contexts.Dec()
	}), nil
}

// encodeResult stores the agent's result with where the job's time went.
func encodeResult(res orchestrator.Result, claim store.Claim, extra any) (json.RawMessage, error) {
	view := resultView{Result: res, QueueTime: claim.ClaimedAt.Sub(claim.CreatedAt), Attempt: claim.Attempt, Repair: extra}
	return json.Marshal(view)
}

// jobState is the job's terminal state of a run's status (one of the
// store's terminal states); any other ends the job failed.
func jobState(status orchestrator.Status) store.JobState {
	if status.Terminal() {
		return status
	}
	return store.JobStateFailed
}

// runScenario generates a test from a scenario and stores it in the suite.
func (w *Worker) runScenario(ctx context.Context, claim store.Claim, cancelled func() bool, log *slog.Logger) outcome {
	sc, secrets, err := openInput[scenario.Scenario](w, claim)
	if err != nil {
		return failed(err.Error())
	}
	// Everything logged for this job, the browser's blocked URLs included,
	// goes out with the secrets' every representation redacted.
	log = orchestrator.RedactLogger(log, secrets)
	origin := sc.Origin()
	exps, err := w.store.Experiences(ctx, claim.TenantID, origin, w.cfg.Limits.ExperiencesCap)
	if err != nil {
		log.Warn("experiences unavailable", "err", err)
	}
	return w.execute(ctx, execution{claim: claim, cancelled: cancelled, log: log,
		in: orchestrator.Input{Scenario: sc, Secrets: secrets, Experiences: exps, StepShots: w.cfg.StepShots},
		then: func(res orchestrator.Result, _ *netguard.Tunnel) outcome {
			if len(res.Experiences) > 0 {
				if err := w.store.AddExperiences(ctx, claim.TenantID, origin, res.Experiences, w.cfg.Limits.ExperiencesCap); err != nil {
					log.Warn("experiences not saved", "err", err)
				}
			}
			view := resultView{Result: res, QueueTime: claim.ClaimedAt.Sub(claim.CreatedAt), Attempt: claim.Attempt}
			if sc.Project != "" && res.Status == orchestrator.StatusSucceeded {
				into, out, ok := w.writeIntoProject(ctx, claim, sc, res, secrets, log)
				if !ok {
					return out
				}
				view.IntoProject = into
			}
			b, err := json.Marshal(view)
			if err != nil {
				return failed("the result cannot be encoded: " + err.Error())
			}
			manifest, _ := json.Marshal(res.Manifest)
			stored := sc
			stored.SealedSecrets = "" // the suite keeps the scenario, never its secrets
			scJSON, _ := json.Marshal(stored)
			name := sc.Name
			if name == "" {
				name = "scenario " + claim.JobID
			}
			return outcome{Finish: store.Finish{State: jobState(res.Status), Result: b, Script: res.Script, Error: res.Error,
				Test: &store.TestRecord{Name: name, Tags: sc.Tags, Scenario: scJSON, Manifest: manifest}}}
		}})
}

// resultView is the stored result: the agent's result and where the job's
// time went before it ran.
type resultView struct {
	orchestrator.Result
	QueueTime time.Duration `json:"queue_ns"`
	Attempt   int           `json:"attempt"`
	Repair    any           `json:"repair,omitempty"` // a repair job's report
	// IntoProject is what a scenario naming a project wrote into it.
	IntoProject *suite.IntoProject `json:"into_project,omitempty"`
}
