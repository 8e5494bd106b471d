package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// DefaultTestsProject is the project stored tests are written into when
// the request names none.
const DefaultTestsProject = "generated"

// TestsToProject is the body of POST /v1/tests/project: which stored tests
// to write as a project, and which project.
type TestsToProject struct {
	// Project is the project's name ("generated" when absent): a new one,
	// or one this call wrote before (a customer's own project is never
	// overwritten).
	Project string `json:"project,omitempty"`
	// TestIDs or Tags pick the tests; neither: all of them.
	TestIDs []string `json:"test_ids,omitempty"`
	Tags    []string `json:"tags,omitempty"`
}

// TestsProjectView answers POST /v1/tests/project: the project's new
// current version (its tests being listed by ListJob) and where each test
// went.
type TestsProjectView struct {
	ProjectView
	// Written maps each written test's id to its spec's path in the project
	// (its manifest beside it, NAME.steps.json).
	Written map[string]string `json:"written"`
}

// testsToProject writes the tenant's stored tests (their accepted specs,
// each with its steps' manifest) as the current version of a project, so
// that they are run by the runner in the sandbox and repaired as any
// project is, with its reports and patches.
func (s *Server) testsToProject(w http.ResponseWriter, r *http.Request) {
	if s.throttled(w, r) {
		return
	}
	var req TestsToProject
	if !s.decode(w, r, &req) {
		return
	}
	if req.Project == "" {
		req.Project = DefaultTestsProject
	}
	var v scenario.ValidationError
	if !jobs.ValidProjectName(req.Project) {
		v.Add("project", "must be a project's name: letters, digits, '.', '_' and '-', at most 100")
	}
	jobs.ValidateSelection(&v, "", req.TestIDs, req.Tags)
	if len(v) > 0 {
		writeError(w, http.StatusBadRequest, "invalid request", v)
		return
	}
	t := tenantFrom(r.Context())
	if ok, err := s.ownedByStoredTests(r, t.ID, req.Project); err != nil {
		s.internal(w, r, err)
		return
	} else if !ok {
		writeError(w, http.StatusConflict, "project "+req.Project+" holds tests of its own: name a new project (or one stored tests were written into)",
			[]scenario.FieldError{{Field: "project", Message: "is a project of the tenant's own tests"}})
		return
	}
	tests, missing, err := s.store.SelectTests(r.Context(), t.ID, store.Selection{TestIDs: req.TestIDs, Tags: req.Tags})
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if len(missing) > 0 {
		writeError(w, http.StatusBadRequest, "invalid request", []scenario.FieldError{{Field: "test_ids", Message: "not tests of yours: " + fmt.Sprint(missing)}})
		return
	}
	stored := make([]suite.StoredTest, 0, len(tests))
	for _, st := range tests {
		stored = append(stored, suite.StoredTest{ID: st.ID, Name: st.Name, Script: st.Script, Manifest: st.Manifest})
	}
	p, written, err := suite.StoredTestsProject(stored)
	var pe *suite.ProjectError
	if errors.As(err, &pe) {
		writeError(w, http.StatusBadRequest, "the tests cannot be written as a project: "+pe.Error(), []scenario.FieldError{{Field: "test_ids", Message: pe.Problem}})
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	view, err := s.saveProject(r.Context(), t.ID, req.Project, p)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, TestsProjectView{ProjectView: view, Written: written})
}

// ownedByStoredTests reports whether a project may take stored tests: it
// does not exist yet, or its current version is one they were written as.
func (s *Server) ownedByStoredTests(r *http.Request, tenantID, name string) (bool, error) {
	list, err := s.store.Projects(r.Context(), tenantID)
	if err != nil {
		return false, err
	}
	for _, v := range list {
		if v.Project != name {
			continue
		}
		archive, err := s.store.ProjectArchive(r.Context(), tenantID, v.Digest)
		if err != nil {
			return false, err
		}
		p, err := suite.ReadArchive(archive)
		if err != nil {
			return false, nil
		}
		return suite.IsStoredTestsProject(p), nil
	}
	return true, nil
}
