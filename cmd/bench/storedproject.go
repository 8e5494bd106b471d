package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/client"
)

// storedScale is how many stored tests stored_as_project writes and runs.
const storedScale = 300

// storedAsProjectBench sets the two ways a tenant's generated tests run
// side by side, through the API at a suite's size: a suite_run (each test
// replayed by the agent's engine, a job each) against the same tests
// written as a project (POST /v1/tests/project: each spec with its steps'
// manifest) listed and run by the runner in the sandbox, with its junit.
func storedAsProjectBench(ctx context.Context) error {
	s, err := startProcStackWith(ctx, 1)
	if err != nil {
		return err
	}
	defer s.close()
	// A tenant with room for the run's holds: a project's run holds its
	// files' most browser time, and each stored test is a file.
	var t struct {
		Tenant struct{ ID string }
		APIKey string `json:"api_key"`
	}
	if err := s.call(ctx, "POST", "/v1/admin/tenants", "bench", map[string]any{"name": "suite-owner"}, http.StatusCreated, &t); err != nil {
		return err
	}
	if err := s.call(ctx, "POST", "/v1/admin/tenants/"+t.Tenant.ID+"/credits", "bench",
		map[string]any{"credits": 2000, "idempotency_key": "initial"}, 0, nil); err != nil {
		return err
	}
	s.key = t.APIKey

	flows := []struct {
		name  string
		steps []string
	}{
		{"add an item", []string{`Fill "New item" with "Oat milk"`, `Click "Add"`, `Verify "Oat milk" is visible`}},
		{"the list holds bread", []string{`Verify "Bread" is visible`}},
		{"tips go away", []string{`Click "Dismiss"`, `Verify "Bread" is visible`}},
	}
	var seeds []string
	for _, f := range flows {
		var v api.JobView
		if err := s.call(ctx, "POST", "/v1/jobs", s.key, map[string]any{"kind": "scenario",
			"scenario": map[string]any{"name": f.name, "base_url": s.demo.URL + "/list", "steps": f.steps}}, http.StatusAccepted, &v); err != nil {
			return err
		}
		if v, _, err = s.wait(ctx, v.ID, 2*time.Minute); err != nil || v.State != "succeeded" {
			return fmt.Errorf("generating %q: %v %s %s", f.name, err, v.State, v.Error)
		}
		seeds = append(seeds, f.name)
	}
	// The suite grows to its size as copies of those flows under names of
	// their own, as a suite of a few flows grown by hand holds.
	conn, err := pgx.Connect(ctx, s.pg.URL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for i := len(seeds); i < storedScale; i++ {
		id := uuid.NewString()
		seed := seeds[i%len(seeds)]
		if _, err := conn.Exec(ctx, `INSERT INTO tests (id, tenant_id, name, tags, scenario, script, manifest, last_status, version)
			SELECT $1, tenant_id, name || ' #' || $3, tags, scenario, script, manifest, last_status, 1 FROM tests WHERE tenant_id = $2 AND name = $4`,
			id, t.Tenant.ID, fmt.Sprint(i), seed); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, `INSERT INTO test_versions (test_id, version, scenario, script, manifest, summary, status, decided_at)
			SELECT $1, 1, scenario, script, manifest, 'copied', 'accepted', now() FROM tests WHERE id = $1`, id); err != nil {
			return err
		}
	}

	// The stored tests' own path: a suite_run, a job per test.
	var run api.JobView
	start := time.Now()
	if err := s.call(ctx, "POST", "/v1/suites/run", s.key, map[string]any{"options": map[string]any{"max_credits": 100}}, http.StatusAccepted, &run); err != nil {
		return err
	}
	run, _, err = s.wait(ctx, run.ID, time.Hour)
	if err != nil {
		return err
	}
	suiteS := time.Since(start).Seconds()
	suitePassed := 0
	if run.Suite != nil {
		for _, c := range run.Suite.Children {
			if c.State == "succeeded" {
				suitePassed++
			}
		}
	}

	// The project's path: written, listed, run by the runner.
	var written api.TestsProjectView
	start = time.Now()
	if err := s.call(ctx, "POST", "/v1/tests/project", s.key, map[string]any{}, http.StatusCreated, &written); err != nil {
		return err
	}
	writeMS := time.Since(start).Milliseconds()
	list, _, err := s.wait(ctx, written.ListJob, 30*time.Minute)
	if err != nil || list.State != "succeeded" {
		return fmt.Errorf("listing the written project: %v %s %s", err, list.State, list.Error)
	}
	listS := time.Since(start).Seconds() - float64(writeMS)/1000
	var prun api.JobView
	start = time.Now()
	if err := s.call(ctx, "POST", "/v1/projects/"+written.Name+"/run", s.key, map[string]any{}, http.StatusAccepted, &prun); err != nil {
		return err
	}
	prun, _, err = s.wait(ctx, prun.ID, time.Hour)
	if err != nil {
		return err
	}
	projectS := time.Since(start).Seconds()
	if prun.Reports == nil || prun.Reports.JUnit == "" {
		return fmt.Errorf("the project's run ended %s with no junit: %s", prun.State, prun.Error)
	}
	junit, err := client.New(s.base, s.key).Artifact(ctx, prun.ID, prun.Reports.JUnit)
	if err != nil {
		return err
	}
	var report struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
	}
	if err := xml.Unmarshal(junit, &report); err != nil {
		return fmt.Errorf("the run's junit: %w", err)
	}
	projectPassed := report.Tests - report.Failures - report.Errors - report.Skipped
	// Where the project run's time went: its parts, each one runner over
	// its files, and how long those runners held the sandbox.
	parts, runners := 0, 0.0
	if prun.Suite != nil {
		for _, ch := range prun.Suite.Children {
			var cv api.JobView
			if err := s.call(ctx, "GET", "/v1/jobs/"+ch.JobID, s.key, nil, http.StatusOK, &cv); err != nil {
				return err
			}
			var fr struct {
				BrowserSeconds float64 `json:"browser_seconds"`
			}
			_ = json.Unmarshal(cv.Project, &fr)
			parts++
			runners += fr.BrowserSeconds
		}
	}

	fmt.Println("stored_as_project: a tenant's generated tests run as a suite_run (a replay job each) and written as a project run by the runner (one file each)")
	fmt.Printf("  %6s %10s %8s %9s %14s %11s %12s %14s\n", "tests", "write ms", "bytes", "list s", "project run s", "passed", "suite run s", "passed")
	fmt.Printf("  %6d %10d %8d %9.1f %14.1f %7d/%-3d %12.1f %10d/%-3d\n", storedScale, writeMS, written.Bytes, listS, projectS,
		projectPassed, report.Tests, suiteS, suitePassed, storedScale)
	fmt.Printf("         the project run: %d parts, their runners %.1f s together\n", parts, runners)
	fmt.Printf("bench stored_as_project: tests=%d write_ms=%d project_bytes=%d list_s=%.0f project_run_s=%.0f project_passed=%d/%d suite_run_s=%.0f suite_passed=%d/%d\n",
		storedScale, writeMS, written.Bytes, listS, projectS, projectPassed, report.Tests, suiteS, suitePassed, storedScale)
	if projectPassed != storedScale || suitePassed != storedScale {
		return fmt.Errorf("not every stored test passed: %d/%d as a project, %d/%d as a suite", projectPassed, report.Tests, suitePassed, storedScale)
	}
	return nil
}
