package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// JobView is a job as the API returns it.
type JobView struct {
	ID      string         `json:"id"`
	Kind    jobs.Kind      `json:"kind"`
	State   store.JobState `json:"state"`
	Name    string         `json:"name,omitempty"`
	Attempt int            `json:"attempt"`
	// Crashes counts the attempts that ended with their worker gone; the
	// others were handed back (a drain) or, for a project's job, resumed
	// as its files' jobs ended.
	Crashes         int    `json:"crashes,omitempty"`
	Error           string `json:"error,omitempty"`
	CancelRequested bool   `json:"cancel_requested,omitempty"`
	// ParentID is the bulk job a child belongs to: it holds nothing of
	// its own, and charges its parent's hold.
	ParentID       string             `json:"parent_id,omitempty"`
	HoldCredits    float64            `json:"hold_credits"`
	ChargedCredits float64            `json:"charged_credits"`
	Usage          *store.UsageTotals `json:"usage,omitempty"`
	Progress       Progress           `json:"progress"`
	Steps          json.RawMessage    `json:"steps,omitempty"`
	// Tiers counts the steps so far by the tier that took them:
	// deterministic, lexical and cached cost no tokens; agent does.
	Tiers map[string]int `json:"tiers,omitempty"`
	// RunProgress is how far a running project job is: its phase (a
	// repair's evidence, baseline, trials), tests ended of those it runs,
	// tests running, and a repair's healed, flagged and left so far.
	RunProgress *suite.RunProgress `json:"run_progress,omitempty"`
	// Verdict and Repair are a repair job's finding and report.
	Verdict string          `json:"verdict,omitempty"`
	Repair  json.RawMessage `json:"repair,omitempty"`
	// Suite is a bulk job's report: every test's outcome so far.
	Suite *store.BulkReport `json:"suite,omitempty"`
	// Exploration is an exploration's report: its goal, why it stopped,
	// the coverage map, the journey's spec, suggested scenarios and the
	// findings (also at /v1/jobs/{id}/findings).
	Exploration json.RawMessage `json:"exploration,omitempty"`
	// Project is a project job's report: the tests the runner listed, or
	// ran with their verdicts, file:line and errors.
	Project json.RawMessage `json:"project,omitempty"`
	// IntoProject is what a scenario naming a customer's project wrote into
	// it: the test file in the project's idiom (source, the page objects
	// and fixtures it uses), the runner's verdict of it in the sandbox,
	// and the version proposed with it, or why none was.
	IntoProject json.RawMessage `json:"into_project,omitempty"`
	// Reports are a project run's reports as the runner writes them: its
	// junit XML, its html report (zipped) and each failing test's trace,
	// each at /v1/jobs/{job_id}/artifacts/{artifact} (the run's own id for
	// the junit and html ones).
	Reports *suite.RunReports `json:"reports,omitempty"`
	Timing  json.RawMessage   `json:"timing,omitempty"`
	// Blocked is what the egress guard refused outside any step (a
	// redirect of the start URL); each step lists its own.
	Blocked    []string   `json:"blocked,omitempty"`
	QueueNS    int64      `json:"queue_ns,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// JobList is a page of the tenant's jobs, newest first.
type JobList struct {
	Jobs []JobView `json:"jobs"`
	// Next is the after= of the following page; absent on the last.
	Next string `json:"next,omitempty"`
}

// HistoryList is everything a job's attempts did, in order.
type HistoryList struct {
	History []store.HistoryEntry `json:"history"`
}

// Progress counts a job's steps.
type Progress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

func credits(micro int64) float64 { return float64(micro) / store.MicroCredits }

// view builds a JobView; the steps come from the result when finished, from
// the last checkpoint while running.
func view(j store.Job, detail bool) JobView {
	v := JobView{ID: j.ID, Kind: jobs.Kind(j.Kind), State: j.State, Attempt: j.Attempt, Crashes: j.Crashes, Error: j.Error, CancelRequested: j.CancelRequested,
		ParentID: j.ParentID, HoldCredits: credits(j.HoldMicro), ChargedCredits: credits(j.ChargedMicro), CreatedAt: j.CreatedAt,
		StartedAt: j.StartedAt, FinishedAt: j.FinishedAt}
	var in struct {
		Name  string            `json:"name"`
		Steps []json.RawMessage `json:"steps"`
	}
	_ = json.Unmarshal(j.Input, &in)
	v.Name, v.Progress.Total = in.Name, len(in.Steps)
	var prog struct {
		Steps    json.RawMessage    `json:"steps"`
		Timing   json.RawMessage    `json:"timing"`
		QueueNS  int64              `json:"queue_ns"`
		NextStep int                `json:"next_step"`
		Verdict  string             `json:"verdict"`
		Repair   json.RawMessage    `json:"repair"`
		Suite    *store.BulkReport  `json:"suite"`
		Blocked  []string           `json:"blocked"`
		Project  *suite.RunProgress `json:"project_progress"`
		Reports  *suite.RunReports  `json:"reports"`
		Into     json.RawMessage    `json:"into_project"`
	}
	src := j.Result
	if len(src) == 0 {
		src = j.Checkpoint
	}
	if len(src) > 0 {
		_ = json.Unmarshal(src, &prog)
		var steps []struct {
			Tier string `json:"tier"`
		}
		_ = json.Unmarshal(prog.Steps, &steps)
		v.Progress.Done = len(steps)
		for _, st := range steps {
			if st.Tier != "" {
				if v.Tiers == nil {
					v.Tiers = map[string]int{}
				}
				v.Tiers[st.Tier]++
			}
		}
		v.Verdict = prog.Verdict
		if v.Progress.Total < v.Progress.Done {
			v.Progress.Total = v.Progress.Done
		}
		if detail {
			v.Steps, v.Timing, v.QueueNS, v.Repair, v.Blocked = prog.Steps, prog.Timing, prog.QueueNS, prog.Repair, prog.Blocked
			v.Reports, v.IntoProject = prog.Reports, prog.Into
		}
		if prog.Suite != nil {
			v.suite(prog.Suite, detail)
		}
		if prog.Project != nil && len(j.Result) == 0 && !j.State.Terminal() {
			v.RunProgress = prog.Project
			v.Progress = Progress{Done: prog.Project.Ended, Total: prog.Project.Tests}
		}
	}
	if j.Kind == string(jobs.KindExploration) {
		v.exploration(j, src, detail)
	}
	if jobs.Kind(j.Kind).RunsCustomerCode() && detail {
		v.Project = j.Result
	}
	return v
}

// exploration sets an exploration's progress (actions of its budget) and,
// in detail, its report.
func (v *JobView) exploration(j store.Job, src json.RawMessage, detail bool) {
	var in jobs.ExplorationRequest
	_ = json.Unmarshal(j.Input, &in)
	var prog struct {
		Actions int `json:"actions"`
	}
	_ = json.Unmarshal(src, &prog)
	if len(in.Journeys) > 0 {
		v.Name = fmt.Sprintf("explore: %d journeys", len(in.Journeys))
		return // its progress and report are its journeys' (suite)
	}
	v.Name = "explore: " + in.Goal
	v.Progress = Progress{Done: prog.Actions, Total: in.Budget.WithDefaults().MaxActions}
	if detail && len(j.Result) > 0 {
		v.Exploration = j.Result
	}
}

// suite sets a bulk job's progress (tests with an outcome of those
// selected) and, in detail, its report.
func (v *JobView) suite(rep *store.BulkReport, detail bool) {
	v.Progress = Progress{Done: rep.Done, Total: rep.Tests}
	if detail {
		v.Suite = rep
	}
}

// runToFollow says why a repair cannot follow the run it names (""
// when it can): the run must be the tenant's project_run of the repair's
// project and version, at its base URL, and have ended.
func (s *Server) runToFollow(ctx context.Context, tenantID string, c jobs.ProjectRequest) string {
	j, err := s.store.GetJob(ctx, tenantID, c.AfterRun)
	if err != nil || j.Kind != string(jobs.KindProjectRun) {
		return "no such project_run of yours"
	}
	var in jobs.ProjectRequest
	_ = json.Unmarshal(j.Input, &in)
	switch {
	case in.Name != c.Name || in.Version != c.Version:
		return fmt.Sprintf("is a run of %s version %.12s, not of this repair's version %.12s", in.Name, in.Version, c.Version)
	case in.BaseURL != c.BaseURL:
		return fmt.Sprintf("ran at base URL %q, not this repair's %q", in.BaseURL, c.BaseURL)
	case !j.State.Terminal():
		return "has not ended yet"
	}
	return ""
}

// bulkView is view for a job that may be a bulk job still waiting for its
// children, whose report is read as it stands.
func (s *Server) bulkView(ctx context.Context, j store.Job, detail bool) JobView {
	v := view(j, detail)
	if j.State == store.JobStateWaiting {
		if rep, err := s.store.BulkProgress(ctx, j.TenantID, j.ID); err == nil {
			v.suite(&rep, detail)
		}
		if j.Kind == string(jobs.KindProjectRepair) {
			v.filesProgress(ctx, s.store, j)
		}
	}
	return v
}

// filesProgress sets the progress of a repair done in parts from its
// parts' repairs (a part's key lists its files), as each last reported.
func (v *JobView) filesProgress(ctx context.Context, st *store.Store, j store.Job) {
	kids, err := st.Children(ctx, j.TenantID, j.ID)
	if err != nil || len(kids) == 0 {
		return
	}
	parts := make([][]string, len(kids))
	last := make([]*suite.RunProgress, len(kids))
	at := make([]time.Time, len(kids))
	ended := make([]bool, len(kids))
	for i, k := range kids {
		var cp struct {
			Project *suite.RunProgress `json:"project_progress"`
		}
		_ = json.Unmarshal(k.Checkpoint, &cp)
		parts[i], last[i], at[i], ended[i] = strings.Split(k.Key, ","), cp.Project, k.UpdatedAt, k.State.Terminal()
	}
	p := suite.FilesProgress(parts, last, at, ended)
	v.RunProgress = &p
	v.Progress = Progress{Done: p.FilesEnded, Total: p.Files}
}

// maxHold bounds max_credits so the micro-credit amount cannot overflow.
const maxHold = 1e9
