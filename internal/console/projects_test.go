package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
	"github.com/webpilot/webpilot/internal/suite"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// TestTheProjectsPagesShowVersionsAndEachTestsVerdicts: the Projects page
// lists the tenant's projects at their current versions; a project's page
// shows its versions (an upload, a repair of it) and each listed test with
// its last verdict, linked to its run, its verdicts run by run, and
// "flaky" for a test that passed and failed. Another tenant's project is
// not found.
func TestTheProjectsPagesShowVersionsAndEachTestsVerdicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, st := newConsole(t)
	tn, key := storetest.Tenant(t, st, "acme", 100)
	_, otherKey := storetest.Tenant(t, st, "other", 100)
	digest := func(c byte) string { return strings.Repeat(string(c), 64) }
	up, _, err := st.SaveProjectVersion(ctx, tn.ID, store.ProjectVersion{Project: "shop", Digest: digest('a'), Files: 3, Bytes: 10}, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []suite.TestOutcome{
		{ID: "t-add", File: "tests/list.spec.ts", Line: 4, Titles: []string{"list", "adds"}, Project: "chromium"},
		{ID: "t-count", File: "tests/list.spec.ts", Line: 9, Titles: []string{"list", "counts"}, Project: "chromium"},
		{ID: "t-new", File: "tests/login.spec.ts", Line: 3, Titles: []string{"signs in"}, Project: "chromium"},
	}
	b, _ := json.Marshal(tests)
	if err := st.SetProjectTests(ctx, tn.ID, up.Digest, b, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ProposeProjectVersion(ctx, tn.ID, store.ProjectVersion{Project: "shop", Digest: digest('b'), Files: 3, Bytes: 11, Parent: up.Digest}, []byte("y")); err != nil {
		t.Fatal(err)
	}
	// Three runs of the list file, oldest first: "adds" passed, failed,
	// passed; "counts" passed each time.
	var last string
	for i, adds := range []suite.TestStatus{"passed", "failed", "passed"} {
		res, _ := json.Marshal(map[string]any{"file": "tests/list.spec.ts", "tests": []suite.TestOutcome{
			{ID: "t-add", Status: adds}, {ID: "t-count", Status: "passed"}}})
		in, _ := json.Marshal(jobs.ProjectRequest{Name: "shop", Version: up.Digest, Files: []string{"tests/list.spec.ts"}})
		j, err := st.SubmitJob(ctx, store.NewJob{TenantID: tn.ID, Kind: string(jobs.KindProjectFile), Input: in, Hold: 1, Subject: "jobs.project_file." + tn.ID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Pool().Exec(ctx, `UPDATE jobs SET state = 'succeeded', result = $2, finished_at = now() + make_interval(secs => $3) WHERE id = $1`,
			j.ID, res, i); err != nil {
			t.Fatal(err)
		}
		last = j.ID
	}
	// A repair of the project, no run of its own before it: each test it
	// judged shows its verdict and links the repair.
	repaired, _ := json.Marshal(suite.ProjectRepairResult{Project: "shop", Version: up.Digest, Verdict: "app_regression", Repair: suite.RepairReport{
		Tests: []suite.RepairedTest{{ID: "t-new", Title: "signs in", Verdict: orchestrator.VerdictRegression, Reason: "the page is not where the test checks it is"}}}})
	in, _ := json.Marshal(jobs.ProjectRequest{Name: "shop", Version: up.Digest})
	rj, err := st.SubmitJob(ctx, store.NewJob{TenantID: tn.ID, Kind: string(jobs.KindProjectRepair), Input: in, Hold: 1, Subject: "jobs.project_repair." + tn.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE jobs SET state = 'succeeded', result = $2, finished_at = now() WHERE id = $1`, rj.ID, repaired); err != nil {
		t.Fatal(err)
	}
	c := client(t)
	signIn(t, c, srv, key)
	code, body := get(t, c, srv.URL+"/console/projects")
	body = html.UnescapeString(body)
	if code != http.StatusOK || !strings.Contains(body, `href="/console/projects/shop"`) || !strings.Contains(body, "aaaaaaaaaaaa") {
		t.Fatalf("projects page %d:\n%s", code, body)
	}
	code, body = get(t, c, srv.URL+"/console/projects/shop")
	body = html.UnescapeString(body)
	if code != http.StatusOK {
		t.Fatalf("project page %d", code)
	}
	row := func(title string) string {
		for _, r := range strings.Split(body, `<tr class="project-test">`)[1:] {
			if strings.Contains(r, title) {
				return r
			}
		}
		t.Fatalf("no row for %q:\n%s", title, body)
		return ""
	}
	if r := row("list › adds"); !strings.Contains(r, fmt.Sprintf(`href="/console/jobs/%s"`, last)) ||
		!strings.Contains(r, `title="passed">passed</span> <span class="state state-failed" title="failed">failed</span> <span class="state state-passed" title="passed">passed`) ||
		!strings.Contains(r, "flaky") {
		t.Errorf("the flaky test's row:\n%s", r)
	}
	if r := row("list › counts"); strings.Contains(r, "flaky") || strings.Count(r, `title="passed"`) != 3 {
		t.Errorf("the steady test's row:\n%s", r)
	}
	if r := row("signs in"); !strings.Contains(r, "<td>–</td>") || !strings.Contains(r, "not run on its own yet") ||
		!strings.Contains(r, fmt.Sprintf(`href="/console/jobs/%s"><span class="verdict verdict-app_regression" title="the page is not where the test checks it is">app_regression</span>`, rj.ID)) {
		t.Errorf("a test never run, judged by a repair:\n%s", r)
	}
	for _, want := range []string{"repair of <code>aaaaaaaaaaaa</code>", "bbbbbbbbbbbb", "<strong>current</strong>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the versions lack %q", want)
		}
	}
	oc := client(t)
	signIn(t, oc, srv, otherKey)
	if code, _ := get(t, oc, srv.URL+"/console/projects/shop"); code != http.StatusNotFound {
		t.Errorf("another tenant's view of the project: %d", code)
	}
}
