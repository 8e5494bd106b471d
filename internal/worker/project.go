package worker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// ProjectRunner runs customers' projects in the sandbox;
// suite.ProjectRunner implements it.
type ProjectRunner interface {
	Run(ctx context.Context, p suite.Project, o suite.RunOptions) (suite.RunReport, error)
	Repair(ctx context.Context, p suite.Project, prints map[string][]suite.TraceAction, o suite.RunOptions) (suite.RepairReport, error)
	// MergeRepairs merges the repairs of a project's files into one
	// patch and verifies it.
	MergeRepairs(ctx context.Context, p suite.Project, parts []suite.RepairPart, o suite.RunOptions) (suite.RepairReport, error)
	// Budget is the time a run of these tests may take with workers
	// runner workers (0: the most a run gets).
	Budget(tests []suite.TestOutcome, workers int) time.Duration
	// MostWorkers is the most runner workers a run gets.
	MostWorkers() int
	// Wall is the longest one run may take.
	Wall() time.Duration
	// MergeReports merges a project run's files' blob reports into its
	// junit XML and html report.
	MergeReports(ctx context.Context, blobs [][]byte) (suite.Reports, error)
}

// runCeiling is the tenant's plan's bound on any one run of its tests (0:
// the sandbox's).
func (w *Worker) runCeiling(ctx context.Context, tenantID string) (time.Duration, error) {
	t, err := w.store.GetTenant(ctx, tenantID)
	if err != nil {
		return 0, fmt.Errorf("read the tenant's plan: %w", err)
	}
	return time.Duration(t.MaxRunSeconds) * time.Second, nil
}

// errNoSandbox is why a worker that cannot sandbox runs no customer code.
var errNoSandbox = errors.New("this worker cannot run customer code: its sandbox is unavailable (bubblewrap and user namespaces are needed)")

// loadProject reads a version of a tenant's project.
func (w *Worker) loadProject(ctx context.Context, tenantID, digest string) (suite.Project, outcome, bool) {
	archive, err := w.store.ProjectArchive(ctx, tenantID, digest)
	if errors.Is(err, store.ErrNotFound) {
		return suite.Project{}, failed("the project version no longer exists"), false
	}
	if err != nil {
		return suite.Project{}, handedBack(err), false
	}
	p, err := suite.ReadArchive(archive)
	if err != nil {
		return suite.Project{}, failed("the stored project cannot be read: " + err.Error()), false
	}
	return p, outcome{}, true
}

// runProject runs (or lists) a project in the sandbox, its network only
// through a tunnel of the job's egress proxy.
func (w *Worker) runProject(ctx context.Context, p suite.Project, o suite.RunOptions) (suite.RunReport, error) {
	if w.cfg.Projects == nil {
		return suite.RunReport{}, errNoSandbox
	}
	tun := w.proxy.Open()
	defer tun.Close()
	if err := tun.Remap(o.Origins); err != nil {
		return suite.RunReport{}, err
	}
	o.Proxy = &suite.Proxy{Addr: strings.TrimPrefix(w.proxy.Server(), "http://"), Username: tun.User, Password: tun.Password}
	rep, err := w.cfg.Projects.Run(ctx, p, o)
	if rep.Dir != "" {
		defer os.RemoveAll(rep.Dir)
	}
	if !o.List {
		// While the run's directory still holds the traces. A listing runs
		// no test, and what its report names is the customer's to choose.
		w.readEvidence(rep.Tests, o.Env)
	}
	if blocked := tun.Blocked(); len(blocked) > 0 {
		rep.Errors = append(rep.Errors, "the egress guard refused: "+strings.Join(blocked, "; "))
	}
	return rep, err
}

// readEvidence reads each test's trace for its evidence. What a test is
// called and why its trace cannot be read are the customer's words, which
// may hold the job's secrets: the log takes them out.
func (w *Worker) readEvidence(tests []suite.TestOutcome, secrets map[string]string) {
	log := orchestrator.RedactLogger(w.log, secrets)
	for i := range tests {
		if err := tests[i].Evidence(); err != nil {
			log.Warn("trace unreadable", "test", tests[i].Title(), "err", err)
		}
	}
}

// runProjectList lists an uploaded version's tests with the runner.
func (w *Worker) runProjectList(ctx context.Context, claim store.Claim, log *slog.Logger) outcome {
	req, _, err := openInput[jobs.ProjectRequest](w, claim)
	if err != nil {
		return failed(err.Error())
	}
	p, out, ok := w.loadProject(ctx, claim.TenantID, req.Version)
	if !ok {
		return out
	}
	rep, err := w.runProject(ctx, p, suite.RunOptions{List: true})
	if err != nil {
		if ctx.Err() != nil {
			return handedBack(ctx.Err())
		}
		return failed("listing the tests failed: " + err.Error())
	}
	tests, _ := json.Marshal(rep.Tests)
	var listErrors json.RawMessage
	if len(rep.Errors) > 0 {
		listErrors, _ = json.Marshal(rep.Errors)
	}
	if err := w.store.SetProjectTests(ctx, claim.TenantID, req.Version, tests, listErrors); err != nil {
		return handedBack(err)
	}
	log.Info("listed project", "project", req.Name, "tests", len(rep.Tests), "errors", len(rep.Errors))
	res, _ := json.Marshal(ProjectListResult{Project: req.Name, Version: req.Version, Tests: rep.Tests, Errors: rep.Errors})
	f := store.Finish{State: store.JobStateSucceeded, Result: res}
	if len(rep.Errors) > 0 {
		f.State, f.Error = store.JobStateFailed, strings.Join(rep.Errors, "; ")
	}
	return outcome{Finish: f}
}

// runProjectFanOut fans a project run out: one child per test file (the
// runner's hooks, serial mode and worker-scoped fixtures are per file, so
// a file is the smallest part whose verdicts are the runner's own).
func (w *Worker) runProjectFanOut(ctx context.Context, claim store.Claim, log *slog.Logger) outcome {
	req, secrets, err := openInput[jobs.ProjectRequest](w, claim)
	if err != nil {
		return failed(err.Error())
	}
	// Resumed once its files' jobs have ended: their reports are merged.
	kids, err := w.store.Children(ctx, claim.TenantID, claim.JobID)
	if err != nil {
		return handedBack(err)
	}
	if len(kids) > 0 {
		return w.concludeProjectRun(ctx, claim, kids, log)
	}
	v, err := w.store.ProjectVersion(ctx, claim.TenantID, req.Name, req.Version)
	if errors.Is(err, store.ErrNotFound) {
		return failed("the project version no longer exists")
	}
	if err != nil {
		return handedBack(err)
	}
	var listed []suite.TestOutcome
	if v.Tests == nil {
		p, out, ok := w.loadProject(ctx, claim.TenantID, req.Version)
		if !ok {
			return out
		}
		rep, err := w.runProject(ctx, p, suite.RunOptions{List: true})
		if err != nil {
			return failed("listing the tests failed: " + err.Error())
		}
		listed = rep.Tests
		tests, _ := json.Marshal(rep.Tests)
		if err := w.store.SetProjectTests(ctx, claim.TenantID, req.Version, tests, nil); err != nil {
			return handedBack(err)
		}
	} else if err := json.Unmarshal(v.Tests, &listed); err != nil {
		return failed("the project's listing cannot be read: " + err.Error())
	}
	var files []string
	for _, t := range listed {
		if !slices.Contains(files, t.File) && (len(req.Files) == 0 || slices.Contains(req.Files, t.File)) {
			files = append(files, t.File)
		}
	}
	if len(files) == 0 {
		return failed("the run selects no test file of the project")
	}
	// The files run in parts, each one runner over its files, cut by the
	// time their tests took in the project's last runs so that a part
	// ends within one run's wall (the tenant's, when lower).
	plan, err := w.partPlan(ctx, claim.TenantID, req.Name)
	if err != nil {
		return handedBack(err)
	}
	parts := suite.Parts(listed, files, plan)
	children := make([]store.Child, 0, len(parts))
	for _, part := range parts {
		children = append(children, store.Child{Key: suite.PartKey(part), Kind: string(jobs.KindProjectFile), Subject: jobs.Subject(jobs.KindProjectFile, claim.TenantID),
			Input: func(jobID string) (json.RawMessage, error) {
				child := jobs.ProjectRequest{Name: req.Name, Version: req.Version, Files: part, BaseURL: req.BaseURL, Origins: req.Origins, Parts: len(parts)}
				var err error
				if child.SealedSecrets, err = w.sealFor(secrets, jobID); err != nil {
					return nil, err
				}
				return json.Marshal(child)
			}})
	}
	// A worker that runs the files merges their reports once they end.
	return w.fanOut(ctx, claim, children, w.cfg.Projects != nil, log)
}

// runnerShare counts the runner workers (browsers side by side) of the
// project files a worker runs at once. One runner with two workers runs
// a project's files two at a time; two files side by side with two
// workers each start four browsers and four runner workers on the same
// cores, which made a run of 12 files 1.6-2.4x the runner's own time.
type runnerShare struct {
	mu    sync.Mutex
	inUse int
}

// take is how many runner workers a file may start beside the others,
// of most: what they leave, at least one, and release gives them back.
func (r *runnerShare) take(most int) (int, func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := max(1, min(most, most-r.inUse))
	r.inUse += n
	return n, sync.OnceFunc(func() {
		r.mu.Lock()
		r.inUse -= n
		r.mu.Unlock()
	})
}

// partRuns is how many of a project's last file runs time its tests for
// the cut of its next run.
const partRuns = 50

// partPlan is how a project's run is cut: the worker's parts, each at
// most half a run's wall of test time, by the times its tests took in its
// last runs (any version's: a test keeps its id across versions).
func (w *Worker) partPlan(ctx context.Context, tenantID, project string) (suite.PartPlan, error) {
	plan := suite.PartPlan{Most: w.cfg.RunParts, Took: map[string]time.Duration{}}
	ceiling, err := w.runCeiling(ctx, tenantID)
	if err != nil {
		return plan, err
	}
	plan.Time = w.cfg.Projects.Wall()
	if ceiling > 0 {
		plan.Time = min(plan.Time, ceiling)
	}
	plan.Time /= 2
	runs, err := w.store.ProjectFileRuns(ctx, tenantID, project, partRuns)
	if err != nil {
		return plan, err
	}
	for _, run := range runs {
		for _, t := range suite.ResultTests(run.Result) {
			if _, newer := plan.Took[t.ID]; !newer && t.Duration > 0 {
				plan.Took[t.ID] = t.Duration
			}
		}
	}
	return plan, nil
}

// partWorkers is how many runner workers a part of a run may start: the
// most a run gets, split evenly among the run's parts (of parts, as the
// run was cut) that this worker's slots run side by side (a run's only
// part gets them all). The first of two parts took two and the second,
// beside it, the one left: the second ended last, a third behind (a run
// of 120 tests 1.32x the runner's own).
func (w *Worker) partWorkers(parts int) int {
	return max(1, w.cfg.Projects.MostWorkers()/max(1, min(parts, w.cfg.Concurrency)))
}

// ProjectListResult is a project_list job's result: the tests the runner
// listed, and what kept it from listing some.
type ProjectListResult struct {
	Project string              `json:"project"`
	Version string              `json:"version"`
	Tests   []suite.TestOutcome `json:"tests"`
	Errors  []string            `json:"errors"`
}

// ProjectFileResult is a project_file job's result: every test of the
// file with the runner's verdict, file:line, duration and error.
type ProjectFileResult struct {
	Project string `json:"project"`
	Version string `json:"version"`
	// File names the part's files (comma-separated), Files lists them.
	File    string              `json:"file"`
	Files   []string            `json:"files"`
	Verdict suite.TestStatus    `json:"verdict"`
	Tests   []suite.TestOutcome `json:"tests"`
	Errors  []string            `json:"errors,omitempty"`
	Limit   string              `json:"limit,omitempty"`
	// NotRun counts the tests the run did not reach within its budget.
	NotRun int `json:"not_run"`
	// Runner is which @playwright/test ran, when not the worker's own.
	Runner string `json:"runner,omitempty"`
	// BrowserSeconds is how long the run held the sandbox's browser and
	// runner, and CreditsMicro what that was charged.
	BrowserSeconds float64 `json:"browser_seconds"`
	CreditsMicro   int64   `json:"credits_micro"`
}

// runProjectFile runs one test file of a project with the real runner.
func (w *Worker) runProjectFile(ctx context.Context, claim store.Claim, log *slog.Logger) (out outcome) {
	req, secrets, err := openInput[jobs.ProjectRequest](w, claim)
	if err != nil {
		return failed(err.Error())
	}
	redact := secretText(secrets)
	defer func() { out.Finish = redactFinish(redact, out.Finish) }()
	p, lost, ok := w.loadProject(ctx, claim.TenantID, req.Version)
	if !ok {
		return lost
	}
	// The file's budget follows its tests and their own timeouts, up to
	// the sandbox's ceiling or the tenant's plan's, whichever is lower;
	// what is reserved for it follows the budget.
	ceiling, err := w.runCeiling(ctx, claim.TenantID)
	if err != nil {
		return handedBack(err)
	}
	wall := time.Duration(jobs.FileRunSeconds) * time.Second
	if ceiling > 0 {
		wall = min(wall, ceiling)
	}
	// Files side by side on this worker share its runner workers, as one
	// runner's workers share them across its files: a file beside others
	// gets what they left, at least one.
	workers := 0
	if w.cfg.Projects != nil {
		var release func()
		workers, release = w.runners.take(w.partWorkers(req.Parts))
		defer release()
	}
	if v, err := w.store.ProjectVersion(ctx, claim.TenantID, req.Name, req.Version); err == nil && v.Tests != nil && w.cfg.Projects != nil {
		var listed, mine []suite.TestOutcome
		if json.Unmarshal(v.Tests, &listed) == nil {
			for _, t := range listed {
				if slices.Contains(req.Files, t.File) {
					mine = append(mine, t)
				}
			}
			if len(mine) > 0 {
				wall = min(wall, w.cfg.Projects.Budget(mine, workers))
			}
		}
	}
	var rep suite.RunReport
	run, err := w.metered(ctx, claim, int64(wall.Seconds()), func() (err error) {
		rep, err = w.runProject(ctx, p, suite.RunOptions{Files: req.Files, BaseURL: req.BaseURL, Origins: req.Origins, Env: secrets, Trace: true,
			Blob: true, OnProgress: w.showProgress(ctx, claim, redact, log), Wall: wall, Ceiling: ceiling, Workers: workers})
		return err
	})
	if end, ok := endOf(err); ok {
		return end
	}
	if err != nil {
		return failed("the runner failed: " + err.Error())
	}
	if lost := w.keepRunReports(ctx, claim, &rep, secrets); len(lost) > 0 {
		log.Warn("reports not kept", "problems", len(lost), "first", redact(lost[0]))
	}
	res := ProjectFileResult{Project: req.Name, Version: req.Version, File: strings.Join(req.Files, ","), Files: req.Files, Tests: rep.Tests,
		Errors: rep.Errors, Limit: rep.Limit, NotRun: rep.NotRun, Runner: rep.Runner, Verdict: fileVerdict(rep),
		BrowserSeconds: run.took.Seconds(), CreditsMicro: run.charged}
	// A passing test's targets, per version: what re-location starts from
	// when the app drifts.
	prints := map[string][]suite.TraceAction{}
	for _, t := range rep.Tests {
		if t.Status == "passed" && len(t.Actions) > 0 {
			prints[t.ID] = t.Actions
		}
	}
	if len(prints) > 0 {
		b, _ := json.Marshal(prints)
		if b = redactJSON(redact, b); b == nil {
			b = []byte(`{}`)
		}
		if err := w.store.KeepProjectFingerprints(ctx, claim.TenantID, req.Version, b); err != nil {
			return handedBack(err)
		}
	}
	b, _ := json.Marshal(res)
	f := store.Finish{State: store.JobStateSucceeded, Result: b, TestStatus: string(res.Verdict)}
	if res.Verdict != suite.StatusPassed && res.Verdict != suite.StatusFlaky {
		f.State = store.JobStateFailed
		var failing []string
		for _, t := range rep.Tests {
			if t.Status == suite.StatusFailed {
				failing = append(failing, t.File+" › "+t.Title())
			}
		}
		f.Error = fmt.Sprintf("%d of %d tests failed: %s", len(failing), len(rep.Tests), strings.Join(failing, "; "))
		if len(rep.Errors) > 0 {
			f.Error = strings.Join(rep.Errors, "; ")
		}
	}
	log.Info("ran project file", "file", res.File, "verdict", res.Verdict, "tests", len(rep.Tests))
	return outcome{Finish: f}
}

// showProgress keeps a running project job's progress in its checkpoint,
// where the job's view and event stream read it (a test's title can hold
// a secret the job was given: it is redacted as the result is).
func (w *Worker) showProgress(ctx context.Context, claim store.Claim, redact func(string) string, log *slog.Logger) func(suite.RunProgress) {
	return func(p suite.RunProgress) {
		b, _ := json.Marshal(struct {
			Progress suite.RunProgress `json:"project_progress"`
		}{p})
		if b = redactJSON(redact, b); b == nil {
			return
		}
		if err := w.store.SaveCheckpoint(ctx, claim.JobID, claim.Attempt, b); err != nil && ctx.Err() == nil {
			log.Warn("the run's progress was not kept", "err", err)
		}
	}
}

// fileVerdict is a part's verdict from its tests': failed if any failed
// or was not reached, or a file did not load; flaky if any passed only on
// retry.
func fileVerdict(rep suite.RunReport) suite.TestStatus {
	v := suite.StatusPassed
	if len(rep.Tests) == 0 || rep.Limit != "" || len(rep.Errors) > 0 {
		return suite.StatusFailed
	}
	for _, t := range rep.Tests {
		switch t.Status {
		case suite.StatusPassed, suite.StatusSkipped:
		case suite.StatusFlaky:
			v = suite.StatusFlaky
		default:
			return suite.StatusFailed
		}
	}
	return v
}

// runProjectRepair runs a project and heals its drifted locators where
// the project defines them; a verified patch becomes a proposed version
// (or, with auto_accept, the current one). A project of several test
// files is repaired a file at a time, each by a project_repair_file child
// on any worker in its own sandbox and budget; once they have all ended
// the repair resumes, merges their heals into one patch and verifies it.
// Its three roles: plan (fan out, merge, or repair in one), repair, and
// conclude (a file's part for its parent, or the project's proposal).
func (w *Worker) runProjectRepair(ctx context.Context, claim store.Claim, log *slog.Logger) (out outcome) {
	req, secrets, err := openInput[jobs.ProjectRequest](w, claim)
	if err != nil {
		return failed(err.Error())
	}
	redact := secretText(secrets)
	defer func() { out.Finish = redactFinish(redact, out.Finish) }()
	if w.cfg.Projects == nil {
		return failed(errNoSandbox.Error())
	}
	p, out, ok := w.loadProject(ctx, claim.TenantID, req.Version)
	if !ok {
		return out
	}
	// With the listing, each file's evidence runs on its own budget.
	var listing []suite.TestOutcome
	if v, err := w.store.ProjectVersion(ctx, claim.TenantID, req.Name, req.Version); err == nil && v.Tests != nil {
		_ = json.Unmarshal(v.Tests, &listing)
	}
	plan, out, ok := w.planRepair(ctx, claim, req, secrets, listing, log)
	if !ok {
		return out
	}
	rep, res, out, ok := w.repairProject(ctx, claim, req, secrets, redact, p, listing, plan, log)
	if !ok {
		return out
	}
	if plan.part {
		return w.concludeRepairPart(ctx, claim, req, p, rep, res, log)
	}
	return w.concludeRepair(ctx, claim, req, rep, res, log)
}

// repairPlan is how a project repair job repairs: a file's part (merged
// by its parent), the whole project in one, both from the version's
// prints, or by merging its files' parts.
type repairPlan struct {
	part   bool
	prints map[string][]suite.TraceAction // what a repair in one or a part heals from
	merge  bool
	parts  []suite.RepairPart        // merging: the files' repairs, and the files that passed whole
	spent  suite.ProjectRepairResult // merging: what the files' repairs spent
}

// planRepair says how the job repairs. ok is false when the job's outcome
// is already known: its files were fanned out to children (it resumes when
// they end), or a read failed.
func (w *Worker) planRepair(ctx context.Context, claim store.Claim, req jobs.ProjectRequest, secrets map[string]string,
	listing []suite.TestOutcome, log *slog.Logger) (repairPlan, outcome, bool) {
	plan := repairPlan{part: jobs.Kind(claim.Kind) == jobs.KindProjectRepairFile}
	var kids []store.ChildOutcome
	var spared []suite.RepairPart // files that passed whole in the run it follows
	if !plan.part {
		var err error
		if kids, err = w.store.Children(ctx, claim.TenantID, claim.JobID); err != nil {
			return plan, handedBack(err), false
		}
		if files := repairFiles(listing, req.Files); len(files) > 1 {
			if spared, err = w.passedFiles(ctx, claim, req, files); err != nil {
				return plan, handedBack(err), false
			}
			todo := slices.DeleteFunc(files, func(f string) bool {
				return slices.ContainsFunc(spared, func(p suite.RepairPart) bool { return p.Files[0] == f })
			})
			if len(kids) == 0 && len(todo) > 0 {
				return plan, w.fanOutRepair(ctx, claim, req, secrets, todo, log), false
			}
		}
	}
	if plan.merge = len(kids) > 0 || len(spared) > 0; plan.merge {
		done, spent := repairParts(kids)
		plan.parts, plan.spent = append(spared, done...), spent
		slices.SortFunc(plan.parts, func(a, b suite.RepairPart) int { return strings.Compare(a.Files[0], b.Files[0]) })
		return plan, outcome{}, true
	}
	raw, err := w.store.ProjectFingerprints(ctx, claim.TenantID, req.Version)
	if err != nil {
		return plan, handedBack(err), false
	}
	_ = json.Unmarshal(raw, &plan.prints)
	return plan, outcome{}, true
}

// repairProject repairs p as planned, through the job's egress tunnels
// (the baseline's its own), metered for the browser time it takes. ok is
// false when the job's outcome is already known.
func (w *Worker) repairProject(ctx context.Context, claim store.Claim, req jobs.ProjectRequest, secrets map[string]string,
	redact func(string) string, p suite.Project, listing []suite.TestOutcome, plan repairPlan,
	log *slog.Logger) (suite.RepairReport, suite.ProjectRepairResult, outcome, bool) {
	var rep suite.RepairReport
	var res suite.ProjectRepairResult
	tun := w.proxy.Open()
	defer tun.Close()
	if err := tun.Remap(req.Origins); err != nil {
		return rep, res, failed(err.Error()), false
	}
	ceiling, err := w.runCeiling(ctx, claim.TenantID)
	if err != nil {
		return rep, res, handedBack(err), false
	}
	proxyAddr := strings.TrimPrefix(w.proxy.Server(), "http://")
	o := suite.RunOptions{Files: req.Files, BaseURL: req.BaseURL, Origins: req.Origins, Env: secrets, Listing: listing, Ceiling: ceiling,
		Proxy:      &suite.Proxy{Addr: proxyAddr, Username: tun.User, Password: tun.Password},
		OnProgress: w.showProgress(ctx, claim, redact, log), Agent: w.newRepairAsker(claim, redact), MergedLater: plan.part}
	if plan.part && o.Agent != nil {
		o.Answers = &partAnswers{store: w.store, claim: claim, redact: redact, log: log, poll: 250 * time.Millisecond}
	}
	if req.BaselineURL != "" || len(req.BaselineOrigins) > 0 {
		// The baseline is reached through a tunnel of its own: the origins
		// the tests name lead there, not to the target.
		btun := w.proxy.Open()
		defer btun.Close()
		if err := btun.Remap(req.BaselineOrigins); err != nil {
			return rep, res, failed(err.Error()), false
		}
		o.Baseline = &suite.Baseline{BaseURL: req.BaselineURL, Origins: req.BaselineOrigins,
			Proxy: &suite.Proxy{Addr: proxyAddr, Username: btun.User, Password: btun.Password}}
	}
	upTo := int64(jobs.RepairRunSeconds)
	if plan.part {
		upTo = jobs.RepairFileSeconds
	}
	run, err := w.metered(ctx, claim, upTo, func() (err error) {
		if plan.merge {
			rep, err = w.cfg.Projects.MergeRepairs(ctx, p, plan.parts, o)
		} else {
			rep, err = w.cfg.Projects.Repair(ctx, p, plan.prints, o)
		}
		return err
	})
	if end, ok := endOf(err); ok {
		return rep, res, end, false
	}
	if err != nil {
		return rep, res, failed("the repair failed: " + err.Error()), false
	}
	res = suite.ProjectRepairResult{Project: req.Name, Version: req.Version, Repair: rep, Verdict: repairVerdict(rep),
		BrowserSeconds: run.took.Seconds() + plan.spent.BrowserSeconds, CreditsMicro: run.charged + plan.spent.CreditsMicro}
	for _, part := range plan.parts {
		res.Files += len(part.Files)
	}
	for _, t := range rep.Tests {
		res.ModelCalls, res.ModelCreditsMicro = res.ModelCalls+t.ModelCalls, res.ModelCreditsMicro+t.ModelCreditsMicro
	}
	return rep, res, outcome{}, true
}

// concludeRepairPart ends a file's part: the parent merges and verifies
// the files' heals, and proposes. The patched files go to it in the
// checkpoint, as they are: the result is redacted of the job's secrets,
// which a customer's own file may spell out (a default password), and a
// redacted file would be patched in.
func (w *Worker) concludeRepairPart(ctx context.Context, claim store.Claim, req jobs.ProjectRequest, p suite.Project,
	rep suite.RepairReport, res suite.ProjectRepairResult, log *slog.Logger) outcome {
	cp := partCheckpoint{Progress: finalProgress(rep)}
	if rep.Verified && rep.Patched != nil {
		cp.Patched = suite.PatchedFiles(p, *rep.Patched)
	}
	raw, _ := json.Marshal(cp)
	if err := w.store.SaveCheckpoint(ctx, claim.JobID, claim.Attempt, raw); err != nil {
		if errors.Is(err, store.ErrFenced) {
			return outcome{err: err}
		}
		return handedBack(err)
	}
	b, _ := json.Marshal(res)
	log.Info("repaired project file", "project", req.Name, "files", req.Files, "verdict", res.Verdict, "changes", len(rep.Changes))
	return outcome{Finish: store.Finish{State: store.JobStateSucceeded, Result: b, TestStatus: string(res.Verdict)}}
}

// concludeRepair ends a project's repair: a verified patch becomes a
// proposed version (or the current one), and a regression or a test left
// failing fails the job, reported, never healed.
func (w *Worker) concludeRepair(ctx context.Context, claim store.Claim, req jobs.ProjectRequest,
	rep suite.RepairReport, res suite.ProjectRepairResult, log *slog.Logger) outcome {
	if rep.Verified && rep.Patched != nil {
		archive, err := rep.Patched.Archive()
		if err != nil {
			return failed("the patched project cannot be packed: " + err.Error())
		}
		v := store.ProjectVersion{Project: req.Name, Digest: rep.Patched.Digest(), Files: len(rep.Patched.Files),
			Bytes: rep.Patched.Size(), Parent: req.Version}
		if _, err = w.store.ProposeProjectVersion(ctx, claim.TenantID, v, archive); err != nil {
			return handedBack(err)
		}
		if req.AutoAccept {
			// Accepted as a person accepts it: the stored tests a project
			// of them holds take their healed specs.
			_, back, err := suite.AcceptVersion(ctx, w.store, claim.TenantID, req.Name, v.Digest)
			if err != nil {
				return handedBack(err)
			}
			if len(back.Tests)+len(back.Skipped) > 0 {
				res.StoredTests = &back
			}
		}
		res.Proposed, res.Accepted = v.Digest, req.AutoAccept
	}
	b, _ := json.Marshal(res)
	f := store.Finish{State: store.JobStateSucceeded, Result: b, TestStatus: string(res.Verdict)}
	var broken []string
	for _, t := range rep.Tests {
		if t.Verdict == orchestrator.VerdictRegression || t.Verdict == orchestrator.VerdictUnrepairable {
			broken = append(broken, t.Title+": "+string(t.Verdict))
		}
	}
	if len(broken) > 0 {
		f.State, f.Error = store.JobStateFailed, strings.Join(broken, "; ")
	}
	log.Info("repaired project", "project", req.Name, "verdict", res.Verdict, "changes", len(rep.Changes), "proposed", res.Proposed)
	return outcome{Finish: f}
}

// repairFiles are the test files of a listing a repair selects, in the
// listing's order.
func repairFiles(listing []suite.TestOutcome, selected []string) []string {
	var files []string
	for _, t := range listing {
		if !slices.Contains(files, t.File) && (len(selected) == 0 || slices.Contains(selected, t.File)) {
			files = append(files, t.File)
		}
	}
	return files
}

// fanOutRepair repairs each of files in a project_repair_file child of
// its own, and has the repair resume once they have all ended. (Parts of
// several files, as a run has, were slower: a 500-test repair took 3.53
// to 3.66 times the runner's pass against 2.90-3.21 a file at a time, the
// parts' repairs running side by side on fewer slots.) A child's key
// lists its files, as the merge reads them.
func (w *Worker) fanOutRepair(ctx context.Context, claim store.Claim, req jobs.ProjectRequest, secrets map[string]string,
	files []string, log *slog.Logger) outcome {
	parts := make([][]string, 0, len(files))
	for _, f := range files {
		parts = append(parts, []string{f})
	}
	children := make([]store.Child, 0, len(parts))
	for _, part := range parts {
		children = append(children, store.Child{Key: strings.Join(part, ","), Kind: string(jobs.KindProjectRepairFile),
			Subject: jobs.Subject(jobs.KindProjectRepairFile, claim.TenantID),
			Input: func(jobID string) (json.RawMessage, error) {
				child := req
				child.Files, child.Secrets, child.AutoAccept = part, nil, false
				var err error
				if child.SealedSecrets, err = w.sealFor(secrets, jobID); err != nil {
					return nil, err
				}
				return json.Marshal(child)
			}})
	}
	return w.fanOut(ctx, claim, children, true, log)
}

// passedFiles are the files that passed whole in the run the repair
// follows (after_run): they are not run again, and their tests are
// reported passed in it. (The API checked the run is of the repair's
// version and base URL.)
func (w *Worker) passedFiles(ctx context.Context, claim store.Claim, req jobs.ProjectRequest, files []string) ([]suite.RepairPart, error) {
	if req.AfterRun == "" {
		return nil, nil
	}
	kids, err := w.store.Children(ctx, claim.TenantID, req.AfterRun)
	if err != nil {
		return nil, err
	}
	var out []suite.RepairPart
	for _, k := range kids {
		var res ProjectFileResult
		if json.Unmarshal(k.Result, &res) != nil || res.Limit != "" || len(res.Errors) > 0 {
			continue
		}
		// A part of the run holds several files: each that passed whole
		// (every test of it passed or skipped, none flaky) is one.
		byFile := map[string][]suite.TestOutcome{}
		for _, t := range res.Tests {
			byFile[t.File] = append(byFile[t.File], t)
		}
		partFiles := res.Files
		if len(partFiles) == 0 {
			partFiles = strings.Split(res.File, ",") // a run before parts
		}
		for _, f := range partFiles {
			tests := byFile[f]
			if !slices.Contains(files, f) || len(tests) == 0 || slices.ContainsFunc(tests, func(t suite.TestOutcome) bool {
				return t.Status != suite.StatusPassed && t.Status != suite.StatusSkipped
			}) {
				continue
			}
			part := suite.RepairPart{Files: []string{f}}
			for _, t := range tests {
				part.Report.Tests = append(part.Report.Tests, suite.RepairedTest{ID: t.ID, File: t.File, Title: t.Title(), Verdict: orchestrator.VerdictPassed,
					Reason: "passed in the run this repair follows (" + req.AfterRun + "); not run again"})
			}
			out = append(out, part)
		}
	}
	return out, nil
}

// partCheckpoint is what a file's repair leaves in its checkpoint when it
// ends: its last progress and the files it patched and verified.
type partCheckpoint struct {
	Progress suite.RunProgress   `json:"project_progress"`
	Patched  []suite.PatchedFile `json:"patched_files,omitempty"`
}

// finalProgress is a repair's progress once it has ended.
func finalProgress(rep suite.RepairReport) suite.RunProgress {
	p := suite.RunProgress{Phase: "ended", Tests: len(rep.Tests), Ended: len(rep.Tests)}
	for _, t := range rep.Tests {
		switch t.Verdict {
		case orchestrator.VerdictHealed:
			p.Healed++
		case orchestrator.VerdictRegression:
			p.Flagged++
		case orchestrator.VerdictUnrepairable:
			p.Left++
		}
	}
	return p
}

// repairParts reads the files' repairs a project repair fanned out, and
// what they spent together.
func repairParts(kids []store.ChildOutcome) ([]suite.RepairPart, suite.ProjectRepairResult) {
	var spent suite.ProjectRepairResult
	parts := make([]suite.RepairPart, 0, len(kids))
	for _, k := range kids {
		part := suite.RepairPart{Files: strings.Split(k.Key, ",")}
		var res suite.ProjectRepairResult
		var cp partCheckpoint
		if err := json.Unmarshal(k.Result, &res); err != nil || k.State != store.JobStateSucceeded || res.Repair.Tests == nil {
			part.Failed = cmp.Or(k.Error, "it "+string(k.State))
		} else if err := json.Unmarshal(k.Checkpoint, &cp); err != nil {
			part.Failed = "its patched files cannot be read: " + err.Error()
		} else {
			part.Report, part.Patched = res.Repair, cp.Patched
		}
		spent.BrowserSeconds += res.BrowserSeconds
		spent.CreditsMicro += res.CreditsMicro
		parts = append(parts, part)
	}
	return parts, spent
}

// repairVerdict sums a project repair up: the worst of its tests'.
func repairVerdict(rep suite.RepairReport) orchestrator.Verdict {
	worst := orchestrator.VerdictPassed
	rank := map[orchestrator.Verdict]int{orchestrator.VerdictPassed: 0, orchestrator.VerdictFlaky: 1, orchestrator.VerdictHealed: 2, orchestrator.VerdictUnrepairable: 3, orchestrator.VerdictRegression: 4}
	for _, t := range rep.Tests {
		if r, ok := rank[t.Verdict]; ok && r > rank[worst] {
			worst = t.Verdict
		}
	}
	return worst
}

// secretText is the redaction a project run's texts go through: the
// job's secrets in every form redaction knows, as scenario jobs redact
// theirs. A customer's test can put a secret it was given into its errors
// (toHaveText(process.env.PASSWORD)), its console or its output.
func secretText(secrets map[string]string) func(string) string {
	redact, _ := orchestrator.SecretText(secrets)
	return redact
}

// redactFinish takes the job's secrets out of everything a finished
// project job stores and shows: its error and its result.
func redactFinish(redact func(string) string, f store.Finish) store.Finish {
	f.Error = redact(f.Error)
	if len(f.Result) > 0 {
		if b := redactJSON(redact, f.Result); b != nil {
			f.Result = b
		} else {
			f.Result = json.RawMessage(`{"error":"the result held a secret in a form that could not be taken out, and was withheld"}`)
		}
	}
	return f
}

// redactJSON redacts a JSON document's text (every form redaction knows
// includes the JSON-escaped ones); nil when the result no longer parses.
func redactJSON(redact func(string) string, b []byte) []byte {
	out := []byte(redact(string(b)))
	if !json.Valid(out) {
		return nil
	}
	return out
}
