package suite_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/testslot"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// passingPrints runs the project as written and keeps each passing test's
// calls and targets, as a project_file job does.
func passingPrints(t *testing.T, b *bench, p suite.Project, want int) map[string][]suite.TraceAction {
	t.Helper()
	if err := b.app.SetVariant(); err != nil {
		t.Fatal(err)
	}
	rep := b.run(t, p, suite.RunOptions{Trace: true})
	prints := map[string][]suite.TraceAction{}
	for i := range rep.Tests {
		tc := &rep.Tests[i]
		if err := tc.Evidence(); err != nil {
			t.Fatal(err)
		}
		if tc.Status == "passed" {
			prints[tc.ID] = tc.Actions
		}
	}
	if len(prints) != want {
		t.Fatalf("%d tests passed as written, want %d", len(prints), want)
	}
	return prints
}

func (b *bench) repair(t *testing.T, p suite.Project, prints map[string][]suite.TraceAction) suite.RepairReport {
	t.Helper()
	return b.repairFrom(t, p, prints, "")
}

// repairFrom repairs the project against the bench's app; with baseline,
// the tests no passing run recorded first run on it.
func (b *bench) repairFrom(t *testing.T, p suite.Project, prints map[string][]suite.TraceAction, baseline string) suite.RepairReport {
	t.Helper()
	o := b.repairOptions(t, nil)
	if baseline != "" {
		o.Baseline = &suite.Baseline{BaseURL: baseline, Proxy: b.repairOptions(t, nil).Proxy}
	}
	rep, err := b.runner.Repair(context.Background(), p, prints, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// repairOptions are a repair's options against the bench's app, through
// a tunnel of its own, with the agent asked when nothing recorded an
// element (nil: never).
func (b *bench) repairOptions(t *testing.T, agent suite.Asker) suite.RunOptions {
	tun := b.proxy.Open()
	t.Cleanup(tun.Close)
	return suite.RunOptions{BaseURL: b.url, Env: map[string]string{"E2E_PASSWORD": demoapp.Password}, Agent: agent,
		Proxy: &suite.Proxy{Addr: strings.TrimPrefix(b.proxy.Server(), "http://"), Username: tun.User, Password: tun.Password}}
}

// gitApply applies a diff to the project's files with git apply.
func gitApply(t *testing.T, p suite.Project, diff string) string {
	t.Helper()
	dir := t.TempDir()
	if err := p.WriteTo(dir); err != nil {
		t.Fatal(err)
	}
	patch := filepath.Join(t.TempDir(), "repair.diff")
	if err := os.WriteFile(patch, []byte(diff), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "apply", "--verbose", patch)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\n%s", err, out, diff)
	}
	return dir
}

// TestARepairHealsDriftWhereTheLocatorIsDefinedAndNeverARegression: the
// app renames its ids and test ids; the repair finds each element again on
// the failure's page, rewrites the literal in the page object that defines
// the locator (an id stays an id, a test id a test id), verifies the
// patched project in the sandbox, and delivers a diff git apply takes. (A
// miscount, a regression never healed, is TestASuiteRedOnArrivalIsHealedFromItsBaseline's.)
func TestARepairHealsDriftWhereTheLocatorIsDefinedAndNeverARegression(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := shoppingProject(t, true)
	prints := passingPrints(t, b, p, 5)

	t.Run("renamed ids are healed in the page object", func(t *testing.T) {
		if err := b.app.SetVariant(demoapp.RenamedIDs); err != nil {
			t.Fatal(err)
		}
		rep := b.repair(t, p, prints)
		verdicts := map[orchestrator.Verdict]int{}
		for _, tc := range rep.Tests {
			verdicts[tc.Verdict]++
			if strings.HasPrefix(tc.File, "tests/login") && tc.Verdict != orchestrator.VerdictPassed {
				t.Errorf("%s: %s (%s)", tc.Title, tc.Verdict, tc.Reason)
			}
		}
		if verdicts[orchestrator.VerdictHealed] != 3 || verdicts[orchestrator.VerdictPassed] != 2 || !rep.Verified {
			t.Fatalf("verdicts %v, verified %v: %+v", verdicts, rep.Verified, rep.Tests)
		}
		changed := map[string]string{}
		for _, c := range rep.Changes {
			if c.File != "pages/ListPage.ts" {
				t.Errorf("a change outside the page object that defines the locators: %+v", c)
			}
			changed[c.Old] = c.New
		}
		if changed["#count"] != "'#total-count'" || changed["add-button"] != "'add-entry-btn'" || len(changed) != 2 {
			t.Fatalf("changes %+v", rep.Changes)
		}
		dir := gitApply(t, p, rep.Diff)
		got, _ := os.ReadFile(filepath.Join(dir, "pages", "ListPage.ts"))
		patched, _ := rep.Patched.File("pages/ListPage.ts")
		if string(got) != string(patched.Content) || !strings.Contains(string(got), "page.getByTestId('add-entry-btn')") {
			t.Fatalf("the applied diff differs from the verified project:\n%s", got)
		}
		// The patched project passes as its owner runs it.
		b.passesAsOwnerRunsIt(t, *rep.Patched)
	})

	t.Run("a slow app gets a longer wait where the test waited, nothing else", func(t *testing.T) {
		if err := b.app.SetVariant(demoapp.SlowAdd); err != nil {
			t.Fatal(err)
		}
		rep := b.repair(t, p, prints)
		healed := 0
		for _, tc := range rep.Tests {
			switch {
			case strings.HasPrefix(tc.Title, "shopping list › adds "):
				if tc.Verdict != orchestrator.VerdictHealed || !strings.Contains(tc.Reason, "longer than the test waited") {
					t.Errorf("%s: %s (%s)", tc.Title, tc.Verdict, tc.Reason)
				}
				healed++
			case tc.Verdict != orchestrator.VerdictPassed:
				t.Errorf("%s: %s (%s)", tc.Title, tc.Verdict, tc.Reason)
			}
		}
		if healed != 1 || !rep.Verified || len(rep.Changes) == 0 {
			t.Fatalf("%d healed, verified %v, changes %+v", healed, rep.Verified, rep.Changes)
		}
		if c := rep.Changes[0]; c.File != "tests/list.spec.ts" || c.Method != "toContainText" || c.New != "10000 ms" {
			t.Errorf("change %+v", c)
		}
		// How many more waits a machine needs depends on how slow it is:
		// the property is that the one the test ran out of is there and
		// nothing but waits changed.
		want := "+      await expect(list.items.last()).toContainText(item, { timeout: 10000 });"
		if err := onlyWaitsLengthened(rep.Diff); !strings.Contains(rep.Diff, want) || err != nil {
			t.Fatalf("the patch changes more than a timeout (%v):\n%s", err, rep.Diff)
		}
		gitApply(t, p, rep.Diff)
	})
}

// slowConfig has waits shorter than the slow app's 7 s.
const slowConfig = "module.exports = { testDir: 'tests', timeout: 12000, use: { baseURL: process.env.BASE_URL, actionTimeout: 3000 }, expect: { timeout: 2000 } };\n"

// roomyConfig is the config of a run whose tests must pass to record
// their elements: room to spare on a loaded machine (the same tests keep
// their ids and call sites under any config).
const roomyConfig = "module.exports = { testDir: 'tests', timeout: 60000, use: { baseURL: process.env.BASE_URL } };\n"

// entriesSpec adds an entry and deletes it with the button named after it.
const entriesSpec = `const { test, expect } = require('@playwright/test');

const item = 'Apples';

test('deletes what it added', async ({ page }) => {
  await page.goto('/list');
  await page.getByRole('textbox', { name: 'New item' }).fill(item);
  await page.getByRole('textbox', { name: 'New item' }).press('Enter');
  await page.getByRole('button', { name: ` + "`Delete ${item}`" + ` }).click();
  await expect(page.locator('#items')).not.toContainText(item);
});
`

// slowProject adds what it later needs, with waits shorter than the slow
// app's 7 s: a click on a button named after the entry, and a loop of two
// additions that outlasts the test's own timeout once each waits enough.
func slowProject(t *testing.T, loop bool, config string) suite.Project {
	t.Helper()
	files := map[string][]byte{
		"playwright.config.js":  []byte(config),
		"tests/entries.spec.js": []byte(entriesSpec),
	}
	if loop {
		files["tests/count.spec.js"] = []byte(`const { test, expect } = require('@playwright/test');

test('counts two additions', async ({ page }) => {
  await page.goto('/list');
  for (const [i, n] of ['Salt', 'Pepper'].entries()) {
    await page.getByRole('textbox', { name: 'New item' }).fill(n);
    await page.getByRole('textbox', { name: 'New item' }).press('Enter');
    await expect(page.locator('#count')).toHaveText(` + "`${i + 2} items`" + `);
  }
});
`)
	}
	p, err := suite.NewProject(files)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestASlowAppGetsLongerWaitsWhereTheTestRanOutOfTime: adding takes the
// app 7 s. The click on the added entry's button gets a longer timeout of
// its own, and its test, which that wait outlasts, a longer one with it;
// the loop's assertion gets one too, and the test, which then runs out of
// its own 12 s, gets a longer timeout first in its body.
// Nothing else changes, and the patch passes as its owner runs it.
func TestASlowAppGetsLongerWaitsWhereTheTestRanOutOfTime(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	b := setup(t)
	p := slowProject(t, true, slowConfig)
	prints := passingPrints(t, b, slowProject(t, true, roomyConfig), 2)
	if err := b.app.SetVariant(demoapp.SlowAdd); err != nil {
		t.Fatal(err)
	}
	b.healedBy(t, p, b.repair(t, p, prints), 2, "longer than the test waited", anyWaits,
		"+  await page.getByRole('button', { name: `Delete ${item}` }).click({ timeout: 15000 });",
		"+    await expect(page.locator('#count')).toHaveText(`${i + 2} items`, { timeout: 10000 });",
		"+  test.setTimeout(36000);")
}

// TestATestThatRanOutDuringACallGetsLongerWaitsForBoth: adding takes
// the app 20 s, and the test's own 18.5 s end while its click (which
// would wait 18 s of its own) is still waiting for the added entry's
// button, however loaded the machine (short of the test running out
// before its click: at 10 s, a loaded run did).
// Given longer, the test then fails on the click's own wait: the click
// gets a longer one too, and the test passes with both. (The click was
// dropped when the test alone was given longer, and the entry reported
// lost: a regression where the app was only slow.) A machine quick
// enough to reach the click within half a second comes to the same patch
// the other way: the click's wait, and with it the test's, which that
// wait outlasts.
func TestATestThatRanOutDuringACallGetsLongerWaitsForBoth(t *testing.T) {
	t.Parallel()
	var slow atomic.Bool
	list := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/list" {
			http.NotFound(w, r)
			return
		}
		delay := 0
		if slow.Load() {
			delay = 20000
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>List</title>
<form><label>New item <input name="item"></label> <button>Add</button></form>
<ul id="items"></ul>
<script>
document.querySelector('form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const input = document.querySelector('input'), value = input.value.trim();
  if (!value) return;
  await new Promise((r) => setTimeout(r, %d));
  const li = document.createElement('li'), del = document.createElement('button');
  li.textContent = value + ' ';
  del.textContent = 'Delete ' + value;
  del.onclick = () => li.remove();
  li.append(del);
  document.getElementById('items').append(li);
  input.value = '';
});
</script>`, delay)
	}))
	t.Cleanup(list.Close)
	b := *setup(t, list.URL)
	b.url = list.URL
	project := func(config string) suite.Project {
		p, err := suite.NewProject(map[string][]byte{"playwright.config.js": []byte(config), "tests/entries.spec.js": []byte(entriesSpec)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	prints := passingPrints(t, &b, project(roomyConfig), 1)
	p := project("module.exports = { testDir: 'tests', timeout: 18500, use: { baseURL: process.env.BASE_URL, actionTimeout: 18000 } };\n")
	slow.Store(true)
	b.healedBy(t, p, b.repair(t, p, prints), 1, "click now waits 30000 ms (it waited 18000 ms), and the test may take 55500 ms (it had 18500 ms)", 2,
		"+  await page.getByRole('button', { name: `Delete ${item}` }).click({ timeout: 30000 });",
		"+  test.setTimeout(55500);")
}

// TestACallThatWaitsOutItsTestsTimeoutIsDiagnosedAsItsOwnWouldBe: a suite
// with no action timeout (as npm init playwright writes it) waits on a
// gone element until the whole test runs out of time, and the call never
// ends. That is read as the locator finding nothing: drift is healed, a
// gone button is a regression, and a slow app gets the test a longer
// timeout. (It was "not a missing element", each of them unrepairable.)
func TestACallThatWaitsOutItsTestsTimeoutIsDiagnosedAsItsOwnWouldBe(t *testing.T) {
	t.Parallel()
	project := func(config string) suite.Project {
		p, err := suite.NewProject(map[string][]byte{
			"playwright.config.js": []byte(config),
			"tests/list.spec.js": []byte("const { test, expect } = require('@playwright/test');\n\n" +
				"test('adds an item', async ({ page }) => {\n  await page.goto('/list');\n  await page.getByRole('textbox', { name: 'New item' }).fill('Tea');\n" +
				"  await page.getByTestId('add-button').click();\n  await expect(page.locator('#items li').last()).toContainText('Tea');\n});\n"),
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := project("module.exports = { testDir: './tests', timeout: 6000, expect: { timeout: 15000 }, use: { baseURL: process.env.BASE_URL } };\n")
	// The passing run is recorded with room: under load the test's 6 s
	// ran out on the app as it was, and nothing was recorded.
	roomy := project(roomyConfig)
	for _, tc := range []struct {
		variant demoapp.Variation
		verdict orchestrator.Verdict
		why     string
		diff    string
	}{
		{demoapp.RenamedIDs, orchestrator.VerdictHealed, "", "+  await page.getByTestId('add-entry-btn').click();"},
		{demoapp.MissingAdd, orchestrator.VerdictRegression, "", ""},
		{demoapp.SlowAdd, orchestrator.VerdictHealed, "the test may take 18000 ms", "+  test.setTimeout(18000);"},
	} {
		t.Run(string(tc.variant), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			prints := passingPrints(t, b, roomy, 1)
			if err := b.app.SetVariant(tc.variant); err != nil {
				t.Fatal(err)
			}
			rep := b.repair(t, p, prints)
			if len(rep.Tests) != 1 || rep.Tests[0].Verdict != tc.verdict || !strings.Contains(rep.Tests[0].Reason, tc.why) {
				t.Fatalf("%+v", rep.Tests)
			}
			if f := rep.Tests[0].Evidence; tc.verdict == orchestrator.VerdictRegression && (f == nil || f.Line != 6) {
				t.Errorf("a regression without the call as its evidence: %+v", f)
			}
			if tc.diff == "" {
				if rep.Patched != nil || rep.Diff != "" {
					t.Errorf("a regression was patched:\n%s", rep.Diff)
				}
				return
			}
			if !rep.Verified || !strings.Contains(rep.Diff, tc.diff) {
				t.Errorf("verified %v, the patch lacks %q:\n%s", rep.Verified, tc.diff, rep.Diff)
			}
		})
	}
}

// healedBy checks a repair healed all its tests (each reason saying why),
// with a verified patch adding exactly lines (the wants among them) that
// git apply takes and that passes as its owner runs it.
func (b *bench) healedBy(t *testing.T, p suite.Project, rep suite.RepairReport, tests int, why string, lines int, wants ...string) {
	t.Helper()
	for _, tc := range rep.Tests {
		if tc.Verdict != orchestrator.VerdictHealed || !strings.Contains(tc.Reason, why) {
			t.Errorf("%s: %s (%s)", tc.Title, tc.Verdict, tc.Reason)
		}
	}
	if !rep.Verified || len(rep.Tests) != tests {
		t.Fatalf("verified %v: %+v", rep.Verified, rep.Tests)
	}
	for _, want := range wants {
		if !strings.Contains(rep.Diff, want) {
			t.Errorf("the patch lacks %q:\n%s", want, rep.Diff)
		}
	}
	if lines == anyWaits {
		if err := onlyWaitsLengthened(rep.Diff); err != nil {
			t.Fatalf("%v:\n%s", err, rep.Diff)
		}
	} else if n := strings.Count(rep.Diff, "\n+") - strings.Count(rep.Diff, "\n+++ "); n != lines {
		t.Fatalf("the patch adds %d lines, want %d:\n%s", n, lines, rep.Diff)
	}
	gitApply(t, p, rep.Diff)
	b.passesAsOwnerRunsIt(t, *rep.Patched)
}

// passesAsOwnerRunsIt runs a patched project whole and fails the test for
// each test that does not pass. A test that fails is run once more, alone,
// before it counts: the fixtures' short waits can run out on a machine
// loaded by the other tests, and a wrong patch fails the second time too.
func (b *bench) passesAsOwnerRunsIt(t *testing.T, p suite.Project) {
	t.Helper()
	var again []suite.TestSite
	for _, o := range b.run(t, p, suite.RunOptions{}).Tests {
		if o.Status != "passed" {
			t.Logf("the patched project: %s %s once (run again): %s", o.Title(), o.Status, o.Error)
			again = append(again, suite.TestSite{File: o.File, Line: o.Line})
		}
	}
	if len(again) == 0 {
		return
	}
	for _, o := range b.run(t, p, suite.RunOptions{Only: again}).Tests {
		if o.Status != "passed" {
			t.Errorf("the patched project: %s %s: %s", o.Title(), o.Status, o.Error)
		}
	}
}

// anyWaits, as healedBy's line count, takes any patch whose every line
// lengthens a wait: how many waits a slow app needs depends on how slow
// the machine running the test is.
const anyWaits = -1

var (
	timeoutOption = regexp.MustCompile(`(,\s*)?\{\s*timeout:\s*[\d_]+\s*\}`)
	testTimeout   = regexp.MustCompile(`^\s*test\.setTimeout\([\d_]+\);$`)
)

// onlyWaitsLengthened checks that every line a patch adds is a line it
// removes with a wait added or raised ({ timeout: N }), or the test's own
// time (test.setTimeout): never a changed assertion or step.
func onlyWaitsLengthened(diff string) error {
	var removed, added []string
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			added = append(added, l[1:])
		case strings.HasPrefix(l, "-"):
			removed = append(removed, l[1:])
		}
	}
	if len(added) == 0 {
		return errors.New("the patch adds nothing")
	}
	for _, a := range added {
		if testTimeout.MatchString(a) {
			removed = slices.DeleteFunc(removed, testTimeout.MatchString) // a shorter one it replaces
			continue
		}
		base := timeoutOption.ReplaceAllString(a, "")
		i := slices.IndexFunc(removed, func(r string) bool { return timeoutOption.ReplaceAllString(r, "") == base })
		if i < 0 || !timeoutOption.MatchString(a) {
			return fmt.Errorf("the patch adds %q, which is not a longer wait of a line it replaces", a)
		}
		removed = slices.Delete(removed, i, i+1)
	}
	if len(removed) > 0 {
		return fmt.Errorf("the patch removes %q without a longer wait in its place", removed)
	}
	return nil
}

// TestAnEntryTheAppLostIsNeverWaitedIntoAPass: the app drops what the
// test adds; the click on the entry's button finds nothing, however long
// it waits. That is a regression, with the entry named, and no patch.
func TestAnEntryTheAppLostIsNeverWaitedIntoAPass(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := slowProject(t, false, slowConfig)
	prints := passingPrints(t, b, slowProject(t, false, roomyConfig), 1)
	if err := b.app.SetVariant(demoapp.DeadAdd); err != nil {
		t.Fatal(err)
	}
	rep := b.repair(t, p, prints)
	if len(rep.Tests) != 1 || rep.Patched != nil || rep.Diff != "" {
		t.Fatalf("diff %q: %+v", rep.Diff, rep.Tests)
	}
	if tc := rep.Tests[0]; tc.Verdict != orchestrator.VerdictRegression || !strings.Contains(tc.Reason, `"Apples"`) || tc.Evidence == nil {
		t.Fatalf("%s: %s (%s), evidence %+v", tc.Title, tc.Verdict, tc.Reason, tc.Evidence)
	}
}

// shortWaitsConfig is a project's config with short waits: a test that
// fails gives up in 5 s. 2 s, which the app needs nowhere, ran out on a
// loaded two-core machine for elements that were there, and the repair
// then rightly read the app as slow.
const shortWaitsConfig = "module.exports = { testDir: 'tests', use: { baseURL: process.env.BASE_URL, actionTimeout: 5000 }, expect: { timeout: 5000 } };\n"

// pageObjectTest is a spec file's head: a test adding through the list's
// page object.
const pageObjectTest = `const { test, expect } = require('@playwright/test');
const { ListPage } = require('../pages/list');

test('adds through the page object', async ({ page }) => {
  const list = new ListPage(page);
  await list.open();
  await list.add('Milk');
  await expect(page.getByRole('listitem')).toHaveCount(2);
});
`

// TestAnOverlayTheAppNowShowsIsClickedAwayWhereThePageOpens: the list now
// opens behind a cookie wall that takes every click. The repair adds a
// click on the wall's button right after each navigation that opens the
// page, where it is written (a page object's method, a test; a goto or a
// link's click), through the same page expression, and nothing else; the
// patch passes as its owner runs it.
func TestAnOverlayTheAppNowShowsIsClickedAwayWhereThePageOpens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p, err := suite.NewProject(map[string][]byte{
		"playwright.config.js": []byte(shortWaitsConfig),
		"pages/list.js":        []byte(suite.ListPageSource),
		"tests/list.spec.js": []byte(pageObjectTest + `

test('adds directly', async ({ page }) => {
  await page.goto('/list');
  await page.getByRole('textbox', { name: 'New item' }).fill('Eggs');
  await page.getByRole('button', { name: 'Add' }).click();
  await expect(page.getByRole('listitem')).toHaveCount(2);
});

test('adds from the home page', async ({ page }) => {
  await page.goto('/');
  await page.getByRole('link', { name: 'Shopping list' }).click();
  await page.getByRole('textbox', { name: 'New item' }).fill('Tea');
  await page.getByRole('button', { name: 'Add' }).click();
  await expect(page.getByRole('listitem')).toHaveCount(2);
});
`),
	})
	if err != nil {
		t.Fatal(err)
	}
	prints := passingPrints(t, b, p, 3)
	if err := b.app.SetVariant(demoapp.Interstitial); err != nil {
		t.Fatal(err)
	}
	b.healedBy(t, p, b.repair(t, p, prints), 3, "Accept cookies", 3,
		"     await this.page.goto('/list');\n+    await this.page.getByRole('button', { name: 'Accept cookies' }).click();\n",
		"   await page.goto('/list');\n+  await page.getByRole('button', { name: 'Accept cookies' }).click();\n",
		"   await page.getByRole('link', { name: 'Shopping list' }).click();\n+  await page.getByRole('button', { name: 'Accept cookies' }).click();\n")
}

// TestAConfirmationTheAppNowAsksForIsAnsweredAfterTheActionThatOpensIt:
// adding an item now opens a modal dialog (Cancel, Confirm) before it
// takes effect, so each test's check after its Add finds nothing added.
// The repair answers Confirm, never Cancel, right after the action that
// opened the dialog, where it is written: a page object's method through
// its own page, a test's click or its Enter key through the page its
// locator starts from, a locator kept in a variable through the locator's
// own page. A helper that opens the dialog for one test and not for
// another (an empty name, which the app refuses without asking) is
// answered where the first test called it, and the other still passes.
func TestAConfirmationTheAppNowAsksForIsAnsweredAfterTheActionThatOpensIt(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	b := setup(t)
	p, err := suite.NewProject(map[string][]byte{
		"playwright.config.js": []byte(shortWaitsConfig),
		"pages/list.js":        []byte(suite.ListPageSource),
		"tests/list.spec.js": []byte(pageObjectTest + `

test('adds with the Enter key', async ({ page }) => {
  await page.goto('/list');
  await page.getByRole('textbox', { name: 'New item' }).fill('Eggs');
  await page.getByRole('textbox', { name: 'New item' }).press('Enter');
  await expect(page.getByRole('listitem')).toHaveCount(2);
});

test('adds through a kept locator', async ({ page }) => {
  const add = page.getByRole('button', { name: 'Add' });
  await page.goto('/list');
  await page.getByRole('textbox', { name: 'New item' }).fill('Tea');
  await add.click();
  await expect(page.getByRole('listitem').last()).toHaveText(/Tea/);
});
`),
		"tests/helper.js": []byte(`exports.addItem = async (page, name) => {
  await page.getByRole('textbox', { name: 'New item' }).fill(name);
  await page.getByRole('button', { name: 'Add' }).click();
};
`),
		"tests/helper.spec.js": []byte(`const { test, expect } = require('@playwright/test');
const { addItem } = require('./helper');

test.beforeEach(async ({ page }) => {
  await page.goto('/list');
});

test('adds through the helper', async ({ page }) => {
  await addItem(page, 'Figs');
  await expect(page.getByRole('listitem')).toHaveCount(2);
});

test('an empty name is not added', async ({ page }) => {
  await addItem(page, '   ');
  await expect(page.getByRole('listitem')).toHaveCount(1);
});
`),
	})
	if err != nil {
		t.Fatal(err)
	}
	prints := passingPrints(t, b, p, 5)
	if err := b.app.SetVariant(demoapp.ConfirmAdd); err != nil {
		t.Fatal(err)
	}
	rep := b.repair(t, p, prints)
	for i, tc := range rep.Tests {
		if tc.Title == "an empty name is not added" {
			// It asks for no confirmation and passes as written.
			if tc.Verdict != orchestrator.VerdictPassed {
				t.Errorf("%s: %s (%s)", tc.Title, tc.Verdict, tc.Reason)
			}
			rep.Tests = slices.Delete(rep.Tests, i, i+1)
			break
		}
	}
	b.healedBy(t, p, rep, 4, "Confirm", 4,
		"     await this.addButton.click();\n+    await this.page.getByRole('button', { name: 'Confirm' }).click();\n",
		"   await page.getByRole('textbox', { name: 'New item' }).press('Enter');\n+  await page.getByRole('button', { name: 'Confirm' }).click();\n",
		"   await add.click();\n+  await add.page().getByRole('button', { name: 'Confirm' }).click();\n",
		// The helper asks for a confirmation only with a name the app
		// takes: answered where the test called it.
		"   await addItem(page, 'Figs');\n+  await page.getByRole('button', { name: 'Confirm' }).click();\n")
	if strings.Contains(rep.Diff, "tests/helper.js") {
		t.Errorf("the helper, which opens no dialog for the empty name, is patched:\n%s", rep.Diff)
	}
}

// TestAStepTheAppNoLongerAsksForIsTakenOutButNeverAStepItNeeds: the list
// no longer shows its tips, so the test's click on their Dismiss button
// finds nothing; without that line the test makes every check it made, so
// the line is taken out. When the Add button is gone instead, a run
// without the click fails its check: a regression, and no patch; so is a
// test whose check holds without the click (an empty name is not added):
// a form's submit is never a step the app stopped asking for.
func TestAStepTheAppNoLongerAsksForIsTakenOutButNeverAStepItNeeds(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	b := setup(t)
	p, err := suite.NewProject(map[string][]byte{
		"playwright.config.js": []byte(shortWaitsConfig),
		"tests/tips.spec.js": []byte(`const { test, expect } = require('@playwright/test');

test('adds after dismissing the tips', async ({ page }) => {
  await page.goto('/list');
  await page.locator('#dismiss-tips').click();
  await page.getByRole('textbox', { name: 'New item' }).fill('Milk');
  await page.getByRole('button', { name: 'Add' }).click();
  await expect(page.getByRole('listitem')).toHaveCount(2);
});

test('an empty name is not added', async ({ page }) => {
  await page.goto('/list');
  await page.getByRole('button', { name: 'Add' }).click();
  await expect(page.getByRole('listitem')).toHaveCount(1);
});
`),
	})
	if err != nil {
		t.Fatal(err)
	}
	prints := passingPrints(t, b, p, 2)
	t.Run("the tips are gone", func(t *testing.T) {
		if err := b.app.SetVariant(demoapp.TipsGone); err != nil {
			t.Fatal(err)
		}
		rep := b.repair(t, p, prints)
		if len(rep.Tests) != 2 || rep.Tests[1].Verdict != orchestrator.VerdictPassed {
			t.Fatalf("the empty name's test, which clicks no Dismiss: %+v", rep.Tests)
		}
		rep.Tests = rep.Tests[:1]
		b.healedBy(t, p, rep, 1, "no longer asks for a step", 0)
		if !strings.Contains(rep.Diff, "-  await page.locator('#dismiss-tips').click();\n") || strings.Count(rep.Diff, "\n-") != 2 { // --- and the line
			t.Fatalf("the patch takes out more than the step:\n%s", rep.Diff)
		}
	})
	t.Run("the add button is gone", func(t *testing.T) {
		if err := b.app.SetVariant(demoapp.MissingAdd); err != nil {
			t.Fatal(err)
		}
		// The empty name's test checks only that nothing was added, and
		// makes that check without its click too: the form's submit is
		// still never a step the app stopped asking for.
		rep := b.repair(t, p, prints)
		if len(rep.Tests) != 2 || rep.Tests[0].Verdict != orchestrator.VerdictRegression || rep.Tests[1].Verdict != orchestrator.VerdictRegression || rep.Diff != "" || rep.Patched != nil {
			t.Fatalf("diff %q: %+v", rep.Diff, rep.Tests)
		}
	})
}

// TestOnlyWaitsLengthenedTellsAWaitFromAChange: the check the slow-app
// tests lean on takes a longer wait and nothing else.
func TestOnlyWaitsLengthenedTellsAWaitFromAChange(t *testing.T) {
	t.Parallel()
	head := "--- a/tests/list.spec.ts\n+++ b/tests/list.spec.ts\n@@ -1,3 +1,3 @@\n"
	for _, c := range []struct {
		diff string
		ok   bool
	}{
		{"-  await expect(x).toHaveText('3 items');\n+  await expect(x).toHaveText('3 items', { timeout: 10000 });\n", true},
		{"-  await b.click({ timeout: 5000 });\n+  await b.click({ timeout: 15_000 });\n", true},
		{"+  test.setTimeout(36000);\n", true},
		{"-  await expect(x).toHaveText('3 items');\n+  await expect(x).toHaveText('4 items', { timeout: 10000 });\n", false},
		{"-  await expect(x).toHaveText('3 items');\n+  await expect(x).not.toHaveText('3 items', { timeout: 10000 });\n", false},
		{"-  await expect(x).toHaveText('3 items');\n", false},
		{"+  await page.waitForTimeout(5000);\n", false},
	} {
		if err := onlyWaitsLengthened(head + c.diff); (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok %v", c.diff, err, c.ok)
		}
	}
}
