package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// The suites_scale area's sizes (flags).
var (
	scaleTests, scaleFiles int
	scaleGrowth            string
)

// suitesScaleBench repairs a generated project at the size customers'
// suites have, through the API on two workers, as a new customer would
// (no run on webpilot yet: the elements come from a baseline where the
// suite passes), against one plain npx playwright test pass of the same
// project on the same machine; then, at each size of -scale-growth with
// the same failing tests, a run and the repair that follows it.
func suitesScaleBench(ctx context.Context) error {
	if scaleTests == 0 && scaleGrowth == "" {
		return nil
	}
	target := demoapp.New(demoapp.Options{})
	tsrv := httptest.NewServer(target)
	defer tsrv.Close()
	release := httptest.NewServer(demoapp.New(demoapp.Options{}))
	defer release.Close()
	s, err := startProcStackWith(ctx, 2)
	if err != nil {
		return err
	}
	defer s.close()
	runner := browsertest.RunnerDir()
	work, browsers, err := outsideWork("bench-scale-", runner)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	// The target drifted and regressed; the release is where the suite passes.
	if err := target.SetVariant(demoapp.RenamedIDs, demoapp.WrongCount); err != nil {
		return err
	}
	if scaleTests > 0 {
		if err := scaleMain(ctx, s, tsrv.URL, release.URL, work, runner, browsers); err != nil {
			return err
		}
	}
	if scaleGrowth == "" {
		return nil
	}
	return scaleGrowthBench(ctx, s, tsrv.URL, release.URL)
}

// scaleMain repairs the generated project of -scale-tests tests from the
// release as its baseline and sets its time against one plain pass.
func scaleMain(ctx context.Context, s *procStack, base, releaseURL, work, runner, browsers string) error {
	shape := suitetest.Scale{Tests: scaleTests, Files: scaleFiles, DriftFiles: max(scaleFiles/10, 1), RegressionFiles: max(scaleFiles/50, 1)}
	files, kinds := suitetest.Scaled(shape)
	p, err := suite.NewProject(files)
	if err != nil {
		return err
	}
	// One plain pass, as the owner runs it, on the app where it passes.
	start := time.Now()
	ref, err := suitetest.Outside(ctx, p, filepath.Join(work, "outside"), runner, browsers, map[string]string{"BASE_URL": releaseURL}, nil)
	if err != nil {
		return fmt.Errorf("the plain pass: %w", err)
	}
	runnerS := time.Since(start).Seconds()
	passed := 0
	for _, t := range ref.Tests {
		if t.Status == "passed" {
			passed++
		}
	}
	if passed != scaleTests {
		return fmt.Errorf("the generated project passes %d of %d tests outside on its own app", passed, len(ref.Tests))
	}
	cold, err := scaleRepair(ctx, s, files, kinds, base, releaseURL, false)
	if err != nil {
		return err
	}
	fmt.Printf("suites_scale: a generated project of %d tests in %d files (page objects, a fixture, data tables, steps), %d drifted and %d regressed;\n"+
		"repaired through the API on two workers with the release as its baseline, against one npx playwright test pass (2 workers) on the release\n\n",
		scaleTests, scaleFiles, cold.drift, cold.regressed)
	fmt.Printf("  %6s %6s %8s %7s %8s %15s %9s %9s %6s\n", "tests", "files", "failing", "healed", "flagged", "wrongly healed", "repair s", "runner s", "ratio")
	ratio := cold.took.Seconds() / runnerS
	fmt.Printf("  %6d %6d %8d %7d %8d %15d %9.0f %9.0f %6.2f\n\n", scaleTests, scaleFiles, cold.drift+cold.regressed, cold.healed, cold.flagged, cold.wrongly,
		cold.took.Seconds(), runnerS, ratio)
	for _, n := range cold.notes {
		fmt.Printf("  note: %s\n", n)
	}
	fmt.Printf("bench suites_scale: tests=%d files=%d failing=%d healed=%d flagged=%d wrongly_healed=%d repair_s=%.0f runner_s=%.0f ratio=%.2f\n\n",
		scaleTests, scaleFiles, cold.drift+cold.regressed, cold.healed, cold.flagged, cold.wrongly, cold.took.Seconds(), runnerS, ratio)
	return nil
}

// scaleGrowthBench measures, at each size of -scale-growth, a run and the
// repair that follows it.
func scaleGrowthBench(ctx context.Context, s *procStack, base, releaseURL string) error {
	// The same 50 failing tests (four drifted files, one regressed) in
	// projects of growing size: a run, then the repair that follows it
	// (from the same baseline).
	var sizes, secs []string
	fmt.Printf("  %6s %6s %8s %7s %8s %9s %14s\n", "tests", "files", "failing", "healed", "flagged", "run s", "repair after s")
	for _, f := range strings.Split(scaleGrowth, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 50 {
			return fmt.Errorf("-scale-growth: %q is not a size of at least 50 tests", f)
		}
		files, kinds := suitetest.Scaled(suitetest.Scale{Tests: n, Files: n / 10, DriftFiles: 4, RegressionFiles: 1})
		r, err := scaleRepair(ctx, s, files, kinds, base, releaseURL, true)
		if err != nil {
			return err
		}
		fmt.Printf("  %6d %6d %8d %7d %8d %9.0f %14.0f\n", n, n/10, r.drift+r.regressed, r.healed, r.flagged, r.run.Seconds(), r.took.Seconds())
		for _, note := range r.notes {
			fmt.Printf("  note: %s\n", note)
		}
		sizes, secs = append(sizes, strconv.Itoa(n)), append(secs, fmt.Sprintf("%.0f", r.took.Seconds()))
	}
	fmt.Printf("\nbench suites_scale_growth: tests=%s failing=50 repair_after_run_s=%s\n\n", strings.Join(sizes, ","), strings.Join(secs, ","))
	return nil
}

// scaleFigures are one repair's figures over a generated project.
type scaleFigures struct {
	drift, regressed, healed, flagged, wrongly int
	took, run                                  time.Duration
	notes                                      []string
}

// scaleRepair uploads a generated project and repairs it at base: from
// the baseline (baseline != ""), or after a run of it (afterRun).
func scaleRepair(ctx context.Context, s *procStack, raw map[string][]byte, kinds map[string]string, base, baseline string, afterRun bool) (scaleFigures, error) {
	var f scaleFigures
	files := map[string]string{}
	for k, v := range raw {
		files[k] = string(v)
	}
	name, up, err := s.upload(ctx, files)
	if err != nil {
		return f, err
	}
	if v, _, err := s.wait(ctx, up.ListJob, 5*time.Minute); err != nil || v.State != "succeeded" {
		return f, fmt.Errorf("the listing of %s: %v %s", name, err, v.Error)
	}
	body := map[string]any{"base_url": base}
	if baseline != "" {
		body["baseline_url"] = baseline
	}
	if afterRun {
		var run api.JobView
		start := time.Now()
		if err := s.call(ctx, "POST", "/v1/projects/"+name+"/run", s.key, map[string]any{"base_url": base}, http.StatusAccepted, &run); err != nil {
			return f, err
		}
		if _, _, err := s.wait(ctx, run.ID, time.Hour); err != nil {
			return f, err
		}
		f.run = time.Since(start)
		body["after_run"] = run.ID
	}
	var job api.JobView
	start := time.Now()
	if err := s.call(ctx, "POST", "/v1/projects/"+name+"/repair", s.key, body, http.StatusAccepted, &job); err != nil {
		return f, err
	}
	v, _, err := s.wait(ctx, job.ID, 2*time.Hour)
	if err != nil {
		return f, err
	}
	f.took = time.Since(start)
	var res suite.ProjectRepairResult
	if err := json.Unmarshal(v.Project, &res); err != nil {
		return f, fmt.Errorf("the repair of %s (%s: %s): %w", name, v.State, v.Error, err)
	}
	for _, t := range res.Repair.Tests {
		switch kind := kinds[t.File]; {
		case kind == "drift":
			f.drift++
			if t.Verdict == orchestrator.VerdictHealed {
				f.healed++
			} else {
				f.notes = append(f.notes, fmt.Sprintf("drift not healed: %s › %s: %s (%s)", t.File, t.Title, t.Verdict, firstLine(t.Reason)))
			}
		case kind == "regression":
			f.regressed++
			switch t.Verdict {
			case orchestrator.VerdictRegression:
				f.flagged++
			case orchestrator.VerdictHealed:
				f.wrongly++
			default:
				f.notes = append(f.notes, fmt.Sprintf("regression not flagged: %s › %s: %s (%s)", t.File, t.Title, t.Verdict, firstLine(t.Reason)))
			}
		case t.Verdict == orchestrator.VerdictHealed:
			f.wrongly++
		case t.Verdict != orchestrator.VerdictPassed:
			f.notes = append(f.notes, fmt.Sprintf("a stable test is %s: %s › %s (%s)", t.Verdict, t.File, t.Title, firstLine(t.Reason)))
		}
	}
	if !res.Repair.Verified {
		f.notes = append(f.notes, "the merged patch was not verified: "+strings.Join(res.Repair.Errors, "; "))
	}
	return f, nil
}
