package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/jobs/natstest"
)

// TestTheQueueIsCheckedAtStart: the stream's replicas and the consumer's
// ack wait come from configuration and a process that disagrees with what
// the server keeps refuses to start (at once, not after waiting), and a
// single server cannot keep three replicas.
func TestTheQueueIsCheckedAtStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q := natstest.New(t, 30*time.Second)
	other := q.Config
	other.AckWait = 10 * time.Second
	if _, err := jobs.BindQueue(ctx, q.JS, other); !errors.Is(err, jobs.ErrQueueMismatch) {
		t.Fatalf("a worker waiting 10 s for acks bound a consumer that waits 30 s: %v", err)
	}
	three := q.Config
	three.Replicas = 3
	if _, err := jobs.BindQueue(ctx, q.JS, three); !errors.Is(err, jobs.ErrQueueMismatch) {
		t.Fatalf("a worker configured for 3 replicas bound a stream of 1: %v", err)
	}
	start := time.Now()
	_, err := jobs.Connect(ctx, jobs.ConnectConfig{URL: q.Server.ClientURL(), Token: q.Token, Name: "worker", Queue: three,
		Logger: slog.New(slog.DiscardHandler)})
	if !errors.Is(err, jobs.ErrQueueMismatch) || time.Since(start) > 5*time.Second {
		t.Fatalf("Connect with a mismatched queue: %v after %s, want ErrQueueMismatch at once", err, time.Since(start))
	}
	if _, err := jobs.EnsureQueue(ctx, q.JS, three); err == nil {
		t.Fatal("a single server accepted a stream of 3 replicas")
	}
	if _, err := jobs.BindQueue(ctx, q.JS, q.Config); err != nil {
		t.Fatalf("a worker configured as the server keeps the queue: %v", err)
	}
}

// TestAClusteredQueueLosesNoJobWithItsLeader: on three nats-server
// processes with the stream at three replicas, placed in the cluster, the
// stream's leader is SIGKILLed between publishes; another server leads,
// every job published before and after is delivered to a worker, and the
// killed node catches up when it is back.
func TestAClusteredQueueLosesNoJobWithItsLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs nats-server")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := natstest.BuildServer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	token := jobs.NewToken()
	cl, err := natstest.StartCluster(ctx, bin, t.TempDir(), 3, token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	cfg := jobs.DefaultQueueConfig()
	cfg.Replicas, cfg.Cluster, cfg.AckWait = 3, natstest.ClusterName, 5*time.Second
	connect := func(name string, manage bool) *jobs.Connection {
		t.Helper()
		c, err := jobs.Connect(ctx, jobs.ConnectConfig{URL: cl.URLs(), Token: token, Name: name, Manage: manage, Queue: cfg,
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(c.Close)
		return c
	}
	d := connect("dispatcher", true)
	w := connect("worker", false)
	s, err := d.JS.Stream(ctx, jobs.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	if info := s.CachedInfo(); info.Config.Replicas != 3 || info.Cluster == nil || info.Cluster.Name != natstest.ClusterName {
		t.Fatalf("stream kept as %d replicas in %+v, want 3 in %s", info.Config.Replicas, info.Cluster, natstest.ClusterName)
	}
	pub := jobs.NewPublisher(d.JS)
	publish := func(id string) {
		t.Helper()
		for {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := pub.Publish(pctx, jobs.Subject(jobs.KindScenario, "t1"), id, 0)
			cancel()
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("publish %s: %v", id, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for i := range 20 {
		publish(fmt.Sprintf("job-%d", i))
	}
	leader, err := natstest.StreamLeader(ctx, d.JS)
	if err != nil {
		t.Fatal(err)
	}
	killed := cl.Index(leader)
	if err := cl.Kill(killed); err != nil {
		t.Fatal(err)
	}
	for i := 20; i < 40; i++ {
		publish(fmt.Sprintf("job-%d", i))
	}
	if now, err := natstest.StreamLeader(ctx, d.JS); err != nil || now == leader {
		t.Fatalf("the stream's leader after %s was killed: %q %v", leader, now, err)
	}
	seen := map[string]int{}
	for len(seen) < 40 && ctx.Err() == nil {
		batch, err := w.Consumer.Fetch(10, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for m := range batch.Messages() {
			msg, err := jobs.ParseMessage(m.Data())
			if err != nil {
				t.Fatal(err)
			}
			seen[msg.JobID]++
			_ = m.DoubleAck(ctx)
		}
	}
	if len(seen) != 40 {
		t.Fatalf("%d of 40 jobs delivered after the leader %s was killed", len(seen), leader)
	}
	if err := cl.Start(killed); err != nil {
		t.Fatal(err)
	}
	for !natstest.StreamCurrent(ctx, d.JS, 3) {
		if ctx.Err() != nil {
			t.Fatalf("node %s never caught up:\n%s", leader, cl.Log(killed))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A redelivery is allowed (an ack lost in the election): workers fence
	// each attempt in Postgres. Losing a job is not.
	for id, n := range seen {
		if n > 1 {
			t.Logf("%s delivered %d times", id, n)
		}
	}
}
