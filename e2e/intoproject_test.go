package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/demoapp"
)

// TestAScenarioIsWrittenIntoTheCustomersProject: a scenario naming the
// tenant's uploaded project is generated as usual, and also written as a
// test file of that project in its idiom (its CommonJS, its page object's
// locators, the config's baseURL), run by the runner in the sandbox and
// proposed as a version, as the CLI says. When the app then drifts, the
// written test is repaired from the elements it was written for, with no
// model, and the healed version's run passes it. A project the tenant
// does not have is a 400 naming the field.
func TestAScenarioIsWrittenIntoTheCustomersProject(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	_, key := s.tenant(t, "pomco", 5)
	_, otherKey := s.tenant(t, "other", 5)
	up := s.uploadListed(t, key, "pom-shop", corpusFiles(t, "pom"))

	sc := map[string]any{"name": "adds rice", "base_url": s.demo + "/list", "project": "pom-shop",
		"steps": []any{`Click "Dismiss"`, `Fill "New item" with "Rice"`, `Click the "Add" button`, `Verify "2 items" is visible`}}
	var bad api.ErrorBody
	s.mustJSON(t, "POST", "/v1/jobs", otherKey, map[string]any{"kind": "scenario", "scenario": sc}, http.StatusBadRequest, &bad)
	if len(bad.Fields) != 1 || bad.Fields[0].Field != "scenario.project" || !strings.Contains(bad.Fields[0].Message, "no such project") {
		t.Fatalf("another tenant naming the project: %+v", bad)
	}
	// As a customer does it: a text scenario and the CLI.
	bin := buildCmd(t, "webpilot")
	file := filepath.Join(t.TempDir(), "adds-rice.txt")
	must(t, os.WriteFile(file, []byte("# adds rice\nbase: "+s.demo+"/list\nClick \"Dismiss\"\nFill \"New item\" with \"Rice\"\n"+
		"Click the \"Add\" button\nVerify \"2 items\" is visible\n"), 0o644))
	out, err := s.cliAs(bin, key)("submit", file, "--project", "pom-shop", "--watch")
	if err != nil || !strings.Contains(out, "written into project pom-shop as tests/") || !strings.Contains(out, "uses ListPage.itemInput, ListPage.addButton") ||
		!strings.Contains(out, ": passed under the runner") || !strings.Contains(out, "proposed version ") {
		t.Fatalf("webpilot submit --project: %v\n%s", err, out)
	}
	var jobs struct {
		Jobs []api.JobView `json:"jobs"`
	}
	s.mustJSON(t, "GET", "/v1/jobs?limit=1", key, nil, http.StatusOK, &jobs)
	if len(jobs.Jobs) != 1 {
		t.Fatalf("jobs: %+v", jobs)
	}
	var v api.JobView
	s.mustJSON(t, "GET", "/v1/jobs/"+jobs.Jobs[0].ID, key, nil, http.StatusOK, &v)
	if v.State != "succeeded" {
		t.Fatalf("the scenario ended %s: %s", v.State, v.Error)
	}
	s.passSpec(t, key, v.ID)
	var into struct {
		Project  string   `json:"project"`
		Parent   string   `json:"parent"`
		File     string   `json:"file"`
		Source   string   `json:"source"`
		Uses     []string `json:"uses"`
		Verdict  string   `json:"verdict"`
		Proposed string   `json:"proposed"`
		Error    string   `json:"error"`
	}
	must(t, json.Unmarshal(v.IntoProject, &into))
	if into.Project != "pom-shop" || into.Parent != up.Version || into.File != "tests/adds-rice.spec.js" || into.Verdict != "passed" ||
		len(into.Proposed) != 64 || into.Error != "" {
		t.Fatalf("written into the project: %s", v.IntoProject)
	}
	for _, want := range []string{"const { ListPage } = require('../pages/ListPage');", "const listPage = new ListPage(page);",
		"await page.goto('/list');", "await listPage.itemInput.fill('Rice');", "await listPage.addButton.click();"} {
		if !strings.Contains(into.Source, want) {
			t.Errorf("the written test lacks %q:\n%s", want, into.Source)
		}
	}
	if !slices.Contains(into.Uses, "ListPage.addButton") || strings.Contains(into.Source, s.demo) {
		t.Errorf("uses %q; the source:\n%s", into.Uses, into.Source)
	}
	// The customer reads the job in the console, in Chromium: what was
	// written, with what of theirs, what its run charged, and accepts it.
	_, page := consoleSignIn(t, s, key, "/console/jobs/"+v.ID)
	section := page.Locator("section.into-project")
	text, err := section.InnerText()
	must(t, err)
	for _, want := range []string{"Written into pom-shop: passed", into.File, "uses ListPage.itemInput, ListPage.addButton",
		"its run in the sandbox:", "Proposed version " + into.Proposed, "const listPage = new ListPage(page);"} {
		if !strings.Contains(text, want) {
			t.Errorf("the console's job page lacks %q:\n%s", want, text)
		}
	}
	must(t, section.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Accept"}).Click())
	must(t, page.WaitForURL(s.api.URL+"/console/projects/pom-shop**"))
	var pv api.ProjectView
	s.mustJSON(t, "GET", "/v1/projects/pom-shop", key, nil, http.StatusOK, &pv)
	if pv.Version != into.Proposed {
		t.Fatalf("after Accept in the console the project is at %s, want %s", pv.Version, into.Proposed)
	}
	// The app renames its list's ids before any run of the new version.
	// The written test's repair starts from the elements it was written
	// for (its run in the sandbox kept them), with no model: the page
	// object is healed where it defines the locators, verified and
	// proposed; accepted, the project's run takes the file and passes it.
	must(t, s.app.SetVariant(demoapp.RenamedIDs))
	var rj api.JobView
	s.mustJSON(t, "POST", "/v1/projects/pom-shop/repair", key, map[string]any{"base_url": s.demo, "files": []string{into.File}},
		http.StatusAccepted, &rj)
	done := s.waitEnd(t, key, rj.ID, 3*time.Minute)
	var rep struct {
		Proposed string `json:"proposed"`
		Repair   struct {
			Verified bool `json:"verified"`
			Changes  []struct {
				File string `json:"file"`
				Old  string `json:"old"`
				New  string `json:"new"`
			} `json:"changes"`
		} `json:"report"`
	}
	must(t, json.Unmarshal(done.Project, &rep))
	if done.State != "succeeded" || done.Verdict != "healed" || !rep.Repair.Verified || len(rep.Proposed) != 64 || len(rep.Repair.Changes) == 0 {
		t.Fatalf("the written test's repair: %s %s %s: %s", done.State, done.Verdict, done.Error, done.Project)
	}
	for _, c := range rep.Repair.Changes {
		if c.File != "pages/ListPage.js" {
			t.Errorf("the repair changed %s (%s -> %s), not the page object", c.File, c.Old, c.New)
		}
	}
	s.mustJSON(t, "POST", "/v1/projects/pom-shop/versions/"+rep.Proposed+"/accept", key, nil, http.StatusOK, &pv)
	var run api.JobView
	s.mustJSON(t, "POST", "/v1/projects/pom-shop/run", key, map[string]any{"base_url": s.demo, "files": []string{into.File}}, http.StatusAccepted, &run)
	if r := s.waitEnd(t, key, run.ID, 2*time.Minute); r.State != "succeeded" {
		t.Fatalf("the project's run of the written file, healed: %s %s %s", r.State, r.Error, r.Project)
	}
}
