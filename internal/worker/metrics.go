package worker

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
)

// Metrics are what a worker counts of its jobs, for Prometheus.
type Metrics struct {
	claimLatency prometheus.Histogram
	finished     *prometheus.CounterVec
	steps        *prometheus.HistogramVec
	settles      *prometheus.CounterVec
	modelCalls   *prometheus.CounterVec
	tokens       *prometheus.CounterVec
	credits      *prometheus.CounterVec
	contexts     prometheus.Gauge
	errors       *prometheus.CounterVec
}

// NewMetrics registers a worker's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns = "webpilot"
	m := &Metrics{
		claimLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "claim_latency_seconds",
			Help: "Time from a job's submission to a worker claiming it.", Buckets: prometheus.ExponentialBuckets(0.005, 3, 12)}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "jobs_finished_total",
			Help: "Jobs this worker brought to a final state, by kind and state."}, []string{"kind", "state"}),
		steps: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "step_duration_seconds",
			Help: "Scenario step durations by the tier that took them.", Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 12)}, []string{"tier"}),
		settles: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "settles_total",
			Help: "Waits for the page to settle after a batch, by how they ended (quiet, timeout)."}, []string{"ended_by"}),
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_calls_total",
			Help: "Model calls settled, by model."}, []string{"model"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_tokens_total",
			Help: "Model tokens by model and type (prompt, cached, completion)."}, []string{"model", "type"}),
		credits: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "model_credits_total",
			Help: "Credits model calls cost at the configured prices, by model."}, []string{"model"}),
		contexts: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "browser_contexts",
			Help: "Browser contexts (one per running job) open in this worker."}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "worker_errors_total",
			Help: "Failures of the worker's own work, by what failed (claim, finish, session)."}, []string{"op"}),
	}
	reg.MustRegister(m.claimLatency, m.finished, m.steps, m.settles, m.modelCalls, m.tokens, m.credits, m.contexts, m.errors)
	return m
}

// modelCall counts a settled call; microCredits is what it was charged.
func (m *Metrics) modelCall(model string, u llm.Usage, microCredits int64) {
	m.modelCalls.WithLabelValues(model).Inc()
	m.tokens.WithLabelValues(model, "prompt").Add(float64(u.PromptTokens))
	m.tokens.WithLabelValues(model, "cached").Add(float64(u.CachedTokens))
	m.tokens.WithLabelValues(model, "completion").Add(float64(u.CompletionTokens))
	m.credits.WithLabelValues(model).Add(float64(microCredits) / store.MicroCredits)
}

// ran counts the steps this attempt took (from the first step it ran).
func (m *Metrics) ran(res orchestrator.Result, from int) {
	for _, s := range res.Steps {
		if s.Index < from {
			continue // taken by an earlier attempt, counted then
		}
		tier := s.Tier
		if tier == "" {
			tier = "none"
		}
		m.steps.WithLabelValues(tier).Observe(s.Duration.Seconds())
		for _, st := range s.Settle {
			m.settles.WithLabelValues(st.EndedBy).Inc()
		}
	}
}
