package jobs_test

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/internal/jobs"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestConnectOnOneMachine: the dispatcher starts the embedded server, a
// worker started before it waits and then finds it with the token in the
// shared data directory, and a job published by one is delivered to the
// other.
func TestConnectOnOneMachine(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir, port := t.TempDir(), freePort(t)
	cfg := func(name string, embed bool) jobs.ConnectConfig {
		return jobs.ConnectConfig{DataDir: dir, Port: port, Name: name, Embed: embed, Manage: embed, Queue: jobs.DefaultQueueConfig(),
			Logger: slog.New(slog.DiscardHandler)}
	}
	workerUp := make(chan *jobs.Connection, 1)
	go func() {
		w, err := jobs.Connect(ctx, cfg("worker", false))
		if err != nil {
			t.Errorf("worker: %v", err)
		}
		workerUp <- w
	}()
	select {
	case <-workerUp:
		t.Fatal("the worker connected before any server was up")
	case <-time.After(1500 * time.Millisecond):
	}
	d, err := jobs.Connect(ctx, cfg("dispatcher", true))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	w := <-workerUp
	if w == nil {
		t.FailNow()
	}
	defer w.Close()
	if err := jobs.NewPublisher(d.JS).Publish(ctx, jobs.Subject(jobs.KindScenario, "t1"), "job-1", 1); err != nil {
		t.Fatal(err)
	}
	batch, err := w.Consumer.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := <-batch.Messages()
	if !ok {
		t.Fatalf("the worker received nothing: %v", batch.Error())
	}
	got, err := jobs.ParseMessage(m.Data())
	if err != nil || got.JobID != "job-1" {
		t.Fatalf("the worker received %+v (%v), want job-1", got, err)
	}
	_ = m.Ack()
}
