package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/suite"
)

// TestAProjectRunsItsFilesInParts: a run of five files goes in two parts
// (one runner each over whole files, balanced by their tests), every
// test with the runner's verdict once; the run names the file that
// failed, the console's run page lists the parts' files, and a repair
// after the run spares each file that passed whole in a part that also
// held the failing one.
func TestAProjectRunsItsFilesInParts(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	_, key := s.tenant(t, "parts", 20)
	pass := func(n int) string {
		var b strings.Builder
		b.WriteString("const { test, expect } = require('@playwright/test');\n")
		for i := range n {
			fmt.Fprintf(&b, "test('list %d', async ({ page }) => { await page.goto('/list'); await expect(page.locator('h1')).toBeVisible(); });\n", i)
		}
		return b.String()
	}
	files := map[string]string{
		"playwright.config.js": "module.exports = { timeout: 20000, expect: { timeout: 1500 } };\n",
		"tests/a.spec.js":      pass(3),
		"tests/b.spec.js":      pass(1),
		"tests/c.spec.js":      pass(1) + "test('a heading the app never had', async ({ page }) => { await page.goto('/list'); await expect(page.locator('h1')).toHaveText('Nothing like it'); });\n",
		"tests/d.spec.js":      pass(2),
		"tests/e.spec.js":      pass(1),
	}
	s.uploadListed(t, key, "parts", files)
	var run api.JobView
	s.mustJSON(t, "POST", "/v1/projects/parts/run", key, map[string]any{"base_url": s.demo}, http.StatusAccepted, &run)
	v := s.waitEnd(t, key, run.ID, 4*time.Minute)
	if v.Suite == nil || len(v.Suite.Children) != 2 {
		t.Fatalf("run: %s %s %+v", v.State, v.Error, v.Suite)
	}
	if v.State != "failed" || v.Error != "1 of 5 files failed: tests/c.spec.js" {
		t.Errorf("the run ended %s: %q", v.State, v.Error)
	}
	if r := v.Reports; r == nil || r.Files != 5 || r.Tests[suite.StatusPassed] != 8 || r.Tests[suite.StatusFailed] != 1 || len(r.Tests) != 2 {
		t.Errorf("the run's reports count %+v, want 8 passed and 1 failed of 5 files", r)
	}
	var seen []string
	verdicts := map[string]string{}
	for _, c := range v.Suite.Children {
		var cv api.JobView
		s.mustJSON(t, "GET", "/v1/jobs/"+c.JobID, key, nil, http.StatusOK, &cv)
		var fr struct {
			Files []string            `json:"files"`
			Tests []suite.TestOutcome `json:"tests"`
		}
		must(t, json.Unmarshal(cv.Project, &fr))
		if c.TestName != strings.Join(fr.Files, ", ") {
			t.Errorf("the part of %v is called %q", fr.Files, c.TestName)
		}
		seen = append(seen, fr.Files...)
		for _, tc := range fr.Tests {
			if !slices.Contains(fr.Files, tc.File) {
				t.Errorf("the part of %v ran %s", fr.Files, tc.File)
			}
			if _, twice := verdicts[tc.ID]; twice {
				t.Errorf("%s ran in two parts", tc.ID)
			}
			verdicts[tc.ID] = tc.File + " " + tc.Title() + ": " + string(tc.Status)
		}
	}
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"tests/a.spec.js", "tests/b.spec.js", "tests/c.spec.js", "tests/d.spec.js", "tests/e.spec.js"}) {
		t.Errorf("the parts ran %v", seen)
	}
	failed := 0
	for _, got := range verdicts {
		if strings.HasSuffix(got, ": failed") {
			failed++
			if !strings.Contains(got, "a heading the app never had") {
				t.Errorf("failed: %s", got)
			}
		} else if !strings.HasSuffix(got, ": passed") {
			t.Errorf("%s", got)
		}
	}
	if len(verdicts) != 9 || failed != 1 {
		t.Errorf("%d verdicts, %d failed: %v", len(verdicts), failed, verdicts)
	}
	// The console, in Chromium: the run's page lists its parts by their
	// files and says which file failed and what the run charged; a part's
	// page shows its files' tests.
	_, pg := consoleSignIn(t, s, key, "/console/jobs/"+run.ID)
	want := []string{"1 of 5 files failed: tests/c.spec.js", fmt.Sprintf("%v charged of %v held", v.ChargedCredits, v.HoldCredits)}
	for _, c := range v.Suite.Children {
		want = append(want, c.TestName)
	}
	mainShows(t, pg, want...)
	part := v.Suite.Children[0]
	must(t, pg.GetByRole("link", playwright.PageGetByRoleOptions{Name: part.TestName, Exact: playwright.Bool(true)}).Click())
	must(t, pg.WaitForURL(s.api.URL+"/console/jobs/"+part.JobID))
	mainShows(t, pg, "Tests of "+part.TestName, "list 0")

	// The repair after the run runs the failing file's tests only: the
	// others passed whole in it, whichever part held them.
	var rj api.JobView
	s.mustJSON(t, "POST", "/v1/projects/parts/repair", key, map[string]any{"base_url": s.demo, "after_run": run.ID}, http.StatusAccepted, &rj)
	rv := s.waitEnd(t, key, rj.ID, 4*time.Minute)
	var after suite.ProjectRepairResult
	if err := json.Unmarshal(rv.Project, &after); err != nil {
		t.Fatalf("repair: %s %s %v", rv.State, rv.Error, err)
	}
	for _, tc := range after.Repair.Tests {
		if spared := strings.Contains(tc.Reason, "passed in the run this repair follows"); spared != (tc.File != "tests/c.spec.js") {
			t.Errorf("%s %s after the run: %s (%s)", tc.File, tc.Title, tc.Verdict, tc.Reason)
		}
	}
	if len(after.Repair.Tests) != 9 {
		t.Errorf("the repair after the run reports %d tests, want 9", len(after.Repair.Tests))
	}
}
