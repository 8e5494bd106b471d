package explore_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/explore/exploretest"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/specrun"
)

// shop serves the demo app and returns it with its shop's URL.
func shop(t *testing.T) (*demoapp.App, string) {
	t.Helper()
	app := demoapp.New(demoapp.Options{})
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	return app, srv.URL + "/shop/"
}

func session(t *testing.T) *browser.Session {
	t.Helper()
	s, err := browsertest.Browser(t).NewSession(context.Background(), browser.SessionOptions{
		Policy: netguard.New([]string{"127.0.0.1"}), SlowResponse: explore.DefaultSlowResponse})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// explorer explores the shop, with the scripted model when replies are given.
func explorer(t *testing.T, base string, replies []llmtest.Reply) (explore.Result, *exploretest.Recorder) {
	t.Helper()
	rec := exploretest.NewRecorder()
	e := &explore.Explorer{Page: session(t), Recorder: rec, Config: explore.Config{AxeSource: browsertest.AxeSource(t)}}
	if replies != nil {
		model := llmtest.New(t, replies...)
		e.Model = llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"})
	}
	res, err := e.Run(context.Background(), explore.Input{BaseURL: base, Goal: exploretest.ShopGoal, MaxActions: 60,
		MaxDuration: 3 * time.Minute, Scope: []string{"/shop/"}, Deny: jobs.Safety{}.Words()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("exploration %s: %s", res.Status, res.Error)
	}
	return res, rec
}

var seeded = exploretest.Seeded

func find(res explore.Result, typ explore.Type, title string) []explore.Finding {
	var out []explore.Finding
	for _, f := range res.Findings {
		if f.Type == typ && strings.Contains(f.Title, title) {
			out = append(out, f)
		}
	}
	return out
}

func TestTheSweepFindsEveryDeterministicBugWithoutAModel(t *testing.T) {
	_, base := shop(t)
	res, rec := explorer(t, base, nil)
	for _, s := range seeded {
		got := find(res, s.Type, s.Title)
		if s.Type == explore.TypeFunctional {
			if len(got) != 0 {
				t.Errorf("a functional finding without a model: %+v", got)
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("%s %q: found %d times, want once", s.Type, s.Title, len(got))
		}
	}
	if n := len(res.Findings); n != demoapp.ShopSeededBugs-2 {
		for _, f := range res.Findings {
			t.Logf("finding %d [%s] %s", f.Seq, f.Type, f.Title)
		}
		t.Errorf("%d findings, want exactly the %d deterministic bugs", n, demoapp.ShopSeededBugs-2)
	}
	// The broken link was checked and then followed: one finding, seen twice.
	if link := find(res, explore.TypeBrokenLink, "size-guide"); len(link) == 1 && rec.Occurrences[link[0].Signature] < 2 {
		t.Errorf("the broken link was seen %d times; the click on it should have merged into the link check's finding", rec.Occurrences[link[0].Signature])
	}
	if res.Calls != 0 || res.Coverage.Exercised == 0 || len(res.Coverage.States) < 3 {
		t.Errorf("calls %d, exercised %d, states %d", res.Calls, res.Coverage.Exercised, len(res.Coverage.States))
	}
	t.Logf("%d findings in %d actions, %d states, %d/%d elements exercised, stopped: %s", len(res.Findings), res.Actions,
		len(res.Coverage.States), res.Coverage.Exercised, res.Coverage.Seen, res.Stopped)
}

func runReport(ctx context.Context, spec string) ([]specrun.TestResult, error) {
	return browsertest.RunReport(ctx, spec, nil)
}

func TestExplorationFindsTheSeededBugsAndReproducesEachOne(t *testing.T) {
	t.Parallel()
	_, base := shop(t)
	res, _ := explorer(t, base, exploretest.ShopModel())
	for _, s := range seeded {
		if got := find(res, s.Type, s.Title); len(got) != 1 {
			t.Errorf("%s %q: found %d times, want once", s.Type, s.Title, len(got))
		}
	}
	t.Logf("%d actions, stopped: %s; %d states", res.Actions, res.Stopped, len(res.Coverage.States))
	for _, tr := range res.Coverage.Transitions {
		t.Logf("%s -> %s by %s", tr.From, tr.To, tr.Action)
	}
	if len(res.Findings) != demoapp.ShopSeededBugs {
		for _, f := range res.Findings {
			t.Logf("finding %d [%s] %s", f.Seq, f.Type, f.Title)
		}
		t.Fatalf("%d findings, want the %d seeded bugs (rejected claims: %+v)", len(res.Findings), demoapp.ShopSeededBugs, res.Rejected)
	}
	for _, f := range find(res, explore.TypeFunctional, "") {
		if f.Evidence.Expected == "" || f.Evidence.Observed == "" || f.Check.Verify == nil || f.Check.Verify.Element == nil {
			t.Errorf("functional finding %q lacks evidence: %+v", f.Title, f.Evidence)
		}
	}
	if total := find(res, explore.TypeFunctional, "total"); len(total) == 1 && (total[0].Evidence.Observed != "$6.40" || !strings.Contains(total[0].Evidence.Expected, "$5.20")) {
		t.Errorf("total evidence: %+v", total[0].Evidence)
	}
	if !res.GoalMet || res.Calls != 4 {
		t.Errorf("goal met %v after %d calls, want true after 4", res.GoalMet, res.Calls)
	}
	for _, f := range res.Findings {
		if f.Evidence.Screenshot == "" {
			t.Errorf("finding %q has no screenshot", f.Title)
		}
	}

	// The journey's own spec passes under @playwright/test. (That every
	// reproduction fails at its check on the seeded shop and passes on the
	// fixed one is TestExplorationOfTheShopThroughTheStack's, through the
	// worker; the zoo's test checks the same here.)
	results, err := runReport(context.Background(), res.Journey.Script)
	if err != nil || len(results) != 1 || results[0].Status != "passed" {
		t.Errorf("the journey spec does not pass: %v %+v\n%s", err, results, res.Journey.Script)
	}
}

func TestTheBugFreeShopHasNoFindings(t *testing.T) {
	app, base := shop(t)
	app.SetShopBugs(false)
	res, _ := explorer(t, base, exploretest.ShopModel())
	for _, f := range res.Findings {
		t.Errorf("false positive: [%s] %s (%s)", f.Type, f.Title, f.Evidence.Message)
	}
	// The model claimed both functional bugs anyway: the page bore neither out.
	if len(res.Rejected) != 2 {
		t.Errorf("rejected claims %+v, want the 2 the scripted model makes", res.Rejected)
	}
	for _, c := range res.Rejected {
		if !strings.Contains(c.Reason, "holds on the page") {
			t.Errorf("claim %q rejected for %q", c.Title, c.Reason)
		}
	}
}

func TestTheSafetyPolicyNeverClicksIrreversibleControls(t *testing.T) {
	t.Run("by default", func(t *testing.T) {
		app, base := shop(t)
		// The model insists on the dangerous buttons; the sweep then tries everything else.
		insist := llmtest.Reply{PromptTokens: 10, CompletionTokens: 10, Respond: func(r llmtest.Request) string {
			var cmds []any
			for _, name := range []string{`button "Sign out"`, `button "Delete account"`} {
				if ref := refOn(r.Text(), name); ref != "" {
					cmds = append(cmds, map[string]any{"action": "click", "target": map[string]any{"ref": ref}})
				}
			}
			return llmtest.JSON(map[string]any{"commands": cmds, "done": len(cmds) == 0})
		}}
		rec := exploretest.NewRecorder()
		model := llmtest.New(t, insist, insist, llmtest.Reply{Content: `{"done": true, "note": "nothing else to try"}`})
		model.Fallback = &llmtest.Reply{Content: `{"done": true}`} // the other pages the crawl reaches
		e := &explore.Explorer{Page: session(t), Recorder: rec, Model: llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "m"})}
		res, err := e.Run(context.Background(), explore.Input{BaseURL: strings.TrimSuffix(base, "/shop/") + "/shop/account", Goal: "look around the account",
			MaxActions: 40, MaxDuration: time.Minute, Scope: []string{"/shop/"}, Deny: jobs.Safety{}.Words()})
		if err != nil {
			t.Fatal(err)
		}
		if calls := app.ShopDangerCalls(); calls["signout"]+calls["delete"]+calls["pay"] != 0 {
			t.Errorf("irreversible controls were clicked: %v", calls)
		}
		refused := 0
		for _, ev := range rec.Events {
			if strings.HasPrefix(ev.Error, "refused: the safety policy") {
				refused++
			}
		}
		if refused < 2 || res.Actions == 0 {
			t.Errorf("%d refusals in %d actions, want the model's two clicks refused and the rest explored", refused, res.Actions)
		}
	})
	t.Run("a word the request allows", func(t *testing.T) {
		app, base := shop(t)
		e := &explore.Explorer{Page: session(t), Recorder: exploretest.NewRecorder()}
		_, err := e.Run(context.Background(), explore.Input{BaseURL: strings.TrimSuffix(base, "/shop/") + "/shop/account", Goal: "x",
			MaxActions: 10, MaxDuration: time.Minute, Scope: []string{"/shop/account"}, Deny: jobs.Safety{Allow: []string{"sign out"}}.Words()})
		if err != nil {
			t.Fatal(err)
		}
		if calls := app.ShopDangerCalls(); calls["signout"] != 1 || calls["delete"] != 0 {
			t.Errorf("with sign out allowed: %v, want sign out clicked once and delete never", calls)
		}
	})
}

func refOn(page, what string) string {
	for _, line := range strings.Split(page, "\n") {
		if strings.Contains(line, "- "+what) {
			if i := strings.Index(line, "[ref="); i >= 0 {
				return strings.TrimSuffix(strings.SplitN(line[i+5:], "]", 2)[0], "]")
			}
		}
	}
	return ""
}

// TestAnExplorationResumesFromItsCheckpoint stops an exploration after a
// few actions (as a crash would) and resumes it from its last checkpoint
// in a new browser context: it goes on where it was, reports every finding
// once, and the findings of the first attempt keep their numbers.
func TestAnExplorationResumesFromItsCheckpoint(t *testing.T) {
	_, base := shop(t)
	rec := exploretest.NewRecorder()
	in := explore.Input{BaseURL: base, Goal: "look around", MaxActions: 8, MaxDuration: time.Minute, Scope: []string{"/shop/"},
		Deny: jobs.Safety{}.Words()}
	axe := explore.Config{AxeSource: browsertest.AxeSource(t)}
	first, err := (&explore.Explorer{Page: session(t), Recorder: rec, Config: axe}).Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if first.Actions != 8 || len(first.Findings) == 0 {
		t.Fatalf("first attempt: %d actions, %d findings", first.Actions, len(first.Findings))
	}
	cp := rec.Last
	sess, err := browsertest.Browser(t).NewSession(context.Background(), browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"}),
		SlowResponse: explore.DefaultSlowResponse, StorageState: cp.StorageState})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	in.MaxActions, in.Resume = 60, &cp
	second, err := (&explore.Explorer{Page: sess, Recorder: rec, Config: axe}).Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Findings) != demoapp.ShopSeededBugs-2 {
		for _, f := range second.Findings {
			t.Logf("finding %d [%s] %s", f.Seq, f.Type, f.Title)
		}
		t.Errorf("%d findings after resuming, want the %d deterministic bugs", len(second.Findings), demoapp.ShopSeededBugs-2)
	}
	for sig, n := range rec.News {
		if n != 1 {
			t.Errorf("finding %s reported new %d times", sig, n)
		}
	}
	for i, f := range first.Findings {
		if second.Findings[i].Signature != f.Signature || second.Findings[i].Seq != f.Seq {
			t.Errorf("finding %d changed on resume: %+v", f.Seq, second.Findings[i])
		}
	}
	// What the first attempt exercised is not done again.
	if second.Actions > 18 {
		t.Errorf("%d actions in all, want about the 15 of an uninterrupted run", second.Actions)
	}
}

// TestOneSlowAnswerIsNotASlowEndpoint: a response over the threshold is
// measured again before it counts: an endpoint that answered late once (a
// machine under load) is not reported; one that is slow every time is,
// with the second measurement in its evidence.
func TestOneSlowAnswerIsNotASlowEndpoint(t *testing.T) {
	t.Parallel()
	slow := explore.DefaultSlowResponse + 300*time.Millisecond
	var once sync.Once
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Status</title></head><body><main><h1>Status</h1><p id="a"></p><p id="b"></p></main>
<button type="button" id="refresh">Refresh</button>
<script>const load = () => { fetch('/api/once').then(r => r.text()).then(t => a.textContent = t); fetch('/api/always').then(r => r.text()).then(t => b.textContent = t); };
load(); refresh.onclick = load;</script></body></html>`)
	})
	mux.HandleFunc("GET /api/once", func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { time.Sleep(slow) })
		fmt.Fprint(w, "once")
	})
	mux.HandleFunc("GET /api/always", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(slow)
		fmt.Fprint(w, "always")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e := &explore.Explorer{Page: session(t), Recorder: exploretest.NewRecorder()}
	res, err := e.Run(context.Background(), explore.Input{BaseURL: srv.URL + "/", Goal: "find bugs", MaxActions: 5,
		MaxDuration: time.Minute, Scope: []string{"/"}})
	if err != nil {
		t.Fatal(err)
	}
	always, onlyOnce := find(res, explore.TypeSlowResponse, "/api/always"), find(res, explore.TypeSlowResponse, "/api/once")
	if len(always) != 1 || !strings.Contains(always[0].Evidence.Message, "asked again") {
		t.Errorf("the endpoint slow every time: %+v", always)
	}
	if len(onlyOnce) != 0 {
		t.Errorf("an endpoint slow once was reported: %+v", onlyOnce)
	}
}

// TestAPageThatAsksForALoginIsNotBroken: a link to a page behind HTTP
// authentication (401) or one the session may not see (403) is listed as
// needing authentication, never reported as a broken link or an error
// page; a link that really is broken still is.
func TestAPageThatAsksForALoginIsNotBroken(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Examples</title></head><body><main><h1>Examples</h1><ul>
<li><a href="/basic-auth">Basic auth</a></li><li><a href="/staff">Staff room</a></li><li><a href="/gone">Old page</a></li></ul></main></body></html>`)
	})
	mux.HandleFunc("GET /basic-auth", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="examples"`)
		http.Error(w, "Not authorized", http.StatusUnauthorized)
	})
	mux.HandleFunc("GET /staff", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "Forbidden", http.StatusForbidden) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e := &explore.Explorer{Page: session(t), Recorder: exploretest.NewRecorder()}
	res, err := e.Run(context.Background(), explore.Input{BaseURL: srv.URL + "/", Goal: "find bugs", MaxActions: 10,
		MaxDuration: time.Minute, Scope: []string{"/"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		if strings.Contains(f.Title, "basic-auth") || strings.Contains(f.Title, "staff") {
			t.Errorf("a page that asks for a login is reported: [%s] %s", f.Type, f.Title)
		}
	}
	if gone := find(res, explore.TypeBrokenLink, "/gone"); len(gone) != 1 {
		t.Errorf("the broken link: %+v", res.Findings)
	}
	want := []string{srv.URL + "/basic-auth", srv.URL + "/staff"}
	got := slices.Sorted(slices.Values(res.NeedsAuthentication))
	if !slices.Equal(got, want) {
		t.Errorf("needs authentication: %q, want %q", got, want)
	}
}
