// Package apitest holds the API's contract check for tests: real traffic,
// from any client, validated against the OpenAPI document the dispatcher
// serves.
package apitest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/webpilot/webpilot/api"
)

// maxBody bounds what is kept of a body for validation.
const maxBody = 8 << 20

// The API's text and binary answers are read as what they are.
func init() {
	openapi3filter.RegisterBodyDecoder("text/typescript", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/x-diff", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("image/png", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("image/jpeg", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/zip", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/xml", openapi3filter.PlainBodyDecoder)
}

// Contract wraps the API's handler so every exchange through it is checked
// against api.OpenAPI():
//   - an answered route must be documented (an unknown one answers 404 or 405);
//   - a request the document rejects must be rejected (4xx) by the API too;
//   - every response (status, media type and, for JSON, body) must match
//     what the document says the operation answers.
//
// Each violation fails t when the test ends; Checked says how many exchanges
// were validated, so a test can tell traffic went through.
type Contract struct {
	h      http.Handler
	router routers.Router

	mu         sync.Mutex
	violations []string
	checked    int
	// seen are the exchanges already validated: a test polling a job gets
	// the same answer many times, and validating costs milliseconds each.
	seen map[[sha256.Size]byte]bool
}

// NewContract wraps h for t.
func NewContract(t testing.TB, h http.Handler) *Contract {
	t.Helper()
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatalf("openapi document: %v", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("openapi router: %v", err)
	}
	c := &Contract{h: h, router: router, seen: map[[sha256.Size]byte]bool{}}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, v := range c.violations {
			t.Errorf("API contract: %s", v)
		}
	})
	return c
}

// Checked is how many exchanges were validated so far.
func (c *Contract) Checked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checked
}

// Violations are the violations found so far.
func (c *Contract) Violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.violations...)
}

func (c *Contract) violate(r *http.Request, format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.violations = append(c.violations, r.Method+" "+r.URL.RequestURI()+": "+fmt.Sprintf(format, args...))
}

// ServeHTTP serves the exchange and checks it.
func (c *Contract) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/console/") || r.URL.Path == "/mcp" {
		c.h.ServeHTTP(w, r) // the console's pages are HTML, and MCP speaks JSON-RPC: neither is the REST API
		return
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	// The validator reads a copy: the handler gets the request as sent.
	vr := r.Clone(r.Context())
	vr.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) > 0 && vr.Header.Get("Content-Type") == "" {
		// The API reads a body as JSON whatever it is labelled, as the
		// document says; a client that does not label it is not wrong.
		vr.Header.Set("Content-Type", "application/json")
	}
	rec := &recorder{ResponseWriter: w}
	c.h.ServeHTTP(rec, r)
	code := rec.status()

	if c.repeated(r, body, code, rec) {
		c.count()
		return
	}
	rt, params, err := c.router.FindRoute(vr)
	if err != nil {
		if code != http.StatusNotFound && code != http.StatusMethodNotAllowed {
			c.violate(r, "not in the document, yet answered %d", code)
		}
		c.count()
		return
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: rt, Options: opts}
	if reqErr := openapi3filter.ValidateRequest(vr.Context(), in); reqErr != nil && (code < 400 || code >= 500) {
		c.violate(r, "the document rejects the request (%v), yet the API answered %d", oneLine(reqErr), code)
	}
	ct := rec.Header().Get("Content-Type")
	media, _, _ := mime.ParseMediaType(ct)
	respOpts := *opts
	respOpts.IncludeResponseStatus = true
	// An event stream is checked for its status and media type; its events
	// are not JSON documents.
	respOpts.ExcludeResponseBody = media == "text/event-stream" || rec.truncated
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: code, Header: rec.Header(),
		Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())), Options: &respOpts}
	if err := openapi3filter.ValidateResponse(vr.Context(), out); err != nil {
		c.violate(r, "the response (%d %s) does not match the document: %v", code, ct, oneLine(err))
	}
	c.count()
}

// repeated reports whether the same request was answered the same before.
func (c *Contract) repeated(r *http.Request, body []byte, code int, rec *recorder) bool {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(r.Method), []byte(r.URL.RequestURI()), []byte(r.Header.Get("Content-Type")), body,
		[]byte(strconv.Itoa(code)), []byte(rec.Header().Get("Content-Type")), rec.body.Bytes()} {
		_, _ = h.Write([]byte(strconv.Itoa(len(part)) + ":"))
		_, _ = h.Write(part)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[key] || rec.truncated {
		return c.seen[key]
	}
	c.seen[key] = true
	return false
}

func (c *Contract) count() {
	c.mu.Lock()
	c.checked++
	c.mu.Unlock()
}

func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 1500 {
		s = s[:1500] + "…"
	}
	return s
}

// recorder passes the response through as it is written (an event stream
// stays live) and keeps a copy for validation.
type recorder struct {
	http.ResponseWriter
	code      int
	body      bytes.Buffer
	truncated bool
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	if r.body.Len()+len(b) <= maxBody {
		r.body.Write(b)
	} else {
		r.truncated = true
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

// Flush keeps streaming working through the wrapper.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
