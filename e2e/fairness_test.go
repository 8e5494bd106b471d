package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/worker"
)

// TestCappedTenantsJobsWaitWithoutSpendingDeliveries submits 20 jobs for a
// tenant that may run one at a time, on a queue that gives up a message
// after 5 deliveries: waiting behind the cap must spend none of them, so
// every job succeeds, each in one attempt, while another tenant's job
// submitted in the middle starts within seconds. (The last jobs wait
// behind 18 or more, parked again and again: were a wait a delivery, they
// would run out of them on any machine. A hundred, then thirty, proved
// no more and took ten, then eight, minutes of a slow machine.)
func TestCappedTenantsJobsWaitWithoutSpendingDeliveries(t *testing.T) {
	t.Parallel()
	s := newStackWith(t, 5*time.Second, 0, 5)
	s.startWorker(t, nil)
	_, bulkKey := s.tenantCapped(t, "bulk", 500, 1)
	_, otherKey := s.tenant(t, "other", 5)
	const n = 20
	ids := make([]string, 0, n)
	var other string
	for i := range n {
		j := s.submit(t, bulkKey, map[string]any{"name": fmt.Sprintf("bulk %d", i), "base_url": s.demo + "/",
			"steps": []any{`Verify "Shopping list" is visible`}})
		ids = append(ids, j.ID)
		if i == n/2 {
			other = s.submit(t, otherKey, map[string]any{"name": "meanwhile", "base_url": s.demo + "/",
				"steps": []any{`Verify "Shopping list" is visible`}}).ID
		}
	}
	v := s.wait(t, otherKey, other, 60*time.Second)
	if v.State != "succeeded" {
		t.Fatalf("the other tenant's job ended %s: %s", v.State, v.Error)
	}
	if wait := v.StartedAt.Sub(v.CreatedAt); wait > 5*time.Second {
		t.Fatalf("the other tenant's job waited %s behind the capped tenant's backlog", wait)
	}
	for _, id := range ids {
		v := s.waitEnd(t, bulkKey, id, 3*time.Minute)
		if v.State != "succeeded" || v.Attempt != 1 {
			t.Fatalf("job %s ended %s after %d attempts: %s", id, v.State, v.Attempt, v.Error)
		}
	}
	// The jobs wrote one spec, byte for byte but for the test's
	// name: running it once under @playwright/test checks every one of them.
	if n := s.count(t, `SELECT count(DISTINCT regexp_replace(script, 'bulk [0-9]+', 'bulk N', 'g')) FROM jobs WHERE id = ANY($1)`, ids); n != 1 {
		t.Fatalf("the capped tenant's identical scenarios wrote %d different specs", n)
	}
	s.passSpec(t, bulkKey, ids[0])
	if p := s.queue.Pending(t); p != 0 {
		t.Fatalf("%d messages left in the stream", p)
	}
	var run, gap float64
	_ = s.store.Pool().QueryRow(context.Background(),
		`SELECT avg(extract(epoch FROM finished_at - started_at)), avg(extract(epoch FROM started_at - prev)) FROM (
		   SELECT started_at, finished_at, lag(finished_at) OVER (ORDER BY started_at) AS prev FROM jobs WHERE id = ANY($1)) j`, ids).Scan(&run, &gap)
	t.Logf("a capped job ran %.2f s on average, and the next started %.2f s after it ended", run, gap)
	var overlap int
	_ = s.store.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM jobs a JOIN jobs b ON a.tenant_id = b.tenant_id AND a.id < b.id
		 WHERE a.id = ANY($1) AND b.id = ANY($1) AND a.started_at < b.finished_at AND b.started_at < a.finished_at`, ids).Scan(&overlap)
	if overlap != 0 {
		t.Fatalf("%d pairs of the capped tenant's jobs ran at the same time", overlap)
	}
}

// TestAWaitingTenantGetsTheNextSlot: tenant A's ten jobs fill a worker's
// two slots and wait behind them; tenant B's one job, submitted after
// them, takes the next slot that frees instead of waiting for A's backlog
// (A yields it: its job is parked, spending no delivery, and woken when a
// job ends). Every job still runs once and succeeds. Before, B's job
// started after every one of A's.
func TestAWaitingTenantGetsTheNextSlot(t *testing.T) {
	t.Parallel()
	s := newStackWith(t, 5*time.Second, 150*time.Millisecond, 5)
	s.startWorkerWith(t, nil, worker.Config{Concurrency: 2})
	_, aKey := s.tenant(t, "many", 50)
	_, bKey := s.tenant(t, "one", 5)
	scenario := func(name string) map[string]any {
		return map[string]any{"name": name, "base_url": s.demo + "/", "steps": []any{`Verify "Shopping list" is visible`}}
	}
	var ids []string
	for i := range 10 {
		ids = append(ids, s.submit(t, aKey, scenario(fmt.Sprintf("a %d", i))).ID)
	}
	b := s.submit(t, bKey, scenario("b")).ID
	v := s.wait(t, bKey, b, 2*time.Minute)
	if v.State != "succeeded" {
		t.Fatalf("B's job ended %s: %s", v.State, v.Error)
	}
	ahead := s.count(t, `SELECT count(*) FROM jobs WHERE id = ANY($1) AND started_at > $2 AND started_at < $3`, ids, v.CreatedAt, v.StartedAt)
	if ahead > 1 {
		t.Fatalf("%d of A's jobs started after B's was submitted and before it started", ahead)
	}
	for _, id := range ids {
		if v := s.waitEnd(t, aKey, id, 3*time.Minute); v.State != "succeeded" || v.Attempt != 1 {
			t.Fatalf("A's job %s ended %s after %d attempts: %s", id, v.State, v.Attempt, v.Error)
		}
	}
	if p := s.queue.Pending(t); p != 0 {
		t.Fatalf("%d messages left in the stream", p)
	}
}
