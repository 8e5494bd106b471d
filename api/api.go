// Package api is the dispatcher's HTTP API (v1, JSON). Tenants authenticate
// with their API key as a bearer token; operators use a separate admin
// token. Every tenant query is scoped to the caller, so another tenant's job
// answers 404.
package api

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/tracing"
)

// Sender hands a stored job's message over for publishing; *outbox.Sender
// implements it. It may return before the message is on the stream: the job
// is already safe in the outbox, and the reconciler publishes whatever was
// not confirmed.
type Sender interface {
	Send(store.OutboxItem) bool
}

// Config tunes the API.
type Config struct {
	AdminToken  string
	DefaultHold int64 // micro-credits held for a job that names no max_credits
	MaxBody     int64 // bytes; larger bodies answer 413
	// AuthFailures is how many failed authentications a client address may
	// make per second (burst 20) before it is answered 429 without a
	// database query. Zero means 2; negative means no limit.
	AuthFailures float64
	// Submissions is how many jobs a tenant may submit per second (burst
	// ten times as many). Zero means 50; negative means no limit.
	Submissions float64
	// MaxStreams bounds a tenant's open progress streams. Zero means 20.
	MaxStreams int
	// MaxBulkTests bounds the tests one bulk job may run, each a child job
	// (zero means DefaultMaxBulkTests).
	MaxBulkTests int
	// BulkTestCredits is what a bulk job's budget must cover per test it
	// runs, model calls or none: max_credits bounds a suite run's fan-out
	// as it bounds model calls. Zero means DefaultBulkTestCredits.
	BulkTestCredits float64
	// Metrics is where the API's metrics are registered and what /metrics
	// serves (the process's other collectors included). Nil: a registry of
	// the API's own.
	Metrics *prometheus.Registry
	// Ready are the dependencies /readyz checks.
	Ready []ReadyCheck
	// TrustedProxies are the reverse proxies in front of the API: a
	// request from one is counted against the client address it names in
	// X-Forwarded-For (see clientAddr). Empty: the connection's address.
	TrustedProxies []netip.Prefix
}

// Defaults of the fan-out limits (see Config).
const (
	DefaultMaxBulkTests    = 500
	DefaultBulkTestCredits = 0.01
)

// Server holds the API's dependencies.
type Server struct {
	cfg    Config
	hub    *hub
	auth   *keyedLimiters // failed authentications per client address
	submit *keyedLimiters // submissions per tenant
	store  *store.Store
	keys   *expirable.LRU[[sha256.Size]byte, store.Tenant] // recently verified API keys
	// metrics count requests and submissions; gatherer is what /metrics serves.
	metrics  *httpMetrics
	gatherer prometheus.Gatherer
	pub      Sender
	urls     scenario.URLPolicy
	sealer   *jobs.Sealer
	log      *slog.Logger
	// mounts are handlers served beside the API (the console).
	mounts map[string]http.Handler
}

// Mount serves h for pattern beside the API, behind the same request ids,
// metrics and recovery (the console at "/console/"). Call it before Handler.
func (s *Server) Mount(pattern string, h http.Handler) {
	if s.mounts == nil {
		s.mounts = map[string]http.Handler{}
	}
	s.mounts[pattern] = h
}

// New builds the API server.
func New(cfg Config, st *store.Store, pub Sender, urls scenario.URLPolicy, sealer *jobs.Sealer, log *slog.Logger) *Server {
	if cfg.DefaultHold == 0 {
		cfg.DefaultHold = 2 * store.MicroCredits
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = 1 << 20
	}
	if log == nil {
		log = slog.Default()
	}
	if cfg.AuthFailures == 0 {
		cfg.AuthFailures = 2
	}
	if cfg.Submissions == 0 {
		cfg.Submissions = 50
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = 20
	}
	cfg.MaxBulkTests = cmp.Or(cfg.MaxBulkTests, DefaultMaxBulkTests)
	cfg.BulkTestCredits = cmp.Or(cfg.BulkTestCredits, DefaultBulkTestCredits)
	srv := &Server{cfg: cfg, hub: newHub(), store: st, pub: pub, urls: urls, sealer: sealer, log: log,
		// Tenants never change once created and keys are never reissued,
		// so a verified key may skip the database for a while; failures
		// are never remembered, so they keep counting against the address.
		keys: expirable.NewLRU[[sha256.Size]byte, store.Tenant](10_000, nil, 30*time.Second)}
	reg := cfg.Metrics
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	srv.metrics, srv.gatherer = newHTTPMetrics(reg), reg
	if cfg.AuthFailures > 0 {
		srv.auth = newKeyedLimiters(cfg.AuthFailures, 20)
	}
	if cfg.Submissions > 0 {
		srv.submit = newKeyedLimiters(cfg.Submissions, int(cfg.Submissions*10))
	}
	return srv
}

// Handler routes the API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		h := rt.handler
		switch rt.access {
		case tenantOnly:
			h = s.tenant(h)
		case adminOnly:
			h = s.admin(h)
		}
		mux.HandleFunc(rt.method+" "+rt.path, h)
	}
	for pattern, h := range s.mounts {
		mux.Handle(pattern, h)
	}
	// Each request is a server span (the caller's traceparent continued);
	// a job it submits carries the trace on to the worker.
	return otelhttp.NewHandler(s.recover(cleanInput(s.observe(mux))), "dispatcher", otelhttp.WithPropagators(tracing.Propagator),
		otelhttp.WithFilter(func(r *http.Request) bool { return r.URL.Path != "/metrics" && r.URL.Path != "/healthz" }))
}

// cleanInput answers 400 for a request whose path or query holds what no
// value may (NUL, invalid UTF-8, malformed escapes), naming the part, as
// bodies are checked: the database cannot store such text, and no route
// needs it.
func cleanInput(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := badText(r.URL.Path); msg != "" {
			writeError(w, http.StatusBadRequest, "invalid request", []scenario.FieldError{{Field: "path", Message: msg}})
			return
		}
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid request", []scenario.FieldError{{Field: "query", Message: "is malformed: " + err.Error()}})
			return
		}
		for _, name := range slices.Sorted(maps.Keys(q)) {
			for _, v := range append([]string{name}, q[name]...) {
				if msg := badText(v); msg != "" {
					writeError(w, http.StatusBadRequest, "invalid request", []scenario.FieldError{{Field: "query." + strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "?"), Message: msg}})
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// badText says what is wrong with a path or query value, if anything.
func badText(v string) string {
	switch {
	case !utf8.ValidString(v):
		return "must be valid UTF-8"
	case strings.ContainsRune(v, 0):
		return "must not contain the NUL character (%00)"
	}
	return ""
}

type tenantKey struct{}

func tenantFrom(ctx context.Context) store.Tenant {
	t, _ := ctx.Value(tenantKey{}).(store.Tenant)
	return t
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(tok)
	}
	return ""
}

// tenant authenticates the caller's API key.
func (s *Server) tenant(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key := bearer(r)
		t, err := s.Authenticate(r, key)
		var limited *AuthLimitedError
		switch {
		case errors.As(err, &limited):
			tooMany(w, limited.RetryAfter, "too many failed authentications from this address; retry later")
			return
		case errors.Is(err, store.ErrNotFound) && key == "":
			writeError(w, http.StatusUnauthorized, "missing API key: send Authorization: Bearer <key>", nil)
			return
		case errors.Is(err, store.ErrNotFound):
			writeError(w, http.StatusUnauthorized, "invalid API key", nil)
			return
		}
		if err != nil {
			s.internal(w, r, err)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), tenantKey{}, t)))
	}
}

// AuthLimitedError is an authentication refused unchecked: the client's
// address made too many failed ones.
type AuthLimitedError struct{ RetryAfter string }

func (e *AuthLimitedError) Error() string {
	return "too many failed authentications from this address; retry in " + e.RetryAfter + " s"
}

// Authenticate resolves a key that r's client presented anywhere (the
// console's sign-in form as well as the API's bearer token) under the one
// limit on failed authentications per client address: a failure counts,
// and an address past the limit gets *AuthLimitedError without a lookup.
// An unknown key is store.ErrNotFound.
func (s *Server) Authenticate(r *http.Request, key string) (store.Tenant, error) {
	addr := clientAddr(r, s.cfg.TrustedProxies)
	if s.auth != nil && s.auth.exhausted(addr) {
		return store.Tenant{}, &AuthLimitedError{RetryAfter: s.auth.retryAfter(addr)}
	}
	if key == "" {
		s.authFailed(addr)
		return store.Tenant{}, fmt.Errorf("no key: %w", store.ErrNotFound)
	}
	t, err := s.authenticate(r.Context(), key)
	if errors.Is(err, store.ErrNotFound) {
		s.authFailed(addr)
	}
	return t, err
}

// authenticate resolves an API key to its tenant.
func (s *Server) authenticate(ctx context.Context, key string) (store.Tenant, error) {
	sum := sha256.Sum256([]byte(key))
	if t, ok := s.keys.Get(sum); ok {
		return t, nil
	}
	t, err := s.store.Authenticate(ctx, key)
	if err == nil {
		s.keys.Add(sum, t)
	}
	return t, err
}

func (s *Server) authFailed(addr string) {
	if s.auth != nil {
		s.auth.take(addr)
	}
}

// admin checks the operator token in constant time.
func (s *Server) admin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		addr := clientAddr(r, s.cfg.TrustedProxies)
		if s.auth != nil && s.auth.exhausted(addr) {
			tooMany(w, s.auth.retryAfter(addr), "too many failed authentications from this address; retry later")
			return
		}
		tok := bearer(r)
		if s.cfg.AdminToken == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.AdminToken)) != 1 {
			s.authFailed(addr)
			writeError(w, http.StatusUnauthorized, "invalid admin token", nil)
			return
		}
		next(w, r)
	}
}

func (s *Server) recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("handler panic", "request_id", requestID(r.Context()), "path", r.URL.Path, "panic", v)
				writeError(w, http.StatusInternalServerError, "internal error", nil)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) internal(w http.ResponseWriter, r *http.Request, err error) {
	if store.Transient(err) {
		// An outage of the database, not a fault of the request: nothing was
		// written (or a retry with the same Idempotency-Key finds it).
		s.log.Warn("request failed: database unavailable", "request_id", requestID(r.Context()), "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", "2")
		writeError(w, http.StatusServiceUnavailable, "the service is briefly unavailable; retry shortly", nil)
		return
	}
	s.log.Error("request failed", "request_id", requestID(r.Context()), "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "internal error", nil)
}

// ErrorBody is every error response: what is wrong and, for invalid input,
// each field at fault by its JSON path.
type ErrorBody struct {
	Error  string                `json:"error"`
	Fields []scenario.FieldError `json:"fields,omitempty"`
}

func writeError(w http.ResponseWriter, status int, msg string, fields []scenario.FieldError) {
	writeJSON(w, status, ErrorBody{Error: msg, Fields: fields})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// decode reads a JSON body strictly, answering 413 or a field-specific 400.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	return s.decodeUpTo(w, r, v, s.cfg.MaxBody)
}

// decodeUpTo is decode with a body of up to limit bytes.
func (s *Server) decodeUpTo(w http.ResponseWriter, r *http.Request, v any, limit int64) bool {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, "request body is larger than the limit of "+itoa(limit)+" bytes", nil)
		return false
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "the request body could not be read", []scenario.FieldError{{Field: "body", Message: err.Error()}})
		return false
	}
	// The database cannot store a NUL character, and no field needs one.
	if path := nulPath(raw); path != "" {
		writeError(w, http.StatusBadRequest, "invalid request", []scenario.FieldError{{Field: path, Message: "must not contain the NUL character (\\u0000)"}})
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON object")
	}
	if err == nil {
		if path, want := caseMismatch(raw, reflect.TypeOf(v)); path != "" {
			writeError(w, http.StatusBadRequest, "invalid request", []scenario.FieldError{{Field: path,
				Message: fmt.Sprintf("unknown field: names are case-sensitive (did you mean %q?)", want)}})
			return false
		}
		return true
	}
	// A step is decoded by its own rules; find which one and say why.
	if fe, ok := stepError(raw); ok {
		writeError(w, http.StatusBadRequest, "invalid request", []scenario.FieldError{fe})
		return false
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		writeError(w, http.StatusBadRequest, "invalid request", []scenario.FieldError{{Field: field, Message: "must be a " + typeErr.Type.String() + ", not a JSON " + typeErr.Value}})
	case errors.As(err, &syntaxErr):
		writeError(w, http.StatusBadRequest, "malformed JSON", []scenario.FieldError{{Field: "body", Message: syntaxErr.Error() + " at byte " + itoa(syntaxErr.Offset)}})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		writeError(w, http.StatusBadRequest, "invalid request", []scenario.FieldError{{Field: name, Message: "unknown field"}})
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "empty body", []scenario.FieldError{{Field: "body", Message: "a JSON object is required"}})
	default:
		writeError(w, http.StatusBadRequest, "malformed JSON", []scenario.FieldError{{Field: "body", Message: err.Error()}})
	}
	return false
}

func itoa[T ~int | ~int64](n T) string { return strconv.FormatInt(int64(n), 10) }

// nulPath returns the JSON path of the first string (value or key) holding
// a NUL character, or "" if there is none or the body is not JSON.
func nulPath(raw []byte) string {
	if !bytes.Contains(raw, []byte(`\u0000`)) && bytes.IndexByte(raw, 0) < 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "body"
	}
	var walk func(v any, path string) string
	walk = func(v any, path string) string {
		switch x := v.(type) {
		case string:
			if strings.ContainsRune(x, 0) {
				return path
			}
		case []any:
			for i, e := range x {
				if p := walk(e, fmt.Sprintf("%s[%d]", path, i)); p != "" {
					return p
				}
			}
		case map[string]any:
			for k, e := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if strings.ContainsRune(k, 0) {
					return p
				}
				if p := walk(e, p); p != "" {
					return p
				}
			}
		}
		return ""
	}
	if p := walk(v, ""); p != "" {
		return p
	}
	return "body"
}

// stepError finds the step of a job submission that cannot be decoded and
// names it by its path, with a message that speaks of steps, not Go types.
func stepError(raw []byte) (scenario.FieldError, bool) {
	var body struct {
		Scenario struct {
			Steps []json.RawMessage `json:"steps"`
		} `json:"scenario"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return scenario.FieldError{}, false
	}
	for i, st := range body.Scenario.Steps {
		var step scenario.Step
		if err := json.Unmarshal(st, &step); err != nil {
			return scenario.FieldError{Field: fmt.Sprintf("scenario.steps[%d]", i), Message: scenario.StepDecodeMessage(err)}, true
		}
	}
	return scenario.FieldError{}, false
}

// pollInterval is how often a progress stream reads the job while change
// notifications are not flowing; with them, it reads only on a change (and
// every streamCheck, in case one was missed).
const (
	pollInterval = 300 * time.Millisecond
	streamCheck  = 15 * time.Second
	// streamLife bounds one stream; the client reconnects for more.
	streamLife = 30 * time.Minute
)
