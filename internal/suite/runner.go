package suite

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/webpilot/webpilot/internal/chromium"
	"github.com/webpilot/webpilot/internal/sandbox"
)

// ProjectRunner runs a customer's project with the real @playwright/test
// runner, inside the sandbox: the customer's code is never run anywhere
// else. The project's own config is kept and wrapped by webpilot's, which
// only adds where to report, the browser, the job's egress proxy, the base
// URL when the job gives one, and traces.
type ProjectRunner struct {
	// Sandbox runs the runner (required).
	Sandbox *sandbox.Sandbox
	// Chromium is the browser, at a path the sandbox shows (under /usr).
	Chromium string
	// Deps installs the packages of projects that carry a lockfile; a
	// project with a lockfile is refused without it.
	Deps *Deps
	// Workers is the most runner workers (browsers in parallel) a run
	// gets: the project's own workers setting is honoured up to it
	// (default 1).
	Workers int
}

// Proxy is the job's egress proxy and the run's credentials for it.
type Proxy struct {
	Addr               string // host:port on the worker's host
	Username, Password string
}

// RunOptions say what to run and how.
type RunOptions struct {
	// List only lists the tests (the runner's --list), running none.
	List bool
	// Files limits the run to these test files (project-relative).
	Files []string
	// BaseURL, when set, is every project's baseURL.
	BaseURL string
	// Env is added to the runner's environment: the secrets the suite
	// reads from process.env.
	Env map[string]string
	// Proxy is the only way out of the sandbox; nil: no network.
	Proxy *Proxy
	// Trace records a Playwright trace of every test.
	Trace bool
	// Blob writes the runner's blob report too (RunReport.Blob): what a
	// project run's junit and html reports are merged from.
	Blob bool
	// TraceFailures, with Trace, records only what the failing tests did
	// (their retries' traces when the run retries): a repair's first run
	// reads nothing of a passing test's trace.
	TraceFailures bool
	// Only limits the run to the tests defined at these places, in these
	// projects when Projects is set; Files is then not read.
	Only []TestSite
	// Projects limits the run to these of the config's projects.
	Projects []string
	// Workers, when above 0, caps the runner workers below the runner's
	// own cap: a run beside the worker's other runs shares its browsers.
	Workers int
	// Origins are origins the suite names (scheme://host[:port]) that the
	// job sends elsewhere: the tunnel of Proxy remaps them (its opener
	// calls netguard.Tunnel.Remap), and the run accepts the proxy's own
	// certificate for the https ones.
	Origins map[string]string
	// NoRetries runs each test once whatever the config retries: a
	// repair's trials judge a patch on its first attempt.
	NoRetries bool
	// MaxRetries, when above 0, caps the config's retries: a repair's
	// evidence needs one retry to tell a flaky test, not the CI's two.
	MaxRetries int
	// Listing is the project's tests as the runner lists them (with their
	// timeouts), when known: a repair runs each file on its own with the
	// time budget its tests earn.
	Listing []TestOutcome
	// Baseline, for a repair, is a deployment where the suite still
	// passes: tests that failed with no passing run recorded are run there
	// first, for the elements they act on.
	Baseline *Baseline
	// MergedLater, for a repair, says it is one file's of a repair fanned
	// out: its parent runs every repaired file whole with every file's
	// heals merged, so the trials run only the tests they judge (a file
	// whose tests depend on one another still runs whole).
	MergedLater bool
	// Agent, for a repair, is the model asked for the element a failing
	// call meant when nothing recorded it (no passing run, no baseline,
	// no trace of the customer's); nil: such a call is left unrepairable.
	Agent Asker
	// Answers, for one file's repair of a repair fanned out, shares the
	// agent's answers with the other files' repairs: a locator drifted
	// where the files share it (a page object) is asked about once. Nil:
	// the answers are shared within the file only.
	Answers Answers
	// OnProgress, when set, is told how far the run is as its tests start
	// and end (every few seconds at most, never after Run returns).
	OnProgress func(RunProgress)
	// Wall is the run's time budget (0: the sandbox's ceiling, which also
	// caps it). The runner is told to stop a little before it, so that a
	// run that cannot finish still reports every test that ended and
	// names the tests it did not reach.
	Wall time.Duration
	// Ceiling is the tenant's plan's bound on any one run's wall, below
	// the sandbox's (0: the sandbox's): every budget, Wall included, stays
	// within it.
	Ceiling time.Duration
}

// unreached reports whether the runner skipped t though t did not skip
// itself (a test.skip expects to be skipped): a failure before it (a
// serial neighbour, a setup project) or the run's end kept it from running.
func (t TestOutcome) unreached() bool {
	return t.Status == StatusSkipped && t.expected != string(StatusSkipped) && t.expected != ""
}

// TestSite is where a test is defined: its file (project-relative) and
// the line of its test() call.
type TestSite struct {
	File string
	Line int
}

// TestOutcome is one test as the runner reports it.
type TestOutcome struct {
	// ID names the test stably: its file, its projects's name and its
	// title path.
	ID      string   `json:"id"`
	File    string   `json:"file"`
	Line    int      `json:"line"`
	Column  int      `json:"column"`
	Titles  []string `json:"titles"` // describe titles, then the test's
	Project string   `json:"project,omitempty"`
	// Status is the runner's verdict: passed, failed, flaky, skipped.
	Status   TestStatus    `json:"status,omitempty"`
	Duration time.Duration `json:"duration_ns,omitempty"`
	// Error is the last failed attempt's first error: a flaky test's
	// says why its first attempt failed.
	Error string `json:"error,omitempty"`
	// Trace is where the last attempt's trace is inside RunDir (the run's
	// directory on the host, while it exists): read only through
	// ReadTrace, as everything a run leaves is untrusted.
	Trace  string `json:"-"`
	RunDir string `json:"-"`
	// TraceZip is a failing test's trace as the runner wrote it, kept
	// with the run's reports (RunOptions.Blob); TraceFile names it where
	// it is stored for download (an artifact of the file's job).
	TraceZip  []byte `json:"-"`
	TraceFile string `json:"trace_file,omitempty"`
	// TimeoutMS and Retries are the test's own time limit and retries, as
	// its project in the config sets them (a run that retries less still
	// reports the config's): what a run of it may take.
	TimeoutMS int `json:"timeout_ms,omitempty"`
	Retries   int `json:"retries,omitempty"`
	// Failure is the call that failed, from the trace: its call site in
	// the project's source, selector, error and target element.
	Failure *TraceAction `json:"failure,omitempty"`
	// ConsoleErrors are what the page logged as errors (what the egress
	// guard refused is not among them: it is listed apart).
	ConsoleErrors []string `json:"console_errors,omitempty"`
	// Actions are the test's calls with their targets, kept from a passing
	// run for re-locating elements when the app drifts.
	Actions []TraceAction `json:"-"`
	// expected is the status the test expects of itself (skipped for a
	// test.skip): a "skipped" test that expected to run was not reached.
	expected string
	// traceAt is the last attempt's trace as the report names it (a path
	// on the machine that ran it).
	traceAt string
}

// Evidence reads the test's trace into Failure, ConsoleErrors and Actions.
func (t *TestOutcome) Evidence() error {
	if t.Trace == "" {
		return nil
	}
	tr, err := ReadTrace(t.RunDir, t.Trace, sandbox.WorkDir)
	if err != nil {
		return err
	}
	t.Actions = tr.Actions
	// The test's own failure, before its after hooks' (a logout in an
	// afterEach fails too when the test failed before signing in).
	for _, hooks := range []bool{false, true} {
		for i := range tr.Actions {
			if a := tr.Actions[i]; a.Error != "" && a.File != "" && (hooks || !a.afterHook) {
				t.Failure = &a
			}
		}
		if t.Failure == nil && t.Status == StatusFailed {
			// The test timed out during a call: that call never ended.
			for i := range tr.Actions {
				if a := tr.Actions[i]; a.Pending && a.File != "" && (a.Selector != "" || a.checksPage()) && (hooks || !a.afterHook) {
					a.Error = t.Error
					t.Failure = &a
				}
			}
		}
		if t.Failure != nil {
			break
		}
	}
	if t.Failure == nil && t.Status == StatusFailed && valueCheck.MatchString(t.Error) {
		// A value the test read from the page and checked itself: the
		// test stopped at the check, so the value came from a read before
		// it, the last whose answer holds what the check received.
		if got := received.FindStringSubmatch(t.Error); got != nil {
			v := strings.Trim(strings.TrimSpace(got[1]), `"'`)
			for i := len(tr.Actions) - 1; i >= 0; i-- {
				a := tr.Actions[i]
				if readMethods[a.Method] && a.Error == "" && a.Selector != "" && a.File != "" && v != "" && strings.Contains(a.Result, v) {
					a.Error, a.Read = t.Error, true
					t.Failure = &a
					break
				}
			}
		}
	}
	for _, c := range tr.Console {
		if c.Type == "error" && !guardRefusal(c.Text) && len(t.ConsoleErrors) < 20 {
			t.ConsoleErrors = append(t.ConsoleErrors, lastBytes(c.Text, 300))
		}
	}
	return nil
}

// valueCheck is the runner's message for a failed check of a plain value
// (expect(received).toBe(expected)), as opposed to a locator's.
var valueCheck = regexp.MustCompile(`expect\(received\)\.(?:not\.)?\w+\(`)

// readMethods are the calls that read a value from an element.
var readMethods = map[string]bool{"textContent": true, "innerText": true, "innerHTML": true, "inputValue": true, "getAttribute": true,
	"isVisible": true, "isHidden": true, "isChecked": true, "isEnabled": true, "isDisabled": true, "isEditable": true, "count": true,
	"allTextContents": true, "allInnerTexts": true, "boundingBox": true, "evaluate": true, "evalOnSelector": true, "evalOnSelectorAll": true}

// guardRefusal reports a console error the browser logs for what the
// egress guard refused: not the app's.
func guardRefusal(text string) bool {
	return strings.HasPrefix(text, "Failed to load resource") &&
		(strings.Contains(text, "ERR_TUNNEL_CONNECTION_FAILED") || strings.Contains(text, "ERR_BLOCKED_BY_CLIENT") ||
			strings.Contains(text, "ERR_PROXY_CONNECTION_FAILED"))
}

// Title is the test's full title as the runner prints it.
func (t TestOutcome) Title() string { return strings.Join(t.Titles, " › ") }

// RunReport is what one run found.
type RunReport struct {
	Tests []TestOutcome `json:"tests"`
	// Errors are errors outside any test: a file that does not load, a
	// missing module, a broken config.
	Errors []string `json:"errors,omitempty"`
	// Output is the end of what the runner printed.
	Output string `json:"output,omitempty"`
	// Limit names the sandbox limit that ended the run, if one did.
	Limit string `json:"limit,omitempty"`
	// Runner says which @playwright/test ran a project without a lockfile
	// when it is not the worker's own, or why the one asked for is not.
	Runner string `json:"runner,omitempty"`
	// NotRun counts the tests the run did not reach before its time
	// budget ended (each in Tests with status StatusNotRun).
	NotRun int `json:"not_run"`
	// Dir is the run's directory on the host (its traces); the caller
	// removes it.
	Dir string `json:"-"`
	// Blob is the runner's blob report, when asked for and the run wrote
	// one within MaxBlobBytes; BlobProblem says why there is none.
	Blob        []byte `json:"-"`
	BlobProblem string `json:"-"`
}

// reportPath is where the runner writes its JSON report, inside the run's
// directory.
const reportPath = ".webpilot/report.json"

// maxReportBytes bounds the report the host reads (a few MB for hundreds
// of tests with their errors).
const maxReportBytes = 64 << 20

// progressInterval is how often a running run's progress is looked at.
const progressInterval = 2 * time.Second

// outputTail is how much of what a run prints is kept while it runs.
const outputTail = 64 << 10

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.b = append(t.b[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.b) + len(p) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	t.b = append(t.b, p...)
	return n, nil
}

func (t *tail) String() string { return string(t.b) }

// configNames are the config files the runner looks for, in its order.
var configNames = []string{"playwright.config.ts", "playwright.config.js", "playwright.config.mts", "playwright.config.mjs",
	"playwright.config.cts", "playwright.config.cjs"}

// wrapper is webpilot's config around the project's own. Projects on
// other browsers are left out: the worker has Chromium only.
const wrapper = `import { defineConfig } from '@playwright/test';
%s
const wp = JSON.parse(process.env.WEBPILOT_RUN || '{}');
const base = (typeof customer === 'undefined' ? {} : (customer && customer.default) || customer) || {};
const only = (use) => { const b = use && (use.browserName || use.defaultBrowserType); return !b || b === 'chromium'; };
const retries = (n) => (wp.noRetries ? 0 : wp.maxRetries && n > wp.maxRetries ? wp.maxRetries : n);
const cap = wp.workers || 1;
const own = typeof base.workers === 'string' && /^[0-9.]+%%$/.test(base.workers) ? Math.round((cap * parseFloat(base.workers)) / 100) : base.workers;
const timeout = wp.globalTimeout && base.globalTimeout ? Math.min(wp.globalTimeout, base.globalTimeout) : wp.globalTimeout || base.globalTimeout;
// Each project's metadata keeps the retries its config gives it, for the
// report: a run may retry less.
const configured = (p) => ({ ...(p.metadata || base.metadata || {}), webpilotRetries: p.retries === undefined ? base.retries || 0 : p.retries });
const projects = (base.projects || []).filter((p) => only(p.use)).map((p) => ({ ...p, metadata: configured(p), ...(p.retries === undefined ? {} : { retries: retries(p.retries) }) }));
// A repair's first run needs the traces of what fails only: recording a
// passing test's is most of a trace's cost. With a retry the failing
// tests' retries are traced; without one, every test is, and only the
// failing ones' are kept.
const traceMode = (n) => (!wp.traceFailures ? 'on' : n > 0 ? 'on-first-retry' : 'retain-on-failure');
const browser = (use, n) => {
  const out = { ...(use || {}) };
  delete out.channel;
  // The browser's own flags (WebRTC only through the proxy among them)
  // come after the config's, which cannot take them back.
  const lo = out.launchOptions || {};
  out.launchOptions = { ...lo, executablePath: wp.chromium, args: [...(Array.isArray(lo.args) ? lo.args : []), ...wp.chromiumArgs] };
  if (wp.proxy) out.proxy = { server: wp.proxy, username: process.env.WEBPILOT_PROXY_USER, password: process.env.WEBPILOT_PROXY_PASSWORD };
  if (wp.baseURL) out.baseURL = wp.baseURL;
  if (wp.remapsTLS) out.ignoreHTTPSErrors = true;
  // The trace is read for its calls, their DOM snapshots and console: its
  // screencast (a JPEG per paint) is never looked at.
  if (wp.trace) out.trace = { mode: traceMode(n), screenshots: false, snapshots: true, sources: true };
  // A video is never read, costs an encoder per page, and needs the
  // runner's own ffmpeg, which it cannot download: a config that records
  // one (video: 'on') ran no test at all.
  out.video = 'off';
  return out;
};
export default defineConfig({
  ...base,
  projects: base.projects && base.projects.length ? projects.map((p) => ({ ...p, use: browser({ ...(base.use || {}), ...(p.use || {}) }, p.retries === undefined ? retries(base.retries || 0) : p.retries) })) : undefined,
  use: browser(base.use, retries(base.retries || 0)),
  metadata: configured(base),
  reporter: [['json', { outputFile: wp.report }], [wp.progress.reporter, { outputFile: wp.progress.file }], ...(wp.blob ? [['blob', { outputFile: wp.blob }]] : [])],
  outputDir: wp.output,
  retries: retries(base.retries),
  workers: Math.max(1, Math.min(cap, typeof own === 'number' && own > 0 ? own : cap)),
  globalTimeout: timeout,
  webServer: undefined,
  globalSetup: base.globalSetup,
  preserveOutput: 'always',
});
`

// Budget is the time a run of tests may take with this runner's workers
// (or fewer, when workers is above 0), within its sandbox's ceiling.
func (r ProjectRunner) Budget(tests []TestOutcome, workers int) time.Duration {
	return Budget(tests, r.workers(workers), r.ceiling(0))
}

// Wall is the longest one run may take: the sandbox's wall.
func (r ProjectRunner) Wall() time.Duration { return r.ceiling(0) }

// MostWorkers is the most runner workers a run gets.
func (r ProjectRunner) MostWorkers() int { return max(r.Workers, 1) }

// workers is how many runner workers a run gets: the runner's cap, or
// fewer when the run was given fewer.
func (r ProjectRunner) workers(given int) int {
	w := max(r.Workers, 1)
	if given > 0 {
		w = min(w, given)
	}
	return w
}

// ceiling is the most any one run may take: the sandbox's wall, or the
// tenant's (plan) when that is lower.
func (r ProjectRunner) ceiling(tenant time.Duration) time.Duration {
	c := sandbox.DefaultWall
	if r.Sandbox != nil {
		c = r.Sandbox.Wall()
	}
	if tenant > 0 {
		c = min(c, tenant)
	}
	return c
}

// Run runs (or lists) the project's tests. A failing test is not an
// error: its outcome says so; an error is the run itself failing.
func (r ProjectRunner) Run(ctx context.Context, p Project, o RunOptions) (RunReport, error) {
	if r.Sandbox == nil {
		return RunReport{}, sandbox.ErrUnavailable
	}
	dir, err := r.Sandbox.NewRunDir()
	if err != nil {
		return RunReport{}, err
	}
	rep := RunReport{Dir: dir}
	if err := p.WriteTo(dir); err != nil {
		return rep, fmt.Errorf("write the project: %w", err)
	}
	cli := sandbox.RunnerDir + "/node_modules/@playwright/test/cli.js"
	deps := ""
	_, locked := p.File(lockfileName)
	switch {
	case !locked:
		// No lockfile: @playwright/test alone, at the version the project
		// asks for when the runner's own does not satisfy it.
		if deps, rep.Runner, err = r.runnerFor(ctx, p); err != nil {
			return rep, err
		}
		modules := sandbox.RunnerDir + "/node_modules"
		if deps != "" {
			modules, cli = sandbox.DepsDir+"/node_modules", sandbox.DepsDir+"/node_modules/@playwright/test/cli.js"
		}
		if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
			return rep, err
		}
	case r.Deps == nil:
		return rep, &ProjectError{Path: lockfileName, Problem: "this worker installs no lockfile's packages (it has no dependency cache): upload the project without its lockfile to run it with @playwright/test alone"}
	default:
		// The lockfile's own packages, its @playwright/test among them.
		if deps, err = r.Deps.Install(ctx, p); err != nil {
			return rep, err
		}
		if err := os.Symlink(sandbox.DepsDir+"/node_modules", filepath.Join(dir, "node_modules")); err != nil {
			return rep, err
		}
		cli = sandbox.DepsDir + "/node_modules/@playwright/test/cli.js"
	}
	imp := ""
	for _, name := range configNames {
		if _, ok := p.File(name); ok {
			imp = fmt.Sprintf("import * as customer from './%s';", name)
			break
		}
	}
	wrapperName := "webpilot.config.ts"
	if err := os.WriteFile(filepath.Join(dir, wrapperName), []byte(fmt.Sprintf(wrapper, imp)), 0o644); err != nil {
		return rep, err
	}
	if err := os.MkdirAll(filepath.Join(dir, ".webpilot"), 0o755); err != nil {
		return rep, err
	}
	if err := os.WriteFile(filepath.Join(dir, progressReporter), progressJS, 0o644); err != nil {
		return rep, err
	}
	exe := cmp.Or(r.Chromium, chromium.HeadlessShell)
	ceiling := r.ceiling(o.Ceiling)
	wall := min(cmp.Or(o.Wall, ceiling), ceiling)
	settings := map[string]any{"chromium": exe, "chromiumArgs": chromium.Args(), "report": sandbox.WorkDir + "/" + reportPath,
		"output": sandbox.WorkDir + "/.webpilot/results", "trace": o.Trace && !o.List,
		"traceFailures": o.TraceFailures,
		"progress":      map[string]string{"reporter": sandbox.WorkDir + "/" + progressReporter, "file": sandbox.WorkDir + "/" + progressPath},
		"workers":       r.workers(o.Workers),
		"globalTimeout": runnerBudget(wall).Milliseconds()}
	if o.MaxRetries > 0 {
		settings["maxRetries"] = o.MaxRetries
	}
	if o.BaseURL != "" {
		settings["baseURL"] = o.BaseURL
	}
	if o.NoRetries {
		settings["noRetries"] = true
	}
	if o.Blob && !o.List {
		settings["blob"] = sandbox.WorkDir + "/" + blobPath
	}
	for from := range o.Origins {
		if strings.HasPrefix(from, "https:") {
			settings["remapsTLS"] = true
		}
	}
	env := map[string]string{"CI": "1", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1", "FORCE_COLOR": "0"}
	for k, v := range o.Env {
		env[k] = v
	}
	run := sandbox.Run{Dir: dir, Env: env, Deps: deps, Wall: wall}
	if o.Proxy != nil {
		settings["proxy"] = "http://" + sandbox.ProxyAddr
		env["WEBPILOT_PROXY_USER"], env["WEBPILOT_PROXY_PASSWORD"] = o.Proxy.Username, o.Proxy.Password
		run.Egress = o.Proxy.Addr
	}
	b, _ := json.Marshal(settings)
	env["WEBPILOT_RUN"] = string(b)
	run.Args = []string{"/usr/bin/node", cli, "test", "--config", wrapperName}
	if o.List {
		run.Args = append(run.Args, "--list")
	}
	// The runner takes each argument as a case-insensitive regular
	// expression over absolute paths: a file is named exactly, so that
	// tests/login.spec.ts is not also e2e/tests/login.spec.ts.
	for _, p := range o.Projects {
		run.Args = append(run.Args, "--project="+p)
	}
	if len(o.Only) > 0 {
		// file:line names the tests whose test() call is on that line.
		for _, t := range o.Only {
			run.Args = append(run.Args, fmt.Sprintf("^%s$:%d", regexp.QuoteMeta(sandbox.WorkDir+"/"+path.Clean(t.File)), t.Line))
		}
	} else {
		for _, f := range o.Files {
			run.Args = append(run.Args, "^"+regexp.QuoteMeta(sandbox.WorkDir+"/"+path.Clean(f))+"$")
		}
	}
	// What the run prints is kept only as far as it is shown: its end.
	out := &tail{max: outputTail}
	run.Stdout, run.Stderr = out, out
	if o.OnProgress != nil && !o.List {
		stop, done := make(chan struct{}), make(chan struct{})
		go watchProgress(ctx, dir, progressInterval, o.OnProgress, stop, done)
		defer func() { close(stop); <-done }()
	}
	res, err := r.Sandbox.Run(ctx, run)
	rep.Limit = res.Limit
	rep.Output = lastBytes(stripANSI(out.String()), 4000)
	if err != nil {
		return rep, err
	}
	if res.Limit != "" {
		rep.Errors = append(rep.Errors, fmt.Sprintf("%s%s limit: %s", sandboxStopped, res.Limit, res.Reason))
	}
	raw, err := sandbox.ReadResult(ctx, dir, reportPath, maxReportBytes)
	switch {
	case errors.Is(err, os.ErrNotExist) && rep.Limit != "":
		// Stopped before the runner reported: what each test did is in
		// the progress it wrote as the run went.
		prog, perr := sandbox.ReadResult(ctx, dir, progressPath, maxReportBytes)
		if perr != nil || !rep.fromProgress(prog, dir) {
			return rep, fmt.Errorf("the run hit the sandbox's %s limit before it reported: %s", rep.Limit, res.Reason)
		}
		rep.notRun(fmt.Sprintf("%s%s limit (%s)", sandboxStopped, rep.Limit, res.Reason))
		return rep, nil
	case errors.Is(err, os.ErrNotExist):
		return rep, fmt.Errorf("the runner wrote no report (exit %d): %s", res.ExitCode, rep.Output)
	case err != nil:
		// The project's own code replaced the report (a link, a FIFO, a
		// file too large): refused, never read.
		return rep, fmt.Errorf("the run's report %s cannot be read: %w", reportPath, err)
	}
	if err := rep.read(raw, dir, sandbox.WorkDir, locked); err != nil {
		return rep, err
	}
	if rep.budgetEnded() {
		rep.Limit = cmp.Or(rep.Limit, "time")
		rep.notRun(fmt.Sprintf("the run's time budget (%s) ended", wall))
	}
	if o.Blob && !o.List {
		rep.keepFailingTraces(ctx)
		if rep.Blob, err = sandbox.ReadResult(ctx, dir, blobPath, MaxBlobBytes); err != nil {
			rep.BlobProblem = "its blob report cannot be read: " + err.Error()
		}
	}
	return rep, nil
}

// runnerFor is the installation of @playwright/test a project without a
// lockfile runs with: "" for the worker's own, which serves whenever it
// satisfies the version the project's package.json asks for (or none is
// asked); else the version asked, from the registry. When that cannot be
// provided the worker's own runs, and note says why.
func (r ProjectRunner) runnerFor(ctx context.Context, p Project) (dir, note string, err error) {
	f, ok := p.File("package.json")
	if !ok {
		return "", "", nil
	}
	var manifest struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if json.Unmarshal(f.Content, &manifest) != nil {
		return "", "", nil
	}
	asked := cmp.Or(manifest.DevDependencies["@playwright/test"], manifest.Dependencies["@playwright/test"])
	if asked == "" {
		return "", "", nil
	}
	own := installedVersion(filepath.Join(r.Sandbox.Runner(), "node_modules"))
	c, cerr := semver.NewConstraint(asked)
	if v, verr := semver.NewVersion(own); cerr == nil && verr == nil && c.Check(v) {
		return "", "", nil
	}
	fallback := func(why string) (string, string, error) {
		return "", fmt.Sprintf("package.json asks for @playwright/test %s, %s: the worker's own %s ran", asked, why, cmp.Or(own, "version")), nil
	}
	switch {
	case cerr != nil:
		return fallback("which is not a version of the registry's")
	case r.Deps == nil:
		return fallback("and this worker installs no packages")
	}
	dir, err = r.Deps.Runner(ctx, asked)
	if err != nil {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		var pe *ProjectError
		if errors.As(err, &pe) {
			return fallback(pe.Problem)
		}
		return fallback(err.Error())
	}
	return dir, fmt.Sprintf("@playwright/test %s, as package.json asks (%s)", installedVersion(filepath.Join(dir, "node_modules")), asked), nil
}

// installedVersion is the version of the @playwright/test installed in a
// node_modules directory.
func installedVersion(modules string) string {
	b, err := os.ReadFile(filepath.Join(modules, "@playwright", "test", "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(b, &pkg)
	return pkg.Version
}

// report is the part of the runner's JSON report a run reads.
type report struct {
	Config struct {
		RootDir  string `json:"rootDir"`
		Projects []struct {
			Name     string `json:"name"`
			Timeout  int    `json:"timeout"`
			Retries  int    `json:"retries"`
			Metadata struct {
				// Retries is the config's own, when the run retried less.
				Retries *int `json:"webpilotRetries"`
			} `json:"metadata"`
		} `json:"projects"`
	} `json:"config"`
	Suites []reportSuite `json:"suites"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

type reportSuite struct {
	Title  string        `json:"title"`
	File   string        `json:"file"`
	Specs  []reportSpec  `json:"specs"`
	Suites []reportSuite `json:"suites"`
}

type reportSpec struct {
	Title  string `json:"title"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Tests  []struct {
		ProjectName    string `json:"projectName"`
		Status         string `json:"status"` // expected, unexpected, flaky, skipped
		ExpectedStatus string `json:"expectedStatus"`
		Results        []struct {
			Status      string  `json:"status"`
			Duration    float64 `json:"duration"`
			Attachments []struct {
				Name string `json:"name"`
				Path string `json:"path"`
			} `json:"attachments"`
			Errors []struct {
				Message string `json:"message"`
			} `json:"errors"`
		} `json:"results"`
	} `json:"tests"`
}

// ReadReport reads a JSON report of the runner's on a project laid out at
// root (traces are not located).
func ReadReport(raw []byte, root string) (RunReport, error) {
	var rep RunReport
	err := rep.read(raw, "", root, false)
	return rep, err
}

// read reads the runner's report of a run in dir (on the host) of the
// project laid out at root (as the runner saw it); files are named
// relative to the project's root. Locked says the project's packages came
// from its lockfile.
func (rep *RunReport) read(raw []byte, dir, root string, locked bool) error {
	if err := checkReportShape(raw); err != nil {
		return fmt.Errorf("read the runner's report: %w", err)
	}
	var r report
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("read the runner's report: %w", err)
	}
	// The report names files relative to the config's rootDir (its testDir).
	prefix := ""
	if rel, err := filepath.Rel(root, r.Config.RootDir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		prefix = filepath.ToSlash(rel) + "/"
	}
	for _, e := range r.Errors {
		rep.Errors = append(rep.Errors, clearError(stripANSI(e.Message), locked))
	}
	var walk func(s reportSuite, titles []string)
	walk = func(s reportSuite, titles []string) {
		if s.Title != "" && s.Title != s.File {
			titles = append(titles, s.Title)
		}
		for _, sp := range s.Specs {
			for _, t := range sp.Tests {
				o := TestOutcome{File: sp.File, Line: sp.Line, Column: sp.Column, Project: t.ProjectName,
					Titles: append(append([]string(nil), titles...), sp.Title)}
				if o.File == "" {
					o.File = s.File
				}
				o.File = prefix + o.File
				o.ID = testID(o.File, o.Project, o.Titles)
				o.Status, o.expected = verdict(t.Status), t.ExpectedStatus
				for _, pr := range r.Config.Projects {
					if pr.Name == o.Project {
						o.TimeoutMS, o.Retries = pr.Timeout, pr.Retries
						if pr.Metadata.Retries != nil {
							o.Retries = *pr.Metadata.Retries
						}
					}
				}
				for _, res := range t.Results {
					o.Duration += time.Duration(res.Duration * float64(time.Millisecond))
					// The last attempt's error; a flaky test's passing retry
					// has none, and keeps the one that says why it failed.
					if len(res.Errors) > 0 {
						o.Error = lastBytes(stripANSI(res.Errors[0].Message), 2000)
					}
					for _, a := range res.Attachments {
						if a.Name == "trace" {
							o.traceAt = a.Path
						}
						if a.Name == "trace" && strings.HasPrefix(a.Path, sandbox.WorkDir+"/") {
							// Opened beneath the run's directory only (a
							// path with .. or through a link is refused).
							o.Trace, o.RunDir = strings.TrimPrefix(a.Path, sandbox.WorkDir+"/"), dir
						}
					}
				}
				rep.Tests = append(rep.Tests, o)
			}
		}
		for _, c := range s.Suites {
			walk(c, titles)
		}
	}
	for _, s := range r.Suites {
		walk(s, nil)
	}
	return nil
}

// verdict is the runner's word for a test's outcome, as its own summary
// counts it.
func verdict(status string) TestStatus {
	switch status {
	case "expected":
		return StatusPassed
	case "unexpected":
		return StatusFailed
	case "flaky":
		return StatusFlaky
	case "skipped":
		return StatusSkipped
	}
	return TestStatus(status)
}

// testID names a test stably across runs and versions of its file.
func testID(file, project string, titles []string) string {
	h := sha256.Sum256([]byte(file + "\x00" + project + "\x00" + strings.Join(titles, "\x00")))
	return hex.EncodeToString(h[:8])
}

var missingModule = regexp.MustCompile(`Cannot find (?:module|package) '([^']+)'(?: imported from (\S+))?`)

// clearError says a module that cannot be provided the way a person fixes
// it: which package, imported where.
func clearError(msg string, locked bool) string {
	m := missingModule.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	pkg := m[1]
	if !strings.HasPrefix(pkg, ".") && !strings.HasPrefix(pkg, "/") {
		if i := strings.Index(pkg, "/"); i > 0 && !strings.HasPrefix(pkg, "@") {
			pkg = pkg[:i]
		}
		where := m[2]
		if where == "" {
			if i := strings.Index(msg, "\n"); i > 0 {
				where = strings.TrimSpace(msg[i:])
			}
		}
		where = strings.ReplaceAll(where, sandbox.WorkDir+"/", "")
		why := "only @playwright/test is available without a lockfile"
		if locked {
			why = "it is not among the lockfile's packages"
		}
		return fmt.Sprintf("the package %s cannot be provided (imported as %q%s): %s",
			pkg, m[1], strings.TrimSpace(" from "+firstLine(where)), why)
	}
	return strings.ReplaceAll(msg, sandbox.WorkDir+"/", "")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

// ErrNoTests means a project lists no test.
var ErrNoTests = errors.New("the runner lists no test in the project")
