package e2e

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/store"
)

func TestScenarioThroughAPIQueueWorkerAndBrowser(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 300*time.Millisecond)
	s.startWorker(t, nil)
	tenantID, key := s.tenant(t, "acme", 5)

	job := s.submit(t, key, map[string]any{
		"name": "login", "base_url": s.demo + "/login",
		"secrets": map[string]string{"PASSWORD": demoapp.Password},
		"steps": []any{
			`Fill "Email" with "` + demoapp.Email + `"`,
			`Fill "Password" with "{{PASSWORD}}"`,
			`Click "Sign in"`,
			`Verify "Welcome back" is visible`,
			"Go to /delayed",
			`Verify "Report ready" is visible`,
		},
	})
	if job.State != "queued" || job.HoldCredits != 2 {
		t.Fatalf("accepted job: %+v", job)
	}
	if a := s.account(t, tenantID); a.Held != 2_000_000 {
		t.Fatalf("hold not placed: %+v", a)
	}
	v := s.wait(t, key, job.ID, 60*time.Second)
	if v.State != "succeeded" || v.Progress.Done != 6 || v.Attempt != 1 {
		t.Fatalf("job ended %s (%s), %d/%d steps, attempt %d", v.State, v.Error, v.Progress.Done, v.Progress.Total, v.Attempt)
	}
	var steps []struct{ Tier, Status string }
	_ = json.Unmarshal(v.Steps, &steps)
	for i, st := range steps {
		if st.Tier != "deterministic" || st.Status != "passed" {
			t.Fatalf("step %d: %+v", i+1, st)
		}
	}
	code, script := s.call(t, "GET", "/v1/jobs/"+job.ID+"/script", key, nil)
	if code != http.StatusOK || !strings.Contains(string(script), "// step 3: Click \"Sign in\"") {
		t.Fatalf("script %d:\n%s", code, script)
	}
	// The secret is sealed at rest and never appears in what the job wrote.
	var dump string
	if err := s.store.Pool().QueryRow(context.Background(),
		`SELECT input::text || coalesce(result::text,'') || coalesce(script,'') || coalesce(checkpoint::text,'') FROM jobs WHERE id = $1`, job.ID).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dump, demoapp.Password) || !strings.Contains(dump, "sealed_secrets") {
		t.Fatal("the password is stored in the clear, or not sealed")
	}
	if n := s.count(t, `SELECT count(*) FROM history WHERE job_id = $1 AND result = 'ok'`, job.ID); n != 6 {
		t.Fatalf("history rows = %d, want 6", n)
	}
	if n := s.count(t, `SELECT count(*) FROM history h WHERE h.job_id = $1 AND h::text LIKE '%' || $2 || '%'`, job.ID, demoapp.Password); n != 0 {
		t.Fatalf("%d history rows contain the password", n)
	}
	// Deterministic steps make no model call: the job costs its browser
	// time at the documented price, and the rest of its hold is released.
	secs, browser, rows := s.browserTime(t, job.ID)
	if secs <= 0 || browser <= 0 {
		t.Fatalf("browser time charged: %.2f s, %d micro-credits in %d rows", secs, browser, rows)
	}
	if v.Usage == nil || v.Usage.Calls != 0 || v.Usage.BrowserCreditsMicro != browser || v.Usage.CreditsMicro != browser ||
		math.Abs(v.Usage.BrowserSeconds-secs) > 1e-6 || math.Abs(v.ChargedCredits-float64(browser)/store.MicroCredits) > 1e-9 {
		t.Fatalf("the job shows usage %+v, charged %g; want %d micro-credits of browser time", v.Usage, v.ChargedCredits, browser)
	}
	if n := s.count(t, `SELECT count(*) FROM credit_entries WHERE job_id = $1 AND amount < 0`, job.ID); n != rows {
		t.Fatalf("%d charges in the ledger, want one per browser row (%d)", n, rows)
	}
	if a := s.account(t, tenantID); a.Balance != 5_000_000-browser || a.Held != 0 {
		t.Fatalf("account after job: %+v, want balance %d", a, 5_000_000-browser)
	}
	if s.queue.Pending(t) != 0 {
		t.Fatal("the job's message was not acknowledged")
	}
	// The test is stored in the tenant's suite with its step manifest, and without the secret.
	var suite struct {
		Tests []struct {
			ID, Name   string
			LastStatus string `json:"last_status"`
		}
	}
	s.mustJSON(t, "GET", "/v1/tests", key, nil, http.StatusOK, &suite)
	if len(suite.Tests) != 1 || suite.Tests[0].Name != "login" || suite.Tests[0].LastStatus != "succeeded" {
		t.Fatalf("suite: %+v", suite)
	}
	code, stored := s.call(t, "GET", "/v1/tests/"+suite.Tests[0].ID, key, nil)
	var st struct {
		Script   string
		Manifest []struct {
			Step    int
			Entries []struct {
				Element struct{ Role, Name, Tag, Path string }
			}
		}
	}
	if err := json.Unmarshal(stored, &st); err != nil || code != 200 || st.Script != string(script) || len(st.Manifest) != 6 {
		t.Fatalf("stored test %d: %s", code, stored)
	}
	if el := st.Manifest[2].Entries[0].Element; el.Role != "button" || el.Name != "Sign in" || el.Tag != "button" || el.Path == "" {
		t.Fatalf("manifest fingerprint of step 3: %+v", el)
	}
	if strings.Contains(string(stored), demoapp.Password) || strings.Contains(string(stored), "sealed_secrets") {
		t.Fatal("the stored test carries the secret")
	}
	if code, _ := s.call(t, "GET", "/v1/tests/"+suite.Tests[0].ID, s.otherKey(t), nil); code != http.StatusNotFound {
		t.Fatalf("another tenant reads the test: %d", code)
	}
	browsertest.MustPassSpecTwice(t, string(script), map[string]string{"PASSWORD": demoapp.Password})
}

func TestAgentStepIsChargedWhatTheModelReported(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 300*time.Millisecond)
	model := llmtest.New(t,
		llmtest.Reply{Content: llmtest.JSON(map[string]any{"status": "continue", "reasoning": "open the list",
			"commands": []map[string]any{{"action": "click", "target": map[string]string{"role": "link", "name": "Shopping list"}}}}),
			PromptTokens: 2400, CachedTokens: 400, CompletionTokens: 120},
		llmtest.Reply{Content: llmtest.JSON(map[string]any{"status": "complete", "reasoning": "add it",
			"commands": []map[string]any{
				{"action": "fill", "target": map[string]string{"placeholder": "Add an item"}, "value": "Coffee beans"},
				{"action": "press", "target": map[string]string{"placeholder": "Add an item"}, "value": "Enter"},
			}}),
			PromptTokens: 2600, CachedTokens: 2000, CompletionTokens: 90},
	)
	s.startWorker(t, llm.New(llm.Config{APIKey: "test", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"}))
	tenantID, key := s.tenant(t, "agentco", 3)
	job := s.submit(t, key, map[string]any{
		"name": "agent adds an item", "base_url": s.demo + "/",
		"steps": []any{"Put coffee beans on the shopping list", `Verify "Coffee beans" is visible`},
	})
	v := s.wait(t, key, job.ID, 60*time.Second)
	if v.State != "succeeded" {
		t.Fatalf("job ended %s: %s", v.State, v.Error)
	}
	// What the scripted server reported, priced at gpt-4o-mini's default rates.
	want := llm.DefaultPrices.MicroCredits("gpt-4o-mini", llm.Usage{PromptTokens: 2400, CachedTokens: 400, CompletionTokens: 120}) +
		llm.DefaultPrices.MicroCredits("gpt-4o-mini", llm.Usage{PromptTokens: 2600, CachedTokens: 2000, CompletionTokens: 90})
	_, browser, rows := s.browserTime(t, job.ID)
	if v.Usage == nil || v.Usage.Calls != 2 || v.Usage.PromptTokens != 5000 || v.Usage.CachedTokens != 2400 ||
		v.Usage.CompletionTokens != 210 || v.Usage.CreditsMicro != want+browser || v.Usage.BrowserCreditsMicro != browser || browser <= 0 {
		t.Fatalf("usage = %+v, want 2 calls, 5000/2400/210 tokens, %d micro-credits and %d of browser time", v.Usage, want, browser)
	}
	if n := s.count(t, `SELECT count(*) FROM credit_entries WHERE job_id = $1 AND amount < 0`, job.ID); n != 2+rows {
		t.Fatalf("%d charges in the ledger, want 2 and %d for browser time", n, rows)
	}
	want += browser
	if a := s.account(t, tenantID); a.Balance != 3_000_000-want || a.Held != 0 {
		t.Fatalf("account = %+v, want balance %d and nothing held", a, 3_000_000-want)
	}
	var steps []struct {
		Tier       string
		Iterations int
		Usage      llm.Usage
	}
	_ = json.Unmarshal(v.Steps, &steps)
	if steps[0].Tier != "agent" || steps[0].Iterations != 2 || steps[0].Usage.PromptTokens != 5000 || steps[1].Tier != "deterministic" {
		t.Fatalf("per-step report: %+v", steps)
	}
	if model.Remaining() != 0 {
		t.Fatalf("%d scripted replies unused", model.Remaining())
	}
	_, script := s.call(t, "GET", "/v1/jobs/"+job.ID+"/script", key, nil)
	if !strings.Contains(browsertest.Untimed(string(script)), "await page.getByRole('textbox', { name: 'New item' }).fill('Coffee beans');") {
		t.Fatalf("agent commands missing from the spec:\n%s", script)
	}
	browsertest.MustPassSpecTwice(t, string(script), nil)

	// What an operator sees of it.
	_, dispatcher := s.call(t, "GET", "/metrics", "", nil)
	for _, want := range []string{
		`webpilot_jobs{kind="scenario",state="succeeded"} 1`,
		`webpilot_queue_depth 0`,
		`webpilot_scrape_source_up{source="postgres"} 1`,
		`webpilot_scrape_source_up{source="nats"} 1`,
		`webpilot_submissions_total{kind="scenario",outcome="accepted"} 1`,
	} {
		if !strings.Contains(string(dispatcher), want) {
			t.Errorf("the dispatcher's /metrics lacks %s", want)
		}
	}
	var ready struct {
		Status string
		Checks map[string]string
	}
	if code, body := s.call(t, "GET", "/readyz", "", nil); code != http.StatusOK || json.Unmarshal(body, &ready) != nil || ready.Checks["postgres"] != "ok" {
		t.Errorf("/readyz: %d %s", code, body)
	}
	workerText := s.workerMetricsText(t)
	for _, want := range []string{
		`webpilot_jobs_finished_total{kind="scenario",state="succeeded"} 1`,
		`webpilot_claim_latency_seconds_count 1`,
		`webpilot_step_duration_seconds_count{tier="agent"} 1`,
		`webpilot_step_duration_seconds_count{tier="deterministic"} 1`,
		`webpilot_model_calls_total{model="gpt-4o-mini"} 2`,
		`webpilot_model_tokens_total{model="gpt-4o-mini",type="prompt"} 5000`,
		`webpilot_model_tokens_total{model="gpt-4o-mini",type="completion"} 210`,
		`webpilot_browser_contexts 0`,
		`webpilot_settles_total{ended_by="quiet"}`,
	} {
		if !strings.Contains(workerText, want) {
			t.Errorf("the worker's metrics lack %s", want)
		}
	}
}

func TestExperiencesCarryToLaterJobsOnTheSameOrigin(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 0)
	learn := llmtest.Reply{Content: llmtest.JSON(map[string]any{"status": "complete",
		"commands":    []map[string]any{{"action": "click", "target": map[string]string{"role": "link", "name": "Shopping list"}}},
		"experiences": []string{"the shopping list adds items with Enter"}}), PromptTokens: 100}
	model := llmtest.New(t, learn, learn, learn)
	s.startWorker(t, llm.New(llm.Config{APIKey: "test", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"}))
	learnerID, key := s.tenant(t, "learner", 5)
	_, otherKey := s.tenant(t, "stranger", 5)
	// Without the step cache, so the second job asks the model again.
	sc := map[string]any{"name": "open the list", "base_url": s.demo + "/", "steps": []any{"Find the shopping list and open it"},
		"options": map[string]any{"no_step_cache": true}}
	for i, k := range []string{key, key, otherKey} {
		if v := s.wait(t, k, s.submit(t, k, sc).ID, 30*time.Second); v.State != "succeeded" {
			t.Fatalf("job %d: %s %s", i+1, v.State, v.Error)
		}
	}
	reqs := model.Requests()
	const lesson = "the shopping list adds items with Enter"
	if strings.Contains(reqs[0].Text(), lesson) || !strings.Contains(reqs[1].Text(), lesson) {
		t.Fatal("the second job of the tenant was not given what the first learned")
	}
	if strings.Contains(reqs[2].Text(), lesson) {
		t.Fatal("another tenant was given the first tenant's experiences")
	}
	if n := s.count(t, `SELECT count(*) FROM experiences WHERE text = $1 AND tenant_id = $2`, lesson, learnerID); n != 1 {
		t.Fatalf("%d experience rows for the tenant, want one (de-duplicated)", n)
	}
	// The tenant can review what was learned, and clear it; another tenant cannot touch it.
	var list struct {
		Experiences []struct{ Text, Origin string }
	}
	s.mustJSON(t, "GET", "/v1/experiences?origin="+s.demo, key, nil, http.StatusOK, &list)
	if len(list.Experiences) != 1 || list.Experiences[0].Text != lesson {
		t.Fatalf("review: %+v", list)
	}
	var del struct{ Deleted int }
	s.mustJSON(t, "DELETE", "/v1/experiences", otherKey, nil, http.StatusOK, &del)
	if n := s.count(t, `SELECT count(*) FROM experiences WHERE tenant_id = $1`, learnerID); n != 1 {
		t.Fatal("another tenant's delete removed the tenant's experiences")
	}
	s.mustJSON(t, "DELETE", "/v1/experiences?origin="+s.demo, key, nil, http.StatusOK, &del)
	if del.Deleted != 1 || s.count(t, `SELECT count(*) FROM experiences WHERE tenant_id = $1`, learnerID) != 0 {
		t.Fatalf("clear: deleted %d", del.Deleted)
	}
}

// TestARerunTakesTheAgentsStepFromTheTenantsCache: the second run of a
// scenario through the stack takes its agent step from the tenant's step
// cache (tier cached, no model call, the same spec); another tenant's run
// does not, and once the tenant clears its cache the agent is asked again.
func TestARerunTakesTheAgentsStepFromTheTenantsCache(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 0)
	open := llmtest.Reply{Content: llmtest.JSON(map[string]any{"status": "complete", "reasoning": "the list is linked",
		"commands": []map[string]any{{"action": "click", "target": map[string]string{"role": "link", "name": "Shopping list"}}}}), PromptTokens: 900}
	model := llmtest.New(t, open, open, open)
	s.startWorker(t, llm.New(llm.Config{APIKey: "test", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"}))
	_, key := s.tenant(t, "cacher", 5)
	_, otherKey := s.tenant(t, "cache-stranger", 5)
	sc := map[string]any{"name": "cached list", "base_url": s.demo + "/",
		"steps": []any{"Find the shopping list and open it", `Verify "Shopping list" is visible`}}
	run := func(k string, wantTier string, wantRequests int) api.JobView {
		t.Helper()
		v := s.wait(t, k, s.submit(t, k, sc).ID, 30*time.Second)
		if v.State != "succeeded" {
			t.Fatalf("job ended %s: %s", v.State, v.Error)
		}
		if v.Tiers[wantTier] != 1 || v.Tiers["deterministic"] != 1 || len(model.Requests()) != wantRequests {
			t.Fatalf("tiers %v after %d model requests; want the first step %s and %d requests", v.Tiers, len(model.Requests()), wantTier, wantRequests)
		}
		return v
	}
	first := run(key, "agent", 1)
	second := run(key, "cached", 1)
	if second.Usage != nil && second.Usage.Calls != 0 {
		t.Fatalf("the cached run made %d model calls", second.Usage.Calls)
	}
	_, a := s.call(t, "GET", "/v1/jobs/"+first.ID+"/script", key, nil)
	_, b := s.call(t, "GET", "/v1/jobs/"+second.ID+"/script", key, nil)
	// The same spec but for the timeouts of commands the machine made slow.
	if browsertest.Untimed(string(a)) != browsertest.Untimed(string(b)) {
		t.Fatalf("the cached run wrote another spec:\n%s\nwant:\n%s", b, a)
	}
	s.passSpec(t, key, second.ID)
	run(otherKey, "agent", 2) // entries never cross tenants

	var list struct{ Entries []api.StepCacheView }
	s.mustJSON(t, "GET", "/v1/step-cache?origin="+s.demo, key, nil, http.StatusOK, &list)
	if len(list.Entries) != 1 || list.Entries[0].Step != "find the shopping list and open it" || list.Entries[0].Hits != 1 || list.Entries[0].Commands != 1 {
		t.Fatalf("the tenant's step cache: %+v", list.Entries)
	}
	var del struct{ Deleted int }
	s.mustJSON(t, "DELETE", "/v1/step-cache", key, nil, http.StatusOK, &del)
	if del.Deleted != 1 {
		t.Fatalf("cleared %d entries, want 1", del.Deleted)
	}
	run(key, "agent", 3)
}
