package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Stream and consumer names.
const (
	StreamName   = "JOBS"
	ConsumerName = "workers"
)

// Subject is where a job of kind for tenant is published: jobs.<kind>.<tenant>.
func Subject(kind Kind, tenantID string) string {
	return "jobs." + string(kind) + "." + tenantID
}

// QueueConfig sizes the stream and its consumer.
type QueueConfig struct {
	AckWait    time.Duration // redelivery after this long without an ack or progress
	MaxDeliver int           // deliveries before a job is given up
	Duplicates time.Duration // window in which a repeated Nats-Msg-Id is dropped
	Replicas   int
	FileStore  bool
}

// DefaultQueueConfig is what the dispatcher and workers use unless told otherwise.
func DefaultQueueConfig() QueueConfig {
	return QueueConfig{AckWait: 30 * time.Second, MaxDeliver: 5, Duplicates: 2 * time.Minute, Replicas: 1, FileStore: true}
}

// EnsureQueue creates or updates the JOBS work-queue stream and the workers'
// durable pull consumer.
func EnsureQueue(ctx context.Context, js jetstream.JetStream, cfg QueueConfig) (jetstream.Consumer, error) {
	storage := jetstream.MemoryStorage
	if cfg.FileStore {
		storage = jetstream.FileStorage
	}
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       StreamName,
		Subjects:   []string{"jobs.>"},
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    storage,
		Duplicates: cfg.Duplicates,
		Replicas:   max(cfg.Replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", StreamName, err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, StreamName, jetstream.ConsumerConfig{
		Durable:       ConsumerName,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxDeliver:    cfg.MaxDeliver,
		MaxAckPending: 10_000,
	})
	if err != nil {
		return nil, fmt.Errorf("create consumer %s: %w", ConsumerName, err)
	}
	return cons, nil
}

// Message is the body of a job message: only the id travels; everything
// else is read from Postgres.
type Message struct {
	JobID string `json:"job_id"`
}

// Publisher publishes job ids to the stream.
type Publisher struct {
	js jetstream.JetStream
}

// NewPublisher wraps a JetStream context.
func NewPublisher(js jetstream.JetStream) *Publisher { return &Publisher{js: js} }

// MsgID is the Nats-Msg-Id of a job's seq-th publish: the job id for the
// first, so that repeats inside the duplicates window are dropped by the
// server; a suffix for a later deliberate publish (a parked job woken) that
// must not be dropped as a repeat of the first.
func MsgID(jobID string, seq int) string {
	if seq == 0 {
		return jobID
	}
	return jobID + "." + strconv.Itoa(seq)
}

// Publish sends a job id under MsgID(jobID, seq).
func (p *Publisher) Publish(ctx context.Context, subject, jobID string, seq int) error {
	if _, err := p.js.PublishMsg(ctx, jobMsg(subject, jobID, seq, "")); err != nil {
		return fmt.Errorf("publish job %s: %w", jobID, err)
	}
	return nil
}

// PublishAsync starts sending a job id under MsgID(jobID, seq) without
// waiting for the stream's acknowledgement, so that many publishes share
// one round trip; the future reports the outcome. A traceparent, when
// given, travels in the message's header (see package tracing).
func (p *Publisher) PublishAsync(subject, jobID string, seq int, traceParent string) (jetstream.PubAckFuture, error) {
	f, err := p.js.PublishMsgAsync(jobMsg(subject, jobID, seq, traceParent))
	if err != nil {
		return nil, fmt.Errorf("publish job %s: %w", jobID, err)
	}
	return f, nil
}

// TraceParentHeader carries a job's trace in its message.
const TraceParentHeader = "traceparent"

func jobMsg(subject, jobID string, seq int, traceParent string) *nats.Msg {
	body, _ := json.Marshal(Message{JobID: jobID})
	msg := &nats.Msg{Subject: subject, Data: body, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, MsgID(jobID, seq))
	if traceParent != "" {
		msg.Header.Set(TraceParentHeader, traceParent)
	}
	return msg
}

// ParseMessage decodes a job message.
func ParseMessage(data []byte) (Message, error) {
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("decode job message: %w", err)
	}
	if m.JobID == "" {
		return m, errors.New("job message has no job_id")
	}
	return m, nil
}

// KindFromSubject extracts the kind of a jobs.<kind>.<tenant> subject.
func KindFromSubject(subject string) Kind {
	parts := strings.Split(subject, ".")
	if len(parts) != 3 {
		return ""
	}
	return Kind(parts[1])
}

// InStream counts the job messages the consumer still holds: not yet
// delivered plus delivered and not acknowledged.
func InStream(ctx context.Context, cons jetstream.Consumer) (int, error) {
	info, err := cons.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("consumer info: %w", err)
	}
	return int(info.NumPending) + info.NumAckPending, nil
}
