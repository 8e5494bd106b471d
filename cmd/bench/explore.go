package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
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
	"github.com/webpilot/webpilot/internal/specrun"
)

type exploreRow struct {
	name       string
	res        explore.Result
	found      int
	fp         int
	reproduced int
}

// exploreBench explores the demo shop with the scripted model, with its
// seeded bugs on and off, and without a model: recall, false positives,
// actions and tokens per finding, states covered per minute, and how many
// reproductions failed under @playwright/test at their check.
func (e *env) exploreBench(ctx context.Context) error {
	axe, err := os.ReadFile(browsertest.RunnerDir() + "/node_modules/axe-core/axe.min.js")
	if err != nil {
		return fmt.Errorf("exploration bench: axe-core is not installed (make setup): %w", err)
	}
	runner := specrun.Runner{Dir: browsertest.RunnerDir(), Chromium: os.Getenv("WEBPILOT_CHROMIUM")}
	explo := func(name string, bugs, withModel, verify bool) (exploreRow, error) {
		app := demoapp.New(demoapp.Options{})
		app.SetShopBugs(bugs)
		srv := httptest.NewServer(app)
		defer srv.Close()
		sess, err := e.browser.NewSession(ctx, browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"}),
			SlowResponse: explore.DefaultSlowResponse})
		if err != nil {
			return exploreRow{}, err
		}
		defer sess.Close()
		x := &explore.Explorer{Page: sess, Recorder: exploretest.NewRecorder(), Config: explore.Config{AxeSource: string(axe)}}
		if withModel {
			model := llmtest.Start(exploretest.ShopModel()...)
			defer model.Close()
			x.Model = llm.New(llm.Config{APIKey: "bench", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"})
		}
		res, err := x.Run(ctx, explore.Input{BaseURL: srv.URL + "/shop/", Goal: exploretest.ShopGoal, MaxActions: 60,
			MaxDuration: 5 * time.Minute, Scope: []string{"/shop/"}, Deny: jobs.Safety{}.Words()})
		if err != nil {
			return exploreRow{}, err
		}
		row := exploreRow{name: name, res: res}
		var unexpected []explore.Finding
		row.found, unexpected = exploretest.Match(res.Findings)
		row.fp = len(unexpected)
		if !bugs {
			row.found, row.fp = 0, len(res.Findings)
		}
		if verify {
			run := func(ctx context.Context, spec string) ([]specrun.TestResult, error) {
				return runner.RunReport(ctx, spec, specrun.Options{})
			}
			if err := explore.Verify(ctx, run, &res); err != nil {
				return row, err
			}
			for _, f := range res.Findings {
				if f.Reproduction != nil && f.Reproduction.Verified {
					row.reproduced++
				}
			}
		}
		return row, nil
	}
	var rows []exploreRow
	for _, c := range []struct {
		name                  string
		bugs, model, verified bool
	}{
		{"seeded shop, scripted model", true, true, true},
		{"seeded shop, no model (sweep only)", true, false, false},
		{"bug-free shop, scripted model", false, true, false},
	} {
		row, err := explo(c.name, c.bugs, c.model, c.verified)
		if err != nil {
			return fmt.Errorf("exploration bench (%s): %w", c.name, err)
		}
		rows = append(rows, row)
	}
	fmt.Printf("Exploration of the demo shop (%d seeded bugs; 60-action budget; detectors + axe-core %s)\n", demoapp.ShopSeededBugs, "4.10")
	fmt.Printf("  %-36s %6s %6s %4s %7s %7s %6s %9s %8s %6s\n", "run", "found", "recall", "FP", "actions", "tokens", "states", "states/min", "time", "repro")
	for _, r := range rows {
		tokens := r.res.Usage.PromptTokens + r.res.Usage.CompletionTokens
		recall := "-"
		repro := "-"
		if r.name != rows[2].name {
			recall = fmt.Sprintf("%.0f%%", 100*float64(r.found)/float64(demoapp.ShopSeededBugs))
		}
		if r.name == rows[0].name {
			repro = fmt.Sprintf("%d/%d", r.reproduced, len(r.res.Findings))
		}
		perMin := float64(len(r.res.Coverage.States)) / r.res.Duration.Minutes()
		fmt.Printf("  %-36s %6d %6s %4d %7d %7d %6d %9.1f %7.1fs %6s\n", r.name, r.found, recall, r.fp, r.res.Actions, tokens,
			len(r.res.Coverage.States), perMin, r.res.Duration.Seconds(), repro)
	}
	fmt.Println("  (FP on the bug-free shop: every finding; on the seeded shop: findings matching no seeded bug. The scripted")
	fmt.Println("   model makes its two functional claims on the bug-free shop too; the explorer rejected them when their checks held.)")
	main := rows[0]
	fp := main.fp + rows[2].fp
	tokens := main.res.Usage.PromptTokens + main.res.Usage.CompletionTokens
	per := func(n int) float64 {
		if main.found == 0 {
			return 0
		}
		return float64(n) / float64(main.found)
	}
	fmt.Println()
	fmt.Printf("bench exploration: seeded=%d found=%d false_positives=%d actions_per_finding=%.1f tokens_per_finding=%.0f\n",
		demoapp.ShopSeededBugs, main.found, fp, per(main.res.Actions), per(tokens))
	fmt.Println()
	return nil
}
