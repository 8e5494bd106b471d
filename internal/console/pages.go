package console

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// pageNames are the console's pages; each is templates/<name>.html in the
// layout, with the shared partials.
var pageNames = []string{"login", "jobs", "job", "credits", "tests", "test", "missing", "projects", "project"}

var funcs = template.FuncMap{
	// ruleDoc is a rule's help address when it is axe-core's own
	// documentation; any other address a finding carries is shown as text.
	"ruleDoc": func(u string) bool {
		p, err := url.Parse(u)
		return err == nil && p.Scheme == "https" && p.Host == "dequeuniversity.com" && p.User == nil
	},
	"credits": func(micro int64) string { return strconv.FormatFloat(float64(micro)/store.MicroCredits, 'f', -1, 64) },
	"dur": func(d time.Duration) string {
		switch {
		case d <= 0:
			return "–"
		case d < time.Second:
			return d.Round(time.Millisecond).String()
		default:
			return d.Round(100 * time.Millisecond).String()
		}
	},
	"when": func(v any) string {
		var t time.Time
		switch x := v.(type) {
		case time.Time:
			t = x
		case *time.Time:
			if x != nil {
				t = *x
			}
		}
		if t.IsZero() {
			return "–"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"add": func(a, b int) int { return a + b },
	// short is a digest's first twelve characters, as versions are shown.
	"short": func(digest string) string { return digest[:min(12, len(digest))] },
	// stepCost is a step's model credits and its share of the browser
	// time (its duration at jobs.BrowserSecondMicro), micro-credits.
	"stepCost": func(model int64, d time.Duration) int64 {
		return model + int64(math.Ceil(d.Seconds()*jobs.BrowserSecondMicro))
	},
	// plain drops the representation's element refs, which mean nothing
	// to a person.
	"plain":  func(s string) string { return refMark.ReplaceAllString(s, "") },
	"tokens": func(u llm.Usage) int { return u.PromptTokens + u.CompletionTokens },
	"percent": func(done, total int) int {
		if total <= 0 {
			return 0
		}
		return min(100, done*100/total)
	},
	"terminal": func(s store.JobState) bool { return s.Terminal() },
	// diffLines classes a unified diff's lines for colouring.
	"diffLines": func(diff string) []diffLine {
		var out []diffLine
		for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
			class := ""
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
				class = "hunk"
			case strings.HasPrefix(l, "+"):
				class = "add"
			case strings.HasPrefix(l, "-"):
				class = "del"
			}
			out = append(out, diffLine{Class: class, Text: l})
		}
		return out
	},
	// jobsURL is the jobs list's address for a filter and page; built from
	// url.Values, so it is safe as it is (html/template would otherwise
	// escape the query's own "=" and "&").
	"jobsURL": func(f store.JobFilter, after string) template.URL {
		q := url.Values{}
		if f.State != "" {
			q.Set("state", string(f.State))
		}
		if f.Kind != "" {
			q.Set("kind", f.Kind)
		}
		if after != "" {
			q.Set("after", after)
		}
		return template.URL("/console/jobs?" + q.Encode())
	},
}

type diffLine struct{ Class, Text string }

var refMark = regexp.MustCompile(`\s*\[ref=[^\]]*\]`)

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// page is what every page's layout shows.
type page struct {
	Title  string
	Tenant string
	CSRF   string
}

func (s session) page(title string) page {
	return page{Title: title, Tenant: s.Tenant.Name, CSRF: s.CSRF}
}

// render writes a page whole or not at all: a template error is a 500, not
// half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var b bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&b, "layout", data); err != nil {
		c.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = b.WriteTo(w)
}

// fragment renders one of the partials (a live page's updates).
func (c *Console) fragment(name string, data any) (string, error) {
	var b strings.Builder
	err := c.pages["job"].ExecuteTemplate(&b, name, data)
	return b.String(), err
}

// jobRow is a job in the list.
type jobRow struct {
	api.JobView
	Tokens int
}

type jobsData struct {
	page
	Rows   []jobRow
	Filter store.JobFilter
	States []store.JobState
	Kinds  []jobs.Kind
	Next   string
	// Active says a job is not finished: the list refreshes itself.
	Active bool
}

const jobsPerPage = 50

func (c *Console) jobs(w http.ResponseWriter, r *http.Request, s session) {
	q := r.URL.Query()
	f := store.JobFilter{After: q.Get("after"), Limit: jobsPerPage + 1, State: store.JobState(q.Get("state")), Kind: q.Get("kind")}
	// An unknown filter value shows everything rather than nothing.
	if !f.State.Valid() {
		f.State = ""
	}
	if !jobs.Kind(f.Kind).Known() {
		f.Kind = ""
	}
	list, err := c.store.ListJobs(r.Context(), s.Tenant.ID, f)
	if errors.Is(err, store.ErrNotFound) { // a stale page address
		f.After = ""
		list, err = c.store.ListJobs(r.Context(), s.Tenant.ID, f)
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	data := jobsData{page: s.page("Jobs"), Filter: f, States: store.JobStates(), Kinds: jobs.Kinds}
	if len(list) > jobsPerPage {
		list, data.Next = list[:jobsPerPage], list[jobsPerPage-1].ID
	}
	ids := make([]string, len(list))
	for i, j := range list {
		ids[i] = j.ID
	}
	usage, err := c.store.JobsUsage(r.Context(), ids)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	for _, j := range list {
		u := usage[j.ID]
		data.Rows = append(data.Rows, jobRow{JobView: api.ListView(j), Tokens: u.PromptTokens + u.CompletionTokens})
		data.Active = data.Active || !j.State.Terminal()
	}
	c.render(w, r, http.StatusOK, "jobs", data)
}

// jobData is a job's page.
type jobData struct {
	page
	Head  jobHead
	Steps []stepView
	// From is how many steps the page shows: the live stream sends the rest.
	From  int
	Final finalView
}

// jobHead is the part of a job's page a live update replaces: its state,
// progress and costs.
type jobHead struct {
	Job  api.JobView
	CSRF string
}

// stepView is one step of the timeline.
type stepView struct {
	orchestrator.StepReport
	JobID string
}

// finalView is what a job shows once it has it: the spec, a repair's
// report, a suite's tests, an exploration's findings, the history.
type finalView struct {
	JobID string
	// CSRF is the session's token, for the forms of the report (a repair's
	// Accept).
	CSRF   string
	Spec   string
	Repair *suite.Report
	// ProjectRepair is a customer project's repair: its tests' verdicts,
	// the literals rewritten and the patch.
	ProjectRepair *suite.ProjectRepairResult
	// ProjectRun is a run of a project's file(s): every test's verdict,
	// with its error and the call it failed at.
	ProjectRun *projectRunView
	Suite      *store.BulkReport
	// Reports are a project run's junit and html reports and its failing
	// tests' traces.
	Reports     *suite.RunReports
	Exploration *explore.Result
	// IntoProject is what a scenario naming a project wrote into it.
	IntoProject *suite.IntoProject
	Findings    []findingView
	History     []store.HistoryEntry
	HistoryMore int
}

// projectRunView is what a project_file job's result says of its tests.
type projectRunView struct {
	File    string              `json:"file"`
	Files   []string            `json:"files"`
	Verdict string              `json:"verdict"`
	Tests   []suite.TestOutcome `json:"tests"`
	Errors  []string            `json:"errors"`
	NotRun  int                 `json:"not_run"`
}

// Name is the run's files, as a reader lists them.
func (v projectRunView) Name() string {
	if len(v.Files) > 0 {
		return strings.Join(v.Files, ", ")
	}
	return v.File
}

// findingView is a finding with its evidence and reproduction read.
type findingView struct {
	api.FindingView
	Evidence explore.Evidence
	Repro    *explore.Reproduction
}

// maxHistory bounds the history a page shows.
const maxHistory = 500

func (c *Console) job(w http.ResponseWriter, r *http.Request, s session) {
	j, ok := c.loadJob(w, r, s)
	if !ok {
		return
	}
	v := c.api.JobView(r.Context(), j)
	data := jobData{page: s.page(jobTitle(v)), Head: jobHead{Job: v, CSRF: s.CSRF}, Steps: steps(v)}
	data.From = len(data.Steps)
	var err error
	if data.Final, err = c.final(r.Context(), s, j, v); err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "job", data)
}

func jobTitle(v api.JobView) string {
	if v.Name != "" {
		return v.Name
	}
	return string(v.Kind) + " " + v.ID
}

// loadJob reads the tenant's job the path names, answering 404 itself.
func (c *Console) loadJob(w http.ResponseWriter, r *http.Request, s session) (store.Job, bool) {
	j, err := c.store.GetJob(r.Context(), s.Tenant.ID, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, s, "No job of yours has this id.")
		return j, false
	}
	if err != nil {
		c.fail(w, r, err)
		return j, false
	}
	return j, true
}

// steps decodes a job's timeline.
func steps(v api.JobView) []stepView {
	var list []orchestrator.StepReport
	_ = json.Unmarshal(v.Steps, &list)
	out := make([]stepView, len(list))
	for i, st := range list {
		out[i] = stepView{StepReport: st, JobID: v.ID}
	}
	return out
}

func (c *Console) final(ctx context.Context, s session, j store.Job, v api.JobView) (finalView, error) {
	f := finalView{JobID: j.ID, CSRF: s.CSRF, Spec: j.Script, Suite: v.Suite, Reports: v.Reports}
	if len(v.Repair) > 0 {
		f.Repair = &suite.Report{}
		if json.Unmarshal(v.Repair, f.Repair) != nil {
			f.Repair = nil
		}
	}
	if j.Kind == string(jobs.KindProjectRepair) && len(v.Project) > 0 {
		f.ProjectRepair = &suite.ProjectRepairResult{}
		if json.Unmarshal(v.Project, f.ProjectRepair) != nil {
			f.ProjectRepair = nil
		}
	}
	if j.Kind == string(jobs.KindProjectFile) && len(v.Project) > 0 {
		f.ProjectRun = &projectRunView{}
		if json.Unmarshal(v.Project, f.ProjectRun) != nil {
			f.ProjectRun = nil
		}
	}
	if len(v.IntoProject) > 0 {
		f.IntoProject = &suite.IntoProject{}
		if json.Unmarshal(v.IntoProject, f.IntoProject) != nil {
			f.IntoProject = nil
		}
	}
	if len(v.Exploration) > 0 {
		f.Exploration = &explore.Result{}
		if json.Unmarshal(v.Exploration, f.Exploration) != nil {
			f.Exploration = nil
		}
	}
	if j.Kind == string(jobs.KindExploration) {
		fs, err := c.store.Findings(ctx, s.Tenant.ID, j.ID)
		if err != nil {
			return f, err
		}
		for _, x := range fs {
			v := findingView{FindingView: api.FindingViewOf(x)}
			_ = json.Unmarshal(v.FindingView.Evidence, &v.Evidence)
			if len(v.FindingView.Reproduction) > 0 {
				v.Repro = &explore.Reproduction{}
				if json.Unmarshal(v.FindingView.Reproduction, v.Repro) != nil {
					v.Repro = nil
				}
			}
			f.Findings = append(f.Findings, v)
		}
	}
	h, err := c.store.History(ctx, s.Tenant.ID, j.ID)
	if err != nil {
		return f, err
	}
	if len(h) > maxHistory {
		f.HistoryMore, h = len(h)-maxHistory, h[:maxHistory]
	}
	f.History = h
	return f, nil
}

// spec downloads the job's spec.
func (c *Console) spec(w http.ResponseWriter, r *http.Request, s session) {
	j, ok := c.loadJob(w, r, s)
	if !ok {
		return
	}
	if j.Script == "" {
		c.notFound(w, r, s, "This job has no spec yet.")
		return
	}
	w.Header().Set("Content-Type", "text/typescript; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+safeFile(jobTitle(api.ListView(j)))+`.spec.ts"`)
	_, _ = w.Write([]byte(j.Script))
}

// patch downloads a project repair's verified patch, for git apply.
func (c *Console) patch(w http.ResponseWriter, r *http.Request, s session) {
	j, ok := c.loadJob(w, r, s)
	if !ok {
		return
	}
	var res suite.ProjectRepairResult
	_ = json.Unmarshal(j.Result, &res)
	if j.Kind != string(jobs.KindProjectRepair) || res.Repair.Diff == "" {
		c.notFound(w, r, s, "This job has no verified patch.")
		return
	}
	w.Header().Set("Content-Type", "text/x-diff; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+safeFile(res.Project+" "+j.ID)+`.diff"`)
	_, _ = w.Write([]byte(res.Repair.Diff))
}

// safeFile makes a name fit for a downloaded file's.
func safeFile(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 60 {
			break
		}
	}
	if out := strings.Trim(b.String(), "-"); out != "" {
		return out
	}
	return "job"
}

// artifact serves a file of the tenant's job: a picture, a report, a trace.
func (c *Console) artifact(w http.ResponseWriter, r *http.Request, s session) {
	kind, content, err := c.store.Artifact(r.Context(), s.Tenant.ID, r.PathValue("id"), r.PathValue("name"))
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, s, "No such file of a job of yours (pictures, reports and traces are kept for a while, then deleted).")
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "private, max-age=86400")
	api.ServeArtifact(w, kind, r.PathValue("name"), content)
}

func (c *Console) cancel(w http.ResponseWriter, r *http.Request, s session) {
	_, err := c.store.RequestCancel(r.Context(), s.Tenant.ID, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, s, "No job of yours has this id.")
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/console/jobs/"+url.PathEscape(r.PathValue("id")), http.StatusSeeOther)
}

type creditsData struct {
	page
	Account store.Account
	Ledger  []store.Entry
}

func (c *Console) credits(w http.ResponseWriter, r *http.Request, s session) {
	acct, err := c.store.Account(r.Context(), s.Tenant.ID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	ledger, err := c.store.Ledger(r.Context(), s.Tenant.ID, 200)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "credits", creditsData{page: s.page("Credits"), Account: acct, Ledger: ledger})
}

type testsData struct {
	page
	Tests []store.Test
}

func (c *Console) tests(w http.ResponseWriter, r *http.Request, s session) {
	list, err := c.store.Tests(r.Context(), s.Tenant.ID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "tests", testsData{page: s.page("Suite"), Tests: list})
}

type testData struct {
	page
	Test     store.Test
	Versions []store.TestVersion
}

func (c *Console) test(w http.ResponseWriter, r *http.Request, s session) {
	t, err := c.store.GetTest(r.Context(), s.Tenant.ID, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, s, "No test of yours has this id.")
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	versions, err := c.store.TestVersions(r.Context(), s.Tenant.ID, t.ID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	// The list leaves out the diffs; the latest versions are read whole.
	for i := range versions[:min(len(versions), maxVersionDiffs)] {
		if versions[i], err = c.store.GetTestVersion(r.Context(), s.Tenant.ID, t.ID, versions[i].Version); err != nil {
			c.fail(w, r, err)
			return
		}
	}
	c.render(w, r, http.StatusOK, "test", testData{page: s.page(t.Name), Test: t, Versions: versions})
}

// maxVersionDiffs is how many of a test's latest versions show their diff.
const maxVersionDiffs = 20

// decide accepts or rejects a proposed version, as the API does.
func (c *Console) decide(w http.ResponseWriter, r *http.Request, s session) {
	decision := r.PathValue("decision")
	n, err := strconv.Atoi(r.PathValue("v"))
	if (decision != "accept" && decision != "reject") || err != nil || n < 1 {
		c.notFound(w, r, s, "No such version.")
		return
	}
	_, err = c.store.DecideVersion(r.Context(), s.Tenant.ID, r.PathValue("id"), n, decision == "accept")
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.notFound(w, r, s, "No test of yours has this version.")
		return
	case errors.Is(err, store.ErrConflict):
		http.Error(w, fmt.Sprintf("version %d is not proposed; only a proposed version can be accepted or rejected", n), http.StatusConflict)
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/console/tests/"+url.PathEscape(r.PathValue("id")), http.StatusSeeOther)
}

// htmlReport serves a file of a project run's html report from its zip,
// so that the report opens in the browser. What it shows is the
// customer's tests' output: the page is sandboxed (an origin of its own,
// no cookie, no form), its scripts and styles are the report's inline
// ones. Its screenshots and traces open from the downloaded report
// (npx playwright show-report).
func (c *Console) htmlReport(w http.ResponseWriter, r *http.Request, s session) {
	_, content, err := c.store.Artifact(r.Context(), s.Tenant.ID, r.PathValue("id"), suite.HTMLArtifact)
	if errors.Is(err, store.ErrNotFound) {
		c.notFound(w, r, s, "This job has no html report (a project run has one once its files have run).")
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	name := cmp.Or(r.PathValue("path"), "index.html")
	zr, err := zip.NewReader(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		c.fail(w, r, fmt.Errorf("the html report of %s: %w", r.PathValue("id"), err))
		return
	}
	f, err := zr.Open(name)
	if err != nil {
		c.notFound(w, r, s, "The html report has no such file.")
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Security-Policy", "sandbox allow-scripts allow-popups allow-downloads; default-src 'none'; "+
		"script-src 'unsafe-inline' 'unsafe-eval' blob: data:; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; "+
		"connect-src data: blob:; worker-src blob: data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Content-Type", cmp.Or(mime.TypeByExtension(path.Ext(name)), "application/octet-stream"))
	_, _ = io.Copy(w, f)
}
