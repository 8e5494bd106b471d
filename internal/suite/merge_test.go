package suite_test

import (
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// TestHealsOfEachFileMergeIntoOnePatch: the parts of a repair each healed
// against the same project. A shared page object healed alike by two parts
// is changed once, edits of different lines all stay, and a part that
// changed a line another changed otherwise is left out whole.
func TestHealsOfEachFileMergeIntoOnePatch(t *testing.T) {
	t.Parallel()
	page := "export class ListPage {\n  constructor(page) { this.page = page; }\n  add() { return this.page.getByTestId('add-button'); }\n  count() { return this.page.locator('#count'); }\n}\n"
	orig, err := suite.NewProject(map[string][]byte{
		"playwright.config.js": []byte("module.exports = {};\n"),
		"pages/ListPage.js":    []byte(page),
		"tests/a.spec.js":      []byte("test('a', async () => {\n  await page.locator('#new-item').fill('x');\n});\n"),
		"tests/b.spec.js":      []byte("test('b', async () => {\n  await page.locator('#title').click();\n});\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	healedAdd := strings.Replace(page, "'add-button'", "'add-entry-btn'", 1)
	both := strings.Replace(healedAdd, "'#count'", "'#item-count'", 1)
	parts := [][]suite.PatchedFile{
		{{Path: "pages/ListPage.js", Content: healedAdd}, {Path: "tests/a.spec.js", Content: "test('a', async () => {\n  await page.locator('#entry').fill('x');\n});\n"}},
		{{Path: "pages/ListPage.js", Content: both}},
		{{Path: "pages/ListPage.js", Content: strings.Replace(page, "'add-button'", "'plus'", 1)}, {Path: "tests/b.spec.js", Content: "test('b', async () => {\n  await page.locator('#heading').click();\n});\n"}},
	}
	merged, conflicts := suite.MergePatches(orig, parts)
	if len(conflicts) != 1 || conflicts[0].Part != 2 || conflicts[0].File != "pages/ListPage.js" {
		t.Fatalf("conflicts %+v", conflicts)
	}
	want := map[string]string{
		"pages/ListPage.js": both,
		"tests/a.spec.js":   "test('a', async () => {\n  await page.locator('#entry').fill('x');\n});\n",
		"tests/b.spec.js":   "test('b', async () => {\n  await page.locator('#title').click();\n});\n",
	}
	for path, content := range want {
		if f, ok := merged.File(path); !ok || string(f.Content) != content {
			t.Errorf("%s merged as:\n%s", path, f.Content)
		}
	}
	if got := suite.PatchedFiles(orig, merged); len(got) != 2 {
		t.Errorf("the merge changed %d files, want 2: %+v", len(got), got)
	}
	if _, conflicts := suite.MergePatches(orig, parts[:2]); len(conflicts) != 0 {
		t.Errorf("parts that agree conflict: %+v", conflicts)
	}
}

// TestAFileWhoseRepairDidNotEndIsReportedAndTheRestMerged: the repair of
// one file failed (its sandbox stopped it): its tests are reported not run
// with why, and the other files' verdicts and errors are all there.
func TestAFileWhoseRepairDidNotEndIsReportedAndTheRestMerged(t *testing.T) {
	t.Parallel()
	p, err := suite.NewProject(map[string][]byte{"tests/a.spec.js": []byte("a"), "tests/b.spec.js": []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	listing := []suite.TestOutcome{{ID: "a1", File: "tests/a.spec.js", Titles: []string{"a one"}}, {ID: "a2", File: "tests/a.spec.js", Titles: []string{"a two"}},
		{ID: "b1", File: "tests/b.spec.js", Titles: []string{"b one"}}}
	parts := []suite.RepairPart{
		{Files: []string{"tests/a.spec.js"}, Failed: "the run hit the sandbox's time limit before it reported"},
		{Files: []string{"tests/b.spec.js"}, Report: suite.RepairReport{Tests: []suite.RepairedTest{{ID: "b1", File: "tests/b.spec.js", Title: "b one",
			Verdict: orchestrator.VerdictRegression, Reason: "the element is there but does not hold what the test checks"}}, Errors: []string{"tests/b.spec.js: a warning"}}},
	}
	rep, err := suite.ProjectRunner{}.MergeRepairs(t.Context(), p, parts, suite.RunOptions{Listing: listing})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]orchestrator.Verdict{}
	for _, tc := range rep.Tests {
		got[tc.Title] = tc.Verdict
		if tc.File == "tests/a.spec.js" && !strings.Contains(tc.Reason, "sandbox's time limit") {
			t.Errorf("%s: %q", tc.Title, tc.Reason)
		}
	}
	if len(got) != 3 || got["a one"] != orchestrator.VerdictNotRun || got["a two"] != orchestrator.VerdictNotRun || got["b one"] != orchestrator.VerdictRegression {
		t.Errorf("verdicts %v", got)
	}
	if rep.Verified || rep.Patched != nil || len(rep.Errors) != 2 || !strings.HasPrefix(rep.Errors[0], "tests/a.spec.js: the run hit") {
		t.Errorf("verified %v, errors %q", rep.Verified, rep.Errors)
	}
}

// TestAScaledProjectIsWhatItSays: the generated project the scale bench
// repairs lists every test it says, in its files, with its drifting and
// regressing files spread through it.
func TestAScaledProjectIsWhatItSays(t *testing.T) {
	t.Parallel()
	b := setup(t)
	files, kinds := suitetest.Scaled(suitetest.Scale{Tests: 43, Files: 10, DriftFiles: 2, RegressionFiles: 1})
	p, err := suite.NewProject(files)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, tc := range b.run(t, p, suite.RunOptions{List: true}).Tests {
		per[tc.File]++
	}
	count := map[string]int{}
	for f, kind := range kinds {
		count[kind]++
		if n := per[f]; n != 4 && n != 5 {
			t.Errorf("%s lists %d tests", f, n)
		}
	}
	if len(per) != 10 || count["drift"] != 2 || count["regression"] != 1 {
		t.Errorf("files %v, kinds %v", per, count)
	}
	total := 0
	for _, n := range per {
		total += n
	}
	if total != 43 {
		t.Errorf("%d tests listed, want 43", total)
	}
}
