package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/reconcile"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
	"github.com/webpilot/webpilot/internal/testslot"
)

// TestPostgresOutageMidRun stops PostgreSQL for 60 s while worker processes
// run jobs, and starts another worker during the outage. Every job must
// still succeed with its whole history, the late worker must wait for the
// database instead of exiting, and work must resume within 10 s of the
// database's return.
func TestPostgresOutageMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a 60 s outage")
	}
	testslot.Long(t)
	t.Parallel()
	bin := buildWorker(t)
	cluster, err := storetest.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Remove)
	st, err := store.Open(context.Background(), cluster.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	s := newStackOn(t, cluster.URL, 3*time.Second, 0, 100)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pub := jobs.NewPublisher(s.queue.JS)
	rec, err := reconcile.New(reconcile.Config{Store: s.store, Publisher: pub, Logger: quietLog(), Every: 500 * time.Millisecond,
		InStream: func(ctx context.Context) (int, error) { return jobs.InStream(ctx, s.queue.Consumer) }})
	if err != nil {
		t.Fatal(err)
	}
	go rec.Run(ctx)
	if err := reconcile.WatchMaxDeliveries(ctx, s.queue.Conn, s.queue.JS, s.store, quietLog()); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(t)
	s.workerProcess(t, bin, "before", model)
	_, key := s.tenant(t, "patient", 50)
	const n, steps = 6, 6
	var ids []string
	for i := range n {
		var st []any
		for range steps {
			st = append(st, "Wait 700ms")
		}
		ids = append(ids, s.submit(t, key, map[string]any{"name": fmt.Sprintf("outage %d", i), "base_url": s.demo + "/", "steps": st}).ID)
	}
	s.waitCheckpoint(t, ids[0], 1)
	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	late := s.workerProcess(t, bin, "during", model) // must wait for the database
	// The outage keeps the machine's cores free: the test's slot is lent
	// meanwhile (it may take a while to come back; the database is back
	// by then, and the first history row after its return says when work
	// resumed).
	var back time.Time
	testslot.Idle(t, func() {
		time.Sleep(58 * time.Second)
		if err := cluster.Start(); err != nil {
			t.Error(err)
		}
		back = time.Now()
	})
	if t.Failed() {
		t.FailNow()
	}
	if !alive(late) {
		t.Fatal("the worker started during the outage exited")
	}
	var first time.Time
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var at *time.Time
		_ = s.store.Pool().QueryRow(context.Background(), `SELECT min(created_at) FROM history WHERE created_at > $1`, back).Scan(&at)
		if at != nil {
			first = *at
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no job made progress within 30 s of the database's return")
		}
	}
	if d := first.Sub(back); d > 10*time.Second {
		t.Fatalf("work resumed %s after the database returned, want within 10 s", d)
	}
	for _, id := range ids {
		v := s.wait(t, key, id, 2*time.Minute)
		if v.State != "succeeded" {
			t.Fatalf("job %s ended %s after %d attempts: %s", id, v.State, v.Attempt, v.Error)
		}
		// No history row was dropped: every step has its recorded command.
		if got := s.count(t, `SELECT count(DISTINCT step) FROM history WHERE job_id = $1 AND result = 'ok'`, id); got != steps {
			t.Fatalf("job %s has history for %d of its %d steps", id, got, steps)
		}
	}
	if !alive(late) {
		t.Fatal("the late worker exited")
	}
}

// alive reports whether a started process is still running (not exited,
// whether or not it was reaped).
func alive(cmd *exec.Cmd) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}
