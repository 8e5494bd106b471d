package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
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

// siteRow is one exploration of the zoo: its run on the seeded site and on
// the bug-free twin, and how its reproductions fared on both.
type siteRow struct {
	name                    string
	res, twin               explore.Result
	seeded, found, fp       int
	visited                 int
	reproduced, twinPassing int
}

// exploreSiteBench explores the demo app's zoo (a 35-template site with
// seeded defects and a bug-free twin) under a 200-action budget, without a
// model and with the scripted one: templates visited, defects found,
// false positives (findings on the seeded site that match no defect, and
// every finding on the twin), and reproductions that fail at their check
// on the seeded site and pass on the twin.
func (e *env) exploreSiteBench(ctx context.Context) error {
	axe, err := os.ReadFile(browsertest.RunnerDir() + "/node_modules/axe-core/axe.min.js")
	if err != nil {
		return fmt.Errorf("site exploration bench: axe-core is not installed (make setup): %w", err)
	}
	runner := specrun.Runner{Dir: browsertest.RunnerDir(), Chromium: os.Getenv("WEBPILOT_CHROMIUM")}
	run := func(ctx context.Context, spec string) ([]specrun.TestResult, error) {
		return runner.RunReport(ctx, spec, specrun.Options{})
	}
	app := demoapp.New(demoapp.Options{})
	srv := httptest.NewServer(app)
	defer srv.Close()
	explo := func(withModel bool) (explore.Result, error) {
		sess, err := e.browser.NewSession(ctx, browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"}),
			SlowResponse: explore.DefaultSlowResponse})
		if err != nil {
			return explore.Result{}, err
		}
		defer sess.Close()
		x := &explore.Explorer{Page: sess, Recorder: exploretest.NewRecorder(), Config: explore.Config{AxeSource: string(axe)}}
		if withModel {
			model := llmtest.Start()
			defer model.Close()
			fallback := exploretest.ZooModel()
			model.Fallback = &fallback
			x.Model = llm.New(llm.Config{APIKey: "bench", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"})
		}
		return x.Run(ctx, explore.Input{BaseURL: srv.URL + "/zoo/", Goal: exploretest.ZooGoal, MaxActions: 200,
			MaxDuration: 10 * time.Minute, Scope: []string{"/zoo/"}, Deny: jobs.Safety{}.Words()})
	}
	var rows []siteRow
	for _, withModel := range []bool{false, true} {
		row := siteRow{name: "no model (crawl only)", seeded: exploretest.ZooDeterministic()}
		if withModel {
			row.name, row.seeded = "scripted model", len(demoapp.ZooDefects)
		}
		app.SetZooBugs(true)
		if row.res, err = explo(withModel); err != nil {
			return fmt.Errorf("site exploration bench (%s): %w", row.name, err)
		}
		var unexpected []explore.Finding
		row.found, unexpected, _ = exploretest.MatchZoo(row.res.Findings, withModel)
		row.visited = zooVisited(row.res)
		if err := explore.Verify(ctx, run, &row.res); err != nil {
			return err
		}
		var verified strings.Builder
		for _, f := range row.res.Findings {
			if f.Reproduction != nil && f.Reproduction.Verified {
				row.reproduced++
				spec := f.Reproduction.Spec
				if verified.Len() > 0 {
					spec = strings.TrimPrefix(spec, "import { test, expect } from '@playwright/test';\n")
				}
				verified.WriteString(spec)
			}
		}
		app.SetZooBugs(false)
		if verified.Len() > 0 {
			results, err := run(ctx, verified.String())
			if err != nil && len(results) == 0 {
				return fmt.Errorf("site exploration bench: reproductions on the twin: %w", err)
			}
			for _, r := range results {
				if r.Status == "passed" {
					row.twinPassing++
				}
			}
		}
		if row.twin, err = explo(withModel); err != nil {
			return fmt.Errorf("site exploration bench (%s, twin): %w", row.name, err)
		}
		row.fp = len(unexpected) + len(row.twin.Findings)
		rows = append(rows, row)
	}
	fmt.Printf("Exploration of the zoo (%d page templates, %d seeded defects, %d of them for a model's judgement; 200-action budget)\n",
		demoapp.ZooTemplates(), len(demoapp.ZooDefects), len(demoapp.ZooDefects)-exploretest.ZooDeterministic())
	fmt.Printf("  %-24s %8s %7s %5s %4s %7s %7s %7s %9s %6s %8s %6s\n", "run", "visited", "found", "FP", "twin", "actions", "calls",
		"tokens", "repro", "twin ok", "time", "noise")
	for _, r := range rows {
		fmt.Printf("  %-24s %4d/%-3d %3d/%-3d %5d %4d %7d %7d %7d %4d/%-4d %6d %7.1fs %6d\n", r.name, r.visited, demoapp.ZooTemplates(),
			r.found, r.seeded, r.fp, len(r.twin.Findings), r.res.Actions, r.res.Calls, r.res.Usage.PromptTokens+r.res.Usage.CompletionTokens,
			r.reproduced, len(r.res.Findings), r.twinPassing, r.res.Duration.Seconds(), len(r.res.Noise)+len(r.res.NeedsAuthentication))
	}
	fmt.Println("  (found: seeded defects reported, of those the run can find; FP: findings matching no defect, plus every finding on the")
	fmt.Println("   twin; repro: reproductions failing at their check on the seeded site; twin ok: of those, passing on the twin;")
	fmt.Println("   noise: refused third-party requests and pages asking for a login, reported apart)")
	fmt.Println()
	for _, r := range rows {
		// A reproduction counts when it fails on the seeded site and passes on the twin.
		fmt.Printf("bench explore_site: templates=%d visited=%d seeded=%d found=%d false_positives=%d reproduced=%d actions=%d minutes=%.1f\n",
			demoapp.ZooTemplates(), r.visited, r.seeded, r.found, r.fp, min(r.reproduced, r.twinPassing), r.res.Actions, r.res.Duration.Minutes())
	}
	fmt.Println()
	return nil
}

// zooVisited counts the zoo's page templates an exploration reached, the
// one behind HTTP authentication when it was reported as needing it.
func zooVisited(res explore.Result) int {
	reached := map[string]bool{}
	for _, st := range res.Coverage.States {
		reached[orchestrator.PathTemplate(st.URL)] = true
	}
	for _, u := range res.NeedsAuthentication {
		reached[orchestrator.PathTemplate(u)] = true
	}
	n := 0
	for _, p := range demoapp.ZooPages() {
		if reached[orchestrator.PathTemplate(p)] {
			n++
		}
	}
	return n
}
