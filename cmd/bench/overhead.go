package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
)

// overheadShapes are the projects projects_overhead runs: generated in the
// corpus's styles (page objects, a fixture, data tables, steps), each of
// 40 tests or more, spread over few files and over many.
var overheadShapes = []suitetest.Scale{{Tests: 40, Files: 4}, {Tests: 60, Files: 12}, {Tests: 120, Files: 12}}

// projectsOverheadBench sets a project run through the API (upload
// listed, then POST /run until its verdicts and reports are in) against a
// plain npx playwright test of the same files, with the same workers (the
// config's), on the same machine and app, one after the other.
func projectsOverheadBench(ctx context.Context) error {
	app := httptest.NewServer(demoapp.New(demoapp.Options{}))
	defer app.Close()
	s, err := startProcStackWith(ctx, 1)
	if err != nil {
		return err
	}
	defer s.close()
	runner := browsertest.RunnerDir()
	work, browsers, err := outsideWork("bench-overhead-", runner)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	fmt.Println("projects_overhead: a project run through the API (dispatcher, queue, worker, sandbox, reports merged) against npx playwright test of the same files, 2 workers each, on the same app")
	fmt.Printf("  %6s %6s %8s %11s %9s %6s\n", "tests", "files", "passed", "webpilot s", "runner s", "ratio")
	var tests []string
	var webS, runS, worst float64
	for i, shape := range overheadShapes {
		raw, _ := suitetest.Scaled(shape)
		p, err := suite.NewProject(raw)
		if err != nil {
			return err
		}
		start := time.Now()
		ref, err := suitetest.Outside(ctx, p, filepath.Join(work, fmt.Sprintf("outside-%d", i)), runner, browsers, map[string]string{"BASE_URL": app.URL}, nil)
		if err != nil {
			return fmt.Errorf("the plain run: %w", err)
		}
		plain := time.Since(start).Seconds()
		files := map[string]string{}
		for k, v := range raw {
			files[k] = string(v)
		}
		name, up, err := s.upload(ctx, files)
		if err != nil {
			return err
		}
		if v, _, err := s.wait(ctx, up.ListJob, 5*time.Minute); err != nil || v.State != "succeeded" {
			return fmt.Errorf("the listing of %s: %v %s", name, err, v.Error)
		}
		var run api.JobView
		start = time.Now()
		if err := s.call(ctx, "POST", "/v1/projects/"+name+"/run", s.key, map[string]any{"base_url": app.URL}, http.StatusAccepted, &run); err != nil {
			return err
		}
		v, _, err := s.wait(ctx, run.ID, time.Hour)
		if err != nil {
			return err
		}
		took := time.Since(start).Seconds()
		if v.Suite == nil || v.Reports == nil || v.Reports.JUnit == "" {
			return fmt.Errorf("the run of %s ended %s with no files' report or no junit: %s", name, v.State, v.Error)
		}
		passed := 0
		// Where the time went: the first file's wait in the queue, each
		// file job beyond its runner's own time, the runs side by side,
		// and the merge after the last file.
		var first, last time.Time
		var jobs, runners float64
		for _, c := range v.Suite.Children {
			var cv api.JobView
			if err := s.call(ctx, "GET", "/v1/jobs/"+c.JobID, s.key, nil, http.StatusOK, &cv); err != nil {
				return err
			}
			var fr struct {
				Tests          []suite.TestOutcome `json:"tests"`
				BrowserSeconds float64             `json:"browser_seconds"`
			}
			if err := json.Unmarshal(cv.Project, &fr); err != nil || cv.StartedAt == nil || cv.FinishedAt == nil {
				return fmt.Errorf("the file job %s: %v", c.JobID, err)
			}
			for _, t := range fr.Tests {
				if t.Status == "passed" {
					passed++
				}
			}
			if first.IsZero() || cv.StartedAt.Before(first) {
				first = *cv.StartedAt
			}
			if cv.FinishedAt.After(last) {
				last = *cv.FinishedAt
			}
			jobs += cv.FinishedAt.Sub(*cv.StartedAt).Seconds()
			runners += fr.BrowserSeconds
		}
		if v.FinishedAt != nil && v.StartedAt != nil {
			fmt.Printf("         %d parts (file jobs): to the first %.1f s, files %.1f s (jobs %.1f s, runners in them %.1f s), merge %.1f s\n",
				len(v.Suite.Children), first.Sub(v.CreatedAt).Seconds(), last.Sub(first).Seconds(), jobs, runners, v.FinishedAt.Sub(last).Seconds())
		}
		outside := 0
		for _, t := range ref.Tests {
			if t.Status == "passed" {
				outside++
			}
		}
		if passed != shape.Tests || outside != shape.Tests {
			return fmt.Errorf("%d tests: %d passed through the API, %d outside", shape.Tests, passed, outside)
		}
		ratio := took / plain
		fmt.Printf("  %6d %6d %8d %11.1f %9.1f %6.2f\n", shape.Tests, shape.Files, passed, took, plain, ratio)
		tests = append(tests, fmt.Sprint(shape.Tests))
		webS += took
		runS += plain
		worst = max(worst, ratio)
	}
	fmt.Printf("\nbench projects_overhead: projects=%d tests=%s webpilot_s=%.0f runner_s=%.0f ratio=%.2f\n\n",
		len(overheadShapes), strings.Join(tests, ","), webS, runS, worst)
	return nil
}
