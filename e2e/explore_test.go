package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/explore/exploretest"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/testslot"
)

// TestExplorationOfTheShopThroughTheStack explores the demo shop from the
// CLI (API → NATS → worker → Chromium, the scripted model choosing the
// journey): every seeded bug is a finding with a screenshot and a
// reproduction that failed under @playwright/test at its check; the
// findings stream as they are found; bad requests are 400s naming the
// field; another tenant cannot read them.
func TestExplorationOfTheShopThroughTheStack(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	bin := buildCmd(t, "webpilot")
	s := newStack(t, 10*time.Second, 0)
	model := llmtest.New(t, exploretest.ShopModel()...)
	s.startWorker(t, llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"}))
	_, key := s.tenant(t, "explorer", 5)

	valid := func(change func(e map[string]any)) map[string]any {
		e := map[string]any{"base_url": s.demo + "/shop/", "goal": exploretest.ShopGoal, "scope": []string{"/shop/"}}
		change(e)
		return map[string]any{"kind": "exploration", "exploration": e}
	}
	for _, c := range []struct {
		name, field string
		body        map[string]any
	}{
		{"no exploration", "exploration", map[string]any{"kind": "exploration"}},
		{"no goal", "exploration.goal", valid(func(e map[string]any) { delete(e, "goal") })},
		{"goal and journeys", "exploration.journeys", valid(func(e map[string]any) { e["journeys"] = []string{"a"} })},
		{"scope not a path", "exploration.scope[0]", valid(func(e map[string]any) { e["scope"] = []string{"shop"} })},
		{"too many actions", "exploration.budget.max_actions", valid(func(e map[string]any) { e["budget"] = map[string]any{"max_actions": 100000} })},
		{"metadata address", "exploration.base_url", valid(func(e map[string]any) { e["base_url"] = "http://169.254.169.254/" })},
		{"odd deny word", "exploration.safety.deny[0]", valid(func(e map[string]any) { e["safety"] = map[string]any{"deny": []string{"<script>"}} })},
		{"login without its secret", "exploration.login.password", valid(func(e map[string]any) {
			e["login"] = map[string]any{"url": "/login"}
			e["secrets"] = map[string]string{"USERNAME": "user"}
		})},
	} {
		raw, _ := json.Marshal(c.body)
		code, b := s.call(t, "POST", "/v1/jobs", key, raw)
		if code != http.StatusBadRequest || !strings.Contains(string(b), `"field": "`+c.field+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.name, code, b, c.field)
		}
	}

	cli := s.cliAs(bin, key)
	out, err := cli("explore", s.demo+"/shop/", "--goal", exploretest.ShopGoal, "--scope", "/shop/", "--max-actions", "60", "--watch")
	if err != nil {
		t.Fatalf("webpilot explore: %v\n%s", err, out)
	}
	id := regexp.MustCompile(`submitted exploration ([0-9a-f-]{36})`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no job id in:\n%s", out)
	}
	// One finding printed per event as it was found, then the summary.
	if n := strings.Count(out, "\n#"); n != demoapp.ShopSeededBugs {
		t.Errorf("%d findings streamed, want %d:\n%s", n, demoapp.ShopSeededBugs, out)
	}
	if !strings.Contains(out, "9 findings (9 reproduced)") || !strings.Contains(out, "goal met: true") {
		t.Errorf("summary:\n%s", out)
	}
	v := s.wait(t, key, id[1], time.Minute) // the journey's spec passes
	if v.State != "succeeded" || v.Kind != "exploration" || v.Progress.Done == 0 || len(v.Exploration) == 0 {
		t.Fatalf("job: %+v", v)
	}

	var res struct{ Findings []api.FindingView }
	s.mustJSON(t, "GET", "/v1/jobs/"+id[1]+"/findings", key, nil, http.StatusOK, &res)
	if len(res.Findings) != demoapp.ShopSeededBugs {
		t.Fatalf("%d findings, want %d", len(res.Findings), demoapp.ShopSeededBugs)
	}
	for _, f := range res.Findings {
		var rep struct {
			Verified bool
			Outcome  string
			Spec     string
		}
		var ev struct{ Screenshot string }
		_ = json.Unmarshal(f.Reproduction, &rep)
		_ = json.Unmarshal(f.Evidence, &ev)
		if !rep.Verified || rep.Outcome != "fails_as_expected" || !strings.Contains(rep.Spec, "@playwright/test") {
			t.Errorf("finding %d %q: reproduction %+v", f.Seq, f.Title, rep)
		}
		if code, png := s.call(t, "GET", "/v1/jobs/"+id[1]+"/artifacts/"+ev.Screenshot, key, nil); code != http.StatusOK || !strings.HasPrefix(string(png), "\x89PNG") {
			t.Errorf("finding %d screenshot %q: %d", f.Seq, ev.Screenshot, code)
		}
		if f.Occurrences < 1 || f.Signature == "" {
			t.Errorf("finding %d: %+v", f.Seq, f)
		}
	}
	// The console shows each finding with its evidence picture and its
	// verified reproduction.
	code, page := s.consolePage(t, key, "/console/jobs/"+id[1])
	if code != http.StatusOK || strings.Count(page, `<article class="finding`) != demoapp.ShopSeededBugs ||
		strings.Count(page, "(verified under @playwright/test)") != demoapp.ShopSeededBugs ||
		strings.Count(page, `alt="The page when finding`) != demoapp.ShopSeededBugs {
		t.Errorf("the console's exploration page (%d) does not show the %d findings with pictures and reproductions", code, demoapp.ShopSeededBugs)
	}
	out, err = cli("findings", id[1])
	if err != nil || strings.Count(out, "reproduction: fails_as_expected") != demoapp.ShopSeededBugs {
		t.Errorf("webpilot findings: %v\n%s", err, out)
	}
	if code, _ := s.call(t, "GET", "/v1/jobs/"+id[1]+"/findings", s.otherKey(t), nil); code != http.StatusNotFound {
		t.Errorf("another tenant reads the findings: %d", code)
	}
	for _, f := range res.Findings {
		if f.Confidence != "confirmed" || f.Status != "" {
			t.Errorf("finding %d: confidence %q, status %q; want confirmed and no status on a first run", f.Seq, f.Confidence, f.Status)
		}
	}

	// A test plan the exploration suggests becomes a stored test with one
	// call, and its scenario passes.
	out, err = cli("plan", "list", id[1])
	if err != nil || !strings.Contains(out, "plan 1 [") {
		t.Fatalf("webpilot plan list: %v\n%s", err, out)
	}
	t.Logf("plans:\n%s", out)
	out, err = cli("plan", "accept", id[1], "1", "--watch")
	if err != nil || !strings.Contains(out, "submitted plan 1 of exploration "+id[1]) {
		t.Errorf("webpilot plan accept: %v\n%s", err, out)
	}
	if out, err := cli("plan", "accept", id[1], "99"); err == nil || !strings.Contains(out, "there is no plan 99") {
		t.Errorf("accepting a plan that is not there: %v\n%s", err, out)
	}

	// The bugs are fixed and the shop explored again: every finding of the
	// first run is fixed, told by its reproduction passing now.
	s.app.SetShopBugs(false)
	model.Fallback = &llmtest.Reply{Content: `{"done": true}`}
	out, err = cli("explore", s.demo+"/shop/", "--goal", exploretest.ShopGoal, "--scope", "/shop/", "--max-actions", "30", "--watch")
	if err != nil {
		t.Fatalf("webpilot explore, again: %v\n%s", err, out)
	}
	want := fmt.Sprintf("against exploration %s: 0 new, 0 still open, %d fixed, 0 missed by this run, 0 not rechecked", id[1], demoapp.ShopSeededBugs)
	if !strings.Contains(out, want) {
		t.Errorf("the second exploration does not say every bug was fixed (%q):\n%s", want, out)
	}
}

// TestAnExplorationsJourneysAreChildJobs explores two journeys of the shop
// without a model: one parent fans out a child exploration per journey
// through the queue, waits without a worker, and ends with their report;
// its findings are its children's.
func TestAnExplorationsJourneysAreChildJobs(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 0)
	s.startWorker(t, nil)
	_, key := s.tenant(t, "journeys", 5)
	var j api.JobView
	s.mustJSON(t, "POST", "/v1/jobs", key, map[string]any{"kind": "exploration", "exploration": map[string]any{
		"base_url": s.demo + "/shop/", "journeys": []string{"look at the products", "look at the account"},
		"scope": []string{"/shop/"}, "budget": map[string]any{"max_actions": 4}}}, http.StatusAccepted, &j)
	if j.HoldCredits != 4 {
		t.Errorf("held %.2f credits for two journeys, want the default hold of each (4)", j.HoldCredits)
	}
	v := s.waitEnd(t, key, j.ID, 3*time.Minute)
	if v.State != "succeeded" || v.Suite == nil || v.Suite.Tests != 2 || v.Suite.States["succeeded"] != 2 {
		t.Fatalf("parent %s: %+v", v.State, v.Suite)
	}
	if v.Suite.Children[0].TestName != "look at the products" || v.Suite.Children[1].TestName != "look at the account" {
		t.Errorf("children: %+v", v.Suite.Children)
	}
	var res struct{ Findings []api.FindingView }
	s.mustJSON(t, "GET", "/v1/jobs/"+j.ID+"/findings", key, nil, http.StatusOK, &res)
	byJob := map[string]int{}
	for _, f := range res.Findings {
		byJob[f.JobID]++
	}
	if len(res.Findings) == 0 || byJob[v.Suite.Children[0].JobID] == 0 {
		t.Errorf("the parent shows %d findings (%v); the products journey finds bugs within 4 actions", len(res.Findings), byJob)
	}
	if n := s.count(t, `SELECT count(*) FROM jobs WHERE parent_id = $1`, j.ID); n != 2 {
		t.Errorf("%d children, want 2", n)
	}
}
