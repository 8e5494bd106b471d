package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/llm"
)

// recorded installs, once for the test binary, a tracer provider that keeps
// every span in memory (tracing in production exports them over OTLP).
var recorded = sync.OnceValue(func() *tracetest.InMemoryExporter {
	exp := tracetest.NewInMemoryExporter()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	return exp
})

// TestATraceFollowsAJobFromTheRequestToTheModelCall: a submission that
// arrives inside a caller's trace is one trace to its end: the dispatcher's
// span for POST /v1/jobs continues the caller's, the worker's span for the
// job (reached only through the job's NATS message) continues the
// dispatcher's, and the model calls made for the job are its children.
func TestATraceFollowsAJobFromTheRequestToTheModelCall(t *testing.T) {
	t.Parallel()
	spans := recorded()
	s := newStack(t, 10*time.Second, 0)
	model := listModel(t, "Tea")
	s.startWorker(t, llm.New(llm.Config{APIKey: "test", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"}))
	_, key := s.tenant(t, "traced", 3)

	var traceID trace.TraceID
	var callerSpan trace.SpanID
	_, _ = rand.Read(traceID[:])
	_, _ = rand.Read(callerSpan[:])
	body, _ := json.Marshal(map[string]any{"kind": "scenario", "scenario": map[string]any{
		"name": "traced", "base_url": s.demo + "/", "steps": []any{"Put tea on the shopping list"}}})
	code, out := s.callWith(t, "POST", "/v1/jobs", key, body,
		map[string]string{"traceparent": "00-" + hex.EncodeToString(traceID[:]) + "-" + hex.EncodeToString(callerSpan[:]) + "-01"})
	var job api.JobView
	if code != 202 || json.Unmarshal(out, &job) != nil {
		t.Fatalf("submit: %d %s", code, out)
	}
	if v := s.wait(t, key, job.ID, 60*time.Second); v.State != "succeeded" || v.Usage == nil || v.Usage.Calls != 2 {
		t.Fatalf("job ended %s (%s) with usage %+v, want succeeded after 2 model calls", v.State, v.Error, v.Usage)
	}
	s.passSpec(t, key, job.ID)

	var submit, run sdktrace.ReadOnlySpan
	var calls []sdktrace.ReadOnlySpan
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		submit, run, calls = nil, nil, nil
		for _, sp := range spans.GetSpans().Snapshots() {
			if sp.SpanContext().TraceID() != traceID {
				continue
			}
			switch sp.Name() {
			case "POST /v1/jobs":
				submit = sp
			case "job scenario":
				run = sp
			case "model call":
				calls = append(calls, sp)
			}
		}
		if submit != nil && run != nil && len(calls) == 2 {
			break
		}
		time.Sleep(100 * time.Millisecond) // the job's span ends just after its state is written
	}
	if submit == nil || run == nil || len(calls) != 2 {
		t.Fatalf("trace %s: submit span %v, job span %v, %d model call spans", traceID, submit != nil, run != nil, len(calls))
	}
	if submit.Parent().SpanID() != callerSpan || submit.SpanKind() != trace.SpanKindServer {
		t.Errorf("the dispatcher's span does not continue the caller's (parent %s)", submit.Parent().SpanID())
	}
	if run.Parent().SpanID() != submit.SpanContext().SpanID() {
		t.Errorf("the worker's span does not continue the dispatcher's (parent %s, want %s)", run.Parent().SpanID(), submit.SpanContext().SpanID())
	}
	attrs := map[string]string{}
	for _, a := range run.Attributes() {
		attrs[string(a.Key)] = a.Value.String()
	}
	if attrs["webpilot.job.id"] != job.ID || attrs["webpilot.job.state"] != "succeeded" {
		t.Errorf("the job's span says %v", attrs)
	}
	for _, c := range calls {
		if c.Parent().SpanID() != run.SpanContext().SpanID() || c.SpanKind() != trace.SpanKindClient {
			t.Errorf("a model call's span is not the job's child (parent %s)", c.Parent().SpanID())
		}
	}
}
