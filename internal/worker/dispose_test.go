package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/internal/store"
)

// fakeMsg records how a job's message was answered.
type fakeMsg struct {
	jetstream.Msg // methods a test does not expect panic
	replies       []string
}

func (m *fakeMsg) Ack() error { m.replies = append(m.replies, "ack"); return nil }
func (m *fakeMsg) Term() error {
	m.replies = append(m.replies, "term")
	return nil
}

func (m *fakeMsg) NakWithDelay(d time.Duration) error {
	m.replies = append(m.replies, fmt.Sprintf("nak %s", d))
	return nil
}

// fakeJobs is the store's job transitions, answering as told and
// recording what was asked.
type fakeJobs struct {
	claim      store.Claim
	claimErr   error
	finishErr  error
	finished   []store.Finish
	released   []string
	extendLost bool
}

func (f *fakeJobs) ClaimJob(context.Context, string, string, time.Duration) (store.Claim, error) {
	return f.claim, f.claimErr
}

func (f *fakeJobs) ExtendLease(context.Context, string, int, time.Duration) (bool, error) {
	if f.extendLost {
		return false, store.ErrFenced
	}
	return false, nil
}

func (f *fakeJobs) ReleaseLease(_ context.Context, jobID string, attempt int) error {
	f.released = append(f.released, fmt.Sprintf("%s/%d", jobID, attempt))
	return nil
}

func (f *fakeJobs) EndAbandoned(context.Context, string) error { return nil }

func (f *fakeJobs) FinishJob(_ context.Context, fin store.Finish) ([]store.OutboxItem, error) {
	if f.finishErr != nil {
		return nil, f.finishErr
	}
	f.finished = append(f.finished, fin)
	return nil, nil
}

// testWorker is a worker over fakes: no database, queue or browser.
func testWorker(jobs *fakeJobs) *Worker {
	cfg := Config{ID: "w", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StoreRetry: 50 * time.Millisecond}.WithDefaults()
	return &Worker{cfg: cfg, jobs: jobs, log: cfg.Logger, retry: newRetrier(cfg.StoreRetry, cfg.Logger)}
}

// TestDisposeAnswersEachOutcome: what becomes of a run's message and job
// for every outcome a run can have.
func TestDisposeAnswersEachOutcome(t *testing.T) {
	t.Parallel()
	claim := store.Claim{JobID: "j1", Attempt: 2, Kind: "scenario"}
	succeeded := outcome{Finish: store.Finish{State: store.JobStateSucceeded, Script: "spec"}}
	for _, tc := range []struct {
		name      string
		out       outcome
		finishErr error
		replies   string
		finished  int
		released  int
	}{
		{"a terminal outcome is written, then acknowledged", succeeded, nil, "[ack]", 1, 0},
		{"a failed run is written as failed too", failed("boom"), nil, "[ack]", 1, 0},
		{"a run handed back releases its lease and is redelivered at once", handedBack(errors.New("draining")), nil, "[nak 1s]", 0, 1},
		{"a bulk job waiting for its children is only acknowledged", outcome{disposition: detached}, nil, "[ack]", 0, 0},
		{"an attempt fenced by a newer one touches nothing", outcome{err: fmt.Errorf("write: %w", store.ErrFenced)}, nil, "[]", 0, 0},
		{"a write refused as fenced is not acknowledged", succeeded, store.ErrFenced, "[]", 0, 0},
		{"a write that fails leaves the message for redelivery", succeeded, errors.New("constraint"), "[]", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			jobs := &fakeJobs{finishErr: tc.finishErr}
			msg := &fakeMsg{}
			w := testWorker(jobs)
			w.dispose(context.Background(), msg, claim, tc.out, w.log)
			if got := fmt.Sprint(msg.replies); got != tc.replies {
				t.Errorf("message answered %s, want %s", got, tc.replies)
			}
			if len(jobs.finished) != tc.finished || len(jobs.released) != tc.released {
				t.Fatalf("finished %d, released %d; want %d, %d", len(jobs.finished), len(jobs.released), tc.finished, tc.released)
			}
			if tc.finished == 1 {
				if f := jobs.finished[0]; f.JobID != "j1" || f.Attempt != 2 || f.State != tc.out.State {
					t.Errorf("written %+v, want the claim's job and attempt in state %s", f, tc.out.State)
				}
			}
			if tc.released == 1 && jobs.released[0] != "j1/2" {
				t.Errorf("released %s", jobs.released[0])
			}
		})
	}
}

// TestClaimAnswersWhatCannotRunNow: a message whose job cannot run now is
// answered as the reason requires, and a job past its attempts is failed.
func TestClaimAnswersWhatCannotRunNow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		claim    store.Claim
		err      error
		run      bool
		replies  string
		failed   string
		storeOut bool
	}{
		{"leased to a live attempt: looked at when the lease lapses", store.Claim{}, &store.LeasedError{Remaining: 3 * time.Second}, false, "[nak 3.1s]", "", false},
		{"stale: acknowledged", store.Claim{}, store.ErrStale, false, "[ack]", "", false},
		{"its tenant at its cap: parked and acknowledged", store.Claim{}, store.ErrTenantBusy, false, "[ack]", "", false},
		{"the database down: retried later, pulling paused", store.Claim{}, fmt.Errorf("claim: %w", context.DeadlineExceeded), false, "[nak 2s]", "", true},
		{"another error: retried", store.Claim{}, errors.New("bad statement"), false, "[nak 1s]", "", false},
		{"past its attempts: failed with the reason", store.Claim{JobID: "j", Attempt: DefaultMaxAttempts + 1}, nil, false, "[ack]", "gave up after 5 attempts", false},
		{"claimed: runs", store.Claim{JobID: "j", Attempt: 1}, nil, true, "[]", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			jobs := &fakeJobs{claim: tc.claim, claimErr: tc.err}
			msg := &fakeMsg{}
			w := testWorker(jobs)
			_, _, run := w.claim(context.Background(), msg, "j")
			if run != tc.run || fmt.Sprint(msg.replies) != tc.replies || w.storeDown.Load() != tc.storeOut {
				t.Fatalf("run %v, replies %v, store down %v", run, msg.replies, w.storeDown.Load())
			}
			switch {
			case tc.failed == "" && len(jobs.finished) > 0:
				t.Fatalf("a job was finished: %+v", jobs.finished)
			case tc.failed != "" && (len(jobs.finished) != 1 || jobs.finished[0].State != store.JobStateFailed || jobs.finished[0].Error[:len(tc.failed)] != tc.failed):
				t.Fatalf("finished %+v, want failed with %q", jobs.finished, tc.failed)
			}
		})
	}
}

// TestAHeartbeatThatLosesTheLeaseStopsTheRun: a newer attempt's lease
// cancels this attempt's run and marks it lost, so nothing is written.
func TestAHeartbeatThatLosesTheLeaseStopsTheRun(t *testing.T) {
	t.Parallel()
	w := testWorker(&fakeJobs{extendLost: true})
	w.cfg.AckWait = 30 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	msg := &progressMsg{}
	hb := w.heartbeat(ctx, cancel, msg, store.Claim{JobID: "j", Attempt: 1}, w.log)
	select {
	case <-hb.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeat did not stop")
	}
	if !hb.lost.Load() || ctx.Err() == nil || msg.progress == 0 {
		t.Fatalf("lost %v, run cancelled %v, in-progress sent %d times", hb.lost.Load(), ctx.Err() != nil, msg.progress)
	}
}

type progressMsg struct {
	fakeMsg
	progress int
}

func (m *progressMsg) InProgress() error { m.progress++; return nil }
