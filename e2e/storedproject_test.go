package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/webpilot/webpilot/client"
	"github.com/webpilot/webpilot/internal/demoapp"
)

// TestStoredTestsRunAndRepairAsAProject: the tests generated from
// scenarios are written by `webpilot test project` as a project (each spec
// with its steps' manifest beside it), listed and run by the runner in the
// sandbox with its reports, and, once the app's test ids drift, repaired
// through the project's path into a verified patch: the
// patched project passes (the repair verified it; the console accepts it),
// and the stored tests it healed take their healed specs and replay green.
// A customer's own project is never written over.
func TestStoredTestsRunAndRepairAsAProject(t *testing.T) {
	t.Parallel()
	bin := buildCmd(t, "webpilot")
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	_, key := s.tenant(t, "stored-as-project", 10)
	for _, st := range suiteTests[:3] {
		gen := s.submit(t, key, map[string]any{"name": st.name, "base_url": s.demo + "/list", "tags": []string{"list"}, "steps": st.steps})
		if v := s.wait(t, key, gen.ID, 60*time.Second); v.State != "succeeded" {
			t.Fatalf("generating %s: %s %s", st.name, v.State, v.Error)
		}
	}
	cli := s.cliAs(bin, key)
	c := client.New(s.api.URL, key)
	ctx := context.Background()

	out, err := cli("test", "project", "--tag", "list")
	if err != nil || !strings.Contains(out, "project generated version") || !strings.Contains(out, "3 tests written") {
		t.Fatalf("test project: %v\n%s", err, out)
	}
	listJob := regexp.MustCompile(`listing its tests: job (\S+)`).FindStringSubmatch(out)
	if listJob == nil {
		t.Fatalf("no listing job in:\n%s", out)
	}
	if v := s.waitEnd(t, key, listJob[1], 2*time.Minute); v.State != "succeeded" {
		t.Fatalf("listing the written tests: %s %s", v.State, v.Error)
	}
	view, err := c.Project(ctx, "generated")
	must(t, err)
	var listed []client.TestOutcome
	must(t, json.Unmarshal(view.Tests, &listed))
	if len(listed) != 3 || view.Files != 3*2+3 {
		t.Fatalf("the project lists %d tests in %d files (want 3 tests; 3 specs, 3 manifests, config, package.json, the tests' index): %s", len(listed), view.Files, view.Tests)
	}
	for _, lt := range listed {
		if !regexp.MustCompile(`^tests/(add|count|bread)\.spec\.ts$`).MatchString(lt.File) {
			t.Errorf("a written test's file: %q", lt.File)
		}
	}

	// Run by the runner, with its reports.
	junit := filepath.Join(t.TempDir(), "junit.xml")
	out, err = cli("project", "run", "generated", "--watch", "--junit", junit)
	if err != nil {
		t.Fatalf("project run: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(junit); err != nil || strings.Count(string(b), "<testcase") != 3 || strings.Contains(string(b), "<failure") {
		t.Fatalf("the run's junit (%v):\n%s", err, b)
	}

	// The app's test ids drift: the project's repair heals the specs.
	if err := s.app.SetVariant(demoapp.RenamedIDs); err != nil {
		t.Fatal(err)
	}
	patch := filepath.Join(t.TempDir(), "fix.diff")
	out, err = cli("project", "repair", "generated", "--patch", patch, "--watch")
	if err != nil || !strings.Contains(out, "wrote the verified patch") {
		t.Fatalf("project repair: %v\n%s", err, out)
	}
	diff, err := os.ReadFile(patch)
	must(t, err)
	if !strings.Contains(string(diff), "+++ b/tests/add.spec.ts") || !strings.Contains(string(diff), "+  await page.getByTestId('add-entry-btn').click();") ||
		strings.Contains(string(diff), "bread.spec.ts") {
		t.Fatalf("the patch:\n%s", diff)
	}
	repairID := regexp.MustCompile(`submitted project_repair (\S+)`).FindStringSubmatch(out)
	if repairID == nil {
		t.Fatalf("no job id in:\n%s", out)
	}
	var res client.ProjectRepairResult
	job, err := c.Job(ctx, repairID[1])
	must(t, err)
	must(t, json.Unmarshal(job.Project, &res))
	counts := map[client.Verdict]int{}
	for _, rt := range res.Repair.Tests {
		counts[rt.Verdict]++
	}
	// Verified: the patched project passed under the runner in the sandbox.
	if res.Proposed == "" || !res.Repair.Verified || counts[client.VerdictHealed] != 2 || counts[client.VerdictPassed] != 1 || counts[client.VerdictRegression] != 0 {
		t.Fatalf("the repair: proposed %q, verdicts %v", res.Proposed, counts)
	}
	// In the console: the suite points at the project, which lists the
	// written files; the repair's page shows its patch and charge, and
	// its button accepts it.
	_, pg := consoleSignIn(t, s, key, "/console/tests")
	mainShows(t, pg, "webpilot test project", "add", "count", "bread")
	must(t, pg.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Projects", Exact: playwright.Bool(true)}).First().Click())
	must(t, pg.GetByRole("link", playwright.PageGetByRoleOptions{Name: "generated", Exact: playwright.Bool(true)}).First().Click())
	must(t, pg.WaitForURL(s.api.URL+"/console/projects/generated"))
	mainShows(t, pg, "tests/add.spec.ts", "tests/count.spec.ts", "tests/bread.spec.ts")
	if _, err := pg.Goto(s.api.URL + "/console/jobs/" + repairID[1]); err != nil {
		t.Fatal(err)
	}
	if job.ChargedCredits <= 0 {
		t.Errorf("the repair charged nothing")
	}
	mainShows(t, pg, "Repair of generated", "+++ b/tests/add.spec.ts", "healed", fmt.Sprintf("%v charged of %v held", job.ChargedCredits, job.HoldCredits))
	must(t, pg.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Accept: make it the project's current version"}).Click())
	must(t, pg.WaitForURL(s.api.URL+"/console/projects/generated?written=2&left=0"))
	mainShows(t, pg, short12(res.Proposed), "Accepted: 2 stored tests took their healed spec as their next version")

	// Accepted, the repair is the stored tests' own: the two it healed
	// take their healed specs as their next version, with manifests that
	// name the new test ids, and replay green on the drifted app with
	// nothing left to heal; the third is untouched.
	tests, err := c.Tests(ctx)
	must(t, err)
	byName := map[string]client.TestView{}
	for _, tv := range tests.Tests {
		full, err := c.Test(ctx, tv.ID)
		must(t, err)
		byName[tv.Name] = full
	}
	for name, version := range map[string]int{"add": 2, "count": 2, "bread": 1} {
		tv := byName[name]
		if tv.Version != version || (version == 2) != strings.Contains(tv.Script, "getByTestId('add-entry-btn')") ||
			(version == 2) != strings.Contains(string(tv.Manifest), `"add-entry-btn"`) || strings.Contains(string(tv.Manifest), `"add-button"`) {
			t.Errorf("stored test %s after the accepted repair: version %d, manifest %s\n%s", name, tv.Version, tv.Manifest, tv.Script)
		}
	}
	// The test's page in the console shows the new version, its diff and
	// where it came from.
	if _, err := pg.Goto(s.api.URL + "/console/tests/" + byName["add"].ID); err != nil {
		t.Fatal(err)
	}
	mainShows(t, pg, "Version 2 accepted", "healed", "locators rewritten by version "+short12(res.Proposed)+" of project generated",
		"+  await page.getByTestId('add-entry-btn').click();")
	for _, name := range []string{"add", "count"} {
		replay, err := c.SubmitJob(ctx, client.Submission{Kind: client.KindReplay, Replay: &client.RepairRequest{TestID: byName[name].ID}})
		must(t, err)
		if v := s.wait(t, key, replay.ID, 60*time.Second); v.State != "succeeded" || v.Verdict != "passed" {
			t.Errorf("replay of %s on the drifted app: %s, verdict %q (%s)", name, v.State, v.Verdict, v.Error)
		}
	}
	// Accepting the same version again writes nothing twice.
	again, err := c.AcceptProjectVersion(ctx, "generated", res.Proposed)
	must(t, err)
	if again.StoredTests != nil && len(again.StoredTests.Tests) > 0 {
		t.Errorf("accepted again, it wrote %+v", again.StoredTests)
	}
	// Written again after that, the stored tests replace the version
	// (the project is theirs); a project of the customer's own is not.
	if _, err := c.TestsToProject(ctx, client.TestsToProject{Tags: []string{"list"}}); err != nil {
		t.Fatalf("writing the stored tests again: %v", err)
	}
	_, err = c.UploadProject(ctx, "acme", client.ProjectUpload{Files: map[string]string{
		"playwright.config.ts": "export default {};\n", "tests/a.spec.ts": "import { test } from '@playwright/test';\ntest('a', async () => {});\n"}})
	must(t, err)
	_, err = c.TestsToProject(ctx, client.TestsToProject{Project: "acme"})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusConflict || len(ae.Fields) == 0 || ae.Fields[0].Field != "project" {
		t.Fatalf("writing stored tests over a customer's project: %v (want a 409 naming project)", err)
	}
}
