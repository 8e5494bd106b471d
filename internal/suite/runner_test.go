package suite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/sandbox"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
	"github.com/webpilot/webpilot/internal/testslot"
)

// loadProject reads a corpus project.
func loadProject(t *testing.T, name string) suite.Project {
	t.Helper()
	p, err := suitetest.Project(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// corpusProject is a corpus project without the files dropped and with
// the files set.
func corpusProject(t *testing.T, name string, set map[string][]byte, drop ...string) suite.Project {
	t.Helper()
	files, err := suitetest.Files(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range drop {
		delete(files, f)
	}
	maps.Copy(files, set)
	p, err := suite.NewProject(files)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// shoppingProject is the corpus's shopping project with one grocery, not
// three: its adding tests share every call and each waits out the same
// timeouts, so the repair tests spend less of the machine on them. The
// sign-in file, which the variants leave passing, is kept when asked.
func shoppingProject(t *testing.T, signIn bool) suite.Project {
	t.Helper()
	var drop []string
	if !signIn {
		drop = append(drop, "tests/login.spec.js")
	}
	return corpusProject(t, "shopping", map[string][]byte{"data/groceries.json": []byte(`["Milk"]`)}, drop...)
}

type bench struct {
	app    *demoapp.App
	url    string
	runner suite.ProjectRunner
	proxy  *netguard.Proxy
}

// setup serves the demo app for a project's runs; their egress proxy lets
// them reach it and the hosts of also.
func setup(t *testing.T, also ...string) *bench {
	t.Helper()
	testslot.Take(t)
	app := demoapp.New(demoapp.Options{})
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	sb, err := sandbox.New(sandbox.Config{Runner: browsertest.RunnerDir(), EqualPriority: true})
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{strings.TrimPrefix(srv.URL, "http://")}
	for _, u := range also {
		hosts = append(hosts, strings.TrimPrefix(u, "http://"))
	}
	policy := netguard.New(hosts)
	proxy, err := netguard.NewProxy(policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	return &bench{app: app, url: srv.URL, proxy: proxy, runner: suite.ProjectRunner{Sandbox: sb}}
}

func (b *bench) run(t *testing.T, p suite.Project, o suite.RunOptions) suite.RunReport {
	t.Helper()
	testslot.Take(t)
	tun := b.proxy.Open()
	t.Cleanup(tun.Close)
	if err := tun.Remap(o.Origins); err != nil {
		t.Fatal(err)
	}
	o.BaseURL = b.url
	o.Proxy = &suite.Proxy{Addr: strings.TrimPrefix(b.proxy.Server(), "http://"), Username: tun.User, Password: tun.Password}
	env := map[string]string{"E2E_PASSWORD": demoapp.Password}
	maps.Copy(env, o.Env)
	o.Env = env
	rep, err := b.runner.Run(context.Background(), p, o)
	t.Cleanup(func() { _ = os.RemoveAll(rep.Dir) })
	if err != nil {
		t.Fatalf("run: %v\n%s", err, rep.Output)
	}
	return rep
}

// outside runs the project the way its owner does, with npx playwright
// test and its own config, outside any sandbox: the reference verdicts.
func outside(t *testing.T, p suite.Project, baseURL string, only ...string) map[string]suite.TestStatus {
	testslot.Take(t)
	t.Helper()
	browsers := t.TempDir()
	if err := suitetest.BrowsersPath(browsers, browsertest.RunnerDir()); err != nil {
		t.Fatal(err)
	}
	rep, err := suitetest.Outside(context.Background(), p, t.TempDir(), browsertest.RunnerDir(), browsers,
		map[string]string{"BASE_URL": baseURL, "E2E_PASSWORD": demoapp.Password}, []string{"chromium"}, only...)
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]suite.TestStatus{}
	for _, o := range rep.Tests {
		v[o.File+" "+o.Title()] = o.Status
	}
	return v
}

// agree fails the test for each test whose verdict in the sandbox (rep)
// differs from npx playwright test's (ref, by outside). One flaky on one
// side only is first run once more there, alone: a fixture's short waits
// can run out on a machine the other tests load, on either side, while a
// difference the sandbox makes repeats.
func (b *bench) agree(t *testing.T, p suite.Project, rep suite.RunReport, ref map[string]suite.TestStatus) {
	t.Helper()
	got := verdicts(rep)
	for _, o := range rep.Tests {
		k := o.File + " " + o.Title()
		if got[k] == ref[k] || (got[k] != "flaky" && ref[k] != "flaky") {
			continue
		}
		site := suite.TestSite{File: o.File, Line: o.Line}
		if got[k] == "flaky" {
			t.Logf("%s: flaky in the sandbox (%s), %q outside: run again", k, firstLine(o.Error), ref[k])
			got[k] = verdicts(b.run(t, p, suite.RunOptions{Only: []suite.TestSite{site}}))[k]
		} else {
			t.Logf("%s: %q in the sandbox, flaky outside: run again", k, got[k])
			ref[k] = outside(t, p, b.url, fmt.Sprintf("%s:%d", o.File, o.Line))[k]
		}
	}
	for k, v := range ref {
		if got[k] != v {
			t.Errorf("%s: %q in the sandbox, %q under npx playwright test", k, got[k], v)
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func verdicts(rep suite.RunReport) map[string]suite.TestStatus {
	v := map[string]suite.TestStatus{}
	for _, o := range rep.Tests {
		v[o.File+" "+o.Title()] = o.Status
	}
	return v
}

func TestAProjectRunsAsItsOwnerRunsIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := loadProject(t, "shopping")

	listed := b.run(t, p, suite.RunOptions{List: true})
	var titles []string
	for _, o := range listed.Tests {
		titles = append(titles, o.File+" › "+o.Title())
	}
	want := []string{
		"tests/list.spec.ts › shopping list › starts with bread",
		"tests/list.spec.ts › shopping list › adds Milk",
		"tests/list.spec.ts › shopping list › adds Eggs",
		"tests/list.spec.ts › shopping list › adds Apples",
		"tests/list.spec.ts › shopping list › deletes bread",
		"tests/login.spec.js › signs in",
		"tests/login.spec.js › remembers the choice",
	}
	slices.Sort(titles)
	slices.Sort(want)
	if !slices.Equal(titles, want) || len(listed.Errors) > 0 {
		t.Fatalf("listed %q (errors %v), want %q", titles, listed.Errors, want)
	}

	// The runs are of one grocery: the loop's other two tests make the
	// same calls, and under the regression each failing test restarts the
	// runner's browser.
	p = shoppingProject(t, true)
	for _, tc := range []struct {
		name    string
		variant []demoapp.Variation
		failing []string
	}{
		{"as written", nil, nil},
		{"a regression", []demoapp.Variation{demoapp.WrongCount}, []string{"adds Milk", "starts with bread", "deletes bread"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := b.app.SetVariant(tc.variant...); err != nil {
				t.Fatal(err)
			}
			rep := b.run(t, p, suite.RunOptions{Trace: true})
			got := verdicts(rep)
			ref := outside(t, p, b.url)
			b.agree(t, p, rep, ref)
			if len(got) != len(ref) || len(got) != 5 {
				t.Errorf("%d verdicts in the sandbox, %d outside, want 5: %v", len(got), len(ref), got)
			}
			for _, o := range rep.Tests {
				failing := slices.ContainsFunc(tc.failing, func(s string) bool { return strings.HasSuffix(o.Title(), s) })
				if failing != (o.Status == "failed") {
					t.Errorf("%s: %s (%s)", o.Title(), o.Status, o.Error)
				}
				if _, err := os.Stat(filepath.Join(o.RunDir, o.Trace)); o.Status != "skipped" && err != nil {
					t.Errorf("%s: no trace (%v)", o.Title(), err)
				}
			}
		})
	}
}

// TestARepairsFirstRunTracesOnlyWhatFails: recording a passing test's
// trace is most of what tracing costs, and a repair's first run reads the
// failing tests' only. With a retry only the failing test's retry is
// traced; without one only its trace is kept. Either way its failing call
// is read from it, as from a run that traces everything.
func TestARepairsFirstRunTracesOnlyWhatFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const spec = `const { test, expect } = require('@playwright/test');
test('passes', async ({ page }) => {
  await page.goto('/list');
  await expect(page.locator('#count')).toHaveText('1 item');
});
test('fails', async ({ page }) => {
  await page.goto('/list');
  await expect(page.locator('#count')).toHaveText('9 items');
});
`
	for _, c := range []struct {
		retries  int
		failures bool
		passing  bool // the passing test has a trace
	}{{0, true, false}, {1, true, false}, {1, false, true}} {
		t.Run(fmt.Sprintf("retries %d, failures only %v", c.retries, c.failures), func(t *testing.T) {
			p, err := suite.NewProject(map[string][]byte{
				"playwright.config.js": []byte(fmt.Sprintf("module.exports = { testDir: 'tests', retries: %d, expect: { timeout: 1000 }, use: { baseURL: process.env.BASE_URL } };\n", c.retries)),
				"tests/count.spec.js":  []byte(spec),
			})
			if err != nil {
				t.Fatal(err)
			}
			rep := b.run(t, p, suite.RunOptions{Trace: true, TraceFailures: c.failures})
			if len(rep.Tests) != 2 {
				t.Fatalf("%d tests: %+v", len(rep.Tests), rep.Tests)
			}
			for _, o := range rep.Tests {
				if err := o.Evidence(); err != nil {
					t.Fatalf("%s: %v", o.Title(), err)
				}
				switch o.Title() {
				case "passes":
					if o.Status != "passed" || (o.Trace != "") != c.passing {
						t.Errorf("the passing test: %s, trace %q", o.Status, o.Trace)
					}
				case "fails":
					if o.Status != "failed" || o.Trace == "" || o.Failure == nil || o.Failure.Selector != "#count" || o.Failure.Line != 8 {
						t.Errorf("the failing test: %s, trace %q, failure %+v", o.Status, o.Trace, o.Failure)
					}
				}
			}
		})
	}
}

// depsCache is where tests install lockfiles' packages: the worker's own
// default, so one installation serves every test run on a machine.
func depsCache(t *testing.T) *suite.Deps {
	t.Helper()
	return &suite.Deps{Dir: suite.DefaultDepsDir()}
}

func TestALockfilesPackagesAreInstalledAndUsed(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	b := setup(t)
	b.runner.Deps = depsCache(t)
	p := loadProject(t, "dotenv")

	// Without a dependency cache the project is refused, naming its lockfile.
	bare := suite.ProjectRunner{Sandbox: b.runner.Sandbox}
	rep, err := bare.Run(context.Background(), p, suite.RunOptions{List: true})
	_ = os.RemoveAll(rep.Dir)
	var pe *suite.ProjectError
	if !errors.As(err, &pe) || pe.Path != "package-lock.json" {
		t.Fatalf("without a cache: %v, want a problem of package-lock.json", err)
	}

	// dotenv, from the lockfile, loads the project's .env.e2e in its config:
	// E2E_USER and GREETING come from there.
	rep = b.run(t, p, suite.RunOptions{})
	got := verdicts(rep)
	ref := outside(t, p, b.url)
	for _, o := range rep.Tests {
		if o.Status != "passed" {
			t.Logf("%s: %s", o.Title(), o.Error)
		}
	}
	if len(got) != 5 || len(ref) != 5 {
		t.Fatalf("%d verdicts in the sandbox, %d outside, want 5: %v %v", len(got), len(ref), got, ref)
	}
	b.agree(t, p, rep, ref)
	for k, v := range ref {
		if v != "passed" {
			t.Errorf("%s: %q under npx playwright test, want passed", k, v)
		}
	}
}

func TestALockfileReachesOnlyTheRegistry(t *testing.T) {
	t.Parallel()
	base, err := suitetest.Files("dotenv")
	if err != nil {
		t.Fatal(err)
	}
	d := &suite.Deps{Dir: t.TempDir()}
	for _, tc := range []struct {
		name, lockfile, want string
	}{
		{"another host", `{"lockfileVersion":3,"packages":{"":{},"node_modules/@playwright/test":{"version":"1.52.0","resolved":"https://registry.npmjs.org/@playwright/test/-/test-1.52.0.tgz","integrity":"sha512-x"},"node_modules/x":{"version":"1.0.0","resolved":"http://169.254.169.254/latest/meta-data.tgz","integrity":"sha512-x"}}}`,
			"the package x resolves to \"http://169.254.169.254/latest/meta-data.tgz\", not to the registry"},
		{"a git repository", `{"lockfileVersion":3,"packages":{"":{},"node_modules/@playwright/test":{"version":"1.52.0","resolved":"git+ssh://git@github.com/a/b.git#abc","integrity":"sha512-x"}}}`,
			"the package @playwright/test resolves to \"git+ssh://git@github.com/a/b.git#abc\""},
		{"a link", `{"lockfileVersion":3,"packages":{"":{},"node_modules/@playwright/test":{"resolved":"../../etc","link":true}}}`,
			"the package @playwright/test is a link"},
		{"a local path", `{"lockfileVersion":3,"packages":{"":{},"../secrets":{"version":"1.0.0"}}}`,
			"is not installed from the registry"},
		{"no integrity", `{"lockfileVersion":3,"packages":{"":{},"node_modules/@playwright/test":{"version":"1.52.0","resolved":"https://registry.npmjs.org/@playwright/test/-/test-1.52.0.tgz"}}}`,
			"the package @playwright/test has no integrity hash"},
		{"version 1", `{"lockfileVersion":1,"dependencies":{}}`, "lockfileVersion 1 is not supported"},
		{"no runner", `{"lockfileVersion":3,"packages":{"":{}}}`, "@playwright/test is not among its packages"},
		{"not JSON", `lockfile`, "is not a lockfile npm reads"},
		{"a package the registry lacks", `{"lockfileVersion":3,"packages":{"":{"devDependencies":{"@playwright/test":"1.52.0","webpilot-no-such-package-7f3a":"1.0.0"}},"node_modules/@playwright/test":{"version":"1.52.0","resolved":"https://registry.npmjs.org/@playwright/test/-/test-1.52.0.tgz","integrity":"sha512-uh6W7sb55hl7D6vsAeA+V2p5JnlAqzhqFyF0VcJkKZXkgnFcVG9PziERRHQfPLfNGx1C292a4JqbWzhR8L4R1g=="},"node_modules/webpilot-no-such-package-7f3a":{"version":"1.0.0","resolved":"https://registry.npmjs.org/webpilot-no-such-package-7f3a/-/webpilot-no-such-package-7f3a-1.0.0.tgz","integrity":"sha512-AAAA"}}}`,
			"the registry has no https://registry.npmjs.org/webpilot-no-such-package-7f3a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := maps.Clone(base)
			files["package-lock.json"] = []byte(tc.lockfile)
			p, err := suite.NewProject(files)
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Install(context.Background(), p)
			var pe *suite.ProjectError
			if !errors.As(err, &pe) || pe.Path != "package-lock.json" || !strings.Contains(pe.Problem, tc.want) {
				t.Fatalf("got %v, want a problem of package-lock.json saying %q", err, tc.want)
			}
		})
	}
}

// TestARunOfOneFileRunsThatFileOnly: files are named exactly, never as
// the runner's patterns would match them (a suffix, another directory, a
// dot as any character).
func TestARunOfOneFileRunsThatFileOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	files := map[string][]byte{
		"tests/a.spec.js":                []byte("const { test } = require('@playwright/test');\ntest('a', async () => {});\n"),
		"e2e/tests/a.spec.js":            []byte("const { test } = require('@playwright/test');\ntest('nested a', async () => {});\n"),
		"tests/xa.spec.js":               []byte("const { test } = require('@playwright/test');\ntest('xa', async () => {});\n"),
		"tests/a.spec.js.orig/b.spec.js": []byte("const { test } = require('@playwright/test');\ntest('b', async () => {});\n"),
		"playwright.config.js":           []byte("module.exports = { testDir: '.' };\n"),
	}
	p, err := suite.NewProject(files)
	if err != nil {
		t.Fatal(err)
	}
	rep := b.run(t, p, suite.RunOptions{List: true, Files: []string{"tests/a.spec.js"}})
	if len(rep.Tests) != 1 || rep.Tests[0].File != "tests/a.spec.js" {
		t.Fatalf("listed %+v", rep.Tests)
	}
	// What a run of it may take comes with the listing: the runner's
	// default timeout, no retries.
	if tc := rep.Tests[0]; tc.TimeoutMS != 30_000 || tc.Retries != 0 {
		t.Errorf("listed with timeout %d ms and %d retries", tc.TimeoutMS, tc.Retries)
	}
}

func TestATrialRunsTheTestsItNamesOnceEach(t *testing.T) {
	t.Parallel()
	b := setup(t)
	files := map[string][]byte{
		"tests/a.spec.js": []byte(`const { test, expect } = require('@playwright/test');
test('passes on a retry', async ({}, info) => { expect(info.retry).toBeGreaterThan(0); });
test('passes', async () => {});
test('passes on a second retry', async ({}, info) => { expect(info.retry).toBeGreaterThan(1); });
`),
		"playwright.config.js": []byte("module.exports = { testDir: './tests', retries: 2, projects: [{ name: 'one' }, { name: 'two', retries: 2 }] };\n"),
	}
	p, err := suite.NewProject(files)
	if err != nil {
		t.Fatal(err)
	}
	statuses := func(rep suite.RunReport) map[string]suite.TestStatus {
		v := map[string]suite.TestStatus{}
		for _, o := range rep.Tests {
			v[o.Project+" "+o.Title()] = o.Status
		}
		return v
	}
	for _, c := range []struct {
		name string
		o    suite.RunOptions
		want map[string]suite.TestStatus
	}{
		{"as written", suite.RunOptions{}, map[string]suite.TestStatus{
			"one passes on a retry": "flaky", "two passes on a retry": "flaky", "one passes": "passed", "two passes": "passed",
			"one passes on a second retry": "flaky", "two passes on a second retry": "flaky"}},
		{"at most one retry", suite.RunOptions{MaxRetries: 1}, map[string]suite.TestStatus{
			"one passes on a retry": "flaky", "two passes on a retry": "flaky", "one passes": "passed", "two passes": "passed",
			"one passes on a second retry": "failed", "two passes on a second retry": "failed"}},
		{"no retries", suite.RunOptions{NoRetries: true}, map[string]suite.TestStatus{
			"one passes on a retry": "failed", "two passes on a retry": "failed", "one passes": "passed", "two passes": "passed",
			"one passes on a second retry": "failed", "two passes on a second retry": "failed"}},
		{"one test in one project", suite.RunOptions{Only: []suite.TestSite{{File: "tests/a.spec.js", Line: 3}}, Projects: []string{"two"}},
			map[string]suite.TestStatus{"two passes": "passed"}},
	} {
		rep := b.run(t, p, c.o)
		if got := statuses(rep); !maps.Equal(got, c.want) {
			t.Errorf("%s: ran %v, want %v", c.name, got, c.want)
		}
		// A test that failed on an attempt says why, though a retry passed;
		// each reports the retries its config gives it, however many the
		// run allowed (a repair confirms a failure its config retries).
		for _, o := range rep.Tests {
			if failedOnce := o.Status != "passed"; failedOnce != strings.Contains(o.Error, "toBeGreaterThan") {
				t.Errorf("%s: %s %s with the error %q", c.name, o.Project, o.Title(), o.Error)
			}
			if o.Retries != 2 {
				t.Errorf("%s: %s %s reports %d retries, its config 2", c.name, o.Project, o.Title(), o.Retries)
			}
		}
	}
}

// oneSpec is a project of one spec file, tests/one.spec.js (tests after
// the import line), on the run's base URL with more of use's options.
func oneSpec(t *testing.T, use, tests string) suite.Project {
	t.Helper()
	if use != "" {
		use = ", " + use
	}
	p, err := suite.NewProject(map[string][]byte{
		"playwright.config.js": []byte("module.exports = { testDir: 'tests', use: { baseURL: process.env.BASE_URL" + use + " } };\n"),
		"tests/one.spec.js":    []byte("const { test, expect } = require('@playwright/test');\n\n" + tests),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAProjectThatAsksForAWindowRunsHeadless: configs often say headless:
// false (left from debugging at a desk); the sandbox has no display, and
// the full browser asked for a window failed every test there. The
// headless shell the runs use draws none: the tests run and pass.
func TestAProjectThatAsksForAWindowRunsHeadless(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := oneSpec(t, "headless: false", `test('shows the list', async ({ page }) => {
  await page.goto('/list');
  await expect(page.getByRole('heading')).toBeVisible();
});
`)
	rep := b.run(t, p, suite.RunOptions{})
	if len(rep.Tests) != 1 || rep.Tests[0].Status != "passed" {
		t.Fatalf("%+v\n%s", rep.Tests, rep.Output)
	}
}

// TestAProjectThatRecordsVideosRuns: configs often record videos (video:
// 'on', 'retain-on-failure'); the runner's encoder is a download it cannot
// make, and every test of such a project failed before it began. A run
// records none (webpilot never reads one): the tests run and pass, a
// full-page screenshot in an afterEach too.
func TestAProjectThatRecordsVideosRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := oneSpec(t, "video: 'on'", `test.afterEach(async ({ page }, testInfo) => {
  await page.screenshot({ path: testInfo.outputPath('final.png'), fullPage: true });
});

test('shows the list', async ({ page }) => {
  await page.goto('/list');
  await expect(page.getByRole('heading')).toBeVisible();
});
`)
	rep := b.run(t, p, suite.RunOptions{})
	if len(rep.Tests) != 1 || rep.Tests[0].Status != "passed" {
		t.Fatalf("%+v\n%s", rep.Tests, rep.Output)
	}
}

// TestAValueTheTestReadIsTheFailuresEvidence: a test reads the counter's
// text and checks the value itself (no locator assertion fails); the
// evidence is the read whose answer holds the value received (not the
// read after it), with the element it read and the check's error.
func TestAValueTheTestReadIsTheFailuresEvidence(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := oneSpec(t, "", `test('reads the counter', async ({ page }) => {
  await page.goto('/list');
  const text = await page.locator('#count').textContent();
  await page.getByRole('heading').isVisible();
  expect(Number(text.split(' ')[0]), 'the counter').toBe(2);
});
`)
	rep := b.run(t, p, suite.RunOptions{Trace: true})
	if len(rep.Tests) != 1 || rep.Tests[0].Status != "failed" {
		t.Fatalf("%+v", rep.Tests)
	}
	o := rep.Tests[0]
	if err := o.Evidence(); err != nil {
		t.Fatal(err)
	}
	f := o.Failure
	if f == nil || !f.Read || f.Method != "textContent" || f.Line != 5 || f.Target == nil || f.Target.Attributes["id"] != "count" ||
		!strings.Contains(f.Error, "Received: 1") {
		t.Fatalf("failure %+v", f)
	}
}

// TestAnOriginTheTestsNameOutrightIsRemapped: tests that go to a staging
// origin written into them (an https page, the request fixture's http
// API) run against the job's app when the run remaps those origins, and
// fail as written without it: the staging hosts are never reached.
func TestAnOriginTheTestsNameOutrightIsRemapped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p, err := suite.NewProject(map[string][]byte{
		"playwright.config.js": []byte("module.exports = { testDir: 'tests', use: { actionTimeout: 3000 }, expect: { timeout: 2000 } };\n"),
		"tests/staging.spec.js": []byte(`const { test, expect } = require('@playwright/test');

test('the list on staging', async ({ page }) => {
  await page.goto('https://shop.acme.test/list');
  await page.getByRole('textbox', { name: 'New item' }).fill('Milk');
  await page.getByRole('textbox', { name: 'New item' }).press('Enter');
  await expect(page.getByRole('listitem')).toHaveCount(2);
  await expect(page).toHaveURL('https://shop.acme.test/list');
});

test('the API on staging', async ({ request }) => {
  const r = await request.get('http://api.acme.test/list');
  expect(r.status()).toBe(200);
  expect(await r.text()).toContain('Shopping list');
});
`),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		origins map[string]string
		want    suite.TestStatus
	}{
		{"as written", nil, "failed"},
		{"remapped", map[string]string{"https://shop.acme.test": b.url, "http://api.acme.test": b.url}, "passed"},
	} {
		rep := b.run(t, p, suite.RunOptions{Origins: tc.origins})
		if len(rep.Tests) != 2 {
			t.Fatalf("%s: %+v", tc.name, rep.Tests)
		}
		for _, o := range rep.Tests {
			if o.Status != tc.want {
				t.Errorf("%s: %s: %s, want %s (%s)", tc.name, o.Title(), o.Status, tc.want, o.Error)
			}
		}
	}
}

// TestAProjectWithoutALockfileRunsThePlaywrightItAsksFor: a package.json
// that asks for a @playwright/test the worker's own does not satisfy runs
// under that version, from the registry; one the registry cannot provide
// runs under the worker's own, and the run says why; a range the worker's
// own satisfies needs nothing installed.
func TestAProjectWithoutALockfileRunsThePlaywrightItAsksFor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.runner.Deps = depsCache(t)
	project := func(asked string) suite.Project {
		p, err := suite.NewProject(map[string][]byte{
			"package.json":         []byte(`{ "name": "old", "private": true, "devDependencies": { "@playwright/test": "` + asked + `" } }`),
			"playwright.config.js": []byte("module.exports = { testDir: 'tests' };\n"),
			"tests/version.spec.js": []byte(`const { test, expect } = require('@playwright/test');
test('runs under', async ({ page }, info) => {
  await page.setContent('<h1>' + info.config.version + '</h1>');
  console.log('playwright ' + info.config.version);
  expect(info.config.version).toBe(process.env.WANT);
});
`),
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ asked, want, runner string }{
		{"1.51.1", "1.51.1", "@playwright/test 1.51.1, as package.json asks"},
		{"^1.40.0", "1.52.0", ""},
		{"9.9.9", "1.52.0", "asks for @playwright/test 9.9.9, a package it asks for cannot be provided"},
	} {
		t.Run(tc.asked, func(t *testing.T) {
			rep := b.run(t, project(tc.asked), suite.RunOptions{Env: map[string]string{"WANT": tc.want}})
			if len(rep.Tests) != 1 || rep.Tests[0].Status != "passed" {
				t.Fatalf("%+v\n%s", rep.Tests, rep.Output)
			}
			if (tc.runner == "") != (rep.Runner == "") || !strings.Contains(rep.Runner, tc.runner) {
				t.Fatalf("runner %q, want %q", rep.Runner, tc.runner)
			}
		})
	}
}

// leftBehind is a project whose own config, in the runner's main process
// at exit, replaces what the host reads after the run (the report, or the
// trace the report names) as HOSTILE says.
func leftBehind(t *testing.T) suite.Project {
	t.Helper()
	p, err := suite.NewProject(map[string][]byte{
		"playwright.config.js": []byte(`const fs = require('fs');
const { execSync } = require('child_process');
module.exports = { testDir: 'tests' };
const report = '/work/.webpilot/report.json';
const fake = (trace) => JSON.stringify({ config: { rootDir: '/work/tests' }, suites: [{ title: 'a.spec.js', file: 'a.spec.js',
  specs: [{ title: 'reads', file: 'a.spec.js', line: 2, column: 1, tests: [{ projectName: '', status: 'unexpected',
    results: [{ status: 'failed', duration: 1, errors: [{ message: 'boom' }], attachments: [{ name: 'trace', path: trace }] }] }] }] }] });
process.on('exit', () => {
  if (!fs.existsSync(report)) return; // a test worker, not the main process
  fs.rmSync(report, { force: true });
  switch (process.env.HOSTILE) {
    case 'zero': fs.symlinkSync('/dev/zero', report); break;
    case 'environ': fs.symlinkSync('/proc/self/environ', report); break;
    case 'fifo': execSync('mkfifo ' + report); break;
    case 'huge': fs.writeFileSync(report, '{"suites":[' + ' '.repeat(80 << 20) + ']}'); break;
    case 'trace-escapes': fs.writeFileSync(report, fake('/work/.webpilot/../../../../../../proc/self/environ')); break;
    case 'trace-link':
      fs.symlinkSync('/proc/self/environ', '/work/.webpilot/trace.zip');
      fs.writeFileSync(report, fake('/work/.webpilot/trace.zip'));
      break;
    case 'trace-fifo':
      execSync('mkfifo /work/.webpilot/trace.zip');
      fs.writeFileSync(report, fake('/work/.webpilot/trace.zip'));
      break;
  }
});
`),
		"tests/a.spec.js": []byte("const { test } = require('@playwright/test');\ntest('reads', async () => {});\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWhatAProjectLeavesBehindIsNeverFollowed: a project's own config can
// replace the report or a trace after the run with a link to /dev/zero
// (which grew the worker until the host killed it), to the worker's own
// environment, a FIFO (which hung the worker's read forever), or a report
// naming a trace outside the run. Each run ends at once with an error
// naming the file, and nothing of the host is read.
func TestWhatAProjectLeavesBehindIsNeverFollowed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := leftBehind(t)
	for _, c := range []struct {
		hostile, wantErr string
	}{
		{"zero", "not a regular file"},
		{"environ", "not a regular file"},
		{"fifo", "not a regular file"},
		{"huge", "larger than the host reads"},
		{"trace-escapes", ""},
		{"trace-link", ""},
		{"trace-fifo", ""},
	} {
		t.Run(c.hostile, func(t *testing.T) {
			start := time.Now()
			rep, err := b.runner.Run(context.Background(), p, suite.RunOptions{List: true, Env: map[string]string{"HOSTILE": c.hostile}})
			t.Cleanup(func() { _ = os.RemoveAll(rep.Dir) })
			if took := time.Since(start); took > time.Minute {
				t.Errorf("the run took %s", took)
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), ".webpilot/report.json") {
					t.Fatalf("err = %v, want one naming the report: %s", err, c.wantErr)
				}
				return
			}
			if err != nil || len(rep.Tests) != 1 {
				t.Fatalf("run: %v (%d tests)\n%s", err, len(rep.Tests), rep.Output)
			}
			o := rep.Tests[0]
			err = o.Evidence()
			if !errors.Is(err, sandbox.ErrUnsafeResult) {
				t.Fatalf("the trace %q was read: %v", o.Trace, err)
			}
			if strings.Contains(fmt.Sprint(err, o), "PATH=") {
				t.Fatalf("the host's environment came back: %v %+v", err, o)
			}
		})
	}
}

// loginApp is a server-rendered login as apps behind a proxy write it: a
// form posting to /authenticate, which answers with a redirect to the
// app's own absolute URL and a session cookie for its own host, and a
// secure page that sends a visitor without it back to the form.
func loginApp(t *testing.T) string {
	t.Helper()
	var self string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(strings.TrimPrefix(self, "http://"), ":")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/login":
			flash := ""
			if r.URL.Query().Get("denied") != "" {
				flash = `<p id="flash">You must login to view the secure area!</p>`
			}
			fmt.Fprintf(w, `<!doctype html><title>Login</title>%s<form method="post" action="/authenticate">
<label>Username <input name="username"></label><label>Password <input type="password" name="password"></label>
<button type="submit">Login</button></form>`, flash)
		case "/authenticate":
			if r.FormValue("username") != "tomsmith" || r.FormValue("password") != "SuperSecretPassword!" {
				http.Redirect(w, r, self+"/login?denied=1", http.StatusFound)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "rack.session", Value: "signed-in", Domain: host, Path: "/", HttpOnly: true})
			http.Redirect(w, r, self+"/secure", http.StatusFound)
		case "/secure":
			if c, err := r.Cookie("rack.session"); err != nil || c.Value != "signed-in" {
				http.Redirect(w, r, self+"/login?denied=1", http.StatusFound)
				return
			}
			fmt.Fprint(w, `<!doctype html><title>Secure Area</title><h2>Secure Area</h2><p id="flash">You logged into a secure area!</p>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	self = srv.URL
	return srv.URL
}

// TestALoginThroughARemappedOriginPassesAsOutside: a suite written
// against https://staging.acme.test, run with that origin remapped to the
// app, signs in as it does when run outside webpilot against the app
// itself. Every such login failed inside: the proxy's Host rewrite made
// the app redirect to its own absolute URL, out of the origin, and the
// session cookie stayed behind.
func TestALoginThroughARemappedOriginPassesAsOutside(t *testing.T) {
	t.Parallel()
	app := loginApp(t)
	p, err := suite.NewProject(map[string][]byte{
		"playwright.config.js": []byte("module.exports = { testDir: 'tests', use: { baseURL: process.env.BASE_URL || 'https://staging.acme.test', actionTimeout: 10000 }, expect: { timeout: 5000 },\n" +
			"  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }] };\n"),
		"tests/login.spec.js": []byte(`const { test, expect } = require('@playwright/test');

test.describe('login', () => {
  test('signs in with a valid account', async ({ page }) => {
    await page.goto('/login');
    await page.getByLabel('Username').fill('tomsmith');
    await page.getByLabel('Password').fill('SuperSecretPassword!');
    await page.getByRole('button', { name: 'Login' }).click();
    await expect(page.locator('#flash')).toContainText('You logged into a secure area!');
    await expect(page).toHaveURL(/\/secure$/);
  });

  test('refuses a wrong password', async ({ page }) => {
    await page.goto('/login');
    await page.getByLabel('Username').fill('tomsmith');
    await page.getByLabel('Password').fill('wrong');
    await page.getByRole('button', { name: 'Login' }).click();
    await expect(page.locator('#flash')).toContainText('You must login');
  });
});
`),
	})
	if err != nil {
		t.Fatal(err)
	}
	ref := outside(t, p, app)
	sb, err := sandbox.New(sandbox.Config{Runner: browsertest.RunnerDir(), EqualPriority: true})
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := netguard.NewProxy(netguard.New([]string{strings.TrimPrefix(app, "http://")}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	tun := proxy.Open()
	t.Cleanup(tun.Close)
	origins := map[string]string{"https://staging.acme.test": app}
	if err := tun.Remap(origins); err != nil {
		t.Fatal(err)
	}
	rep, err := suite.ProjectRunner{Sandbox: sb}.Run(context.Background(), p, suite.RunOptions{Origins: origins,
		Proxy: &suite.Proxy{Addr: strings.TrimPrefix(proxy.Server(), "http://"), Username: tun.User, Password: tun.Password}})
	t.Cleanup(func() { _ = os.RemoveAll(rep.Dir) })
	if err != nil {
		t.Fatalf("run: %v\n%s", err, rep.Output)
	}
	got := verdicts(rep)
	if len(got) != 2 || len(ref) != 2 {
		t.Fatalf("%d verdicts inside, %d outside", len(got), len(ref))
	}
	for k, v := range ref {
		if got[k] != v || v != "passed" {
			t.Errorf("%s: %q inside, %q outside", k, got[k], v)
		}
	}
	for _, o := range rep.Tests {
		if o.Status != "passed" {
			t.Logf("%s: %s", o.Title(), o.Error)
		}
	}
}

// waitingTests is how many tests waitingOut's file has: the size of the
// slow file of a customer's suite that reported nothing. Each failing
// test costs its runner worker a restart (node and a browser).
const waitingTests = 30

// waitingOut is a file of waitingTests tests in which most fail as real
// failures do, each waiting out its timeout (1 s) on an element that is gone, and
// every fourth passes (with all the time it needs on a busy machine); with
// hog, a test that takes 2.5 GB and holds it comes third.
func waitingOut(t *testing.T, config string, hog bool) suite.Project {
	t.Helper()
	var spec strings.Builder
	spec.WriteString("const { test, expect } = require('@playwright/test');\n")
	for i := range waitingTests {
		if hog && i == 2 {
			spec.WriteString("test('case 01b', async () => { const a = []; for (let i = 0; i < 160; i++) { a.push(Buffer.alloc(16 << 20, 1)); await new Promise((r) => setTimeout(r, 20)); } await new Promise(() => {}); });\n")
		}
		if i%4 == 0 {
			fmt.Fprintf(&spec, "test('case %02d', async ({ page }) => { await page.setContent('<h1>Shop</h1>'); await expect(page.getByRole('heading')).toHaveText('Shop'); });\n", i)
		} else {
			fmt.Fprintf(&spec, "test('case %02d', async ({ page }) => { await page.setContent('<h1>Shop</h1>'); await page.locator('#gone-%d').click({ timeout: 1000 }); });\n", i, i)
		}
	}
	p, err := suite.NewProject(map[string][]byte{"tests/slow.spec.js": []byte(spec.String()), "playwright.config.js": []byte(config)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAFileWhoseTestsWaitOutTheirTimeoutsGetsEveryVerdict: tests that
// each wait out their timeout get the verdicts the runner gives outside
// webpilot, the project's own parallelism used; a run whose time budget
// cannot hold them all still reports every test that ended, and names
// the others, whether the runner stopped itself or the sandbox stopped
// the runner.
func TestAFileWhoseTestsWaitOutTheirTimeoutsGetsEveryVerdict(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.runner.Workers = 2
	const config = "module.exports = { testDir: './tests', timeout: 60000, fullyParallel: true, workers: 2, retries: 0, use: { baseURL: process.env.BASE_URL }, projects: [{ name: 'chromium' }] };\n"
	p := waitingOut(t, config, false)
	ref := outside(t, p, b.url)
	if len(ref) != waitingTests {
		t.Fatalf("%d verdicts outside, want %d", len(ref), waitingTests)
	}
	// budget cuts the file partway: half the whole run's time. The
	// runner's start is one worker's start and a listing; after it, each
	// failing test restarts its worker, so the tests take well over half.
	// A fixed 40 s measured the machine: on a loaded one the runner's
	// start alone outlasted it and no test ended.
	budget := 40 * time.Second
	t.Run("whole", func(t *testing.T) {
		start := time.Now()
		rep := b.run(t, p, suite.RunOptions{Files: []string{"tests/slow.spec.js"}})
		budget = (time.Since(start) / 2).Round(time.Second)
		t.Logf("the whole file ran %s: the budget is %s", time.Since(start).Round(time.Second), budget)
		if got := verdicts(rep); !maps.Equal(got, ref) {
			t.Fatalf("inside %v\noutside %v", got, ref)
		}
		if rep.NotRun != 0 || rep.Limit != "" {
			t.Errorf("not run %d, limit %q: %v", rep.NotRun, rep.Limit, rep.Errors)
		}
	})
	// Each case ends before the file can: what ended is as outside, the
	// rest is "not run", and the error says what stopped it.
	check := func(t *testing.T, rep suite.RunReport, why string) {
		t.Helper()
		ended, notRun := 0, 0
		for k, v := range verdicts(rep) {
			switch {
			case v == suite.StatusNotRun:
				notRun++
			case v != ref[k]:
				t.Errorf("%s: %q inside, %q outside", k, v, ref[k])
			default:
				ended++
			}
		}
		if len(rep.Tests) != waitingTests || ended == 0 || notRun == 0 || rep.NotRun != notRun {
			t.Errorf("%d tests, %d ended, %d not run (report says %d): %v", len(rep.Tests), ended, notRun, rep.NotRun, rep.Errors)
		}
		want := fmt.Sprintf("%d of %d tests did not run to their end", notRun, waitingTests)
		if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], why) || !strings.Contains(rep.Errors[0], want) {
			t.Errorf("errors %q, want one naming %q and %q", rep.Errors, why, want)
		}
	}
	t.Run("the runner stops at the run's budget", func(t *testing.T) {
		rep := b.run(t, p, suite.RunOptions{Files: []string{"tests/slow.spec.js"}, Wall: budget})
		if rep.Limit != "time" {
			t.Errorf("limit %q", rep.Limit)
		}
		check(t, rep, fmt.Sprintf("time budget (%s) ended", budget))
	})
	t.Run("the sandbox stops the runner", func(t *testing.T) {
		// The third test takes 2.5 GB: the sandbox stops the whole run
		// before the runner writes its report.
		q := waitingOut(t, strings.Replace(config, "fullyParallel: true, workers: 2", "workers: 1", 1), true)
		sb, err := sandbox.New(sandbox.Config{Runner: browsertest.RunnerDir(), EqualPriority: true, Limits: sandbox.Limits{MemoryBudget: 1200 << 20}})
		if err != nil {
			t.Fatal(err)
		}
		hb := *b
		hb.runner.Sandbox = sb
		rep := hb.run(t, q, suite.RunOptions{Files: []string{"tests/slow.spec.js"}})
		if rep.Limit != "memory" {
			t.Fatalf("limit %q: %v", rep.Limit, rep.Errors)
		}
		got := verdicts(rep)
		if got["tests/slow.spec.js case 01b"] != suite.StatusNotRun {
			t.Errorf("the test the sandbox stopped: %q", got["tests/slow.spec.js case 01b"])
		}
		for _, k := range []string{"case 00", "case 01"} {
			if v, w := got["tests/slow.spec.js "+k], ref["tests/slow.spec.js "+k]; v != w {
				t.Errorf("%s, which ended before: %q inside, %q outside", k, v, w)
			}
		}
		if len(rep.Tests) != waitingTests+1 || rep.NotRun != waitingTests+1-2 {
			t.Errorf("%d tests, %d not run, want %d and %d: %v (%q)", len(rep.Tests), rep.NotRun, waitingTests+1, waitingTests-1, got, rep.Errors)
		}
		if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "memory limit") {
			t.Errorf("errors %q", rep.Errors)
		}
	})
}

// TestARunUsesTheProjectsParallelismUpToItsShare: the runner's workers
// are the project's own setting, never more than the run is given (the
// runner's cap, or a share of it beside other runs).
func TestARunUsesTheProjectsParallelismUpToItsShare(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.runner.Workers = 2
	for _, c := range []struct {
		workers, want string
		share         int
	}{{"4", "2", 0}, {"'50%'", "1", 0}, {"undefined", "2", 0}, {"1", "1", 0}, {"4", "1", 1}, {"undefined", "1", 1}, {"4", "2", 3}} {
		files := map[string][]byte{
			"tests/a.spec.js":      []byte("const { test, expect } = require('@playwright/test');\ntest('workers', async ({}, info) => { expect(info.config.workers).toBe(" + c.want + "); });\n"),
			"playwright.config.js": []byte("module.exports = { testDir: './tests', workers: " + c.workers + " };\n"),
		}
		p, err := suite.NewProject(files)
		if err != nil {
			t.Fatal(err)
		}
		if got := verdicts(b.run(t, p, suite.RunOptions{Workers: c.share})); got["tests/a.spec.js workers"] != "passed" {
			t.Errorf("workers %s, given %d: %v, want %s workers", c.workers, c.share, got, c.want)
		}
	}
}

// TestAReportAlwaysCountsTheTestsItDidNotRun: a run's report says how
// many tests it did not reach, none included (the docs promise the count;
// a run that reached every test left it out).
func TestAReportAlwaysCountsTheTestsItDidNotRun(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(suite.RunReport{})
	if err != nil || !strings.Contains(string(b), `"not_run":0`) {
		t.Fatalf("%s %v", b, err)
	}
}
