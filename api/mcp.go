package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/mcpserver"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
)

// mcpSessionHeader is where Streamable HTTP carries the MCP session's id.
const mcpSessionHeader = "Mcp-Session-Id"

// mcpWriteWindow is how long an MCP answer or stream may take to write.
const mcpWriteWindow = 30 * time.Minute

// secretHeader carries a session secret, NAME=value (repeatable): a
// header, never the URL, which proxies and logs keep.
const secretHeader = "X-Webpilot-Secret"

// MCP serves the Model Context Protocol at /mcp for tenants, their API
// key the bearer token: each MCP session is a session job that a worker
// holds (its browser behind the job's egress proxy, each call charged and
// recorded in the job's history), and run_scenario submits jobs as the
// tenant. The query says where a session may go: allow_origin (repeatable,
// at least one), device, max_credits and idle_seconds. An MCP session
// belongs to the tenant that opened it: another key gets 404 for it.
func (s *Server) MCP(nc *nats.Conn, version string) http.Handler {
	var owners sync.Map // MCP session id → tenant id
	api := s.Handler()
	srv := mcpserver.New(mcpserver.Options{Version: version, Log: s.log})
	inner := srv.HandlerFor(func(r *http.Request) mcpserver.Backend {
		req, _ := r.Context().Value(sessionKey{}).(jobs.SessionRequest) // checked below, before a session opens
		return &mcpserver.Remote{API: api, Key: bearer(r), NATS: nc, Session: req, Log: s.log}
	})
	return http.HandlerFunc(s.tenant(func(w http.ResponseWriter, r *http.Request) {
		// A call's answer comes when its commands have run (a whole
		// scenario's when run_scenario's job ends), and a session's
		// notification stream stays open: past the server's write timeout.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(mcpWriteWindow))
		t := tenantFrom(r.Context())
		if id := r.Header.Get(mcpSessionHeader); id != "" {
			if owner, ok := owners.Load(id); !ok || owner != t.ID {
				writeError(w, http.StatusNotFound, "no such MCP session of yours", nil)
				return
			}
			if r.Method == http.MethodDelete {
				defer owners.Delete(id)
			}
			inner.ServeHTTP(w, r)
			return
		}
		req, fields := sessionRequest(r)
		if len(fields) == 0 {
			sub := jobs.Submission{Kind: jobs.KindSession, Session: &req}
			var ve scenario.ValidationError
			if err := sub.Validate(s.urls); errors.As(err, &ve) {
				fields = queryFields(ve)
			}
		}
		if len(fields) > 0 {
			writeError(w, http.StatusBadRequest, "invalid MCP session", fields)
			return
		}
		inner.ServeHTTP(&ownerRecorder{ResponseWriter: w, owners: &owners, tenant: t}, r.WithContext(context.WithValue(r.Context(), sessionKey{}, req)))
	}))
}

// sessionKey carries a new MCP session's checked settings to its backend.
type sessionKey struct{}

// sessionRequest reads a session's settings from the request: the query's
// allow_origin, device, max_credits and idle_seconds, and the secret
// headers.
func sessionRequest(r *http.Request) (jobs.SessionRequest, []scenario.FieldError) {
	q := r.URL.Query()
	req := jobs.SessionRequest{Options: scenario.Options{AllowedOrigins: q["allow_origin"], Device: q.Get("device")}}
	var fields []scenario.FieldError
	if v := q.Get("max_credits"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > maxHold {
			fields = append(fields, scenario.FieldError{Field: "query.max_credits", Message: fmt.Sprintf("must be a number of credits above 0 and at most %g", float64(maxHold))})
		}
		req.Options.MaxCredits = f
	}
	if v := q.Get("idle_seconds"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fields = append(fields, scenario.FieldError{Field: "query.idle_seconds", Message: "must be a whole number of seconds"})
		}
		req.IdleSeconds = n
	}
	for i, h := range r.Header.Values(secretHeader) {
		name, value, ok := strings.Cut(h, "=")
		if !ok || name == "" {
			fields = append(fields, scenario.FieldError{Field: fmt.Sprintf("header.%s[%d]", secretHeader, i), Message: "must be NAME=value"})
			continue
		}
		if req.Secrets == nil {
			req.Secrets = map[string]string{}
		}
		req.Secrets[strings.TrimSpace(name)] = value
	}
	return req, fields
}

// queryFields names a session request's fields as the query gives them.
func queryFields(ve scenario.ValidationError) []scenario.FieldError {
	out := make([]scenario.FieldError, len(ve))
	for i, f := range ve {
		name := strings.TrimPrefix(f.Field, "session.")
		name = strings.TrimPrefix(name, "options.")
		name = strings.Replace(name, "allowed_origins", "allow_origin", 1)
		if strings.HasPrefix(name, "secrets") {
			name = "header." + secretHeader + strings.TrimPrefix(name, "secrets")
		} else {
			name = "query." + name
		}
		out[i] = scenario.FieldError{Field: name, Message: f.Message}
	}
	return out
}

// ownerRecorder notes which tenant a new MCP session's id belongs to as
// the id is answered.
type ownerRecorder struct {
	http.ResponseWriter
	owners *sync.Map
	tenant store.Tenant
	noted  bool
}

func (o *ownerRecorder) note() {
	if o.noted {
		return
	}
	o.noted = true
	if id := o.Header().Get(mcpSessionHeader); id != "" {
		o.owners.Store(id, o.tenant.ID)
	}
}

func (o *ownerRecorder) WriteHeader(code int) {
	o.note()
	o.ResponseWriter.WriteHeader(code)
}

func (o *ownerRecorder) Write(b []byte) (int, error) {
	o.note()
	return o.ResponseWriter.Write(b)
}

func (o *ownerRecorder) Flush() {
	o.note()
	if f, ok := o.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (o *ownerRecorder) Unwrap() http.ResponseWriter { return o.ResponseWriter }
