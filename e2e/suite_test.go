package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/reconcile"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/testslot"
	"github.com/webpilot/webpilot/internal/worker"
)

// suiteTests are the distinct tests of the bulk-repair suite and the
// verdict each gets once the demo app has drifted (renamed test ids, the
// tips banner gone) and regressed (a wrong item count).
var suiteTests = []struct {
	name    string
	steps   []any
	verdict string
}{
	{"add", []any{`Fill "New item" with "Oat milk"`, `Click "Add"`, `Verify "Oat milk" is visible`}, "healed"},
	{"count", []any{`Fill "New item" with "Eggs"`, `Click "Add"`, `Verify "2 items" is visible`}, "app_regression"},
	{"bread", []any{`Verify "Bread" is visible`}, "passed"},
	{"tips", []any{`Click "Dismiss"`, `Verify "Bread" is visible`}, "healed"},
}

// cloneTest copies a stored test n times under new names, as a suite that
// grew from a few flows would hold.
func (s *stack) cloneTest(t *testing.T, testID string, n int) {
	t.Helper()
	for i := range n {
		id := uuid.NewString()
		if _, err := s.store.Pool().Exec(context.Background(),
			`INSERT INTO tests (id, tenant_id, name, tags, scenario, script, manifest, last_status, version)
			   SELECT $2, tenant_id, name || ' #' || $3, tags, scenario, script, manifest, last_status, 1 FROM tests WHERE id = $1`, testID, id, fmt.Sprint(i+2)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.store.Pool().Exec(context.Background(),
			`INSERT INTO test_versions (test_id, version, scenario, script, manifest, summary, status, decided_at)
			   SELECT $2, 1, scenario, script, manifest, 'copied', 'accepted', now() FROM tests WHERE id = $1`, testID, id); err != nil {
			t.Fatal(err)
		}
	}
}

// sseTests follows a bulk job's event stream and counts its test events
// by job until the stream ends.
func (s *stack) sseTests(t *testing.T, key, id string) (wait func() map[string]int) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.api.URL+"/v1/jobs/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "test":
				var c store.ChildReport
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c); err == nil {
					mu.Lock()
					seen[c.TestID]++
					mu.Unlock()
				}
			}
			if event == "end" {
				return
			}
		}
	}()
	return func() map[string]int {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the event stream did not end with the job")
		}
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// TestBulkRepairOfASuiteSurvivesAWorkerKill repairs a suite of 12 stored
// tests (healed at 0 tokens, healed by the agent, regressions, passing)
// over worker processes, one of them SIGKILLed while it runs children:
// every test gets exactly one child and one verdict, the right one; no
// child is duplicated or lost; the tokens are charged to the suite's one
// hold and the ledger adds up; progress streams one event per test.
func TestBulkRepairOfASuiteSurvivesAWorkerKill(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	bin := buildWorker(t)
	s := newStack(t, 3*time.Second, 0)
	tenantID, key := s.tenantCapped(t, "bulk", 20, 4)

	// The suite: four flows generated through the API, three tests each.
	stopGen := s.startWorkerWith(t, nil, worker.Config{ID: "generator"})
	want := map[string]string{}
	var generating int64 // their browser time, charged before the suite's
	for _, st := range suiteTests {
		gen := s.submit(t, key, map[string]any{"name": st.name, "base_url": s.demo + "/list", "tags": []string{"list"}, "steps": st.steps})
		if v := s.wait(t, key, gen.ID, 60*time.Second); v.State != "succeeded" {
			t.Fatalf("generating %s: %s %s", st.name, v.State, v.Error)
		}
		_, browser, _ := s.browserTime(t, gen.ID)
		generating += browser
	}
	stopGen()
	var list struct{ Tests []api.TestView }
	s.mustJSON(t, "GET", "/v1/tests", key, nil, http.StatusOK, &list)
	for _, tc := range list.Tests {
		for _, st := range suiteTests {
			if tc.Name == st.name {
				s.cloneTest(t, tc.ID, 2)
			}
		}
	}
	s.mustJSON(t, "GET", "/v1/tests", key, nil, http.StatusOK, &list)
	if len(list.Tests) != 12 {
		t.Fatalf("the suite has %d tests, want 12", len(list.Tests))
	}
	for _, tc := range list.Tests {
		base, _, _ := strings.Cut(tc.Name, " #")
		for _, st := range suiteTests {
			if st.name == base {
				want[tc.ID] = st.verdict
			}
		}
	}
	if err := s.app.SetVariant(demoapp.RenamedIDs, demoapp.TipsGone, demoapp.WrongCount); err != nil {
		t.Fatal(err)
	}

	// A step whose element is gone and only dismissed something is obsolete.
	model := llmtest.New(t)
	model.Fallback = &llmtest.Reply{PromptTokens: 1500, CompletionTokens: 60, Content: llmtest.JSON(map[string]any{
		"status": "complete", "reasoning": "there is nothing to dismiss any more", "commands": []any{}})}
	// The dispatcher's reconciler, as in production: a worker killed between
	// finishing a child and publishing the children it woke leaves those to it.
	recCtx, stopRec := context.WithCancel(context.Background())
	t.Cleanup(stopRec)
	rec, err := reconcile.New(reconcile.Config{Store: s.store, Publisher: jobs.NewPublisher(s.queue.JS), Logger: quietLog(),
		Every: 500 * time.Millisecond, Unsent: time.Second, Stale: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	go rec.Run(recCtx)
	victim := s.workerProcess(t, bin, "w-victim", model)
	s.workerProcess(t, bin, "w-2", model)

	var parent api.JobView
	s.mustJSON(t, "POST", "/v1/suites/repair", key, map[string]any{"tags": []string{"list"}, "options": map[string]any{"max_credits": 10}},
		http.StatusAccepted, &parent)
	if parent.Kind != "suite_repair" || parent.HoldCredits != 10 {
		t.Fatalf("suite job: %+v", parent)
	}
	events := s.sseTests(t, key, parent.ID)

	// Kill the victim while it runs a child.
	deadline := time.Now().Add(90 * time.Second)
	for s.count(t, `SELECT count(*) FROM jobs WHERE parent_id = $1 AND worker_id = 'w-victim' AND state = 'running'`, parent.ID) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the victim never ran a child")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := victim.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.workerProcess(t, bin, "w-3", model)

	v := s.waitEnd(t, key, parent.ID, 5*time.Minute)
	if v.State != "succeeded" || v.Suite == nil || v.Suite.Tests != 12 || v.Suite.Done != 12 || v.Progress.Done != 12 {
		t.Fatalf("suite: %s %s %+v", v.State, v.Error, v.Suite)
	}
	if n := s.count(t, `SELECT count(*) FROM jobs WHERE parent_id = $1`, parent.ID); n != 12 {
		t.Fatalf("%d children for 12 tests", n)
	}
	if n := s.count(t, `SELECT count(*) FROM (SELECT test_id FROM jobs WHERE parent_id = $1 GROUP BY test_id HAVING count(*) > 1) d`, parent.ID); n != 0 {
		t.Fatalf("%d tests got more than one child", n)
	}
	if n := s.count(t, `SELECT count(*) FROM jobs WHERE parent_id = $1 AND attempt > 1`, parent.ID); n == 0 {
		t.Error("no child was resumed after the kill")
	}
	specs := map[string]bool{}
	for _, c := range v.Suite.Children {
		if c.Verdict != want[c.TestID] {
			// The runner's own words, when a repaired spec failed it.
			var out string
			_ = s.store.Pool().QueryRow(context.Background(), `SELECT coalesce(result->'repair'->>'verify_output', '') FROM jobs WHERE id = $1`, c.JobID).Scan(&out)
			t.Errorf("%s: verdict %q (%s), want %q\n%s", c.TestName, c.Verdict, c.Error, want[c.TestID], out)
		}
		if c.Verdict == "healed" && (c.VersionStatus != string(store.VersionProposed) || c.Diff == "") {
			t.Errorf("%s: healed without a proposed version and diff: %+v", c.TestName, c)
		}
		if c.Verdict == "app_regression" && c.Version != 0 {
			t.Errorf("%s: a regression proposed version %d", c.TestName, c.Version)
		}
		if c.State == "succeeded" {
			var script string
			_ = s.store.Pool().QueryRow(context.Background(), `SELECT script FROM jobs WHERE id = $1`, c.JobID).Scan(&script)
			specs[script] = true
		}
	}
	if v.Suite.Verdicts["healed"] != 6 || v.Suite.Verdicts["app_regression"] != 3 || v.Suite.Verdicts["passed"] != 3 {
		t.Errorf("verdicts: %v", v.Suite.Verdicts)
	}
	// The agent's tokens were charged to the suite's hold, once each.
	acct := s.account(t, tenantID)
	entries, err := s.store.Ledger(context.Background(), tenantID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var ledger int64
	for _, e := range entries {
		ledger += e.Amount
	}
	if v.Suite.Tokens == 0 || v.Suite.CreditsMicro == 0 || acct.Held != 0 || ledger != acct.Balance ||
		acct.Balance != 20*store.MicroCredits-generating-v.Suite.CreditsMicro || int64(v.ChargedCredits*store.MicroCredits+0.5) != v.Suite.CreditsMicro {
		t.Fatalf("credits: account %+v, ledger sum %d, suite %d tokens %d micro-credits, parent charged %g",
			acct, ledger, v.Suite.Tokens, v.Suite.CreditsMicro, v.ChargedCredits)
	}
	if got := events(); len(got) != 12 {
		t.Errorf("the progress stream told %d tests' outcomes, want 12: %v", len(got), got)
	} else {
		for id, n := range got {
			if n != 1 {
				t.Errorf("test %s told %d times", id, n)
			}
		}
	}
	// Every succeeded child's spec passes against the drifted app.
	for spec := range specs {
		browsertest.MustPassSpecTwice(t, spec, nil)
	}
	// Another tenant's suite request cannot name these tests.
	code, body := s.call(t, "POST", "/v1/suites/run", s.otherKey(t), []byte(`{"test_ids":["`+list.Tests[0].ID+`"]}`))
	if code != http.StatusBadRequest || !strings.Contains(string(body), "suite.test_ids[0]") {
		t.Errorf("another tenant's test ids: %d %s", code, body)
	}
}
