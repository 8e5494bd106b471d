// Package natstest starts a real, embedded NATS JetStream server per test.
package natstest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/internal/jobs"
)

// Queue is a running server with the JOBS stream and consumer.
type Queue struct {
	Server   *server.Server
	Conn     *nats.Conn
	JS       jetstream.JetStream
	Consumer jetstream.Consumer
	Config   jobs.QueueConfig
	Token    string // clients must present it
}

// New starts a server with file storage in a temp dir and creates the queue
// with the given ack wait (and MaxDeliver 100); everything stops when the
// test ends.
func New(t testing.TB, ackWait time.Duration) *Queue {
	t.Helper()
	return NewWith(t, ackWait, 100)
}

// NewWith is New with the consumer's MaxDeliver.
func NewWith(t testing.TB, ackWait time.Duration, maxDeliver int) *Queue {
	t.Helper()
	token := jobs.NewToken()
	ns, err := jobs.StartEmbedded(t.TempDir(), 0, token)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	t.Cleanup(ns.Shutdown)
	nc, err := nats.Connect(ns.ClientURL(), nats.Token(token))
	if err != nil {
		t.Fatalf("natstest: connect: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("natstest: jetstream: %v", err)
	}
	cfg := jobs.DefaultQueueConfig()
	cfg.AckWait = ackWait
	cfg.MaxDeliver = maxDeliver
	cons, err := jobs.EnsureQueue(context.Background(), js, cfg)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	return &Queue{Server: ns, Conn: nc, JS: js, Consumer: cons, Config: cfg, Token: token}
}

// Pending is how many messages wait in the stream.
func (q *Queue) Pending(t testing.TB) uint64 {
	t.Helper()
	s, err := q.JS.Stream(context.Background(), jobs.StreamName)
	if err != nil {
		t.Fatalf("natstest: stream: %v", err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatalf("natstest: stream info: %v", err)
	}
	return info.State.Msgs
}
