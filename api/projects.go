package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// MaxProjectUpload is the largest body POST /v1/projects/{name} reads
// (the archive travels base64-encoded inside JSON).
const MaxProjectUpload = 32 << 20

// ProjectUpload is the body of POST /v1/projects/{name}: the project as an
// archive (.tar.gz, .tar or .zip, base64-encoded), or its files by path.
// Nothing in it is rewritten.
type ProjectUpload struct {
	Archive []byte            `json:"archive,omitempty"`
	Files   map[string]string `json:"files,omitempty"`
}

// ProjectView is a version of a customer's project as the API shows it.
type ProjectView struct {
	Name    string `json:"name"`
	Version string `json:"version"` // the content's digest
	Files   int    `json:"files"`
	Bytes   int    `json:"bytes"`
	Parent  string `json:"parent,omitempty"`
	Current bool   `json:"current"`
	// Tests is the runner's own listing, once listed.
	Tests      json.RawMessage `json:"tests,omitempty"`
	ListErrors json.RawMessage `json:"list_errors,omitempty"`
	ListedAt   *time.Time      `json:"listed_at,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	// ListJob is the job listing a new upload's tests.
	ListJob string `json:"list_job,omitempty"`
}

// ProjectList is the tenant's projects at their current versions.
type ProjectList struct {
	Projects []ProjectView `json:"projects"`
}

func projectView(v store.ProjectVersion) ProjectView {
	return ProjectView{Name: v.Project, Version: v.Digest, Files: v.Files, Bytes: v.Bytes, Parent: v.Parent, Current: v.Current,
		Tests: v.Tests, ListErrors: v.ListErrors, ListedAt: v.ListedAt, CreatedAt: v.CreatedAt}
}

// uploadProject stores an upload as the project's current version and
// has a worker list its tests with the runner.
func (s *Server) uploadProject(w http.ResponseWriter, r *http.Request) {
	if s.throttled(w, r) {
		return
	}
	name := r.PathValue("name")
	if !jobs.ValidProjectName(name) {
		writeError(w, http.StatusBadRequest, "invalid project", []scenario.FieldError{{Field: "name",
			Message: "must be a project's name: letters, digits, '.', '_' and '-', at most 100"}})
		return
	}
	var up ProjectUpload
	if !s.decodeUpTo(w, r, &up, MaxProjectUpload) {
		return
	}
	var p suite.Project
	var err error
	field := "archive"
	switch {
	case len(up.Archive) > 0 && len(up.Files) > 0:
		writeError(w, http.StatusBadRequest, "invalid project", []scenario.FieldError{{Field: "files", Message: "give an archive or files, not both"}})
		return
	case len(up.Archive) > 0:
		p, err = suite.ReadArchive(up.Archive)
	case len(up.Files) > 0:
		field = "files"
		p, err = suite.ReadFiles(up.Files)
	default:
		writeError(w, http.StatusBadRequest, "invalid project", []scenario.FieldError{{Field: "archive", Message: "is required (or files)"}})
		return
	}
	var pe *suite.ProjectError
	if errors.As(err, &pe) {
		f := field
		if pe.Path != "" {
			f = fmt.Sprintf("%s[%q]", field, pe.Path)
		}
		writeError(w, http.StatusBadRequest, "invalid project: "+pe.Error(), []scenario.FieldError{{Field: f, Message: pe.Problem}})
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	view, err := s.saveProject(r.Context(), tenantFrom(r.Context()).ID, name, p)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, view)
}

// saveProject stores p as the project's current version and, when that
// version was never listed, has a worker list its tests with the runner:
// the dispatcher never runs a customer's code.
func (s *Server) saveProject(ctx context.Context, tenantID, name string, p suite.Project) (ProjectView, error) {
	archive, err := p.Archive()
	if err != nil {
		return ProjectView{}, err
	}
	v, _, err := s.store.SaveProjectVersion(ctx, tenantID, store.ProjectVersion{Project: name, Digest: p.Digest(),
		Files: len(p.Files), Bytes: p.Size()}, archive)
	if err != nil {
		return ProjectView{}, err
	}
	view := projectView(v)
	if v.ListedAt == nil {
		in, _ := json.Marshal(jobs.ProjectRequest{Name: name, Version: v.Digest})
		subject := jobs.Subject(jobs.KindProjectList, tenantID)
		job, err := s.store.SubmitJob(ctx, store.NewJob{TenantID: tenantID, Kind: string(jobs.KindProjectList), Subject: subject,
			Prepare: func(string) (json.RawMessage, error) { return in, nil }})
		if err != nil {
			return ProjectView{}, err
		}
		s.pub.Send(store.OutboxItem{Subject: subject, JobID: job.ID})
		view.ListJob = job.ID
	}
	return view, nil
}

// projects lists the tenant's projects.
func (s *Server) projects(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Projects(r.Context(), tenantFrom(r.Context()).ID)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	out := ProjectList{Projects: make([]ProjectView, 0, len(list))}
	for _, v := range list {
		out.Projects = append(out.Projects, projectView(v))
	}
	writeJSON(w, http.StatusOK, out)
}

// project shows a project's current version, or the one ?version= names.
func (s *Server) project(w http.ResponseWriter, r *http.Request) {
	if v, ok := s.projectVersion(w, r, r.URL.Query().Get("version")); ok {
		writeJSON(w, http.StatusOK, projectView(v))
	}
}

// projectVersion reads the tenant's version (digest, or "" for the
// current one) of the project the path names, answering 404 or 500 itself.
func (s *Server) projectVersion(w http.ResponseWriter, r *http.Request, digest string) (store.ProjectVersion, bool) {
	v, err := s.store.ProjectVersion(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("name"), digest)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no such project (or version)", nil)
		return v, false
	}
	if err != nil {
		s.internal(w, r, err)
		return v, false
	}
	return v, true
}

// submitProject submits a job of kind over the project in the path.
func (s *Server) submitProject(kind jobs.Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.throttled(w, r) {
			return
		}
		var req jobs.ProjectRequest
		if !s.decode(w, r, &req) {
			return
		}
		name := r.PathValue("name")
		if req.Name != "" && req.Name != name {
			writeError(w, http.StatusBadRequest, "invalid job", []scenario.FieldError{{Field: "name", Message: "is the project in the path; leave it out"}})
			return
		}
		req.Name = name
		s.submitValid(w, r, jobs.Submission{Kind: kind, Project: &req})
	}
}

// patch answers a project repair's unified diff over the customer's files.
func (s *Server) patch(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	var res suite.ProjectRepairResult
	_ = json.Unmarshal(j.Result, &res)
	if j.Kind != string(jobs.KindProjectRepair) || res.Repair.Diff == "" {
		writeError(w, http.StatusConflict, fmt.Sprintf("the job (%s, %s) has no verified patch", j.Kind, j.State), nil)
		return
	}
	w.Header().Set("Content-Type", "text/x-diff; charset=utf-8")
	_, _ = w.Write([]byte(res.Repair.Diff))
}

// AcceptedProjectView answers the acceptance of a project's version: the
// version, now current, and what it wrote back to the stored tests it
// holds (a project of stored tests only).
type AcceptedProjectView struct {
	ProjectView
	StoredTests *suite.WrittenBack `json:"stored_tests,omitempty"`
}

// acceptProjectVersion makes a version of the project current: a
// repair's proposal, or any earlier version of the tenant's own (a
// rollback); never another tenant's or another project's. A repaired
// version of a project of stored tests gives the tests it healed their
// new specs.
func (s *Server) acceptProjectVersion(w http.ResponseWriter, r *http.Request) {
	v, back, err := suite.AcceptVersion(r.Context(), s.store, tenantFrom(r.Context()).ID, r.PathValue("name"), r.PathValue("version"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no such project version", nil)
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	view := AcceptedProjectView{ProjectView: projectView(v)}
	if len(back.Tests)+len(back.Skipped) > 0 {
		view.StoredTests = &back
	}
	writeJSON(w, http.StatusOK, view)
}

// MaxTracesUpload is the largest body POST /v1/projects/{name}/traces
// reads (the archive travels base64-encoded inside JSON).
const MaxTracesUpload = suite.MaxTraceUploadBytes/3*4 + 1<<20

// ProjectTraces is the body of POST /v1/projects/{name}/traces: an archive
// (.tar.gz, .tar or .zip, base64-encoded) of a run of the project on the
// customer's side, its JSON report (--reporter=json) and the trace.zip
// files the report names, as CI keeps them.
type ProjectTraces struct {
	Archive []byte `json:"archive"`
	// Version is the version that run ran (default: the current one).
	Version string `json:"version,omitempty"`
}

// TracesView answers an upload of traces: the tests whose elements were
// recorded, and the others with why.
type TracesView struct {
	Project  string             `json:"project"`
	Version  string             `json:"version"`
	Recorded []string           `json:"recorded"`
	Skipped  []suite.ImportSkip `json:"skipped,omitempty"`
}

// maxTracesImport bounds how long one upload of traces is read for.
const maxTracesImport = 40 * time.Second

// uploadTraces records what the passing tests of a customer's own run
// acted on, for the version it ran: a repair of a suite red on arrival
// heals from it.

func (s *Server) uploadTraces(w http.ResponseWriter, r *http.Request) {
	if s.throttled(w, r) {
		return
	}
	var up ProjectTraces
	if !s.decodeUpTo(w, r, &up, MaxTracesUpload) {
		return
	}
	if len(up.Archive) == 0 {
		writeError(w, http.StatusBadRequest, "invalid traces", []scenario.FieldError{{Field: "archive", Message: "is required: the run's JSON report and its trace.zip files"}})
		return
	}
	v, ok := s.projectVersion(w, r, up.Version)
	if !ok {
		return
	}
	var listing []suite.TestOutcome
	if v.Tests == nil || json.Unmarshal(v.Tests, &listing) != nil {
		writeError(w, http.StatusConflict, "the version's tests are not listed yet: upload the traces once its listing job has ended", nil)
		return
	}
	// Reading stops when the request is gone, and well before the
	// server would stop writing its answer.
	ctx, cancel := context.WithTimeout(r.Context(), maxTracesImport)
	defer cancel()
	imp, err := suite.ImportTraces(ctx, up.Archive, listing)
	if errors.Is(err, context.DeadlineExceeded) {
		writeError(w, http.StatusBadRequest, "invalid traces: reading them took more than "+maxTracesImport.String(),
			[]scenario.FieldError{{Field: "archive", Message: "upload fewer tests' traces at a time"}})
		return
	}
	if errors.Is(err, context.Canceled) {
		return // the client is gone
	}
	var pe *suite.ProjectError
	if errors.As(err, &pe) {
		f := "archive"
		if pe.Path != "" {
			f = fmt.Sprintf("archive[%q]", pe.Path)
		}
		writeError(w, http.StatusBadRequest, "invalid traces: "+pe.Error(), []scenario.FieldError{{Field: f, Message: pe.Problem}})
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if len(imp.Prints) > 0 {
		b, _ := json.Marshal(imp.Prints)
		if err := s.store.KeepProjectFingerprints(r.Context(), tenantFrom(r.Context()).ID, v.Digest, b); err != nil {
			s.internal(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, TracesView{Project: v.Project, Version: v.Digest, Recorded: append([]string{}, imp.Recorded...), Skipped: imp.Skipped})
}
