package main

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/worker"
)

// pageBench prints the page-level figures: settling against a fixed
// stability window, representation size, and per-iteration overhead.
func (e *env) pageBench(ctx context.Context, runs int) error {
	sess, err := e.browser.NewSession(ctx, browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"})})
	if err != nil {
		return err
	}
	defer sess.Close()

	fmt.Printf("Settling after an action (median of %d; fixed window = wait until the page is unchanged for 500 ms, polled every 100 ms)\n", runs)
	fmt.Printf("  %-44s %12s %12s %8s\n", "action", "multi-signal", "fixed 500ms", "ratio")
	for _, c := range []struct {
		name, path, button string
	}{
		{"quiet page (add an item, DOM only)", "/list", "Add"},
		{"fetch answered after 300 ms (refresh report)", "/delayed", "Refresh"},
	} {
		ours, fixed, err := settleCompare(ctx, sess, e.demo+c.path, c.button, runs)
		if err != nil {
			return err
		}
		fmt.Printf("  %-44s %9.1f ms %9.1f ms %7.2fx\n", c.name, ms(ours), ms(fixed), float64(fixed)/float64(ours))
	}
	fmt.Println()

	if err := representationTable(ctx, sess, e.demo, runs); err != nil {
		return err
	}
	return e.iterationOverhead(ctx, runs)
}

// settleCompare measures, on the same page in the same run, our settle and
// a fixed stability window after clicking button.
func settleCompare(ctx context.Context, s *browser.Session, url, button string, runs int) (time.Duration, time.Duration, error) {
	var ours, fixed []time.Duration
	click := browser.Command{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: button, Exact: true}}
	for i := 0; i < runs; i++ {
		for _, mode := range []string{"ours", "fixed"} {
			if err := s.Navigate(ctx, url); err != nil {
				return 0, 0, err
			}
			s.Settle(ctx, browser.SettleOptions{Since: time.Now().Add(-time.Minute)})
			if button == "Add" {
				_ = s.Execute(ctx, browser.Command{Action: browser.ActionFill, Target: browser.Target{Label: "New item"}, Value: "Tea"}, browser.ExecOptions{})
			}
			start := time.Now()
			if out := s.Execute(ctx, click, browser.ExecOptions{}); out.Err != nil {
				return 0, 0, out.Err
			}
			if mode == "ours" {
				rep := s.Settle(ctx, browser.SettleOptions{Since: start})
				if rep.TimedOut {
					return 0, 0, fmt.Errorf("settle timed out: %s", rep.Reason)
				}
				ours = append(ours, rep.Duration)
			} else {
				fixed = append(fixed, fixedWindow(s, 500*time.Millisecond, 100*time.Millisecond, 5*time.Second))
			}
		}
	}
	return percentile(ours, 50), percentile(fixed, 50), nil
}

// fixedWindow is the baseline: poll the page state and return once it has
// not changed for window.
func fixedWindow(s *browser.Session, window, poll, timeout time.Duration) time.Duration {
	start := time.Now()
	last, stableSince := "", time.Now()
	for time.Since(start) < timeout {
		st, _ := s.CaptureState(2000)
		h := fnv.New64a()
		b, _ := json.Marshal(browser.Diff(browser.PageState{}, st, 100000))
		h.Write(b)
		cur := fmt.Sprint(h.Sum64())
		if cur != last {
			last, stableSince = cur, time.Now()
		} else if time.Since(stableSince) >= window {
			break
		}
		time.Sleep(poll)
	}
	return time.Since(start)
}

// largePage has about 2,000 elements: a nav, a form, a 300-row table and a list.
func largePage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<!doctype html><html><head><title>Large</title></head><body><nav>`)
		for i := range 40 {
			fmt.Fprintf(&b, `<a href="/s/%d">Section %d</a> `, i, i)
		}
		b.WriteString(`</nav><form><label>Search <input name=q></label><select aria-label="Sort"><option>Name</option><option>Price</option></select><button>Go</button></form>`)
		b.WriteString(`<table><thead><tr><th>Id</th><th>Name</th><th>Action</th></tr></thead><tbody>`)
		for i := range 300 {
			fmt.Fprintf(&b, `<tr><td>%d</td><td>Item %d</td><td><button>Edit</button></td></tr>`, i, i)
		}
		b.WriteString(`</tbody></table><ul>`)
		for i := range 150 {
			fmt.Fprintf(&b, `<li><span>Note %d</span> <a href="/n/%d">open</a></li>`, i, i)
		}
		b.WriteString(`</ul></body></html>`)
		fmt.Fprint(w, b.String())
	})
}

// representationTable compares the representation with the raw aria
// snapshot and the raw HTML, in tokens estimated as characters / 4.
func representationTable(ctx context.Context, s *browser.Session, demo string, runs int) error {
	large := httptest.NewServer(largePage())
	defer large.Close()
	testdata := httptest.NewServer(http.FileServer(http.Dir(testdataDir("internal/orchestrator"))))
	defer testdata.Close()
	widgets := httptest.NewServer(http.FileServer(http.Dir(testdataDir("internal/browser"))))
	defer widgets.Close()
	pagesList := []struct{ name, url string }{
		{"demo /login", demo + "/login"}, {"demo /form", demo + "/form"}, {"demo /list", demo + "/list"},
		{"testdata shop.html", testdata.URL + "/shop.html"}, {"testdata cookie.html", testdata.URL + "/cookie.html"},
		{"testdata frames.html", testdata.URL + "/frames.html"}, {"testdata widgets.html", widgets.URL + "/widgets.html"},
		{"testdata frameset.html", widgets.URL + "/frameset.html"}, {"testdata editor.html", widgets.URL + "/editor.html"},
		{"testdata sort.html", widgets.URL + "/sort.html"}, {"testdata shadow-slot.html", widgets.URL + "/shadow-slot.html"},
		{"testdata tall.html", widgets.URL + "/tall.html"},
		{"generated large page (2,000 elements)", large.URL + "/"},
	}
	fmt.Printf("Page representation (tokens = characters / 4; build time median of %d; refs = interactive elements with a ref)\n", runs)
	fmt.Printf("  %-40s %8s %8s %8s %10s %12s\n", "page", "repr", "aria", "html", "build", "refs")
	var tokens, builds []float64
	var largeTokens, largeBuild float64
	withRef, interactive := 0, 0
	for _, p := range pagesList {
		if err := s.Navigate(ctx, p.url); err != nil {
			return err
		}
		s.Settle(ctx, browser.SettleOptions{Since: time.Now().Add(-time.Minute)})
		var times []time.Duration
		var snap browser.Snapshot
		for range runs {
			t := time.Now()
			var err error
			if snap, err = s.Snapshot(ctx, browser.SnapshotOptions{Budget: orchestrator.DefaultLimits().SnapshotBudget}); err != nil {
				return err
			}
			times = append(times, time.Since(t))
		}
		full, err := s.Snapshot(ctx, browser.SnapshotOptions{FullPage: true})
		if err != nil {
			return err
		}
		census := 0
		for _, f := range s.LiveFrames() {
			v, err := f.Evaluate(browser.InteractiveCensusScript)
			if err != nil {
				return fmt.Errorf("count the controls of %s: %w", p.name, err)
			}
			census += int(toNum(v))
		}
		refs := min(full.InteractiveRefs(), census)
		withRef, interactive = withRef+refs, interactive+census
		html, _ := s.Page().Content()
		v, _ := s.Page().Evaluate(`() => document.querySelectorAll('*').length`)
		n := int(toNum(v))
		build := ms(percentile(times, 50))
		fmt.Printf("  %-40s %8d %8d %8d %7.1f ms %5d of %-5d  (%d DOM elements)\n", p.name, len(snap.Text)/4, snap.RawChars/4, len(html)/4, build, refs, census, n)
		if strings.HasPrefix(p.name, "generated large") {
			largeTokens, largeBuild = float64(len(snap.Text)/4), build
		} else {
			tokens, builds = append(tokens, float64(len(snap.Text)/4)), append(builds, build)
		}
	}
	share := 1.0
	if interactive > 0 {
		share = float64(withRef) / float64(interactive)
	}
	fmt.Printf("\nbench representation: pages=%d tokens_median=%.0f build_ms_median=%.1f tokens_large=%.0f build_ms_large=%.1f ref_share=%.3f\n\n",
		len(pagesList), median(tokens), median(builds), largeTokens, largeBuild, share)
	return nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func toNum(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	return 0
}

// testdataDir finds pkg's testdata directory from the module root.
func testdataDir(pkg string) string { return filepath.Join(moduleRoot(), pkg, "testdata") }

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot() string {
	wd, _ := os.Getwd()
	for d := wd; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return "."
}

// timedModel measures every model call so the overhead around it can be
// separated.
type timedModel struct {
	inner orchestrator.Model
	mu    sync.Mutex
	calls []time.Duration
}

func (m *timedModel) Chat(ctx context.Context, r llm.Request) (llm.Reply, error) {
	t := time.Now()
	rep, err := m.inner.Chat(ctx, r)
	m.mu.Lock()
	m.calls = append(m.calls, time.Since(t))
	m.mu.Unlock()
	return rep, err
}

func (m *timedModel) Model() string { return m.inner.Model() }

// iterationOverhead runs agent steps of one iteration each (observe, prompt,
// model, parse, execute a fill and a click, settle, record to Postgres) and
// reports the time outside the model call.
func (e *env) iterationOverhead(ctx context.Context, runs int) error {
	steps := runs * 2
	var replies []llmtest.Reply
	for range steps {
		replies = append(replies, llmtest.Reply{PromptTokens: 1000, CompletionTokens: 50, Respond: func(req llmtest.Request) string {
			return llmtest.JSON(map[string]any{"status": "complete", "commands": []any{
				map[string]any{"action": "fill", "target": map[string]any{"label": "New item"}, "value": "Tea"},
				map[string]any{"action": "click", "target": map[string]any{"role": "button", "name": "Add", "exact": true}},
			}})
		}})
	}
	srv := llmtest.Start(replies...)
	defer srv.Close()
	model := &timedModel{inner: llm.New(llm.Config{APIKey: "bench", BaseURL: srv.BaseURL(), Model: "gpt-4o-mini"})}

	sc := scenario.Scenario{Name: "overhead", BaseURL: e.demo + "/list"}
	for range steps {
		sc.Steps = append(sc.Steps, scenario.Step{Type: "ai_action", Text: "Add tea to the list"})
	}
	input, _ := json.Marshal(sc)
	j, err := e.st.SubmitJob(ctx, store.NewJob{TenantID: e.tenant.ID, Kind: "scenario", Input: input, Hold: 1e12, Subject: "jobs.bench"})
	if err != nil {
		return err
	}
	claim, err := e.st.ClaimJob(ctx, j.ID, "bench", time.Hour)
	if err != nil {
		return err
	}
	sess, err := e.browser.NewSession(ctx, browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"})})
	if err != nil {
		return err
	}
	defer sess.Close()
	a := &orchestrator.Agent{Page: sess, Model: model, Recorder: worker.NewRecorder(e.st, j.ID, claim.Attempt, llm.DefaultPrices, e.sealer)}
	res, err := a.Run(ctx, orchestrator.Input{Scenario: sc})
	if err != nil {
		return err
	}
	if res.Status != orchestrator.StatusSucceeded || len(model.calls) != steps {
		return fmt.Errorf("overhead run: %s (%s), %d calls", res.Status, res.Error, len(model.calls))
	}
	var over []time.Duration
	for i, s := range res.Steps {
		if s.Iterations != 1 {
			return fmt.Errorf("step %d took %d iterations", i+1, s.Iterations)
		}
		over = append(over, s.Duration-model.calls[i])
	}
	over = over[1:] // the first step warms up
	sort.Slice(over, func(i, j int) bool { return over[i] < over[j] })
	fmt.Printf("Agent iteration overhead outside the model call (%d one-iteration steps: observe, prompt, parse, fill+click, settle, record to Postgres)\n", len(over))
	fmt.Printf("  %-44s %9.1f ms\n", "median", ms(percentile(over, 50)))
	fmt.Printf("  %-44s %9.1f ms\n", "p95", ms(percentile(over, 95)))
	fmt.Printf("  %-44s %9.1f ms\n", "model call (scripted local server), median", ms(percentile(model.calls, 50)))
	return nil
}
