package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"
)

// ReadyCheck is a dependency /readyz asks: nil means it can serve.
type ReadyCheck struct {
	Name  string
	Check func(context.Context) error
}

// httpMetrics counts the API's requests by route (the mux pattern, never
// the raw path, so ids do not multiply series) and its submissions.
type httpMetrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	submissions *prometheus.CounterVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "webpilot", Name: "http_requests_total",
			Help: "API requests by route, method and status code."}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "webpilot", Name: "http_request_duration_seconds",
			Help: "API request durations by route (progress streams excluded).", Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12)}, []string{"route"}),
		submissions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "webpilot", Name: "submissions_total",
			Help: "Job submissions by kind and outcome (accepted, replayed, invalid, conflict, insufficient_credits, throttled, error)."}, []string{"kind", "outcome"}),
	}
	reg.MustRegister(m.requests, m.duration, m.submissions)
	return m
}

// statusWriter remembers the status code; Unwrap keeps http.ResponseController
// (flushing a progress stream) working through it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type requestIDKey struct{}

// requestIDs accepts a caller's X-Request-Id of up to 64 safe characters.
var requestIDs = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// observe gives each request an id (X-Request-Id, echoed back and in every
// log line about it), and counts and times it by its route.
func (s *Server) observe(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !requestIDs.MatchString(id) {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		sw := &statusWriter{ResponseWriter: w}
		start := time.Now()
		mux.ServeHTTP(sw, r) // sets r.Pattern
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		trace.SpanFromContext(r.Context()).SetName(route)
		code := sw.code
		if code == 0 {
			code = http.StatusOK
		}
		d := time.Since(start)
		method := r.Method
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		default:
			method = "other" // a made-up method must not grow the series
		}
		s.metrics.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
		if route != "GET /v1/jobs/{id}/events" {
			s.metrics.duration.WithLabelValues(route).Observe(d.Seconds())
		}
		s.log.Debug("request", "request_id", id, "method", r.Method, "route", route, "code", code, "duration", d)
	})
}

// requestID is the id observe gave the request ("" outside a request).
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// ready answers 200 when every dependency answers, 503 naming those that
// do not. /healthz stays cheap: it says only that the process serves.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{}
	ok := true
	for _, c := range s.cfg.Ready {
		if err := c.Check(ctx); err != nil {
			checks[c.Name], ok = err.Error(), false
			continue
		}
		checks[c.Name] = "ok"
	}
	if !ok {
		w.Header().Set("Retry-After", "2")
		writeJSON(w, http.StatusServiceUnavailable, ReadyView{Status: "unavailable", Checks: checks})
		return
	}
	writeJSON(w, http.StatusOK, ReadyView{Status: "ready", Checks: checks})
}

// ReadyView is /readyz's body: each dependency's state ("ok" or why not).
type ReadyView struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// metricsHandler serves the registry's metrics.
func (s *Server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(s.gatherer, promhttp.HandlerOpts{})
}
