package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/lexical/lexicaltest"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/worker"
)

// lexicalBench measures the tiers below the agent: how the corpus of steps
// written the way people write them splits between the grammar, the
// lexical tier and the agent (and whether any resolved to a wrong
// element), the time of a lexical resolution, and how many model calls the
// second run of a scenario makes with the tenant's step cache in Postgres.
func (e *env) lexicalBench(ctx context.Context) error {
	out, err := e.measureCorpus(ctx, lexicaltest.Pages(), lexicaltest.Corpus())
	if err != nil {
		return fmt.Errorf("lexical bench: %w", err)
	}
	tiers := map[string]int{}
	resolved, wrong, compound, compoundWrong := 0, 0, 0, 0
	var times []time.Duration
	for _, o := range out {
		switch {
		case orchestrator.Grammatical(o.Case.Step):
			tiers[orchestrator.TierDeterministic]++
		case o.Right:
			tiers[orchestrator.TierLexical]++
		default:
			tiers[orchestrator.TierAgent]++
		}
		if o.Right {
			resolved++
			times = append(times, o.Duration)
		}
		if o.Wrong() {
			wrong++
		}
		if len(o.Case.Then) > 0 {
			compound++
			if o.Wrong() {
				compoundWrong++
			}
		}
	}
	slices.Sort(times)
	pct := func(p float64) float64 {
		if len(times) == 0 {
			return 0
		}
		return float64(times[int(p*float64(len(times)-1))].Microseconds()) / 1000
	}
	n := len(out)
	calls, sameSpec, err := e.cachedRerun(ctx)
	if err != nil {
		return fmt.Errorf("lexical bench: %w", err)
	}
	fmt.Printf("Steps written the way people write them (%d corpus steps on 6 pages; the element, action and value each clause means is marked)\n", n)
	fmt.Printf("  %-16s %6s %7s\n", "tier", "steps", "share")
	for _, t := range []string{orchestrator.TierDeterministic, orchestrator.TierLexical, orchestrator.TierAgent} {
		fmt.Printf("  %-16s %6d %6.0f%%\n", t, tiers[t], 100*float64(tiers[t])/float64(n))
	}
	fmt.Printf("  resolved to the element meant: %d (%.0f%%); to a wrong one: %d; steps meant for the agent (ambiguous or not\n", resolved, 100*float64(resolved)/float64(n), wrong)
	fmt.Printf("  understood) are in the agent row. Lexical resolution: median %.1f ms, p90 %.1f ms (one in-page\n", pct(0.5), pct(0.9))
	fmt.Printf("  inventory, scoring in Go, one locator check).\n")
	fmt.Printf("  Re-run of a scenario with an agent step, step cache in Postgres: %d model calls, same spec: %v\n", calls, sameSpec)
	fmt.Println()
	fmt.Printf("  Compound steps (several clauses, each read and resolved in turn): %d, resolved to a wrong element, action or value: %d\n", compound, compoundWrong)
	fmt.Println()
	fmt.Printf("bench lexical: corpus=%d resolved=%d wrong=%d cached_rerun_calls=%d\n", n, resolved, wrong, calls)
	fmt.Printf("bench fasttier: corpus=%d resolved=%d wrong=%d compound=%d compound_wrong=%d\n", n, resolved, wrong, compound, compoundWrong)
	fmt.Println()
	return e.freshBench(ctx)
}

// measureCorpus measures the fast tiers on a corpus served by pages, in
// a session of its own.
func (e *env) measureCorpus(ctx context.Context, pages http.Handler, corpus []lexicaltest.Case) ([]lexicaltest.Outcome, error) {
	srv := httptest.NewServer(pages)
	defer srv.Close()
	sess, err := e.browser.NewSession(ctx, browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"})})
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	return lexicaltest.Measure(ctx, sess, srv.URL, corpus)
}

// freshBench measures the fast tiers on the second corpus, written apart
// from them for apps of other kinds, on its own pages.
func (e *env) freshBench(ctx context.Context) error {
	out, err := e.measureCorpus(ctx, lexicaltest.FreshPages(), lexicaltest.Fresh())
	if err != nil {
		return fmt.Errorf("fresh corpus bench: %w", err)
	}
	pages := map[string][2]int{}
	resolved, wrong := 0, 0
	for _, o := range out {
		p := pages[o.Case.Page]
		p[0]++
		if o.Right {
			resolved++
			p[1]++
		}
		if o.Wrong() {
			wrong++
		}
		pages[o.Case.Page] = p
	}
	fmt.Printf("Steps written apart from the fast tiers (%d steps for six apps of other kinds: manual test cases, Gherkin, checklists)\n", len(out))
	fmt.Printf("  %-14s %6s %9s\n", "page", "steps", "resolved")
	names := slices.Sorted(maps.Keys(pages))
	for _, name := range names {
		fmt.Printf("  %-14s %6d %8.0f%%\n", name, pages[name][0], 100*float64(pages[name][1])/float64(pages[name][0]))
	}
	fmt.Printf("bench fasttier_fresh: corpus=%d resolved=%d wrong=%d\n", len(out), resolved, wrong)
	fmt.Println()
	return nil
}

var refLine = regexp.MustCompile(`button "Sign in"[^\n]*\[ref=([a-z0-9]+)\]`)

// cachedRerun runs a scenario whose sign-in step needs the agent twice for
// the bench tenant, with its step cache in Postgres, and returns the
// second run's model calls and whether it wrote the same spec.
func (e *env) cachedRerun(ctx context.Context) (int, bool, error) {
	sc := scenario.Scenario{Name: "cached re-run", BaseURL: e.demo + "/login",
		Data: map[string]string{"EMAIL": demoapp.Email}, Secrets: map[string]string{"PASSWORD": demoapp.Password},
		Steps: []scenario.Step{
			{Text: "Sign in as the demo user"},
			{Text: `Verify "Welcome back" is visible`},
		}}
	signIn := llmtest.Reply{PromptTokens: 1500, CompletionTokens: 80, Respond: func(req llmtest.Request) string {
		ref := ""
		if m := refLine.FindStringSubmatch(req.Text()); m != nil {
			ref = m[1]
		}
		return llmtest.JSON(map[string]any{"status": "complete", "commands": []any{
			map[string]any{"action": "fill", "target": map[string]any{"label": "Email"}, "value": "{{EMAIL}}"},
			map[string]any{"action": "fill", "target": map[string]any{"label": "Password"}, "value": "{{PASSWORD}}"},
			map[string]any{"action": "click", "target": map[string]any{"ref": ref}},
		}})
	}}
	if _, err := e.st.ClearStepCache(ctx, e.tenant.ID, ""); err != nil {
		return 0, false, err
	}
	runOnce := func(replies ...llmtest.Reply) (orchestrator.Result, int, error) {
		srv := llmtest.Start(replies...)
		defer srv.Close()
		input, _ := json.Marshal(sc)
		j, err := e.st.SubmitJob(ctx, store.NewJob{TenantID: e.tenant.ID, Kind: "scenario", Input: input, Hold: 1e12, Subject: "jobs.bench"})
		if err != nil {
			return orchestrator.Result{}, 0, err
		}
		claim, err := e.st.ClaimJob(ctx, j.ID, "bench", time.Hour)
		if err != nil {
			return orchestrator.Result{}, 0, err
		}
		sess, err := e.browser.NewSession(ctx, browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"})})
		if err != nil {
			return orchestrator.Result{}, 0, err
		}
		defer sess.Close()
		a := &orchestrator.Agent{Page: sess, Recorder: worker.NewRecorder(e.st, j.ID, claim.Attempt, llm.DefaultPrices, e.sealer),
			Cache: worker.NewStepCache(e.st, e.tenant.ID), Model: llm.New(llm.Config{APIKey: "bench", BaseURL: srv.BaseURL(), Model: "gpt-4o-mini"})}
		res, err := a.Run(ctx, orchestrator.Input{Scenario: sc, Secrets: sc.Secrets})
		if err == nil && res.Status != orchestrator.StatusSucceeded {
			err = fmt.Errorf("cached re-run: %s: %s", res.Status, res.Error)
		}
		return res, len(srv.Requests()), err
	}
	first, _, err := runOnce(signIn)
	if err != nil {
		return 0, false, err
	}
	second, calls, err := runOnce()
	if err != nil {
		return calls, false, err
	}
	return calls, second.Script == first.Script, nil
}
