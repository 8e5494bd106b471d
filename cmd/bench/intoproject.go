package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
)

// intoProjectCase is a scenario a customer targets at one of their
// projects, in the words a tester writes steps in.
type intoProjectCase struct {
	name, path string
	practice   bool // on the practice app, not the demo app
	steps      []string
	secrets    map[string]string
}

// intoProjectCases are the scenarios of the generate_into_project area,
// by the project they target: those of the corpus with page objects.
var intoProjectCases = map[string][]intoProjectCase{
	"pom":        {addsRice, signsIn},
	"shopping":   {addsRice},
	"typescript": {addsRice, signsIn, sendsAQuestion},
	"pom-fixtures": {
		{name: "signs in as tomsmith", path: "/login", practice: true, steps: []string{`Fill "Username" with "tomsmith"`,
			`Fill "Password" with "SuperSecretPassword!"`, `Click the "Login" button`, `Verify "You logged into a secure area!" is visible`}},
		{name: "signs out again", path: "/login", practice: true, steps: []string{`Fill "Username" with "tomsmith"`,
			`Fill "Password" with "SuperSecretPassword!"`, `Click the "Login" button`, `Click "Logout"`, `Verify "Login Page" is visible`}},
	},
}

var (
	addsRice = intoProjectCase{name: "adds rice", path: "/list", steps: []string{`Click "Dismiss"`, `Fill "New item" with "Rice"`,
		`Click the "Add" button`, `Verify "2 items" is visible`}}
	signsIn = intoProjectCase{name: "signs in", path: "/login", steps: []string{`Fill "Email" with "` + demoapp.Email + `"`,
		`Fill "Password" with "{{E2E_PASSWORD}}"`, `Click "Sign in"`, `Verify "Welcome back" is visible`},
		secrets: map[string]string{"E2E_PASSWORD": demoapp.Password}}
	sendsAQuestion = intoProjectCase{name: "sends a sales question", path: "/form", steps: []string{`Fill "Full name" with "Grace"`,
		`Fill "Email address" with "grace@example.com"`, `Select "Sales" from "Topic"`, `Check "I agree to the terms"`,
		`Click "Send message"`, `Verify "Thanks, Grace!" is visible`}}
)

// generateIntoProjectBench targets scenarios at the corpus projects that
// have page objects, through the API of dispatcher and worker processes
// started as the README starts them: each is generated, written into its
// project, run by the runner in the sandbox and proposed. It counts the
// tests written, those that pass under the runner, and those that call
// the project's own page objects or fixtures.
func generateIntoProjectBench(ctx context.Context) error {
	s, err := startProcStack(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	practice := httptest.NewServer(demoapp.NewPractice())
	defer practice.Close()
	type row struct {
		project, scenario, file, verdict string
		uses                             []string
		note                             string
		took                             time.Duration
	}
	var rows []row
	projects, written, passing, reuse := 0, 0, 0, 0
	for _, name := range []string{"pom", "shopping", "typescript", "pom-fixtures"} {
		raw, err := suitetest.Files(name)
		if err != nil {
			if raw, err = realWorldFiles(name); err != nil {
				return err
			}
		}
		files := map[string]string{}
		for f, b := range raw {
			files[f] = string(b)
		}
		var up api.ProjectView
		if err := s.call(ctx, "POST", "/v1/projects/"+name, s.key, map[string]any{"files": files}, http.StatusCreated, &up); err != nil {
			return err
		}
		if _, _, err := s.wait(ctx, up.ListJob, 3*time.Minute); err != nil {
			return err
		}
		projects++
		for _, c := range intoProjectCases[name] {
			start := time.Now()
			base := s.demo.URL
			if c.practice {
				base = practice.URL
			}
			sc := map[string]any{"name": c.name, "base_url": base + c.path, "project": name, "steps": c.steps, "secrets": c.secrets}
			var job api.JobView
			if err := s.call(ctx, "POST", "/v1/jobs", s.key, map[string]any{"kind": "scenario", "scenario": sc}, http.StatusAccepted, &job); err != nil {
				return err
			}
			v, _, err := s.wait(ctx, job.ID, 5*time.Minute)
			if err != nil {
				return err
			}
			r := row{project: name, scenario: c.name, took: time.Since(start)}
			var into struct {
				File    string   `json:"file"`
				Uses    []string `json:"uses"`
				Verdict string   `json:"verdict"`
				Error   string   `json:"error"`
			}
			if err := s.call(ctx, "GET", "/v1/jobs/"+job.ID, s.key, nil, http.StatusOK, &v); err != nil {
				return err
			}
			_ = json.Unmarshal(v.IntoProject, &into)
			r.file, r.verdict, r.uses, r.note = into.File, into.Verdict, into.Uses, into.Error
			if v.State != "succeeded" {
				r.note = "the scenario " + string(v.State) + ": " + v.Error
			}
			if into.File != "" {
				written++
			}
			if into.Verdict == string(suite.StatusPassed) {
				passing++
				if len(into.Uses) > 0 {
					reuse++
				}
			}
			fmt.Fprintf(os.Stderr, "generate_into_project: %s › %s: %s %s uses %d (%s)\n", name, c.name, r.file, r.verdict, len(r.uses), r.took.Round(time.Second))
			rows = append(rows, r)
		}
	}
	fmt.Println("Scenarios written into customers' projects (their page objects and fixtures; run by the runner in the sandbox)")
	fmt.Printf("  %-13s %-24s %-40s %-8s %s\n", "project", "scenario", "file", "verdict", "uses")
	for _, r := range rows {
		fmt.Printf("  %-13s %-24s %-40s %-8s %s\n", r.project, r.scenario, r.file, r.verdict, strings.Join(r.uses, ", "))
		if r.note != "" {
			fmt.Printf("  %-13s   %s\n", "", r.note)
		}
	}
	fmt.Printf("bench generate_into_project: projects=%d scenarios=%d tests_written=%d passing=%d reuse_page_objects=%d/%d\n\n",
		projects, len(rows), written, passing, reuse, passing)
	return nil
}

// realWorldFiles reads a project of the real-world corpus as an upload
// sends it.
func realWorldFiles(name string) (map[string][]byte, error) {
	p, err := suitetest.RealWorldProject(name)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, f := range p.Files {
		files[f.Path] = f.Content
	}
	return files, nil
}
