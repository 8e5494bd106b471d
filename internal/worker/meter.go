package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/store"
)

// sessionMeter charges a job's browser context as it is held, at
// jobs.BrowserSecondMicro a second: a chunk of jobs.BrowserChunkSeconds is
// reserved from the job's hold ahead of use, charged whole when the next
// is reserved, and the last one charged for the time it held when the
// attempt ends. A chunk the hold cannot cover stops the job at its next
// step, budget_exhausted: the tenant never spends more than it holds. An
// attempt that dies is charged its open chunk by the next one, as a model
// call's reservation is.
type sessionMeter struct {
	w     *Worker
	claim store.Claim
	log   *slog.Logger

	mu      sync.Mutex
	seq     int       // the open chunk's usage row
	opened  time.Time // when it began
	open    bool
	total   time.Duration
	charged int64

	exhausted atomic.Bool
	stop      chan struct{}
	done      chan struct{}
}

// meterSession opens a job's browser meter with its first chunk reserved;
// a hold that cannot cover it ends the job budget_exhausted before the
// browser starts.
func (w *Worker) meterSession(ctx context.Context, claim store.Claim, log *slog.Logger) (*sessionMeter, outcome, bool) {
	m := &sessionMeter{w: w, claim: claim, log: log, seq: browserSeq, stop: make(chan struct{}), done: make(chan struct{})}
	err := m.reserve(ctx)
	switch {
	case errors.Is(err, store.ErrHoldExceeded):
		return nil, outcome{Finish: store.Finish{State: store.JobStateBudgetExhausted, Result: []byte(`{}`),
			Error: "not run: the credit budget left cannot cover its browser time (" + credits(chunkMicro) + " credits a chunk of " +
				strconv.Itoa(jobs.BrowserChunkSeconds) + " s)"}}, false
	case err != nil:
		return nil, handedBack(err), false
	}
	go m.run(ctx)
	return m, outcome{}, true
}

const chunkMicro = jobs.BrowserChunkSeconds * jobs.BrowserSecondMicro

func credits(micro int64) string {
	return strconv.FormatFloat(float64(micro)/store.MicroCredits, 'f', -1, 64)
}

func (m *sessionMeter) reserve(ctx context.Context) error {
	err := m.w.store.ReserveCall(ctx, store.Reservation{JobID: m.claim.JobID, Attempt: m.claim.Attempt, Seq: m.seq,
		Model: store.BrowserTime, Max: chunkMicro})
	if err == nil {
		m.opened, m.open = time.Now(), true
	}
	return err
}

// settle charges the open chunk for d.
func (m *sessionMeter) settle(ctx context.Context, d time.Duration) error {
	c := min(int64(math.Ceil(d.Seconds()*jobs.BrowserSecondMicro)), chunkMicro)
	_, err := m.w.store.SettleCall(context.WithoutCancel(ctx), store.Usage{JobID: m.claim.JobID, Attempt: m.claim.Attempt, Seq: m.seq,
		Model: store.BrowserTime, Credits: c, Seconds: d.Seconds(),
		Reason: fmt.Sprintf("browser time (%s, %.1f s)", m.claim.Kind, d.Seconds())})
	if err != nil {
		return err
	}
	m.open = false
	m.total += d
	m.charged += c
	return nil
}

// run moves to the next chunk as each is used up.
func (m *sessionMeter) run(ctx context.Context) {
	defer close(m.done)
	t := time.NewTicker(jobs.BrowserChunkSeconds * time.Second)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.mu.Lock()
		if m.open {
			if err := m.settle(ctx, time.Since(m.opened)); err != nil {
				m.log.Warn("browser time not charged yet", "err", err) // the next attempt or the finish charges it
				m.mu.Unlock()
				continue
			}
		}
		m.seq++
		err := m.reserve(ctx)
		m.mu.Unlock()
		if errors.Is(err, store.ErrHoldExceeded) {
			m.exhausted.Store(true)
			return
		}
		if err != nil {
			m.log.Warn("browser time chunk not reserved", "err", err)
		}
	}
}

// Exhausted reports that the hold could not cover more browser time: the
// job must stop.
func (m *sessionMeter) Exhausted() bool { return m.exhausted.Load() }

// Close charges the open chunk for the time it held and answers the
// seconds and credits the attempt was charged. It is safe to call twice.
func (m *sessionMeter) Close(ctx context.Context) (time.Duration, int64) {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open {
		if err := m.settle(ctx, time.Since(m.opened)); err != nil {
			m.log.Warn("browser time not charged", "err", err) // the finish charges the reservation
		}
	}
	return m.total, m.charged
}

// browserSeq is the usage row of a job's browser time (its model calls,
// if any, are numbered from 1).
const browserSeq = 1_000_000

// browserRun is what a metered run of the sandbox's runner took and was
// charged.
type browserRun struct {
	took    time.Duration
	charged int64
}

// endsAttempt is a metered run's error that ends the attempt with out: a
// hold that cannot cover the run (budget_exhausted, the runner never
// started), or a job handed back (its charge not recorded, its context
// done).
type endsAttempt struct{ out outcome }

func (e *endsAttempt) Error() string { return "the attempt ends: " + e.out.Finish.Error }

// endOf is the outcome err ends the attempt with, if it does.
func endOf(err error) (outcome, bool) {
	var e *endsAttempt
	if errors.As(err, &e) {
		return e.out, true
	}
	return outcome{}, false
}

// metered runs work (the sandbox's runner) as the job's browser time: the
// most it can cost (upTo seconds at jobs.BrowserSecondMicro) is reserved
// from the job's hold before it starts, and the time it took is charged
// after (never more than the reservation), whatever it returned. A hold
// that cannot cover it, a charge that cannot be recorded, or work cut
// short by the job's own context is an *endsAttempt (see endOf); any other
// error is work's. A worker that dies before the charge is charged the
// whole reservation by the next attempt, as a model call's is.
func (w *Worker) metered(ctx context.Context, claim store.Claim, upTo int64, work func() error) (browserRun, error) {
	max := upTo * jobs.BrowserSecondMicro
	err := w.store.ReserveCall(ctx, store.Reservation{JobID: claim.JobID, Attempt: claim.Attempt, Seq: browserSeq, Model: store.BrowserTime, Max: max})
	switch {
	case errors.Is(err, store.ErrHoldExceeded):
		return browserRun{}, &endsAttempt{outcome{Finish: store.Finish{State: store.JobStateBudgetExhausted, Result: json.RawMessage(`{}`),
			Error: fmt.Sprintf("not run: the credit budget left cannot cover its browser time (up to %d s, %s credits)", upTo,
				strconv.FormatFloat(float64(max)/store.MicroCredits, 'f', -1, 64))}}}
	case err != nil:
		return browserRun{}, &endsAttempt{handedBack(err)}
	}
	start := time.Now()
	werr := work()
	run := browserRun{took: time.Since(start)}
	credits := int64(math.Ceil(run.took.Seconds() * jobs.BrowserSecondMicro))
	_, err = w.store.SettleCall(context.WithoutCancel(ctx), store.Usage{JobID: claim.JobID, Attempt: claim.Attempt, Seq: browserSeq,
		Model: store.BrowserTime, Credits: credits, Seconds: run.took.Seconds(), Reason: fmt.Sprintf("browser time (%s, %.1f s)", claim.Kind, run.took.Seconds())})
	run.charged = min(credits, max)
	switch {
	case err != nil:
		return run, &endsAttempt{handedBack(err)}
	case werr != nil && ctx.Err() != nil:
		return run, &endsAttempt{handedBack(ctx.Err())}
	}
	return run, werr
}
