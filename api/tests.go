package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/store"
)

// TestView is a stored test as the API shows it: its current accepted
// version's scenario, spec and step manifest.
type TestView struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Tags       []string        `json:"tags"`
	Version    int             `json:"version"` // the accepted version the script is
	Scenario   json.RawMessage `json:"scenario,omitempty"`
	Script     string          `json:"script,omitempty"`
	Manifest   json.RawMessage `json:"manifest,omitempty"`
	LastStatus string          `json:"last_status"`
	SourceJob  *string         `json:"source_job,omitempty"`
	UpdatedAt  time.Time       `json:"updated_at"`
}

// testView is the API's view of a stored test.
func testView(t store.Test) TestView {
	tags := t.Tags
	if tags == nil {
		tags = []string{}
	}
	return TestView{ID: t.ID, Name: t.Name, Tags: tags, Version: t.Version, Scenario: t.Scenario, Script: t.Script,
		Manifest: t.Manifest, LastStatus: t.LastStatus, SourceJob: t.SourceJob, UpdatedAt: t.UpdatedAt}
}

// testList is the API's view of stored tests (never null).
func testList(list []store.Test) TestList {
	out := TestList{Tests: make([]TestView, 0, len(list))}
	for _, t := range list {
		out.Tests = append(out.Tests, testView(t))
	}
	return out
}

// TestList is the tenant's suite; an import answers the tests it stored.
type TestList struct {
	Tests []TestView `json:"tests"`
}

// VersionList is a test's versions, newest first.
type VersionList struct {
	Versions []store.TestVersion `json:"versions"`
}

// tests lists the tenant's stored suite.
func (s *Server) tests(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Tests(r.Context(), tenantFrom(r.Context()).ID)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, testList(list))
}

// test returns one stored test: scenario, current script and step manifest.
func (s *Server) test(w http.ResponseWriter, r *http.Request) {
	t, err := s.store.GetTest(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("id"))
	if !s.found(w, r, err, "test not found") {
		return
	}
	writeJSON(w, http.StatusOK, testView(t))
}

// versions lists a test's versions, newest first.
func (s *Server) versions(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.TestVersions(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("id"))
	if !s.found(w, r, err, "test not found") {
		return
	}
	if list == nil {
		list = []store.TestVersion{}
	}
	writeJSON(w, http.StatusOK, VersionList{Versions: list})
}

// testVersion loads the version the path names, answering 404 itself.
func (s *Server) testVersion(w http.ResponseWriter, r *http.Request) (store.TestVersion, bool) {
	n, err := strconv.Atoi(r.PathValue("v"))
	if err != nil || n < 1 {
		writeError(w, http.StatusNotFound, "version not found", nil)
		return store.TestVersion{}, false
	}
	v, err := s.store.GetTestVersion(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("id"), n)
	if !s.found(w, r, err, "version not found") {
		return v, false
	}
	return v, true
}

// version returns one version with its script, manifest and diff.
func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	if v, ok := s.testVersion(w, r); ok {
		writeJSON(w, http.StatusOK, v)
	}
}

// versionDiff returns the unified diff a repair proposed.
func (s *Server) versionDiff(w http.ResponseWriter, r *http.Request) {
	v, ok := s.testVersion(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/x-diff; charset=utf-8")
	_, _ = w.Write([]byte(v.Diff))
}

// decide accepts or rejects a proposed version; an accepted one becomes
// the test's script (an intentional change when a person accepts it).
func (s *Server) decide(accept bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.testVersion(w, r); !ok {
			return
		}
		n, _ := strconv.Atoi(r.PathValue("v"))
		v, err := s.store.DecideVersion(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("id"), n, accept)
		switch {
		case errors.Is(err, store.ErrConflict):
			writeError(w, http.StatusConflict, fmt.Sprintf("version %d is not proposed; only a proposed version can be accepted or rejected", n), nil)
		case err != nil:
			s.internal(w, r, err)
		default:
			writeJSON(w, http.StatusOK, v)
		}
	}
}

// artifact returns a file a job produced (a failing state's screenshot).
func (s *Server) artifact(w http.ResponseWriter, r *http.Request) {
	kind, content, err := s.store.Artifact(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("id"), r.PathValue("name"))
	if !s.found(w, r, err, "artifact not found") {
		return
	}
	ServeArtifact(w, kind, r.PathValue("name"), content)
}

// ServeArtifact writes an artifact with its media type; a report or a
// trace is a download under its own name.
func ServeArtifact(w http.ResponseWriter, kind, name string, content []byte) {
	w.Header().Set("Content-Type", ArtifactType(kind, name))
	if strings.HasSuffix(name, ".zip") || strings.HasSuffix(name, ".xml") {
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	}
	_, _ = w.Write(content)
}

// ArtifactType is the media type an artifact is served as: a step's
// picture is a JPEG, a failing state's screenshot a PNG, a project run's
// junit report XML, its html report, blob report and traces zips.
func ArtifactType(kind, name string) string {
	switch {
	case strings.HasSuffix(name, ".jpg"):
		return "image/jpeg"
	case kind == "screenshot":
		return "image/png"
	case strings.HasSuffix(name, ".xml"):
		return "application/xml"
	case strings.HasSuffix(name, ".zip"):
		return "application/zip"
	}
	return "application/octet-stream"
}

// found answers a store error — 404 naming what was not found, 500
// otherwise — and reports whether there was none.
func (s *Server) found(w http.ResponseWriter, r *http.Request, err error, notFound string) bool {
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, notFound, nil)
		return false
	case err != nil:
		s.internal(w, r, err)
		return false
	}
	return true
}
