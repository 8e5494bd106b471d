package suite_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
)

// record carries commands out on the app as a generation run does, each
// element fingerprinted: the manifest a scenario's job records.
func record(t *testing.T, start string, steps ...[]browser.Command) []orchestrator.ManifestStep {
	t.Helper()
	s := browsertest.Session(t)
	ctx := context.Background()
	if err := s.Navigate(ctx, start); err != nil {
		t.Fatal(err)
	}
	var manifest []orchestrator.ManifestStep
	for i, cmds := range steps {
		m := orchestrator.ManifestStep{Step: i + 1, Goal: cmds[0].Describe()}
		for _, c := range cmds {
			out := s.Execute(ctx, c, browser.ExecOptions{Fingerprint: c.NeedsTarget()})
			if out.Err != nil {
				t.Fatalf("%s: %v", c.Describe(), out.Err)
			}
			m.Entries = append(m.Entries, orchestrator.ManifestEntry{Command: c, Element: out.Element})
		}
		manifest = append(manifest, m)
	}
	return manifest
}

// TestAScenarioIsWrittenInTheProjectsIdiom: a scenario recorded on the
// app is written as a test file of a customer's project, beside its
// tests, in their language and module system, through the page objects
// the project defines (built over the page, or given by the project's
// fixture), with paths relative to the config's baseURL; the file passes
// under the runner in the sandbox, beside the project's own tests.
func TestAScenarioIsWrittenInTheProjectsIdiom(t *testing.T) {
	t.Parallel()
	list := [][]browser.Command{
		{{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: "Dismiss"}}},
		{{Action: browser.ActionFill, Target: browser.Target{Label: "New item"}, Value: "Rice"},
			{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: "Add", Exact: true}}},
		{{Action: browser.ActionVerify, Target: browser.Target{CSS: "#count"}, Assert: browser.AssertTextEquals, Value: "2 items"},
			{Action: browser.ActionVerify, Target: browser.Target{Text: "2 items"}, Assert: browser.AssertIsVisible}},
	}
	for _, tc := range []struct {
		project string
		file    string
		want    []string // lines of the written file
		uses    []string
	}{
		{"pom", "tests/adds-rice.spec.js", []string{
			"const { test, expect } = require('@playwright/test');",
			"const { ListPage } = require('../pages/ListPage');",
			"test('adds rice', async ({ page }) => {",
			"  const listPage = new ListPage(page);",
			"  await page.goto('/list');",
			"  await listPage.itemInput.fill('Rice');",
			"  await listPage.addButton.click();",
			"  await expect(listPage.itemCount).toHaveText('2 items');",
		}, []string{"ListPage.itemInput", "ListPage.addButton", "ListPage.itemCount"}},
		{"shopping", "tests/adds-rice.spec.ts", []string{
			"import { test, expect } from '@playwright/test';",
			"import { ListPage } from '../pages/ListPage';",
			"  await listPage.newItem.fill('Rice');",
			"  await listPage.addButton.click();",
			"  await expect(listPage.count).toHaveText('2 items');",
		}, []string{"ListPage.newItem", "ListPage.addButton", "ListPage.count"}},
	} {
		t.Run(tc.project, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			p, err := suitetest.Project(tc.project)
			if err != nil {
				t.Fatal(err)
			}
			sc := scenario.Scenario{Name: "adds rice", BaseURL: b.url + "/list"}
			w, err := suite.WriteTest(p, sc, record(t, sc.BaseURL, list...), suite.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if w.File != tc.file || !slices.Equal(w.Uses, tc.uses) {
				t.Errorf("wrote %s using %q, want %s using %q", w.File, w.Uses, tc.file, tc.uses)
			}
			for _, l := range tc.want {
				if !strings.Contains(w.Source, l+"\n") {
					t.Errorf("the written test lacks %q:\n%s", l, w.Source)
				}
			}
			if strings.Contains(w.Source, "Count).toBeVisible()") || strings.Contains(w.Source, "count).toBeVisible()") {
				t.Errorf("a check that a text is visible became a check of the page object's element:\n%s", w.Source)
			}
			if strings.Contains(w.Source, b.url) {
				t.Errorf("the written test names the app's origin, not the config's baseURL:\n%s", w.Source)
			}
			written := projectWith(t, p, w.File, w.Source)
			rep := b.run(t, written, suite.RunOptions{Files: []string{w.File}})
			if got := statusOf(rep, w.File); got != suite.StatusPassed {
				t.Fatalf("the written test %s under the runner:\n%s\n%s", got, w.Source, rep.Output)
			}
		})
	}

	t.Run("a fixture gives the page object", func(t *testing.T) {
		t.Parallel()
		b, _ := practiceBench(t)
		p, err := suitetest.RealWorldProject("pom-fixtures")
		if err != nil {
			t.Fatal(err)
		}
		sc := scenario.Scenario{Name: "signs in as tomsmith", BaseURL: b.url + "/login"}
		manifest := record(t, sc.BaseURL,
			[]browser.Command{{Action: browser.ActionFill, Target: browser.Target{Label: "Username"}, Value: "tomsmith"},
				{Action: browser.ActionFill, Target: browser.Target{Label: "Password"}, Value: "SuperSecretPassword!"},
				{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: "Login"}}},
			[]browser.Command{{Action: browser.ActionVerify, Target: browser.Target{CSS: "#flash"}, Assert: browser.AssertTextContains, Value: "You logged into a secure area!"}})
		w, err := suite.WriteTest(p, sc, manifest, suite.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []string{
			"import { test, expect } from '../fixtures/pages';",
			"test('signs in as tomsmith', async ({ page, loginPage }) => {",
			"  await loginPage.username.fill('tomsmith');",
			"  await loginPage.password.fill('SuperSecretPassword!');",
			"  await loginPage.loginButton.click();",
		} {
			if !strings.Contains(w.Source, l+"\n") {
				t.Errorf("the written test lacks %q:\n%s", l, w.Source)
			}
		}
		if w.File != "tests/signs-in-as-tomsmith.spec.ts" || !slices.Contains(w.Uses, "fixture loginPage") {
			t.Errorf("wrote %s using %q", w.File, w.Uses)
		}
		rep := b.run(t, projectWith(t, p, w.File, w.Source), suite.RunOptions{Files: []string{w.File}})
		if got := statusOf(rep, w.File); got != suite.StatusPassed {
			t.Fatalf("the written test %s under the runner:\n%s\n%s", got, w.Source, rep.Output)
		}
	})
}

// projectWith is p with one more file.
func projectWith(t *testing.T, p suite.Project, name, src string) suite.Project {
	t.Helper()
	files := map[string][]byte{name: []byte(src)}
	for _, f := range p.Files {
		files[f.Path] = f.Content
	}
	out, err := suite.NewProject(files)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// statusOf is the runner's verdict of a file's test in every project of
// the config that runs it: one verdict, or the first that differs from
// passed ("" when the run did not list it).
func statusOf(rep suite.RunReport, file string) suite.TestStatus {
	var got suite.TestStatus
	for _, tc := range rep.Tests {
		if tc.File == file && (got == "" || tc.Status != suite.StatusPassed) {
			got = tc.Status
		}
	}
	return got
}

// TestAWrittenTestFollowsTheProjectsShape: with no runner, what the file
// says where the project differs: an ESM project with no baseURL in its
// config gets the scenario's origin (and its device) from test.use, a
// name a file already has is not overwritten, a private member of a page
// object is not reached into, a config's own testMatch names the file as
// its tests are named, and a project with no test file has no idiom to
// write in.
func TestAWrittenTestFollowsTheProjectsShape(t *testing.T) {
	t.Parallel()
	p, err := suite.NewProject(map[string][]byte{
		"package.json":            []byte(`{"type": "module", "devDependencies": {"@playwright/test": "1.52.0"}}`),
		"playwright.config.js":    []byte("export default { testDir: 'e2e' };\n"),
		"e2e/search.spec.js":      []byte("import { test } from '@playwright/test';\ntest('x', async () => {});\n"),
		"e2e/finds-pears.spec.js": []byte("import { test } from '@playwright/test';\ntest('y', async () => {});\n"),
		"e2e/pages/search.ts": []byte(`import type { Page } from '@playwright/test';
export class SearchPage {
  constructor(private readonly page: Page) {}
  private get box() { return this.page.getByRole('searchbox', { name: 'Search' }); }
  get go() { return this.page.getByRole('button', { name: 'Go' }); }
}
`),
	})
	if err != nil {
		t.Fatal(err)
	}
	box := browser.Fingerprint{Tag: "input", Role: "searchbox", Name: "Search", Locator: browser.Target{Role: "searchbox", Name: "Search"}}
	goButton := browser.Fingerprint{Tag: "button", Role: "button", Name: "Go", Locator: browser.Target{Role: "button", Name: "Go"}}
	manifest := []orchestrator.ManifestStep{{Step: 1, Goal: "search for pears", Entries: []orchestrator.ManifestEntry{
		{Command: browser.Command{Action: browser.ActionFill, Target: box.Locator, Value: "pears"}, Element: &box},
		{Command: browser.Command{Action: browser.ActionClick, Target: goButton.Locator}, Element: &goButton},
	}}}
	sc := scenario.Scenario{Name: "Finds pears!", BaseURL: "http://shop.acme.test/search?q=", Options: scenario.Options{Device: "iPhone 13"}}
	w, err := suite.WriteTest(p, sc, manifest, suite.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{
		"import { test, expect } from '@playwright/test';",
		"import { SearchPage } from './pages/search';",
		"import { devices } from '@playwright/test';",
		"test.use({ ...devices['iPhone 13'], defaultBrowserType: 'chromium', baseURL: 'http://shop.acme.test' });",
		"  const searchPage = new SearchPage(page);",
		"  await page.getByRole('searchbox', { name: 'Search' }).fill('pears');",
		"  await searchPage.go.click();",
	} {
		if !strings.Contains(w.Source, l+"\n") {
			t.Errorf("the written test lacks %q:\n%s", l, w.Source)
		}
	}
	if w.File != "e2e/finds-pears-2.spec.js" || !slices.Equal(w.Uses, []string{"SearchPage.go"}) {
		t.Errorf("wrote %s using %q", w.File, w.Uses)
	}
	// A config's own testMatch: the listed files say how tests are named.
	custom := suite.Project{Files: []suite.File{
		{Path: "checks/cart.e2e.ts", Content: []byte("import { test } from '@playwright/test';\n")},
		{Path: "checks/login.e2e.ts", Content: []byte("import { test } from '@playwright/test';\n")},
		{Path: "playwright.config.ts", Content: []byte("export default { testMatch: '**/*.e2e.ts', use: { baseURL: 'http://x' } };\n")},
	}}
	if w, err := suite.WriteTest(custom, sc, manifest, suite.WriteOptions{TestFiles: []string{"checks/cart.e2e.ts", "checks/login.e2e.ts"}}); err != nil ||
		w.File != "checks/finds-pears.e2e.ts" || strings.Contains(w.Source, "baseURL") {
		t.Errorf("a project testing *.e2e.ts: %v %s\n%s", err, w.File, w.Source)
	}
	bare := suite.Project{Files: []suite.File{{Path: "playwright.config.js", Content: []byte("export default {};\n")}}}
	if _, err := suite.WriteTest(bare, sc, manifest, suite.WriteOptions{}); !errors.Is(err, suite.ErrNoTestFiles) {
		t.Errorf("a project with no test file: %v", err)
	}
}
