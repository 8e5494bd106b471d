// Package outbox moves stored job messages onto the stream. A job is safe
// once its row and outbox row are in Postgres; publishing it and recording
// that it was published are done here in batches, so that a busy dispatcher
// pays one pipelined round trip to NATS and one UPDATE per batch rather than
// two round trips per submission. Whatever is not confirmed (a crash, a full
// buffer, an outage) stays unsent in the outbox and the reconciler publishes
// it again.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/internal/store"
)

// Publisher starts a job's publish without waiting for its acknowledgement.
type Publisher interface {
	PublishAsync(subject, jobID string, seq int, traceParent string) (jetstream.PubAckFuture, error)
}

// Marker records that jobs' messages reached the stream.
type Marker interface {
	MarkPublished(ctx context.Context, jobIDs ...string) error
}

// ackWait bounds the wait for a batch's acknowledgements; an unanswered
// publish is left to the reconciler.
const ackWait = 5 * time.Second

// Publish sends items together and marks those the stream acknowledged. It
// returns how many were confirmed and the first error met; items after a
// failure are still attempted, since one bad publish says little about the
// next.
func Publish(ctx context.Context, pub Publisher, mark Marker, items []store.OutboxItem) (int, error) {
	var firstErr error
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	type pending struct {
		id string
		f  jetstream.PubAckFuture
	}
	started := make([]pending, 0, len(items))
	for _, it := range items {
		f, err := pub.PublishAsync(it.Subject, it.JobID, it.Seq, it.TraceParent)
		if err != nil {
			fail(err)
			continue
		}
		started = append(started, pending{it.JobID, f})
	}
	wait, cancel := context.WithTimeout(ctx, ackWait)
	defer cancel()
	acked := make([]string, 0, len(started))
	for _, p := range started {
		select {
		case <-p.f.Ok():
			acked = append(acked, p.id)
		case err := <-p.f.Err():
			fail(fmt.Errorf("publish job %s: %w", p.id, err))
		case <-wait.Done():
			fail(fmt.Errorf("publish job %s: no acknowledgement: %w", p.id, wait.Err()))
		}
	}
	if err := mark.MarkPublished(ctx, acked...); err != nil {
		return 0, errors.Join(firstErr, err)
	}
	return len(acked), firstErr
}

// Sender publishes the messages of jobs just stored, in the background and
// in batches. Send never blocks a request: when the buffer is full the job
// is left for the reconciler.
type Sender struct {
	pub  Publisher
	mark Marker
	log  *slog.Logger
	in   chan store.OutboxItem

	mu     sync.RWMutex
	closed bool
	done   sync.WaitGroup
}

// Options tune a Sender.
type Options struct {
	// Buffer is how many messages may wait to be sent (default 8192).
	Buffer int
	// Batch is the most messages sent together (default 512).
	Batch int
	// Senders is how many batches may be in flight at once, each sent by its own goroutine (default 2).
	Senders int
}

// WithDefaults fills the zero fields.
func (o Options) WithDefaults() Options {
	if o.Buffer <= 0 {
		o.Buffer = 8192
	}
	if o.Batch <= 0 {
		o.Batch = 512
	}
	if o.Senders <= 0 {
		o.Senders = 2
	}
	return o
}

// Start runs a Sender until Close.
func Start(pub Publisher, mark Marker, log *slog.Logger, o Options) *Sender {
	o = o.WithDefaults()
	s := &Sender{pub: pub, mark: mark, log: log, in: make(chan store.OutboxItem, o.Buffer)}
	for range o.Senders {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			s.loop(o.Batch)
		}()
	}
	return s
}

// Send queues a stored job's message. It reports false when the message
// was left to the reconciler (the sender is closed or its buffer full).
func (s *Sender) Send(it store.OutboxItem) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return false
	}
	select {
	case s.in <- it:
		return true
	default:
		s.log.Warn("outbox buffer full; the reconciler will publish the job", "job", it.JobID)
		return false
	}
}

// Close stops accepting messages and returns once those queued were sent.
func (s *Sender) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.in)
	}
	s.mu.Unlock()
	s.done.Wait()
}

func (s *Sender) loop(max int) {
	batch := make([]store.OutboxItem, 0, max)
	for it := range s.in {
		batch = append(batch[:0], it)
	fill:
		for len(batch) < max {
			select {
			case it, ok := <-s.in:
				if !ok {
					break fill
				}
				batch = append(batch, it)
			default:
				break fill
			}
		}
		// Not the request's context: the request has long been answered.
		n, err := Publish(context.Background(), s.pub, s.mark, batch)
		if err != nil {
			s.log.Warn("publish failed; the reconciler will retry", "jobs", len(batch), "published", n, "err", err)
		}
	}
}
