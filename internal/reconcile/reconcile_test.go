package reconcile_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/internal/reconcile"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// countingPub records publishes.
type countingPub struct {
	mu   sync.Mutex
	sent []string
}

func (p *countingPub) PublishAsync(subject, jobID string, seq int, _ string) (jetstream.PubAckFuture, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, jobID)
	return acked{}, nil
}

// acked is a publish the stream has acknowledged.
type acked struct{}

func (acked) Ok() <-chan *jetstream.PubAck {
	c := make(chan *jetstream.PubAck, 1)
	c <- &jetstream.PubAck{}
	return c
}
func (acked) Err() <-chan error { return nil }
func (acked) Msg() *nats.Msg    { return nil }

func (p *countingPub) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sent)
}

// TestStaleJobIsRepublishedWithBackoff: a job whose message may be lost is
// republished, then not again on every tick but after a doubling wait.
func TestStaleJobIsRepublishedWithBackoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	tn, _ := storetest.Tenant(t, st, "t", 5)
	j, err := st.SubmitJob(ctx, store.NewJob{TenantID: tn.ID, Kind: "scenario", Input: json.RawMessage(`{}`), Hold: 1, Subject: "jobs.scenario.x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.MarkPublished(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	pub := &countingPub{}
	stale := 300 * time.Millisecond
	l, err := reconcile.New(reconcile.Config{Store: st, Publisher: pub, Stale: stale, Unsent: stale})
	if err != nil {
		t.Fatal(err)
	}
	// Ticks every 25 ms for 2.2 s: republished at about 0.3 s, then after
	// waits of 0.3, 0.6 and 1.2 s (1.2, 2.4 s): 3 times, not 80.
	start := time.Now()
	for time.Since(start) < 2200*time.Millisecond {
		if _, err := l.Republish(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(25 * time.Millisecond)
	}
	if n := pub.count(); n < 2 || n > 3 {
		t.Fatalf("republished %d times in 2.2 s with a %s stale window, want 2 or 3 (backoff)", n, stale)
	}
	// An intact backlog (the stream holds a message for every waiting job)
	// is not republished at all.
	pub2 := &countingPub{}
	held, err := reconcile.New(reconcile.Config{Store: st, Publisher: pub2, Stale: time.Millisecond, Unsent: time.Hour,
		InStream: func(context.Context) (int, error) { return 1, nil }})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // past any backoff
	if _, err := held.Republish(ctx); err != nil {
		t.Fatal(err)
	}
	if pub2.count() != 0 {
		t.Fatal("a job whose message is in the stream was republished")
	}
}
