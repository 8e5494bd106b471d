package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// projectRow is a project on the Projects page, at its current version.
type projectRow struct {
	store.ProjectVersion
	TestCount int
}

type projectsData struct {
	page
	Projects []projectRow
}

func (c *Console) projects(w http.ResponseWriter, r *http.Request, s session) {
	list, err := c.store.Projects(r.Context(), s.Tenant.ID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	rows := make([]projectRow, 0, len(list))
	for _, v := range list {
		rows = append(rows, projectRow{ProjectVersion: v, TestCount: len(listing(v))})
	}
	c.render(w, r, http.StatusOK, "projects", projectsData{page: s.page("Projects"), Projects: rows})
}

// listing is a version's tests as the runner listed them.
func listing(v store.ProjectVersion) []suite.TestOutcome {
	var tests []suite.TestOutcome
	_ = json.Unmarshal(v.Tests, &tests)
	return tests
}

// projectTest is a test of a project's current version with its verdicts
// in the runs kept, newest first.
type projectTest struct {
	suite.TestOutcome
	Last    suite.TestStatus   // the last run's verdict ("" when never run)
	LastJob string             // the job of that run
	History []suite.TestStatus // the verdicts of the runs kept, newest first (at most historyRuns)
	Flaky   bool               // it passed and failed in those runs, or passed on a retry
	// Repaired is the last repair's verdict of it (healed, app_regression,
	// ...; "" when none), RepairJob that repair, and Why its reason.
	Repaired       orchestrator.Verdict
	RepairJob, Why string
}

// repairRuns is how many of a project's repairs its page reads.
const repairRuns = 20

// historyRuns is how many of a test's runs its history shows.
const historyRuns = 10

type projectData struct {
	page
	Current  store.ProjectVersion
	Versions []store.ProjectVersion
	Tests    []projectTest
	// Written and Left are what the Accept that led here wrote back to
	// the stored tests a project of them holds, and left out.
	Written, Left int
}

func (c *Console) project(w http.ResponseWriter, r *http.Request, s session) {
	name := r.PathValue("name")
	cur, err := c.store.ProjectVersion(r.Context(), s.Tenant.ID, name, "")
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, s, "No project of yours has this name.")
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	versions, err := c.store.ProjectVersions(r.Context(), s.Tenant.ID, name)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	runs, err := c.store.ProjectFileRuns(r.Context(), s.Tenant.ID, name, 500)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	repairs, err := c.store.ProjectRepairs(r.Context(), s.Tenant.ID, name, repairRuns)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	tests := withHistory(listing(cur), runs)
	withRepairs(tests, repairs)
	data := projectData{page: s.page("Project " + name), Current: cur, Versions: versions, Tests: tests}
	data.Written, _ = strconv.Atoi(r.URL.Query().Get("written"))
	data.Left, _ = strconv.Atoi(r.URL.Query().Get("left"))
	c.render(w, r, http.StatusOK, "project", data)
}

// withRepairs gives each test the verdict of the last repair that judged
// it: a project repaired without a run of its own has no run history, and
// its page showed nothing of the repair.
func withRepairs(tests []projectTest, repairs []store.FileRun) {
	at := map[string]int{}
	for i, t := range tests {
		at[t.ID] = i
	}
	for _, rep := range repairs {
		var res suite.ProjectRepairResult
		if json.Unmarshal(rep.Result, &res) != nil {
			continue
		}
		for _, t := range res.Repair.Tests {
			if i, ok := at[t.ID]; ok && tests[i].Repaired == "" {
				tests[i].Repaired, tests[i].RepairJob, tests[i].Why = t.Verdict, rep.JobID, t.Reason
			}
		}
	}
}

// withHistory gives each listed test its verdicts in the file runs (any
// version's: a test keeps its id across versions while its file, project
// and title path stay).
func withHistory(tests []suite.TestOutcome, runs []store.FileRun) []projectTest {
	out := make([]projectTest, len(tests))
	at := map[string]int{}
	for i, t := range tests {
		out[i] = projectTest{TestOutcome: t}
		at[t.ID] = i
	}
	for _, run := range runs {
		for _, t := range suite.ResultTests(run.Result) {
			i, ok := at[t.ID]
			if !ok || len(out[i].History) >= historyRuns {
				continue
			}
			pt := &out[i]
			if pt.Last == "" {
				pt.Last, pt.LastJob = t.Status, run.JobID
			}
			pt.History = append(pt.History, t.Status)
		}
	}
	for i := range out {
		h := out[i].History
		out[i].Flaky = slices.Contains(h, "flaky") || (slices.Contains(h, "passed") && slices.Contains(h, "failed"))
	}
	return out
}

// acceptProject makes a version (a repair's verified proposal) the
// project's current one, as POST /v1/projects/{name}/versions/{version}/accept
// does.
func (c *Console) acceptProject(w http.ResponseWriter, r *http.Request, s session) {
	_, back, err := suite.AcceptVersion(r.Context(), c.store, s.Tenant.ID, r.PathValue("name"), r.PathValue("version"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.notFound(w, r, s, "No project of yours has this version.")
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	to := "/console/projects/" + url.PathEscape(r.PathValue("name"))
	if n := len(back.Tests) + len(back.Skipped); n > 0 {
		to += fmt.Sprintf("?written=%d&left=%d", len(back.Tests), len(back.Skipped))
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}
