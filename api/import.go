package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/specimport"
	"github.com/webpilot/webpilot/internal/store"
)

// Import limits.
const (
	maxImportFiles = 50
	maxImportFile  = specimport.MaxFileBytes
	// parseBudget bounds the spec bytes being parsed at once by the whole
	// dispatcher (a parse holds a small multiple of its input), and
	// parseDeadline how long one import may parse: what is bounded before
	// the parser (size, nesting) keeps every parse far below both.
	parseBudget   = 4 << 20
	parseDeadline = 10 * time.Second
)

// ImportRequest is the body of POST /v1/tests/import: existing
// @playwright/test spec files to store as tests.
type ImportRequest struct {
	Files []ImportFile `json:"files"`
	// BaseURL replaces the specs' own base URL (their test.use baseURL, or
	// the origin of their absolute URLs).
	BaseURL string   `json:"base_url,omitempty"`
	Tags    []string `json:"tags,omitempty"`
}

// ImportFile is one spec file.
type ImportFile struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// importTests parses every file and stores their tests, all or none: a
// construct outside the supported subset is a 400 naming the file and line
// of each one.
func (s *Server) importTests(w http.ResponseWriter, r *http.Request) {
	if t := tenantFrom(r.Context()); s.imports != nil && !s.imports.take(t.ID) {
		tooMany(w, s.imports.retryAfter(t.ID), fmt.Sprintf("too many imports; the limit is %d a minute per tenant", s.cfg.ImportsPerMinute))
		return
	}
	var req ImportRequest
	if !s.decode(w, r, &req) {
		return
	}
	var v scenario.ValidationError
	switch {
	case len(req.Files) == 0:
		v.Add("files", "is required: at least one spec file")
	case len(req.Files) > maxImportFiles:
		v.Add("files", "at most %d files per import", maxImportFiles)
	}
	for i, f := range req.Files {
		if strings.TrimSpace(f.Name) == "" {
			v.Add(fmt.Sprintf("files[%d].name", i), "is required")
		}
		if strings.TrimSpace(f.Content) == "" {
			v.Add(fmt.Sprintf("files[%d].content", i), "is required")
		} else if len(f.Content) > maxImportFile {
			v.Add(fmt.Sprintf("files[%d].content", i), "at most %d bytes", maxImportFile)
		}
	}
	if req.BaseURL != "" {
		if err := s.urls.CheckURL(req.BaseURL); err != nil {
			v.Add("base_url", "%v", err)
		}
	}
	scenario.ValidateTags(&v, "tags", req.Tags)
	if len(v) > 0 {
		writeError(w, http.StatusBadRequest, "invalid import", v)
		return
	}
	parsed, err := s.parseSpecs(r.Context(), req)
	if err != nil {
		w.Header().Set("Retry-After", "2")
		writeError(w, http.StatusServiceUnavailable, "spec files are being read for other imports; retry shortly", nil)
		return
	}
	var list []store.ImportedTest
	names := map[string]string{}
	for i, f := range req.Files {
		tests, err := parsed[i].tests, parsed[i].err
		var ie *specimport.Error
		if errors.As(err, &ie) {
			for _, p := range ie.Problems {
				msg := p.Message
				if p.Code != "" {
					msg += ": " + p.Code
				}
				v.Add(fmt.Sprintf("files[%d] (%s) line %d", i, f.Name, p.Line), "%s", msg)
			}
			continue
		}
		if err != nil {
			v.Add(fmt.Sprintf("files[%d]", i), "%v", err)
			continue
		}
		for _, t := range tests {
			if prev, dup := names[t.Name]; dup {
				v.Add(fmt.Sprintf("files[%d] (%s)", i, f.Name), "the test %q is also in %s: test names must be unique", t.Name, prev)
				continue
			}
			names[t.Name] = f.Name
			// Every page the test visits must be one the egress guard allows.
			for _, u := range append([]string{t.Scenario.BaseURL}, navigations(t)...) {
				if err := s.urls.CheckURL(u); err != nil {
					v.Add(fmt.Sprintf("files[%d] (%s)", i, f.Name), "test %q visits %s: %v", t.Name, u, err)
				}
			}
			sc, _ := json.Marshal(t.Scenario)
			man, _ := json.Marshal(t.Manifest)
			list = append(list, store.ImportedTest{Name: t.Name, Tags: req.Tags, Scenario: sc, Script: t.Script, Manifest: man})
		}
	}
	if len(list) > s.cfg.MaxImportTests {
		v.Add("files", "the files hold %d tests; one import takes at most %d", len(list), s.cfg.MaxImportTests)
	}
	if len(v) > 0 {
		writeError(w, http.StatusBadRequest, "cannot import", v)
		return
	}
	stored, err := s.store.ImportTests(r.Context(), tenantFrom(r.Context()).ID, list, s.cfg.MaxSuiteTests)
	var full *store.SuiteFullError
	if errors.As(err, &full) {
		v.Add("files", "%v: remove tests from the suite first", full)
		writeError(w, http.StatusBadRequest, "cannot import", v)
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, testList(stored))
}

// navigations lists the URLs a test's commands go to.
func navigations(t specimport.Test) []string {
	var out []string
	for _, s := range t.Manifest {
		for _, e := range s.Entries {
			if e.Command.Action == browser.ActionNavigate {
				out = append(out, e.Command.Value)
			}
		}
	}
	return out
}

type parsedSpec struct {
	tests []specimport.Test
	err   error
}

// parseSpecs reads an import's files within the dispatcher's parse budget
// (imports past it wait their turn, up to the deadline) and the import's
// deadline: a file not reached by then is a problem of that file. One
// file's parse is bounded by the size and nesting caps checked before it.
func (s *Server) parseSpecs(ctx context.Context, req ImportRequest) ([]parsedSpec, error) {
	var size int64
	for _, f := range req.Files {
		size += int64(len(f.Content))
	}
	size = min(size, parseBudget)
	ctx, cancel := context.WithTimeout(ctx, parseDeadline)
	defer cancel()
	if err := s.parsing.Acquire(ctx, size); err != nil {
		return nil, fmt.Errorf("parse budget: %w", err)
	}
	defer s.parsing.Release(size)
	out := make([]parsedSpec, len(req.Files))
	for i, f := range req.Files {
		if ctx.Err() != nil {
			out[i].err = fmt.Errorf("the file could not be read within %s", parseDeadline)
			continue
		}
		out[i].tests, out[i].err = specimport.Parse(f.Name, f.Content, specimport.Options{BaseURL: req.BaseURL, Tags: req.Tags})
	}
	return out, nil
}
