package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/playwright-community/playwright-go"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// corpusFiles reads a corpus project as the files map an upload sends.
func corpusFiles(t *testing.T, name string) map[string]string {
	t.Helper()
	raw, err := suitetest.Files(name)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for k, v := range raw {
		files[k] = string(v)
	}
	return files
}

// shoppingFiles is the corpus's shopping project with one grocery, not
// three: the loop's other tests make the same calls and wait out the same
// timeouts under each variant, and every failing test restarts the
// runner's browser.
func shoppingFiles(t *testing.T) map[string]string {
	t.Helper()
	files := corpusFiles(t, "shopping")
	files["data/groceries.json"] = `["Milk"]`
	return files
}

// uploadListed uploads a project's files and waits for its listing to
// succeed.
func (s *stack) uploadListed(t *testing.T, key, name string, files map[string]string) api.ProjectView {
	t.Helper()
	var up api.ProjectView
	s.mustJSON(t, "POST", "/v1/projects/"+name, key, map[string]any{"files": files}, http.StatusCreated, &up)
	if lj := s.waitEnd(t, key, up.ListJob, 2*time.Minute); lj.State != "succeeded" {
		t.Fatalf("listing of %s: %s %s", name, lj.State, lj.Error)
	}
	return up
}

type fileReport struct {
	File    string `json:"file"`
	Verdict string `json:"verdict"`
	Tests   []struct {
		Titles []string `json:"titles"`
		Status string   `json:"status"`
		Line   int      `json:"line"`
		Error  string   `json:"error"`
		// Failure is the failing call, from the trace.
		Failure *struct {
			File     string `json:"file"`
			Line     int    `json:"line"`
			Selector string `json:"selector"`
			Target   *struct {
				Tag  string `json:"tag"`
				Text string `json:"text"`
			} `json:"target"`
		} `json:"failure"`
	} `json:"tests"`
}

// TestACustomersProjectIsListedAndRunAsWritten uploads a project written
// the way customers write them, has the runner list its tests, and runs it
// through the API, queue and worker in the sandbox: one child per file,
// the runner's verdicts, and a regression failing exactly its tests.
func TestACustomersProjectIsListedAndRunAsWritten(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	acmeID, key := s.tenant(t, "acme", 5)
	_, otherKey := s.tenant(t, "other", 5)

	// A bad upload is a 400 naming the file.
	var bad api.ErrorBody
	s.mustJSON(t, "POST", "/v1/projects/shop-e2e", key, map[string]any{"files": map[string]string{"../escape.spec.ts": "x"}},
		http.StatusBadRequest, &bad)
	if len(bad.Fields) != 1 || !strings.Contains(bad.Fields[0].Field, "../escape.spec.ts") {
		t.Fatalf("a bad upload answered %+v", bad)
	}

	var up api.ProjectView
	s.mustJSON(t, "POST", "/v1/projects/shop-e2e", key, map[string]any{"files": shoppingFiles(t)}, http.StatusCreated, &up)
	if up.Files != 6 || len(up.Version) != 64 || up.ListJob == "" {
		t.Fatalf("upload: %+v", up)
	}
	if lj := s.waitEnd(t, key, up.ListJob, 2*time.Minute); lj.State != "succeeded" {
		t.Fatalf("listing: %s %s", lj.State, lj.Error)
	}
	var p api.ProjectView
	s.mustJSON(t, "GET", "/v1/projects/shop-e2e", key, nil, http.StatusOK, &p)
	var listed []struct {
		File   string   `json:"file"`
		Titles []string `json:"titles"`
	}
	if err := json.Unmarshal(p.Tests, &listed); err != nil || len(listed) != 5 {
		t.Fatalf("listed %s (%v)", p.Tests, err)
	}
	s.mustJSON(t, "GET", "/v1/projects/shop-e2e", otherKey, nil, http.StatusNotFound, nil)

	var lastRun api.JobView
	// submit starts a run through the API, or through the CLI as a CI
	// step does when it is given the CLI's arguments.
	submit := func(cli ...string) string {
		t.Helper()
		if len(cli) == 0 {
			var job api.JobView
			s.mustJSON(t, "POST", "/v1/projects/shop-e2e/run", key, map[string]any{"base_url": s.demo,
				"secrets": map[string]string{"E2E_PASSWORD": demoapp.Password}}, http.StatusAccepted, &job)
			return job.ID
		}
		out, err := s.cliAs(buildCmd(t, "webpilot"), key, "SHOP_PASSWORD="+demoapp.Password)(
			append([]string{"project", "run", "shop-e2e", "--base-url", s.demo, "--secret", "E2E_PASSWORD=env:SHOP_PASSWORD"}, cli...)...)
		id := regexp.MustCompile(`submitted project_run (\S+)`).FindStringSubmatch(out)
		// A run with a failing test fails the CI step, as the runner's does.
		if id == nil || err == nil || !strings.Contains(out, "wrote the junit report") {
			t.Fatalf("webpilot project run %v: %v\n%s", cli, err, out)
		}
		return id[1]
	}
	var cliArgs []string
	run := func(variant ...demoapp.Variation) map[string]fileReport {
		t.Helper()
		if err := s.app.SetVariant(variant...); err != nil {
			t.Fatal(err)
		}
		v := s.waitEnd(t, key, submit(cliArgs...), 4*time.Minute)
		lastRun = v
		if v.Suite == nil || v.Suite.Tests != 2 {
			t.Fatalf("run: %s %s %+v", v.State, v.Error, v.Suite)
		}
		out := map[string]fileReport{}
		for _, c := range v.Suite.Children {
			var cv api.JobView
			s.mustJSON(t, "GET", "/v1/jobs/"+c.JobID, key, nil, http.StatusOK, &cv)
			var fr fileReport
			if err := json.Unmarshal(cv.Project, &fr); err != nil {
				t.Fatalf("child %s: %v (%s)", c.JobID, err, cv.Error)
			}
			out[fr.File] = fr
		}
		return out
	}
	asWritten := run()
	for file, fr := range asWritten {
		if fr.Verdict != "passed" {
			t.Errorf("%s as written: %s %+v", file, fr.Verdict, fr.Tests)
		}
	}
	// Each passing test's calls and their targets are kept with the version.
	raw, err := s.store.ProjectFingerprints(context.Background(), acmeID, up.Version)
	var prints map[string][]struct {
		Method string `json:"method"`
		Target *struct {
			Tag string `json:"tag"`
		} `json:"target"`
	}
	if err != nil || json.Unmarshal(raw, &prints) != nil || len(prints) != 5 {
		t.Fatalf("fingerprints kept for %d tests (%v): %.300s", len(prints), err, raw)
	}
	targets := 0
	for _, calls := range prints {
		for _, c := range calls {
			if c.Target != nil {
				targets++
			}
		}
	}
	if targets < 10 {
		t.Errorf("only %d calls kept their target", targets)
	}
	// The regressed run is a CI step's, with the runner's reports written
	// where CI systems read them.
	ci := t.TempDir()
	junit, report, traces := filepath.Join(ci, "junit.xml"), filepath.Join(ci, "playwright-report"), filepath.Join(ci, "traces")
	cliArgs = []string{"--junit", junit, "--html", report, "--traces", traces}
	regressed := run(demoapp.WrongCount)
	cliArgs = nil
	if fr := regressed["tests/login.spec.js"]; fr.Verdict != "passed" {
		t.Errorf("the login file does not touch the count, yet: %+v", fr)
	}
	fr := regressed["tests/list.spec.ts"]
	failed := 0
	for _, tc := range fr.Tests {
		if tc.Status == "failed" {
			failed++
			if !strings.Contains(tc.Error, "items") || tc.Line == 0 {
				t.Errorf("%v: failed without the runner's words or its line: %q line %d", tc.Titles, tc.Error, tc.Line)
			}
			// The trace names the failing call where the customer wrote it: the
			// page object's count check, on the count element as it stood.
			if f := tc.Failure; f == nil || f.File != "pages/ListPage.ts" || f.Line == 0 || f.Selector != "#count" ||
				f.Target == nil || f.Target.Tag != "p" || !strings.Contains(f.Target.Text, " item") {
				t.Errorf("%v: the failing call from the trace: %+v", tc.Titles, f)
			}
		}
	}
	if fr.Verdict != "failed" || failed != 3 {
		t.Errorf("the list file under a regression: %s with %d failing: %+v", fr.Verdict, failed, fr.Tests)
	}
	// Its reports are the runner's own: junit, html, the failing traces.
	checkRunReports(t, s, key, lastRun, regressed, demoapp.Password)
	checkWrittenReports(t, lastRun, junit, report, traces)

	// A miscount is a regression: the repair fails with it and proposes
	// nothing. It follows the run that found it: the login file, which
	// passed there, is not run again.
	for _, bad := range []struct{ run, base, why string }{
		{"run-1", s.demo, "is not a job id"},
		{uuid.NewString(), s.demo, "no such project_run of yours"},
		{lastRun.ID, "http://127.0.0.1:9", "ran at base URL"},
	} {
		var e api.ErrorBody
		s.mustJSON(t, "POST", "/v1/projects/shop-e2e/repair", key, map[string]any{"base_url": bad.base, "after_run": bad.run}, http.StatusBadRequest, &e)
		if len(e.Fields) != 1 || e.Fields[0].Field != "project.after_run" || !strings.Contains(e.Fields[0].Message, bad.why) {
			t.Errorf("after_run %q at %s answered %+v", bad.run, bad.base, e)
		}
	}
	var rj api.JobView
	s.mustJSON(t, "POST", "/v1/projects/shop-e2e/repair", key, map[string]any{"base_url": s.demo, "after_run": lastRun.ID,
		"secrets": map[string]string{"E2E_PASSWORD": demoapp.Password}}, http.StatusAccepted, &rj)
	v := s.waitEnd(t, key, rj.ID, 4*time.Minute)
	if v.State != "failed" || v.Verdict != "app_regression" {
		t.Fatalf("repair under a regression: %s %s (%s)", v.State, v.Verdict, v.Error)
	}
	var after suite.ProjectRepairResult
	must(t, json.Unmarshal(v.Project, &after))
	for _, tc := range after.Repair.Tests {
		if spared := strings.Contains(tc.Reason, "passed in the run this repair follows"); spared != (tc.File == "tests/login.spec.js") ||
			(spared && tc.Verdict != orchestrator.VerdictPassed) {
			t.Errorf("%s %s after the run: %s (%s)", tc.File, tc.Title, tc.Verdict, tc.Reason)
		}
	}
	if len(after.Repair.Tests) != 5 || after.Files != 2 {
		t.Errorf("the repair after the run reports %d tests of %d files", len(after.Repair.Tests), after.Files)
	}
	s.mustJSON(t, "GET", "/v1/jobs/"+rj.ID+"/patch", key, nil, http.StatusConflict, nil)

	// Renamed ids are drift: healed in the page object, verified, proposed.
	if err := s.app.SetVariant(demoapp.RenamedIDs); err != nil {
		t.Fatal(err)
	}
	s.mustJSON(t, "POST", "/v1/projects/shop-e2e/repair", key, map[string]any{"base_url": s.demo,
		"secrets": map[string]string{"E2E_PASSWORD": demoapp.Password}}, http.StatusAccepted, &rj)
	proposed := healedInListPage(t, s.waitEnd(t, key, rj.ID, 4*time.Minute))
	code, diff := s.call(t, "GET", "/v1/jobs/"+rj.ID+"/patch", key, nil)
	if code != http.StatusOK || !strings.Contains(string(diff), "+++ b/pages/ListPage.ts") {
		t.Fatalf("patch: %d %s", code, diff)
	}
	// The console shows the repair: each test's verdict, what was rewritten
	// where, and the patch, which it also hands out as a file.
	code, page := s.consolePage(t, key, "/console/jobs/"+rj.ID)
	page = html.UnescapeString(page)
	for _, want := range []string{"Repair of shop-e2e", "pages/ListPage.ts:", "Download the patch", "+++ b/pages/ListPage.ts", "healed"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("the console's page of the repair (%d) lacks %q", code, want)
		}
	}
	if code, got := s.consolePage(t, key, "/console/jobs/"+rj.ID+"/patch"); code != http.StatusOK || got != string(diff) {
		t.Errorf("the console's patch: %d %q", code, got)
	}
	// A person looks at it all in the console, in Chromium, and accepts the
	// patch there.
	repaired := s.waitEnd(t, key, rj.ID, time.Second)
	consoleWalk(t, s, key, lastRun, repaired, proposed, failingTitle(regressed))
	var accepted api.ProjectView
	s.mustJSON(t, "GET", "/v1/projects/shop-e2e", key, nil, http.StatusOK, &accepted)
	if accepted.Version != proposed || !accepted.Current || accepted.Parent != up.Version {
		t.Fatalf("after Accept in the console, the project is %+v, want version %s", accepted, proposed)
	}
	for file, fr := range run(demoapp.RenamedIDs) {
		if fr.Verdict != "passed" {
			t.Errorf("%s after the accepted repair: %s %+v", file, fr.Verdict, fr.Tests)
		}
	}
}

// consoleWalk signs in to the console in Chromium and opens what a
// customer opens after a run and a repair: the Projects page, the
// project's page with each test's last verdict, the run's page and the
// repair's with its patch, each showing what it charged; then it accepts
// the patch with the repair page's button.
func consoleWalk(t *testing.T, s *stack, key string, run, repair api.JobView, proposed, failing string) {
	t.Helper()
	_, pg := consoleSignIn(t, s, key, "/console/projects")
	text := func(want ...string) { t.Helper(); mainShows(t, pg, want...) }
	text("shop-e2e")
	must(t, pg.GetByRole("link", playwright.PageGetByRoleOptions{Name: "shop-e2e", Exact: playwright.Bool(true)}).First().Click())
	must(t, pg.WaitForURL(s.api.URL+"/console/projects/shop-e2e"))
	text("tests/list.spec.ts", "tests/login.spec.js", "failed", "passed")
	for _, j := range []api.JobView{run, repair} {
		if _, err := pg.Goto(s.api.URL + "/console/jobs/" + j.ID); err != nil {
			t.Fatal(err)
		}
		if j.ChargedCredits <= 0 {
			t.Errorf("the %s job charged nothing", j.Kind)
		}
		text(fmt.Sprintf("%v charged of %v held", j.ChargedCredits, j.HoldCredits))
		if j.ID == run.ID {
			htmlReportShows(t, pg, failing)
		}
	}
	text("Repair of shop-e2e", "Download the patch", "+++ b/pages/ListPage.ts", "healed")
	must(t, pg.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Accept: make it the project's current version"}).Click())
	must(t, pg.WaitForURL(s.api.URL+"/console/projects/shop-e2e"))
	text(short12(proposed))
}

// failingTitle is the title of a failing test of a run.
func failingTitle(files map[string]fileReport) string {
	for _, fr := range files {
		for _, tc := range fr.Tests {
			if tc.Status == "failed" {
				return tc.Titles[len(tc.Titles)-1]
			}
		}
	}
	return ""
}

// mainShows checks that the page's main content shows each of want, and
// answers what it shows.
func mainShows(t *testing.T, pg playwright.Page, want ...string) string {
	t.Helper()
	body, err := pg.Locator("main").InnerText()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s does not show %q:\n%.3000s", pg.URL(), w, body)
		}
	}
	return body
}

func short12(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

// TestAHostileProjectGetsNothingAndTheJobSaysSo runs the hostile project —
// each test one way out of the sandbox — through the whole stack, with the
// stack's own NATS and Postgres, a loopback canary, a data directory and
// another run's files to reach for: every probe comes back empty, and the
// job lists what the egress guard refused of the test code's own HTTP.
func TestAHostileProjectGetsNothingAndTheJobSaysSo(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	_, key := s.tenant(t, "mallory", 5)
	canary, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { _ = canary.Close() })
	data := t.TempDir()
	must(t, os.Chmod(data, 0o755))
	secret, other := filepath.Join(data, "sealing.key"), filepath.Join(data, "other-run.spec.ts")
	must(t, os.WriteFile(secret, []byte("key"), 0o644))
	must(t, os.WriteFile(other, []byte("another tenant's test"), 0o644))
	natsURL, _ := url.Parse(s.queue.Server.ClientURL())
	pgURL, _ := url.Parse(s.dbURL)
	ports := []string{natsURL.Port(), pgURL.Port(), fmt.Sprint(canary.Addr().(*net.TCPAddr).Port)}

	s.uploadListed(t, key, "probes", corpusFiles(t, suitetest.Hostile))
	var job api.JobView
	s.mustJSON(t, "POST", "/v1/projects/probes/run", key, map[string]any{"base_url": s.demo,
		"secrets": map[string]string{"PROBE_SECRET_FILE": secret, "PROBE_OTHER_RUN": other, "PROBE_PORTS": strings.Join(ports, ",")}},
		http.StatusAccepted, &job)
	v := s.waitEnd(t, key, job.ID, 4*time.Minute)
	if v.Suite == nil || v.Suite.Tests != 2 {
		t.Fatalf("run: %s %s %+v", v.State, v.Error, v.Suite)
	}
	probes := 0
	for _, c := range v.Suite.Children {
		var cv api.JobView
		s.mustJSON(t, "GET", "/v1/jobs/"+c.JobID, key, nil, http.StatusOK, &cv)
		var fr struct {
			fileReport
			Errors []string `json:"errors"`
			Limit  string   `json:"limit"`
		}
		if err := json.Unmarshal(cv.Project, &fr); err != nil {
			t.Fatalf("child %s: %v (%s)", c.JobID, err, cv.Error)
		}
		for _, tc := range fr.Tests {
			probes++
			if tc.Status != "passed" {
				t.Errorf("a probe got through: %v: %s", tc.Titles, tc.Error)
			}
		}
		if fr.File == "tests/probes.spec.js" {
			refused := strings.Join(fr.Errors, "\n")
			// (Loopback is not among them: the runner's HTTP client goes to it
			// directly, inside the sandbox, where nothing listens.)
			for _, want := range []string{"the egress guard refused", "169.254.169.254", "10.0.0.1"} {
				if !strings.Contains(refused, want) {
					t.Errorf("the job's report does not list the refusal of %s: %q", want, fr.Errors)
				}
			}
		}
	}
	if probes != 11 {
		t.Errorf("%d probes ran, want 11", probes)
	}
}

// TestASuiteRedOnArrivalIsRepairedFromTheCustomersOwnRun: the app drifted
// before any run on webpilot, so no passing run recorded the elements the
// tests act on. The customer uploads the project, then their CI's last
// green run (JSON report and traces) with the CLI; the repair through the
// API heals the drift from it and proposes a verified patch. A run of
// nothing but sources is a 400 naming the archive; another tenant cannot
// reach the project.
func TestASuiteRedOnArrivalIsRepairedFromTheCustomersOwnRun(t *testing.T) {
	// Not parallel: the package's longest test, run first, before the
	// parallel tests resume, so that make test does not end on it alone.
	bin := buildCmd(t, "webpilot")
	s := newStack(t, 30*time.Second, 0)
	model := llmtest.New(t)
	for range 6 {
		model.Push(llmtest.Reply{Respond: suitetest.ShoppingModel(false), PromptTokens: 1500, CompletionTokens: 20})
	}
	s.startWorker(t, llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"}))
	_, key := s.tenant(t, "redco", 5)
	_, otherKey := s.tenant(t, "other", 5)
	cli := s.cliAs(bin, key)
	if err := s.app.SetVariant(demoapp.RenamedIDs); err != nil {
		t.Fatal(err)
	}
	up := s.uploadListed(t, key, "red-shop", shoppingFiles(t))

	// Their CI's green run, against the release before the drift.
	release := httptest.NewServer(demoapp.New(demoapp.Options{}))
	t.Cleanup(release.Close)
	raw := map[string][]byte{}
	for k, v := range shoppingFiles(t) {
		raw[k] = []byte(v)
	}
	p, err := suite.NewProject(raw)
	must(t, err)
	browsers := t.TempDir()
	must(t, suitetest.BrowsersPath(browsers, browsertest.RunnerDir()))
	ci := t.TempDir()
	green, err := suitetest.Outside(context.Background(), p, ci, browsertest.RunnerDir(), browsers,
		map[string]string{"BASE_URL": release.URL, "E2E_PASSWORD": demoapp.Password}, []string{"chromium"}, "--trace=on")
	if err != nil || len(green.Tests) != 5 {
		t.Fatalf("the customer's run: %v %+v", err, green.Tests)
	}
	must(t, os.Rename(filepath.Join(ci, "reference.json"), filepath.Join(ci, "results.json")))
	out, err := cli("project", "traces", "red-shop", ci)
	if err != nil || !strings.Contains(out, "recorded 5 tests from your run") || strings.Contains(out, "not recorded") {
		t.Fatalf("project traces: %v\n%s", err, out)
	}
	s.mustJSON(t, "POST", "/v1/projects/red-shop/traces", otherKey, api.ProjectTraces{Archive: []byte("x")}, http.StatusNotFound, nil)
	src, err := p.Archive()
	must(t, err)
	var bad api.ErrorBody
	s.mustJSON(t, "POST", "/v1/projects/red-shop/traces", key, api.ProjectTraces{Archive: src}, http.StatusBadRequest, &bad)
	if len(bad.Fields) != 1 || bad.Fields[0].Field != "archive" || !strings.Contains(bad.Fields[0].Message, "no JSON report") {
		t.Fatalf("sources for a run answered %+v", bad)
	}
	// A report of a million empty tests (3 MB, a few KB zipped) once cost
	// the dispatcher over a gigabyte: it is refused by its count, unread.
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	rf, err := zw.Create("results.json")
	must(t, err)
	_, err = rf.Write([]byte(`{"config":{"rootDir":"/ci/tests"},"suites":[{"title":"a","specs":[{"title":"t","tests":[` + strings.Repeat("{},", 999_999) + `{}]}]}]}`))
	must(t, err)
	must(t, zw.Close())
	s.mustJSON(t, "POST", "/v1/projects/red-shop/traces", key, api.ProjectTraces{Archive: zb.Bytes()}, http.StatusBadRequest, &bad)
	if len(bad.Fields) != 1 || bad.Fields[0].Field != `archive["results.json"]` || !strings.Contains(bad.Fields[0].Message, "more than 20000 tests") {
		t.Fatalf("a report of a million tests answered %+v", bad)
	}

	var rj api.JobView
	s.mustJSON(t, "POST", "/v1/projects/red-shop/repair", key, map[string]any{"base_url": s.demo,
		"secrets": map[string]string{"E2E_PASSWORD": demoapp.Password}}, http.StatusAccepted, &rj)
	proposed := healedInListPage(t, s.waitEnd(t, key, rj.ID, 4*time.Minute))
	if n := len(model.Requests()); n != 0 {
		t.Errorf("a repair from the customer's traces asked the agent %d times", n)
	}

	// With neither their run nor a baseline, the worker's agent names the
	// elements: a question a drifted locator, each charged to the repair
	// and shown on the tests it was asked for, no secret in any. Two
	// files fail on the page object's locators, each in a repair of its
	// own: one asks, the other takes its answers.
	// (Another version: what the traces recorded is red-shop's version's.)
	// Its page object spells the demo account's password out beside the
	// locators: the questions show those lines without it, and the patch
	// leaves the line as it is (a file's repair hands the merge its files
	// unredacted).
	coldFiles := shoppingFiles(t)
	coldFiles["README.md"] = "The shopping list's tests.\n"
	coldFiles["tests/pantry.spec.ts"] = `import { test, expect } from '@playwright/test';
import { ListPage } from '../pages/ListPage';

test('stocks the pantry', async ({ page }) => {
  const pantry = new ListPage(page);
  await pantry.goto();
  await pantry.add('Rice');
  await expect(pantry.items).toHaveCount(2);
  await pantry.expectCount(2);
});
`
	const count = "    this.count = page.locator('#count');\n"
	if !strings.Contains(coldFiles["pages/ListPage.ts"], count) {
		t.Fatal("the page object has moved on")
	}
	coldFiles["pages/ListPage.ts"] = strings.Replace(coldFiles["pages/ListPage.ts"], count, count+"    // the demo account: ada, "+demoapp.Password+"\n", 1)
	var cold api.ProjectView
	s.mustJSON(t, "POST", "/v1/projects/cold-shop", key, map[string]any{"files": coldFiles}, http.StatusCreated, &cold)
	if lj := s.waitEnd(t, key, cold.ListJob, 2*time.Minute); lj.State != "succeeded" {
		t.Fatalf("listing: %s %s", lj.State, lj.Error)
	}
	var aj api.JobView
	s.mustJSON(t, "POST", "/v1/projects/cold-shop/repair", key, map[string]any{"base_url": s.demo,
		"secrets": map[string]string{"E2E_PASSWORD": demoapp.Password}}, http.StatusAccepted, &aj)
	done := s.waitEnd(t, key, aj.ID, 4*time.Minute)
	healedInListPage(t, done)
	var agent struct {
		ModelCalls   int   `json:"model_calls"`
		ModelCredits int64 `json:"model_credits_micro"`
		Repair       struct {
			Diff  string `json:"diff"`
			Tests []struct {
				File         string `json:"file"`
				Verdict      string `json:"verdict"`
				ModelCalls   int    `json:"model_calls"`
				ModelCredits int64  `json:"model_credits_micro"`
			} `json:"tests"`
			Changes []struct {
				Agent bool `json:"agent"`
			} `json:"changes"`
		} `json:"report"`
	}
	must(t, json.Unmarshal(done.Project, &agent))
	calls, credits := 0, int64(0)
	pantry := 0
	for _, tc := range agent.Repair.Tests {
		calls, credits = calls+tc.ModelCalls, credits+tc.ModelCredits
		if tc.File == "tests/pantry.spec.ts" && tc.Verdict == string(orchestrator.VerdictHealed) {
			pantry++
		}
	}
	if pantry != 1 {
		t.Errorf("the second file's test is not healed: %s", done.Project)
	}
	for _, c := range agent.Repair.Changes {
		if !c.Agent {
			t.Errorf("a change not the agent's: %s", done.Project)
		}
	}
	asked := model.Requests()
	if calls != 2 || len(asked) != 2 || credits <= 0 || agent.ModelCalls != calls || agent.ModelCredits != credits ||
		done.ChargedCredits*1e6 < float64(credits) {
		t.Errorf("%d calls charged %d on the tests, %d asked; the repair: %d calls, %d micro-credits, charged %v",
			calls, credits, len(asked), agent.ModelCalls, agent.ModelCredits, done.ChargedCredits)
	}
	shown := 0
	for _, r := range asked {
		if strings.Contains(r.Text(), demoapp.Password) {
			t.Errorf("a question to the agent holds the password")
		}
		if strings.Contains(r.Text(), "// the demo account: ada, ") {
			shown++
		}
	}
	if shown == 0 {
		t.Errorf("no question showed the lines around the count's locator")
	}
	for _, l := range strings.Split(agent.Repair.Diff, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && strings.Contains(l, "demo account") {
			t.Errorf("the patch changes the line with the password: %s", l)
		}
	}
	// The console's page of the repair says which tests the agent was
	// asked about (the two questions, whichever file's tests asked them)
	// and what it cost.
	code, jobPage := s.consolePage(t, key, "/console/jobs/"+aj.ID)
	jobPage = html.UnescapeString(jobPage)
	shownCalls := 0
	for _, m := range regexp.MustCompile(`asked the agent (\d+) time\(s\)`).FindAllStringSubmatch(jobPage, -1) {
		n, _ := strconv.Atoi(m[1])
		shownCalls += n
	}
	if shownCalls != 2 {
		t.Errorf("the console's page of the repair shows the tests asking the agent %d times", shownCalls)
	}
	for _, want := range []string{fmt.Sprintf("The agent was asked 2 question(s) about calls no run recorded and forms that ask for more: %s credits",
		strconv.FormatFloat(float64(credits)/1e6, 'f', -1, 64)), "(the agent's element)"} {
		if code != http.StatusOK || !strings.Contains(jobPage, want) {
			t.Errorf("the console's page of the repair (%d) lacks %q", code, want)
		}
	}
	// Adding now needs a quantity: the form no longer submits, and the
	// adding test's check fails. The agent is asked once, about the click
	// that submits (in the page object), gives a value, and the step is
	// written there: the adding test is healed by it, and the console
	// shows it as the agent's step. Only the list's file is repaired, as
	// a customer names the file they know broke: one job, no children.
	if err := s.app.SetVariant(demoapp.NeedsQty); err != nil {
		t.Fatal(err)
	}
	var fj api.JobView
	s.mustJSON(t, "POST", "/v1/projects/cold-shop/repair", key, map[string]any{"base_url": s.demo, "files": []string{"tests/list.spec.ts"},
		"secrets": map[string]string{"E2E_PASSWORD": demoapp.Password}}, http.StatusAccepted, &fj)
	fdone := s.waitEnd(t, key, fj.ID, 4*time.Minute)
	var flow struct {
		ModelCalls int `json:"model_calls"`
		Repair     struct {
			Verified bool `json:"verified"`
			Tests    []struct {
				File    string `json:"file"`
				Title   string `json:"title"`
				Verdict string `json:"verdict"`
			} `json:"tests"`
			Changes []struct {
				File  string `json:"file"`
				New   string `json:"new"`
				Agent bool   `json:"agent"`
			} `json:"changes"`
		} `json:"report"`
	}
	must(t, json.Unmarshal(fdone.Project, &flow))
	healed := 0
	for _, tc := range flow.Repair.Tests {
		if tc.Verdict == string(orchestrator.VerdictHealed) {
			healed++
		}
		if tc.File != "tests/list.spec.ts" {
			t.Errorf("the repair of the list's file reports %s › %s", tc.File, tc.Title)
		}
	}
	if fdone.Suite != nil && len(fdone.Suite.Children) > 0 {
		t.Errorf("the repair of one file fanned out: %+v", fdone.Suite)
	}
	const step = "await this.page.getByLabel('Quantity').fill('2');"
	if fdone.State != "succeeded" || fdone.Verdict != "healed" || !flow.Repair.Verified || healed != 1 || flow.ModelCalls != 1 ||
		len(flow.Repair.Changes) != 1 || flow.Repair.Changes[0].File != "pages/ListPage.ts" || flow.Repair.Changes[0].New != step || !flow.Repair.Changes[0].Agent {
		t.Fatalf("repair of a field the app now requires: %s %s %s: %s", fdone.State, fdone.Verdict, fdone.Error, fdone.Project)
	}
	code, jobPage = s.consolePage(t, key, "/console/jobs/"+fj.ID)
	jobPage = html.UnescapeString(jobPage)
	for _, want := range []string{step + "</code> <span class=\"meta\">(the agent's step)", "asked the agent 1 time(s)"} {
		if code != http.StatusOK || !strings.Contains(jobPage, want) {
			t.Errorf("the console's page of the flow repair (%d) lacks %q", code, want)
		}
	}
	// The console's page of the project shows the proposal beside the upload.
	code, page := s.consolePage(t, key, "/console/projects/red-shop")
	page = html.UnescapeString(page)
	for _, want := range []string{"Project red-shop", proposed[:12], "repair of <code>" + up.Version[:12], "shopping list › starts with bread"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("the console's page of the project (%d) lacks %q", code, want)
		}
	}
}

// healedInListPage checks a shopping project's repair healed its drift
// where the page object defines the locators, verified, and answers the
// version it proposed.
func healedInListPage(t *testing.T, v api.JobView) string {
	t.Helper()
	var rep struct {
		Proposed string `json:"proposed"`
		Repair   struct {
			Verified bool `json:"verified"`
			Changes  []struct {
				File string `json:"file"`
			} `json:"changes"`
		} `json:"report"`
	}
	if err := json.Unmarshal(v.Project, &rep); err != nil || v.State != "succeeded" || v.Verdict != "healed" || !rep.Repair.Verified ||
		len(rep.Proposed) != 64 || len(rep.Repair.Changes) != 2 || rep.Repair.Changes[0].File != "pages/ListPage.ts" {
		t.Fatalf("repair of drift: %s %s %s: %s", v.State, v.Verdict, v.Error, v.Project)
	}
	return rep.Proposed
}

// TestATenantsPlanBoundsEveryRunOfItsTests: a tenant created with
// max_run_seconds has every run of its own tests end within it, below the
// deployment's ceiling: a file whose budget would be minutes runs for
// one, keeps the verdict of the test that finished, names the one it did
// not reach, and reserves browser time for one minute only. A ceiling
// under a minute is a 400 naming the field.
func TestATenantsPlanBoundsEveryRunOfItsTests(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	status, body := s.call(t, "POST", "/v1/admin/tenants", adminToken, []byte(`{"name": "brief", "max_run_seconds": 30}`))
	if status != http.StatusBadRequest || !strings.Contains(string(body), `"max_run_seconds"`) {
		t.Fatalf("a 30 s ceiling: %d %s", status, body)
	}
	var created struct {
		Tenant store.Tenant
		APIKey string `json:"api_key"`
	}
	s.mustJSON(t, "POST", "/v1/admin/tenants", adminToken, map[string]any{"name": "brief", "max_run_seconds": 60}, http.StatusCreated, &created)
	if created.Tenant.MaxRunSeconds != 60 {
		t.Fatalf("created %+v", created.Tenant)
	}
	s.mustJSON(t, "POST", "/v1/admin/tenants/"+created.Tenant.ID+"/credits", adminToken,
		map[string]any{"credits": 5, "idempotency_key": "initial"}, http.StatusOK, nil)
	key := created.APIKey
	files := map[string]string{
		"package.json": `{"name": "brief", "private": true, "devDependencies": {"@playwright/test": "1.52.0"}}`,
		"tests/wait.spec.js": `const { test, expect } = require('@playwright/test');

test('the sign-in page answers', async ({ page }) => {
  await page.goto('/login');
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
});

test('a wait with no end', async ({ page }) => {
  test.setTimeout(0);
  await page.goto('/login');
  await page.waitForTimeout(15 * 60 * 1000);
});
`,
	}
	s.uploadListed(t, key, "brief", files)
	var job api.JobView
	s.mustJSON(t, "POST", "/v1/projects/brief/run", key, map[string]any{"base_url": s.demo}, http.StatusAccepted, &job)
	start := time.Now()
	v := s.waitEnd(t, key, job.ID, 4*time.Minute)
	if took := time.Since(start); took > 3*time.Minute {
		t.Errorf("the run took %s under a one-minute ceiling", took)
	}
	if v.Suite == nil || len(v.Suite.Children) != 1 {
		t.Fatalf("run: %s %s %+v", v.State, v.Error, v.Suite)
	}
	var cv api.JobView
	s.mustJSON(t, "GET", "/v1/jobs/"+v.Suite.Children[0].JobID, key, nil, http.StatusOK, &cv)
	var fr struct {
		fileReport
		Errors []string `json:"errors"`
	}
	if err := json.Unmarshal(cv.Project, &fr); err != nil {
		t.Fatalf("child: %v (%s)", err, cv.Error)
	}
	got := map[string]string{}
	for _, tc := range fr.Tests {
		got[tc.Titles[len(tc.Titles)-1]] = tc.Status
	}
	if got["the sign-in page answers"] != "passed" || got["a wait with no end"] != "not run" {
		t.Fatalf("verdicts %v, errors %q", got, fr.Errors)
	}
	if !strings.Contains(strings.Join(fr.Errors, "\n"), "time budget (1m0s) ended") {
		t.Errorf("the report does not name the tenant's ceiling: %q", fr.Errors)
	}
	// What the file reserved of browser time follows its budget, and it is
	// charged no more than that: one minute.
	if secs, micro, _ := s.browserTime(t, cv.ID); micro > 60*jobs.BrowserSecondMicro {
		t.Errorf("the file was charged %d micro-credits for %.0f s, more than its minute", micro, secs)
	}
}
