package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
	"github.com/webpilot/webpilot/internal/suite"
)

// viewsAPI answers each job's view as a job of its kind reports it.
type viewsAPI struct {
	noAPI
	views map[string]api.JobView
}

func (a viewsAPI) JobView(_ context.Context, j store.Job) api.JobView {
	v := a.views[j.ID]
	v.ID, v.Kind, v.State = j.ID, jobs.Kind(j.Kind), j.State
	return v
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// report is what a job of kind reports, filled as a finished one is.
func report(t *testing.T, kind jobs.Kind) api.JobView {
	child := store.ChildReport{JobID: "00000000-0000-0000-0000-000000000001", TestID: "00000000-0000-0000-0000-000000000002",
		TestName: "tests/cart.spec.ts", State: store.JobStateSucceeded, Verdict: "healed", Version: 2, VersionStatus: "proposed", Diff: "-a\n+b\n"}
	bulk := &store.BulkReport{Tests: 1, Done: 1, Verdicts: map[string]int{"healed": 1}, States: map[store.JobState]int{store.JobStateSucceeded: 1},
		Children: []store.ChildReport{child}}
	// 2 s of browser time (1,000 micro-credits) and 500 of the model's.
	step := orchestrator.StepReport{Index: 1, Goal: "Click Add", Type: "action", Tier: "deterministic", Status: "passed",
		Duration: 2 * time.Second, Credits: 500}
	evidence := &suite.TraceAction{API: "locator.click", Method: "click", Selector: "#add", File: "pages/cart.ts", Line: 7}
	repaired := suite.RepairReport{Tests: []suite.RepairedTest{{ID: "t1", File: "tests/cart.spec.ts", Title: "adds", Verdict: "healed",
		Reason: "the button's id changed", Evidence: evidence}}, Changes: []suite.Change{{File: "pages/cart.ts", Line: 7, Old: "#add", New: "#add-item"}},
		Diff: "--- a/pages/cart.ts\n+++ b/pages/cart.ts\n@@ -7 +7 @@\n-#add\n+#add-item\n", Verified: true}
	v := api.JobView{Name: "a job of kind " + string(kind), ChargedCredits: 0.0125,
		Usage: &store.UsageTotals{CreditsMicro: 12_500, BrowserSeconds: 24.6, BrowserCreditsMicro: 12_300}}
	switch kind {
	case jobs.KindScenario, jobs.KindReplay:
		v.Steps = mustJSON(t, []orchestrator.StepReport{step})
	case jobs.KindRepair:
		v.Steps = mustJSON(t, []orchestrator.StepReport{step})
		v.Repair = mustJSON(t, suite.Report{Summary: "healed one step", Steps: []suite.StepChange{{Step: 1, Goal: "Click Add", Status: "healed"}}})
	case jobs.KindSuiteRun, jobs.KindSuiteRepair, jobs.KindProjectRun:
		v.Suite = bulk
	case jobs.KindProjectRepair:
		v.Project = mustJSON(t, suite.ProjectRepairResult{Project: "shop", Version: "abc", Repair: repaired, Verdict: "healed", Proposed: "def"})
	case jobs.KindProjectFile, jobs.KindProjectList:
		v.Project = mustJSON(t, map[string]any{"project": "shop", "file": "tests/cart.spec.ts", "verdict": "failed",
			"tests": []suite.TestOutcome{{ID: "t1", File: "tests/cart.spec.ts", Line: 3, Titles: []string{"cart", "adds"}, Status: "failed",
				Error: "locator.click: Timeout", Failure: evidence}}})
	case jobs.KindExploration:
		v.Exploration = mustJSON(t, explore.Result{Goal: "find what breaks", Stopped: "budget"})
	}
	return v
}

// TestEveryJobPageRenders opens the page of a job of every kind in every
// state it can be in, filled as such a job reports: the project run's page
// answered 500 (its template read a field the children's report does not
// have), which no test saw.
func TestEveryJobPageRenders(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	views := map[string]api.JobView{}
	srv := newConsoleWith(t, st, viewsAPI{noAPI{st}, views})
	tn, key := storetest.Tenant(t, st, "acme", 100)
	type page struct {
		kind  jobs.Kind
		state store.JobState
		id    string
	}
	var pages []page
	for _, kind := range jobs.Kinds {
		for _, state := range []store.JobState{store.JobStateQueued, store.JobStateRunning, store.JobStateWaiting, store.JobStateSucceeded,
			store.JobStateFailed, store.JobStateCancelled} {
			j, err := st.SubmitJob(context.Background(), store.NewJob{TenantID: tn.ID, Kind: string(kind), Input: []byte(`{"name":"job"}`),
				Hold: 1, Subject: "jobs." + string(kind) + "." + tn.ID})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Pool().Exec(context.Background(), `UPDATE jobs SET state = $2, error = 'why it ended' WHERE id = $1`, j.ID, state); err != nil {
				t.Fatal(err)
			}
			v := report(t, kind)
			if state == store.JobStateRunning && (kind == jobs.KindProjectFile || kind == jobs.KindProjectRepair) {
				v.RunProgress = &suite.RunProgress{Phase: "trial 1", Tests: 30, Ended: 12, Passed: 4, Failed: 8, Flagged: 1, Left: 3,
					Running: []string{"tests/cart.spec.ts › adds"}}
			}
			views[j.ID] = v
			pages = append(pages, page{kind, state, j.ID})
		}
	}
	c := client(t)
	signIn(t, c, srv, key)
	for _, p := range pages {
		code, body := get(t, c, srv.URL+"/console/jobs/"+p.id)
		if code != http.StatusOK || strings.Contains(body, "something went wrong") || !strings.Contains(body, "a job of kind "+string(p.kind)) {
			t.Errorf("%s %s: %d\n%.300s", p.kind, p.state, code, body)
		}
		// What it charged, its browser time apart, and each step's share.
		if !strings.Contains(body, "0.0125 charged") || !strings.Contains(body, "browser time 24.6 s, 0.0123 credits") {
			t.Errorf("%s %s: the page does not show its charges", p.kind, p.state)
		}
		if len(views[p.id].Steps) > 0 && !strings.Contains(body, "0.0015 credits</span>") {
			t.Errorf("%s %s: the step does not show its cost", p.kind, p.state)
		}
		// A file's run shows each test with its error and failing call.
		if p.kind == jobs.KindProjectFile && (!strings.Contains(body, "locator.click: Timeout") || !strings.Contains(body, "failed at pages/cart.ts:7 click #add")) {
			t.Errorf("%s %s: the run's page lacks its test's error", p.kind, p.state)
		}
		// A running project job shows how far its run is.
		if views[p.id].RunProgress != nil {
			for _, want := range []string{"trial 1</span>: 12/30 tests ended (4 passed, 8 failed); healed 0, flagged 1, left 3", "running: tests/cart.spec.ts › adds"} {
				if !strings.Contains(body, want) {
					t.Errorf("%s %s: the page lacks %q", p.kind, p.state, want)
				}
			}
		}
	}
}

// TestAFilesPageSaysWhoseHoldItCharges: a project repair's file job holds
// nothing of its own and has no steps; its page said "0/0" and "charged
// of 0 held". It says what it charged to its parent's hold, with a link
// to the parent, and shows no step count it does not have.
func TestAFilesPageSaysWhoseHoldItCharges(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	views := map[string]api.JobView{}
	srv := newConsoleWith(t, st, viewsAPI{noAPI{st}, views})
	tn, key := storetest.Tenant(t, st, "acme", 100)
	parent, err := st.SubmitJob(context.Background(), store.NewJob{TenantID: tn.ID, Kind: string(jobs.KindProjectRepair), Input: []byte(`{"name":"shop"}`),
		Hold: 1, Subject: "jobs.project_repair." + tn.ID})
	if err != nil {
		t.Fatal(err)
	}
	child, err := st.SubmitJob(context.Background(), store.NewJob{TenantID: tn.ID, Kind: string(jobs.KindProjectRepairFile), Input: []byte(`{"name":"shop"}`),
		Hold: 1, Subject: "jobs.project_repair_file." + tn.ID})
	if err != nil {
		t.Fatal(err)
	}
	v := report(t, jobs.KindProjectFile)
	v.ParentID, v.HoldCredits, v.ChargedCredits = parent.ID, 0, 0.5
	views[child.ID] = v
	c := client(t)
	signIn(t, c, srv, key)
	code, body := get(t, c, srv.URL+"/console/jobs/"+child.ID)
	if code != http.StatusOK || !strings.Contains(body, `0.5 charged to the hold of <a href="/console/jobs/`+parent.ID+`">its parent job</a>`) ||
		strings.Contains(body, "of 0 held") || strings.Contains(body, ">0/0<") {
		t.Fatalf("%d\n%s", code, body)
	}
}

// TestAResumedJobSaysWhyItHasAnotherAttempt: a project's repair is picked
// up again each time its files' jobs end, and its page said "attempt 2"
// beside its charge as though it had failed once. It says it resumed as
// its files' jobs ended; a job whose worker stopped says that; one handed
// back (a worker draining) says that; a first attempt says nothing.
func TestAResumedJobSaysWhyItHasAnotherAttempt(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	views := map[string]api.JobView{}
	srv := newConsoleWith(t, st, viewsAPI{noAPI{st}, views})
	tn, key := storetest.Tenant(t, st, "acme", 100)
	c := client(t)
	signIn(t, c, srv, key)
	for _, tc := range []struct {
		name             string
		kind             jobs.Kind
		attempt, crashes int
		want             string
	}{
		{"a project's repair resumed", jobs.KindProjectRepair, 3, 0, `<span id="attempt">resumed 2 time(s) as its files' jobs ended</span>`},
		{"a job whose worker stopped", jobs.KindProjectRepair, 2, 1, `<span id="attempt">attempt 2: its worker stopped 1 time(s), and it was picked up again where it stopped</span>`},
		{"a job handed back", jobs.KindScenario, 2, 0, `<span id="attempt">attempt 2: handed back and picked up again where it stopped</span>`},
		{"a first attempt", jobs.KindProjectRepair, 1, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := st.SubmitJob(context.Background(), store.NewJob{TenantID: tn.ID, Kind: string(tc.kind), Input: []byte(`{"name":"shop"}`),
				Hold: 1, Subject: "jobs." + string(tc.kind) + "." + tn.ID})
			if err != nil {
				t.Fatal(err)
			}
			v := report(t, tc.kind)
			v.ID, v.Attempt, v.Crashes = j.ID, tc.attempt, tc.crashes
			views[j.ID] = v
			code, body := get(t, c, srv.URL+"/console/jobs/"+j.ID)
			if code != http.StatusOK || tc.want != "" && !strings.Contains(body, tc.want) || strings.Contains(body, "· attempt") ||
				tc.want == "" && strings.Contains(body, `id="attempt"`) {
				t.Fatalf("%d: want %q in\n%.1500s", code, tc.want, body)
			}
		})
	}
}
