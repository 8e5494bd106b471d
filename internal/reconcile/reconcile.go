// Package reconcile holds the dispatcher's background loops that keep NATS
// and Postgres in agreement: republishing jobs whose message may be lost,
// failing jobs whose deliveries ran out, and releasing orphaned credit holds.
package reconcile

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/outbox"
	"github.com/webpilot/webpilot/internal/store"
)

// Publisher sends job ids to the queue; *jobs.Publisher implements it.
type Publisher = outbox.Publisher

// Defaults of Config's zero fields.
const (
	DefaultEvery      = 2 * time.Second
	DefaultUnsent     = 5 * time.Second
	DefaultStale      = time.Minute
	DefaultSweepEvery = 30 * time.Second
)

// Config is what a Reconciler works on and how often.
type Config struct {
	// Store holds the jobs, holds and outbox (required).
	Store *store.Store
	// Publisher republishes job messages (required).
	Publisher Publisher
	// Logger receives the loops' reports; slog.Default() when nil.
	Logger *slog.Logger

	Every  time.Duration // how often the republisher looks; default DefaultEvery
	Unsent time.Duration // an unconfirmed publish older than this is retried; default DefaultUnsent
	// Stale: a queued job published longer ago, or a running one whose
	// lease lapsed longer ago, may have lost its message (a broker crash)
	// and is republished. A republished job is not looked at again before
	// Unsent, then 2×, 4×, … 32× Unsent. Default DefaultStale.
	Stale      time.Duration
	SweepEvery time.Duration // orphan hold sweep; default DefaultSweepEvery
	// InStream, if set, counts the job messages the stream still holds
	// (undelivered plus unacknowledged). Stale jobs are only republished
	// when it is lower than the number of jobs waiting for a message, so a
	// long but intact backlog is not duplicated.
	InStream func(ctx context.Context) (int, error)
	// ArtifactRetention is how long jobs' files are kept; the sweep deletes
	// older ones. Zero keeps them.
	ArtifactRetention time.Duration
}

// WithDefaults fills the zero fields with their defaults.
func (c Config) WithDefaults() Config {
	c.Every = cmp.Or(c.Every, DefaultEvery)
	c.Unsent = cmp.Or(c.Unsent, DefaultUnsent)
	c.Stale = cmp.Or(c.Stale, DefaultStale)
	c.SweepEvery = cmp.Or(c.SweepEvery, DefaultSweepEvery)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("reconcile: Config.Store is required")
	case c.Publisher == nil:
		return errors.New("reconcile: Config.Publisher is required")
	case c.Every < 0 || c.Unsent < 0 || c.Stale < 0 || c.SweepEvery < 0 || c.ArtifactRetention < 0:
		return errors.New("reconcile: durations must not be negative")
	}
	return nil
}

// Reconciler runs the background work that keeps the queue and the
// database in agreement.
type Reconciler struct {
	cfg   Config
	store *store.Store
	pub   Publisher
	log   *slog.Logger
}

// New builds a Reconciler from cfg, with defaults filled in.
func New(cfg Config) (*Reconciler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Reconciler{cfg: cfg, store: cfg.Store, pub: cfg.Publisher, log: cfg.Logger}, nil
}

// Run runs the republisher, the parked-job waker and the sweeper until ctx ends.
func (l *Reconciler) Run(ctx context.Context) {
	tick := time.NewTicker(l.cfg.Every)
	defer tick.Stop()
	sweep := time.NewTicker(l.cfg.SweepEvery)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if n, err := l.Republish(ctx); err != nil {
				l.log.Warn("republish failed", "err", err)
			} else if n > 0 {
				l.log.Info("republished jobs", "count", n)
			}
			if n, err := l.Wake(ctx); err != nil {
				l.log.Warn("waking parked jobs failed", "err", err)
			} else if n > 0 {
				l.log.Info("woke parked jobs", "count", n)
			}
		case <-sweep.C:
			if n, err := l.store.ReleaseOrphanHolds(ctx); err != nil {
				l.log.Warn("hold sweep failed", "err", err)
			} else if n > 0 {
				l.log.Info("released orphan holds", "count", n)
			}
			if _, err := l.store.ForgetSubmitKeys(ctx, 48*time.Hour); err != nil {
				l.log.Warn("idempotency key sweep failed", "err", err)
			}
			if _, err := l.store.PruneConsoleSessions(ctx); err != nil {
				l.log.Warn("console session sweep failed", "err", err)
			}
			if l.cfg.ArtifactRetention > 0 {
				if n, err := l.store.PruneArtifacts(ctx, l.cfg.ArtifactRetention); err != nil {
					l.log.Warn("artifact sweep failed", "err", err)
				} else if n > 0 {
					l.log.Info("deleted artifacts past retention", "count", n, "retention", l.cfg.ArtifactRetention)
				}
			}
		}
	}
}

// Republish publishes the jobs whose message may be missing. Nats-Msg-Id
// makes a repeat inside the duplicates window harmless, and a repeat after it
// is acknowledged as stale by the worker that receives it.
func (l *Reconciler) Republish(ctx context.Context) (int, error) {
	stale := l.cfg.Stale
	if l.cfg.InStream != nil {
		held, err := l.cfg.InStream(ctx)
		waiting, werr := l.store.WaitingForMessage(ctx)
		if err == nil && werr == nil && held >= waiting {
			stale = 0 // every waiting job can have its message: nothing is lost
		}
	}
	items, err := l.store.Unpublished(ctx, l.cfg.Unsent, stale, 100)
	if err != nil {
		return 0, err
	}
	return l.publish(ctx, items)
}

// Wake publishes parked jobs of tenants that have free running slots again
// (a slot also frees when a worker dies and its job's lease lapses).
func (l *Reconciler) Wake(ctx context.Context) (int, error) {
	items, err := l.store.WakeParked(ctx)
	n, perr := l.publish(ctx, items)
	if err == nil {
		err = perr
	}
	return n, err
}

func (l *Reconciler) publish(ctx context.Context, items []store.OutboxItem) (int, error) {
	return outbox.Publish(ctx, l.pub, l.store, items)
}

// maxDeliveries is the advisory JetStream publishes when a message reaches
// the consumer's MaxDeliver.
type maxDeliveries struct {
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries int    `json:"deliveries"`
}

// WatchMaxDeliveries fails the job of every message that exhausted its
// deliveries (releasing its hold) and removes the message, which a
// work-queue stream would otherwise keep.
func WatchMaxDeliveries(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, st *store.Store, log *slog.Logger) error {
	stream, err := js.Stream(ctx, jobs.StreamName)
	if err != nil {
		return fmt.Errorf("open stream: %w", err)
	}
	subject := "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + jobs.StreamName + "." + jobs.ConsumerName
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		var adv maxDeliveries
		if err := json.Unmarshal(m.Data, &adv); err != nil {
			log.Warn("bad max-deliveries advisory", "err", err)
			return
		}
		raw, err := stream.GetMsg(ctx, adv.StreamSeq)
		if err != nil {
			log.Warn("message of max-deliveries advisory not found", "seq", adv.StreamSeq, "err", err)
			return
		}
		jm, err := jobs.ParseMessage(raw.Data)
		if err != nil {
			_ = stream.DeleteMsg(ctx, adv.StreamSeq)
			return
		}
		reason := fmt.Sprintf("gave up after %d deliveries: the job's workers stopped or timed out each time", adv.Deliveries)
		// The database may be away (the likely reason deliveries ran out):
		// keep trying in the background until it answers, then remove the
		// message, which the work queue would otherwise keep for ever.
		go func() {
			delay := 500 * time.Millisecond
			for {
				err := st.FailUndeliverable(ctx, jm.JobID, reason)
				if err == nil {
					break
				}
				if !store.Transient(err) || ctx.Err() != nil {
					log.Error("could not fail undeliverable job", "job", jm.JobID, "err", err)
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(delay):
				}
				delay = min(delay*2, 10*time.Second)
			}
			_ = stream.DeleteMsg(ctx, adv.StreamSeq)
			log.Warn("job failed after max deliveries", "job", jm.JobID, "deliveries", adv.Deliveries)
		}()
	})
	if err != nil {
		return fmt.Errorf("subscribe to max-deliveries advisories: %w", err)
	}
	go func() { <-ctx.Done(); _ = sub.Unsubscribe() }()
	return nil
}
