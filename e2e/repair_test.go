package e2e

import (
	"encoding/json"
	"html"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// TestRepairJobProposesAVerifiedVersionAndReportsRegressions generates a
// test through the API, changes the demo app, and repairs the stored test:
// drift yields a proposed version with its diff (verified under
// @playwright/test) that a person accepts; a regression yields a failed job
// with evidence, a screenshot, and no version.
func TestRepairJobProposesAVerifiedVersionAndReportsRegressions(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 0)
	s.startWorker(t, nil)
	_, key := s.tenant(t, "repairer", 5)
	gen := s.submit(t, key, map[string]any{"name": "add oat milk", "base_url": s.demo + "/list", "tags": []string{"list", "smoke"},
		"steps": []any{`Fill "New item" with "Oat milk"`, `Click "Add"`, `Verify "Oat milk" is visible`, `Verify "2 items" is visible`}})
	if v := s.wait(t, key, gen.ID, 60*time.Second); v.State != "succeeded" {
		t.Fatalf("generation %s: %s", v.State, v.Error)
	}
	var suiteList struct{ Tests []api.TestView }
	s.mustJSON(t, "GET", "/v1/tests", key, nil, http.StatusOK, &suiteList)
	if len(suiteList.Tests) != 1 || suiteList.Tests[0].Version != 1 || strings.Join(suiteList.Tests[0].Tags, ",") != "list,smoke" {
		t.Fatalf("suite: %+v", suiteList.Tests)
	}
	testID := suiteList.Tests[0].ID
	repair := func() (api.JobView, suite.Report) {
		t.Helper()
		var j api.JobView
		s.mustJSON(t, "POST", "/v1/jobs", key, map[string]any{"kind": "repair", "repair": map[string]any{"test_id": testID}}, http.StatusAccepted, &j)
		v := s.wait(t, key, j.ID, 90*time.Second)
		var rep suite.Report
		if err := json.Unmarshal(v.Repair, &rep); err != nil {
			t.Fatalf("repair report: %v (%s %s)", err, v.State, v.Error)
		}
		return v, rep
	}

	// Drift: the Add button's test id renamed and the field relabelled.
	if err := s.app.SetVariant(demoapp.RenamedIDs, demoapp.Reworded); err != nil {
		t.Fatal(err)
	}
	v, rep := repair()
	if v.State != "succeeded" || rep.Verdict != "healed" || !rep.Verified || rep.Tokens != 0 {
		t.Fatalf("repair of drift: %s %s: %+v", v.State, v.Error, rep)
	}
	var versions struct{ Versions []store.TestVersion }
	s.mustJSON(t, "GET", "/v1/tests/"+testID+"/versions", key, nil, http.StatusOK, &versions)
	if len(versions.Versions) != 2 || versions.Versions[0].Status != store.VersionProposed || versions.Versions[0].Version != 2 {
		t.Fatalf("versions: %+v", versions.Versions)
	}
	_, diff := s.call(t, "GET", "/v1/tests/"+testID+"/versions/2/diff", key, nil)
	for _, want := range []string{"-  await page.getByTestId('add-button').click();", "+  await page.getByTestId('add-entry-btn').click();", "Item name"} {
		if !strings.Contains(string(diff), want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if code, _ := s.call(t, "GET", "/v1/tests/"+testID+"/versions", s.otherKey(t), nil); code != http.StatusNotFound {
		t.Errorf("another tenant lists the versions: %d", code)
	}
	var test api.TestView
	s.mustJSON(t, "GET", "/v1/tests/"+testID, key, nil, http.StatusOK, &test)
	if test.Version != 1 || strings.Contains(test.Script, "add-entry-btn") {
		t.Fatal("a proposal replaced the test's script before anyone accepted it")
	}
	s.mustJSON(t, "POST", "/v1/tests/"+testID+"/versions/2/accept", key, nil, http.StatusOK, nil)
	s.mustJSON(t, "GET", "/v1/tests/"+testID, key, nil, http.StatusOK, &test)
	if test.Version != 2 || !strings.Contains(test.Script, "add-entry-btn") || !strings.Contains(test.Script, "'2 items'") {
		t.Fatalf("the accepted version is not the test's script: v%d\n%s", test.Version, test.Script)
	}
	if code, _ := s.call(t, "POST", "/v1/tests/"+testID+"/versions/2/reject", key, nil); code != http.StatusConflict {
		t.Errorf("rejecting an accepted version: %d", code)
	}

	// A regression on top of the drift: never healed, reported with evidence.
	if err := s.app.SetVariant(demoapp.RenamedIDs, demoapp.Reworded, demoapp.WrongCount); err != nil {
		t.Fatal(err)
	}
	v, rep = repair()
	if v.State != "failed" || rep.Verdict != "app_regression" || !strings.Contains(v.Error, "app_regression") {
		t.Fatalf("repair of a regression: %s %s: %+v", v.State, v.Error, rep)
	}
	var ev *struct{ Expected, Observed, Screenshot string }
	for _, st := range rep.Steps {
		if st.Class == "app_regression" && st.Evidence != nil {
			ev = &struct{ Expected, Observed, Screenshot string }{st.Evidence.Expected, st.Evidence.Observed, st.Evidence.Screenshot}
		}
	}
	if ev == nil || ev.Expected != "2 items" || ev.Observed != "3 items" || ev.Screenshot == "" {
		t.Fatalf("evidence: %+v", rep.Steps)
	}
	code, png := s.call(t, "GET", "/v1/jobs/"+v.ID+"/artifacts/"+ev.Screenshot, key, nil)
	if code != http.StatusOK || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Fatalf("screenshot artifact: %d", code)
	}
	// The console shows the regression's verdict and evidence, and the
	// test's page the proposed version's diff.
	code, page := s.consolePage(t, key, "/console/jobs/"+v.ID)
	for _, want := range []string{`verdict-app_regression">app_regression<`, "expected 2 items; observed 3 items"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("the console's repair page (%d) lacks %q", code, want)
		}
	}
	code, page = s.consolePage(t, key, "/console/tests/"+testID)
	if code != http.StatusOK || !strings.Contains(html.UnescapeString(page), `<span class="add">+  await page.getByTestId('add-entry-btn').click();</span>`) {
		t.Errorf("the console's test page (%d) lacks the version's diff", code)
	}
	s.mustJSON(t, "GET", "/v1/tests/"+testID+"/versions", key, nil, http.StatusOK, &versions)
	if len(versions.Versions) != 2 {
		t.Fatalf("a regression produced a version: %+v", versions.Versions)
	}
	s.mustJSON(t, "GET", "/v1/tests/"+testID, key, nil, http.StatusOK, &test)
	if test.LastStatus != "app_regression" {
		t.Errorf("the test's status is %q", test.LastStatus)
	}
	// Submitting a repair of a test that is not the tenant's names the field.
	code, body := s.call(t, "POST", "/v1/jobs", s.otherKey(t), []byte(`{"kind":"repair","repair":{"test_id":"`+testID+`"}}`))
	if code != http.StatusBadRequest || !strings.Contains(string(body), "repair.test_id") {
		t.Fatalf("another tenant's test: %d %s", code, body)
	}
}
