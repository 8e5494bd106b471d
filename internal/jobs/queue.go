package jobs

import (
	"cmp"
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
	// Replicas is how many servers of a JetStream cluster keep the stream
	// (and its consumer): 1 on one server, 3 or 5 in a cluster, where a
	// majority must acknowledge each message.
	Replicas  int
	FileStore bool
	// Cluster and Tags place the stream on a named cluster and on servers
	// carrying every tag (empty: wherever the server chooses).
	Cluster string
	Tags    []string
	// MaxAckPending bounds the jobs delivered and not yet acknowledged
	// across all workers (default DefaultMaxAckPending).
	MaxAckPending int
}

// DefaultMaxAckPending is the consumer's bound on jobs in flight.
const DefaultMaxAckPending = 10_000

// DefaultQueueConfig is what the dispatcher and workers use unless told otherwise.
func DefaultQueueConfig() QueueConfig {
	return QueueConfig{AckWait: 30 * time.Second, MaxDeliver: 5, Duplicates: 2 * time.Minute, Replicas: 1, FileStore: true,
		MaxAckPending: DefaultMaxAckPending}
}

func (cfg QueueConfig) stream() jetstream.StreamConfig {
	storage := jetstream.MemoryStorage
	if cfg.FileStore {
		storage = jetstream.FileStorage
	}
	sc := jetstream.StreamConfig{
		Name:       StreamName,
		Subjects:   []string{"jobs.>"},
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    storage,
		Duplicates: cfg.Duplicates,
		Replicas:   max(cfg.Replicas, 1),
	}
	if cfg.Cluster != "" || len(cfg.Tags) > 0 {
		sc.Placement = &jetstream.Placement{Cluster: cfg.Cluster, Tags: cfg.Tags}
	}
	return sc
}

func (cfg QueueConfig) consumer() jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       ConsumerName,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxDeliver:    cfg.MaxDeliver,
		MaxAckPending: cmp.Or(cfg.MaxAckPending, DefaultMaxAckPending),
	}
}

// ErrQueueMismatch is returned when the stream or consumer on the server
// is not what this process is configured for.
var ErrQueueMismatch = errors.New("the job queue differs from this process's configuration")

// EnsureQueue creates or updates the JOBS work-queue stream and the workers'
// durable pull consumer, then checks that the server keeps them as
// configured: as many replicas as asked (a single server refuses more than
// one), in the cluster asked for.
func EnsureQueue(ctx context.Context, js jetstream.JetStream, cfg QueueConfig) (jetstream.Consumer, error) {
	stream, err := js.CreateOrUpdateStream(ctx, cfg.stream())
	if err != nil {
		return nil, fmt.Errorf("create stream %s with %d replicas: %w", StreamName, max(cfg.Replicas, 1), err)
	}
	if err := checkStream(stream.CachedInfo(), cfg); err != nil {
		return nil, err
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, StreamName, cfg.consumer())
	if err != nil {
		return nil, fmt.Errorf("create consumer %s: %w", ConsumerName, err)
	}
	return cons, nil
}

// BindQueue finds the stream and consumer someone else (the dispatcher)
// made, without changing them, and checks that they are what this process
// is configured for: the replicas and the consumer's ack wait, which sets
// how often a running job must say it is alive.
func BindQueue(ctx context.Context, js jetstream.JetStream, cfg QueueConfig) (jetstream.Consumer, error) {
	stream, err := js.Stream(ctx, StreamName)
	if err != nil {
		return nil, fmt.Errorf("find stream %s: %w", StreamName, err)
	}
	if err := checkStream(stream.CachedInfo(), cfg); err != nil {
		return nil, err
	}
	cons, err := stream.Consumer(ctx, ConsumerName)
	if err != nil {
		return nil, fmt.Errorf("find consumer %s: %w", ConsumerName, err)
	}
	if got := cons.CachedInfo().Config.AckWait; got != cfg.AckWait {
		return nil, fmt.Errorf("%w: consumer %s waits %s for an ack, this process %s (WEBPILOT_ACK_WAIT)", ErrQueueMismatch, ConsumerName, got, cfg.AckWait)
	}
	return cons, nil
}

func checkStream(info *jetstream.StreamInfo, cfg QueueConfig) error {
	if info == nil {
		return fmt.Errorf("stream %s: no information from the server", StreamName)
	}
	if want := max(cfg.Replicas, 1); info.Config.Replicas != want {
		return fmt.Errorf("%w: stream %s has %d replicas, this process is configured for %d (WEBPILOT_STREAM_REPLICAS)",
			ErrQueueMismatch, StreamName, info.Config.Replicas, want)
	}
	if cfg.Cluster != "" && info.Cluster != nil && info.Cluster.Name != "" && info.Cluster.Name != cfg.Cluster {
		return fmt.Errorf("%w: stream %s is placed in cluster %q, this process is configured for %q (WEBPILOT_STREAM_CLUSTER)",
			ErrQueueMismatch, StreamName, info.Cluster.Name, cfg.Cluster)
	}
	return nil
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
