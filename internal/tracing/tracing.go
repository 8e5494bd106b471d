// Package tracing follows a job with OpenTelemetry across the processes it
// passes through: the dispatcher's request, the job's message on NATS (a
// W3C traceparent header), the worker's run and its model calls. With no
// endpoint configured nothing is exported and spans cost next to nothing.
package tracing

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Propagator carries trace context in W3C traceparent headers, in HTTP and
// in NATS messages alike.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// Name is the instrumentation scope of webpilot's own spans.
const Name = "github.com/webpilot/webpilot"

// Tracer is webpilot's tracer, from the installed provider.
func Tracer() trace.Tracer { return otel.Tracer(Name) }

// Config says where spans go.
type Config struct {
	// Endpoint is the OTLP/HTTP collector's URL (http://host:4318); empty
	// turns tracing off.
	Endpoint string
	// Sample is the share of new traces kept (a trace that arrives with a
	// sampled parent is always kept).
	Sample float64
	// Service names the process in the traces (webpilot-dispatcher).
	Service string
}

// Setup installs the process's tracer provider and returns its shutdown,
// which flushes what is buffered for at most 5 s (a stopping process must
// not hang on a collector). Without an endpoint it installs nothing.
func Setup(ctx context.Context, c Config) (shutdown func(), err error) {
	otel.SetTextMapPropagator(Propagator)
	if c.Endpoint == "" {
		return func() {}, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(c.Endpoint))
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(c.Sample))),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(c.Service))),
	)
	otel.SetTracerProvider(tp)
	return func() {
		fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(fctx)
	}, nil
}

// mapCarrier is a TextMapCarrier over one header map.
type mapCarrier map[string]string

func (m mapCarrier) Get(k string) string { return m[k] }
func (m mapCarrier) Set(k, v string)     { m[k] = v }
func (m mapCarrier) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TraceParent is the W3C traceparent of ctx's span, "" when ctx has no
// sampled span (tracing off, or a trace not kept).
func TraceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsSampled() {
		return ""
	}
	m := mapCarrier{}
	Propagator.Inject(ctx, m)
	return m["traceparent"]
}

// WithTraceParent is ctx continuing the trace a traceparent names (ctx as
// it is when tp is empty or malformed).
func WithTraceParent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return Propagator.Extract(ctx, mapCarrier{"traceparent": tp})
}
