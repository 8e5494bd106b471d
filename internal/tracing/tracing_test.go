package tracing_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/webpilot/webpilot/internal/tracing"
)

// TestATraceParentRoundTrips: a sampled span's traceparent, read back,
// continues the same trace under that span; without a sampled span there
// is nothing to carry, and an empty or malformed one changes nothing.
func TestATraceParentRoundTrips(t *testing.T) {
	t.Parallel()
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "submit")
	defer span.End()
	parent := tracing.TraceParent(ctx)
	want := "00-" + span.SpanContext().TraceID().String() + "-" + span.SpanContext().SpanID().String() + "-01"
	if parent != want {
		t.Fatalf("traceparent = %q, want %q", parent, want)
	}
	_, child := tp.Tracer("test").Start(tracing.WithTraceParent(context.Background(), parent), "run")
	defer child.End()
	ro := child.(sdktrace.ReadOnlySpan)
	if ro.Parent().SpanID() != span.SpanContext().SpanID() || ro.SpanContext().TraceID() != span.SpanContext().TraceID() {
		t.Fatalf("the continued span's parent is %s in trace %s", ro.Parent().SpanID(), ro.SpanContext().TraceID())
	}

	unsampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	ctx, s := unsampled.Tracer("test").Start(context.Background(), "dropped")
	defer s.End()
	if got := tracing.TraceParent(ctx); got != "" {
		t.Errorf("an unsampled span's traceparent = %q, want none", got)
	}
	for _, bad := range []string{"", "00-nothex-x-01"} {
		if got := tracing.TraceParent(tracing.WithTraceParent(context.Background(), bad)); got != "" {
			t.Errorf("WithTraceParent(%q) carried %q", bad, got)
		}
	}
}
