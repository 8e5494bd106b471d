package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
)

// stagingOrigin is the origin the remapped runs give the corpus's tests
// as their base URL: an address that exists nowhere, reached only through
// the job's remapping to the demo app.
const stagingOrigin = "https://staging.acme.test"

// projectsE2EBench runs the corpus as a customer does: dispatcher and
// worker processes started as the README starts them, each project
// uploaded and run through the API, once at the demo app's own address and
// once with the tests' base URL on another origin remapped to it, and
// every test's verdict compared with npx playwright test's outside
// webpilot against the same app.
func projectsE2EBench(ctx context.Context) error {
	s, err := startProcStack(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	runner := browsertest.RunnerDir()
	work, browsers, err := outsideWork("bench-projects-", runner)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	secrets := map[string]string{"E2E_PASSWORD": demoapp.Password}
	type row struct {
		name                   string
		tests, agree, remapped int
		charged                float64
		took                   time.Duration
		notes                  []string
	}
	var rows []row
	var total row
	for _, name := range suitetest.Projects() {
		if name == suitetest.Hostile {
			continue
		}
		start := time.Now()
		r := row{name: name}
		raw, err := suitetest.Files(name)
		if err != nil {
			return err
		}
		files := map[string]string{}
		for f, b := range raw {
			files[f] = string(b)
		}
		p, err := suite.NewProject(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		var up api.ProjectView
		if err := s.call(ctx, "POST", "/v1/projects/"+name, s.key, map[string]any{"files": files}, http.StatusCreated, &up); err != nil {
			return err
		}
		if _, _, err := s.wait(ctx, up.ListJob, 3*time.Minute); err != nil {
			return err
		}
		var listed api.ProjectView
		if err := s.call(ctx, "GET", "/v1/projects/"+name, s.key, nil, http.StatusOK, &listed); err != nil {
			return err
		}
		var listing []suite.TestOutcome
		_ = json.Unmarshal(listed.Tests, &listing)
		projects := map[string]bool{}
		for _, t := range listing {
			projects[t.Project] = true
		}
		env := map[string]string{"BASE_URL": s.demo.URL, "APP_URL": s.demo.URL, "E2E_PASSWORD": demoapp.Password}
		dir, _ := os.MkdirTemp(work, name+"-")
		out, err := suitetest.Outside(ctx, p, dir, runner, browsers, env, keys(projects))
		if err != nil {
			return fmt.Errorf("%s outside: %w", name, err)
		}
		ref := map[string]suite.TestStatus{}
		for _, t := range out.Tests {
			ref[t.File+" "+t.Project+" "+t.Title()] = t.Status
		}
		r.tests = len(ref)
		for _, remap := range []bool{false, true} {
			body := map[string]any{"base_url": s.demo.URL, "secrets": secrets}
			if remap {
				body = map[string]any{"base_url": stagingOrigin + "/", "origins": map[string]string{stagingOrigin: s.demo.URL}, "secrets": secrets}
			}
			var run api.JobView
			if err := s.call(ctx, "POST", "/v1/projects/"+name+"/run", s.key, body, http.StatusAccepted, &run); err != nil {
				return err
			}
			v, _, err := s.wait(ctx, run.ID, 15*time.Minute)
			if err != nil {
				return err
			}
			r.charged += v.ChargedCredits
			got := map[string]suite.TestStatus{}
			if v.Suite != nil {
				for _, c := range v.Suite.Children {
					var cv struct {
						Project json.RawMessage `json:"project"`
						Error   string          `json:"error"`
					}
					if err := s.call(ctx, "GET", "/v1/jobs/"+c.JobID, s.key, nil, http.StatusOK, &cv); err != nil {
						return err
					}
					var fr struct {
						Tests []suite.TestOutcome `json:"tests"`
					}
					_ = json.Unmarshal(cv.Project, &fr)
					for _, t := range fr.Tests {
						got[t.File+" "+t.Project+" "+t.Title()] = t.Status
					}
				}
			}
			agree := 0
			for k, want := range ref {
				if got[k] == want {
					agree++
				} else {
					r.notes = append(r.notes, fmt.Sprintf("remapped=%v: %s: %q through the API, %q outside", remap, k, got[k], want))
				}
			}
			if remap {
				r.remapped = agree
			} else {
				r.agree = agree
			}
		}
		r.took = time.Since(start)
		fmt.Fprintf(os.Stderr, "projects_e2e: %s done in %s: tests=%d agree=%d remapped_agree=%d\n", name, r.took.Round(time.Second), r.tests, r.agree, r.remapped)
		rows = append(rows, r)
		total.tests += r.tests
		total.agree += r.agree
		total.remapped += r.remapped
		total.charged += r.charged
	}
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.name, b.name) })
	fmt.Println("Customers' projects through the API (dispatcher and worker processes; verdicts vs npx playwright test outside webpilot)")
	fmt.Printf("  %-12s %6s %7s %15s %9s %8s\n", "project", "tests", "agree", "remapped agree", "credits", "took")
	for _, r := range rows {
		fmt.Printf("  %-12s %6d %7d %15d %9.4f %8s\n", r.name, r.tests, r.agree, r.remapped, r.charged, r.took.Round(time.Second))
	}
	for _, r := range rows {
		for _, n := range r.notes {
			fmt.Printf("  %s: %s\n", r.name, n)
		}
	}
	fmt.Printf("  remapped: every test's base URL is %s, which the job's egress proxy sends to the demo app\n", stagingOrigin)
	fmt.Printf("bench projects_e2e: tests=%d agree=%d remapped_agree=%d credits=%.4f\n\n", total.tests, total.agree, total.remapped, total.charged)
	return nil
}
