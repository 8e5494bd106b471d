package suite_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/sandbox"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
	"github.com/webpilot/webpilot/internal/testslot"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// TestASuiteRedOnArrivalIsHealedFromItsBaseline: a suite no run on
// webpilot ever saw pass (its first upload is its first failing run) is
// repaired with a baseline where it still passes, the release before the
// drift: each failing test runs there first for the elements it acts on,
// then the repair heals the target as a warm repair does; so does the
// customer's own green run, its report and traces uploaded (without
// either the same repair healed nothing: no passing run recorded the
// elements). A regression is flagged with its evidence whatever the
// baseline, never healed.
func TestASuiteRedOnArrivalIsHealedFromItsBaseline(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	release := httptest.NewServer(demoapp.New(demoapp.Options{}))
	t.Cleanup(release.Close)
	b := setup(t, release.URL)
	p := shoppingProject(t, true)

	t.Run("drift", func(t *testing.T) {
		// Reworded: the list's field and the sign-in button. The sign-in
		// file is serial: its second test was skipped, never seen failing
		// or passing here, and runs and passes with the repair.
		if err := b.app.SetVariant(demoapp.Reworded); err != nil {
			t.Fatal(err)
		}
		rep := b.repairFrom(t, p, nil, release.URL)
		verdicts := map[orchestrator.Verdict]int{}
		for _, tc := range rep.Tests {
			verdicts[tc.Verdict]++
			if tc.Title == "remembers the choice" && (tc.Verdict != orchestrator.VerdictHealed || !strings.Contains(tc.Reason, "skipped while a test it depends on failed")) {
				t.Errorf("%s: %s (%s)", tc.Title, tc.Verdict, tc.Reason)
			}
		}
		if verdicts[orchestrator.VerdictHealed] != 3 || verdicts[orchestrator.VerdictPassed] != 2 || !rep.Verified {
			t.Fatalf("verdicts %v, verified %v: %+v", verdicts, rep.Verified, rep.Tests)
		}
		changed := map[string]string{}
		for _, c := range rep.Changes {
			changed[c.File+" "+c.Old] = c.New
		}
		if changed["pages/ListPage.ts New item"] != "'Item name'" || changed["tests/login.spec.js Sign in"] != "'Log in'" || len(changed) != 2 {
			t.Fatalf("changes %+v", rep.Changes)
		}
		gitApply(t, p, rep.Diff)
	})

	t.Run("drift, from the customer's own traces", func(t *testing.T) {
		// Their CI's green run of the release, with traces, as they keep it.
		browsers := t.TempDir()
		if err := suitetest.BrowsersPath(browsers, browsertest.RunnerDir()); err != nil {
			t.Fatal(err)
		}
		ci := t.TempDir()
		green, err := suitetest.Outside(context.Background(), p, ci, browsertest.RunnerDir(), browsers,
			map[string]string{"BASE_URL": release.URL, "E2E_PASSWORD": demoapp.Password}, []string{"chromium"}, "--trace=on")
		if err != nil || len(green.Tests) != 5 {
			t.Fatalf("the customer's run: %v %+v", err, green.Tests)
		}
		archive, err := suitetest.CIArtifacts(ci)
		if err != nil {
			t.Fatal(err)
		}
		listing := b.run(t, p, suite.RunOptions{List: true}).Tests
		imp, err := suite.ImportTraces(context.Background(), archive, listing)
		if err != nil || len(imp.Recorded) != 5 || len(imp.Prints) != 5 || len(imp.Skipped) != 0 {
			t.Fatalf("imported %v, skipped %+v (%v)", imp.Recorded, imp.Skipped, err)
		}
		if err := b.app.SetVariant(demoapp.RenamedIDs); err != nil {
			t.Fatal(err)
		}
		rep := b.repairFrom(t, p, imp.Prints, "")
		verdicts := map[orchestrator.Verdict]int{}
		for _, tc := range rep.Tests {
			verdicts[tc.Verdict]++
		}
		if verdicts[orchestrator.VerdictHealed] != 3 || verdicts[orchestrator.VerdictPassed] != 2 || !rep.Verified || len(rep.Changes) != 2 {
			t.Fatalf("verdicts %v, verified %v, changes %+v", verdicts, rep.Verified, rep.Changes)
		}
		// A run of another version, or without its traces, gives nothing.
		stale, err := suite.ImportTraces(context.Background(), archive, listing[:3])
		unlisted := 0
		for _, sk := range stale.Skipped {
			if strings.Contains(sk.Why, "listing has no such test") {
				unlisted++
			}
		}
		if err != nil || len(stale.Prints) != 3 || len(stale.Skipped) != 2 || unlisted != 2 {
			t.Errorf("against a listing of 3 tests: recorded %v, skipped %+v (%v)", stale.Recorded, stale.Skipped, err)
		}
		// The project's own files are no run: a 400's words, not a 500's.
		src, err := p.Archive()
		if err != nil {
			t.Fatal(err)
		}
		var pe *suite.ProjectError
		if _, err := suite.ImportTraces(context.Background(), src, listing); !errors.As(err, &pe) || !strings.Contains(err.Error(), "no JSON report") {
			t.Errorf("an archive without a report: %v", err)
		}
	})

	t.Run("regression", func(t *testing.T) {
		if err := b.app.SetVariant(demoapp.WrongCount); err != nil {
			t.Fatal(err)
		}
		rep := b.repairFrom(t, p, nil, release.URL)
		regressions := 0
		for _, tc := range rep.Tests {
			switch tc.Verdict {
			case orchestrator.VerdictHealed:
				t.Errorf("%s was healed", tc.Title)
			case orchestrator.VerdictRegression:
				regressions++
				if tc.Evidence == nil || tc.Evidence.Target == nil || tc.Evidence.File != "pages/ListPage.ts" {
					t.Errorf("%s: a regression without its evidence: %+v", tc.Title, tc.Evidence)
				}
			}
		}
		if regressions != 3 || rep.Patched != nil {
			t.Fatalf("%d regressions: %+v", regressions, rep.Tests)
		}
	})
}

// TestARepairGoesOnPastAFileThatOutlastsItsBudget: the first file's test
// waits for ever (it turned its own timeout off), the second's locator
// drifted. Each file's evidence runs on its own budget: the first is
// reported not run, with why, and the second is healed and verified.
// (One run of both, with one budget, spent it all on the first file.)
func TestARepairGoesOnPastAFileThatOutlastsItsBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The first file outlasts any budget; the budget is what a run of the
	// second's one test needs on a slow machine (a 40 s one left it not
	// run there, its trial cut short).
	sb, err := sandbox.New(sandbox.Config{Runner: browsertest.RunnerDir(), EqualPriority: true, Limits: sandbox.Limits{Wall: 90 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	b.runner.Sandbox = sb
	p, err := suite.NewProject(map[string][]byte{
		"playwright.config.js": []byte("module.exports = { testDir: './tests', timeout: 20000, expect: { timeout: 2000 }, use: { baseURL: process.env.BASE_URL, actionTimeout: 3000 } };\n"),
		"tests/a-hangs.spec.js": []byte("const { test } = require('@playwright/test');\n" +
			"test('waits for ever', async ({ page }) => {\n  test.setTimeout(0);\n  await page.goto('/list');\n  await page.waitForSelector('#never-there', { timeout: 0 });\n});\n"),
		"tests/b-list.spec.js": []byte(listAddsTest),
	})
	if err != nil {
		t.Fatal(err)
	}
	listing := b.run(t, p, suite.RunOptions{List: true}).Tests
	if len(listing) != 2 {
		t.Fatalf("listed %+v", listing)
	}
	prints := listPrints(t, b, p)
	if err := b.app.SetVariant(demoapp.RenamedIDs); err != nil {
		t.Fatal(err)
	}
	o := b.repairOptions(t, nil)
	o.Listing = listing
	got, err := b.runner.Repair(context.Background(), p, prints, o)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]orchestrator.Verdict{}
	for _, tc := range got.Tests {
		verdicts[tc.Title] = tc.Verdict
	}
	if verdicts["waits for ever"] != orchestrator.VerdictNotRun || verdicts["adds an item"] != orchestrator.VerdictHealed || !got.Verified {
		t.Fatalf("verdicts %v, verified %v: %+v", verdicts, got.Verified, got.Tests)
	}
	if len(got.Errors) != 1 || !strings.HasPrefix(got.Errors[0], "tests/a-hangs.spec.js: the run's time budget") {
		t.Errorf("errors %q", got.Errors)
	}
	if len(got.Changes) != 1 || got.Changes[0].New != "'add-entry-btn'" {
		t.Errorf("changes %+v", got.Changes)
	}
}

// TestAFilesRepairInAFannedOutRepairTrialsOnlyWhatItJudges: a file's
// repair whose parent runs every repaired file whole with every file's
// heals merged runs, in its trial, the failing test alone, not the test
// of its file that passed (a repair on its own runs it again with the
// patch, as the parent does); a serial file runs whole, its tests
// depending on the ones before them.
func TestAFilesRepairInAFannedOutRepairTrialsOnlyWhatItJudges(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	app := demoapp.New(demoapp.Options{})
	var helps atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/help" {
			helps.Add(1)
		}
		app.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	b := setup(t, srv.URL)
	b.app, b.url = app, srv.URL
	spec := func(head string) []byte {
		return []byte("const { test, expect } = require('@playwright/test');\n" + head +
			"test('reads the help', async ({ page }) => {\n  await page.goto('/help');\n  await expect(page.locator('h1')).toBeVisible();\n});\n" +
			"test('adds an item', async ({ page }) => {\n  await page.goto('/list');\n  await page.getByRole('textbox', { name: 'New item' }).fill('Tea');\n" +
			"  await page.getByTestId('add-button').click();\n  await expect(page.locator('#items li').last()).toContainText('Tea');\n});\n")
	}
	for _, tc := range []struct {
		name  string
		head  string
		helps int32 // visits of the help page: the evidence's, and the trial's
	}{
		{"a file of a fanned-out repair", "", 1},
		{"a serial file of a fanned-out repair", "test.describe.configure({ mode: 'serial' });\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := suite.NewProject(map[string][]byte{"playwright.config.js": []byte(shortWaitsConfig), "tests/list.spec.js": spec(tc.head)})
			if err != nil {
				t.Fatal(err)
			}
			prints := passingPrints(t, b, p, 2)
			if err := app.SetVariant(demoapp.RenamedIDs); err != nil {
				t.Fatal(err)
			}
			helps.Store(0)
			o := b.repairOptions(t, nil)
			o.MergedLater = true
			rep, err := b.runner.Repair(context.Background(), p, prints, o)
			if err != nil {
				t.Fatal(err)
			}
			verdicts := map[string]orchestrator.Verdict{}
			for _, r := range rep.Tests {
				verdicts[r.Title] = r.Verdict
			}
			if verdicts["adds an item"] != orchestrator.VerdictHealed || verdicts["reads the help"] != orchestrator.VerdictPassed || !rep.Verified {
				t.Fatalf("verdicts %v, verified %v", verdicts, rep.Verified)
			}
			if got := helps.Load(); got != tc.helps {
				t.Errorf("the passing test ran %d times, want %d", got, tc.helps)
			}
		})
	}
}

// TestATestASetupKeptFromRunningIsHealedFromTheBaselineToo: the corpus's
// auth project signs in once in a setup project the others depend on.
// Reworded, the setup fails and every dependent is skipped. Healed from
// the baseline, the setup passes and the list's tests run, and fail on
// their own reworded field: they are run on the baseline in turn, for
// their elements, and healed (they were called broken by the patch, and
// the whole repair unverified).
func TestATestASetupKeptFromRunningIsHealedFromTheBaselineToo(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	release := httptest.NewServer(demoapp.New(demoapp.Options{}))
	t.Cleanup(release.Close)
	b := setup(t, release.URL)
	p := corpusProject(t, "auth", nil, "tests/signed-out.spec.ts", "tests/dashboard.spec.ts")
	if err := b.app.SetVariant(demoapp.Reworded); err != nil {
		t.Fatal(err)
	}
	rep := b.repairFrom(t, p, nil, release.URL)
	for _, tc := range rep.Tests {
		if tc.Verdict != orchestrator.VerdictHealed {
			t.Errorf("%s: %s (%s)", tc.Title, tc.Verdict, tc.Reason)
		}
	}
	if len(rep.Tests) != 3 || !rep.Verified {
		t.Fatalf("verified %v: %+v", rep.Verified, rep.Tests)
	}
}

// listAddsTest is a test file adding to the list through the Add button's
// test id, which the RenamedIDs variant renames.
const listAddsTest = "const { test, expect } = require('@playwright/test');\n" +
	"test('adds an item', async ({ page }) => {\n  await page.goto('/list');\n  await page.getByRole('textbox', { name: 'New item' }).fill('Tea');\n" +
	"  await page.getByTestId('add-button').click();\n  await expect(page.locator('#items li').last()).toContainText('Tea');\n});\n"

// listPrints runs the project's tests/b-list.spec.js (listAddsTest) with
// traces and answers its tests' calls, each test passing as written.
func listPrints(t *testing.T, b *bench, p suite.Project) map[string][]suite.TraceAction {
	t.Helper()
	rep := b.run(t, p, suite.RunOptions{Files: []string{"tests/b-list.spec.js"}, Trace: true})
	prints := map[string][]suite.TraceAction{}
	for i := range rep.Tests {
		tc := &rep.Tests[i]
		if err := tc.Evidence(); err != nil || tc.Status != "passed" {
			t.Fatalf("as written: %s %v %s", tc.Status, err, tc.Error)
		}
		prints[tc.ID] = tc.Actions
	}
	return prints
}
