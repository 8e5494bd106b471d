package explore_test

import (
	"context"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/explore/exploretest"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// zoo serves the demo app and returns it with its zoo's URL.
func zoo(t *testing.T) (*demoapp.App, string) {
	t.Helper()
	app := demoapp.New(demoapp.Options{})
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	return app, srv.URL + "/zoo/"
}

// exploreZoo explores the zoo under the bench's budget, with the
// scripted zoo model when withModel.
func exploreZoo(t *testing.T, base string, withModel bool) explore.Result {
	t.Helper()
	e := &explore.Explorer{Page: session(t), Recorder: exploretest.NewRecorder(), Config: explore.Config{AxeSource: browsertest.AxeSource(t)}}
	if withModel {
		model := llmtest.New(t)
		fallback := exploretest.ZooModel()
		model.Fallback = &fallback
		e.Model = llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"})
	}
	res, err := e.Run(context.Background(), explore.Input{BaseURL: base, Goal: exploretest.ZooGoal, MaxActions: 200,
		MaxDuration: 8 * time.Minute, Scope: []string{"/zoo/"}, Deny: jobs.Safety{}.Words()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("exploration %s: %s", res.Status, res.Error)
	}
	t.Logf("%d actions in %s, %d page templates, %d states, %d/%d elements covered; stopped: %s", res.Actions, res.Duration.Round(time.Second),
		res.Coverage.Pages, len(res.Coverage.States), res.Coverage.Covered, res.Coverage.Seen, res.Stopped)
	for _, f := range res.Findings {
		t.Logf("finding %d [%s/%s] %s at %s", f.Seq, f.Type, f.Severity, f.Title, f.URL)
	}
	return res
}

func TestTheCrawlCoversEveryPageOfASiteAndFindsItsDefects(t *testing.T) {
	t.Parallel()
	_, base := zoo(t)
	res := exploreZoo(t, base, false)
	zooCovered(t, res)
	if !strings.HasPrefix(res.Stopped, "the frontier is empty") || len(res.Coverage.Frontier) != 0 {
		t.Errorf("stopped: %q with frontier %v; want an empty frontier within 200 actions", res.Stopped, res.Coverage.Frontier)
	}
	zooMatched(t, res, false)
	for _, f := range res.Findings {
		if f.Type == explore.TypePageError && !strings.HasSuffix(f.URL, "/zoo/widgets") && !strings.HasSuffix(f.URL, "/zoo/search") {
			t.Errorf("the load error %q is placed at %s, not on the page that threw it", f.Title, f.URL)
		}
		if f.Confidence != explore.ConfidenceObserved || f.Severity == "" {
			t.Errorf("finding %q: confidence %q, severity %q", f.Title, f.Confidence, f.Severity)
		}
	}
	// The flows it went through are test plans in the step language.
	contact := `Go to /zoo/contact | Fill "Name" with "test" | Fill "Email" with "explorer@example.com" | Fill "Message" with "test" | Click "Send message" | Verify "Thanks, we will reply soon." is visible`
	found := false
	for _, p := range res.Plans {
		t.Logf("plan [%s] %s: %s", p.Kind, p.Name, strings.Join(p.Steps, " | "))
		found = found || strings.Join(p.Steps, " | ") == contact && p.Kind == explore.PlanForm
	}
	if !found {
		t.Errorf("no plan for the contact form: want %s", contact)
	}
	// The footer's contrast is one finding with a place on every page.
	for _, f := range res.Findings {
		if exploretest.ZooReports(f, demoapp.ZooDefect{Detector: "accessibility", Title: "(color-contrast,"}) && len(f.Evidence.Places) < demoapp.ZooTemplates()-5 {
			t.Errorf("the contrast finding has %d places, want one per page", len(f.Evidence.Places))
		}
	}
	zooNoise(t, res)
}

func TestTheBugFreeZooHasOnlyNoise(t *testing.T) {
	t.Parallel()
	app, base := zoo(t)
	app.SetZooBugs(false)
	res := exploreZoo(t, base, false)
	zooCovered(t, res)
	for _, f := range res.Findings {
		t.Errorf("false positive: [%s] %s (%s)", f.Type, f.Title, f.Evidence.Message)
	}
	zooNoise(t, res)
}

// zooCovered checks every page template of the zoo was reached, the one
// behind HTTP authentication as a page that needs it.
func zooCovered(t *testing.T, res explore.Result) {
	t.Helper()
	reached := map[string]bool{}
	for _, st := range res.Coverage.States {
		reached[orchestrator.PathTemplate(st.URL)] = true
	}
	for _, p := range demoapp.ZooPages() {
		if p == "/zoo/admin" {
			continue // needs authentication: see zooNoise
		}
		if !reached[orchestrator.PathTemplate(p)] {
			t.Errorf("%s was never reached", p)
		}
	}
}

// zooNoise checks the zoo's noise is reported apart: the page behind HTTP
// authentication and the third-party script the guard refused.
func zooNoise(t *testing.T, res explore.Result) {
	t.Helper()
	auth := strings.Join(res.NeedsAuthentication, " ")
	if !strings.Contains(auth, "/zoo/admin") {
		t.Errorf("needs authentication: %v, want /zoo/admin", res.NeedsAuthentication)
	}
	if !strings.Contains(strings.Join(res.Noise, "\n"), "analytics.zoo-tracker.example") {
		t.Errorf("noise: %v, want the refused analytics script", res.Noise)
	}
}

// zooMatched checks the findings are the zoo's defects, each once: every
// deterministic one, and the functional ones too withModel.
func zooMatched(t *testing.T, res explore.Result, withModel bool) {
	t.Helper()
	_, unexpected, missed := exploretest.MatchZoo(res.Findings, withModel)
	for _, d := range missed {
		t.Errorf("missed: %s %s (%s %q)", d.Page, d.What, d.Detector, d.Title)
	}
	for _, f := range unexpected {
		t.Errorf("false positive: [%s] %s (%s)", f.Type, f.Title, f.Evidence.Message)
	}
}

func TestWithAModelEveryZooDefectIsFoundAndReproduced(t *testing.T) {
	t.Parallel()
	app, base := zoo(t)
	res := exploreZoo(t, base, true)
	zooCovered(t, res)
	zooMatched(t, res, true)
	if res.GoalMet || res.Calls < demoapp.ZooTemplates()-1 {
		t.Errorf("%d model calls, goal met %v: the model should have probed every page of an open-ended goal", res.Calls, res.GoalMet)
	}
	for _, f := range res.Findings {
		if f.Type == explore.TypeFunctional && (f.Evidence.Expected == "" || f.Evidence.Observed == "" || f.Check.Verify == nil) {
			t.Errorf("functional finding %q lacks evidence: %+v", f.Title, f.Evidence)
		}
	}

	// Every reproduction fails at its check under @playwright/test while
	// the defects are there, and passes on the twin.
	ctx := context.Background()
	res.Journey.Script = "" // the journey's own spec is the shop's test's concern
	if err := explore.Verify(ctx, runReport, &res); err != nil {
		t.Fatal(err)
	}
	t.Log(res.Verification)
	for _, f := range res.Findings {
		if r := f.Reproduction; r == nil || !r.Verified || f.Confidence != explore.ConfidenceConfirmed {
			t.Errorf("finding %d %q (%s): reproduction not verified: %+v", f.Seq, f.Title, f.Confidence, r)
		}
	}
	app.SetZooBugs(false)
	var all strings.Builder
	for i, f := range res.Findings {
		spec := f.Reproduction.Spec
		if i > 0 {
			spec = strings.TrimPrefix(spec, "import { test, expect } from '@playwright/test';\n")
		}
		all.WriteString(spec)
	}
	results, err := runReport(ctx, all.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(res.Findings) {
		t.Fatalf("%d results for %d reproductions", len(results), len(res.Findings))
	}
	for _, r := range results {
		if r.Status != "passed" {
			t.Errorf("%s does not pass on the twin: %s", r.Title, r.Error)
		}
	}
}

// TestTheModelCanInspectWhatThePageViewLeftOut: the zoo's home page lists
// every example, more than the page view shows; the model asks to see the
// one it wants and clicks it by the ref the inspection gave.
func TestTheModelCanInspectWhatThePageViewLeftOut(t *testing.T) {
	t.Parallel()
	_, base := zoo(t)
	var shown, inspected bool
	model := llmtest.New(t,
		llmtest.Reply{Content: `{"thinking": "find the maintenance notes", "inspect": {"search": "Maintenance notes"}}`},
		llmtest.Reply{Respond: func(r llmtest.Request) string {
			text := r.Text()
			page, extra, _ := strings.Cut(text, "INSPECTED, AS YOU ASKED:")
			shown = strings.Contains(page, `link "Maintenance notes"`)
			m := regexp.MustCompile(`link "Maintenance notes" \[ref=([a-z0-9]+)\]`).FindStringSubmatch(extra)
			if m == nil {
				return `{"done": true}`
			}
			inspected = true
			return llmtest.JSON(map[string]any{"commands": []any{map[string]any{"action": "click", "target": map[string]any{"ref": m[1]}}}})
		}})
	model.Fallback = &llmtest.Reply{Content: `{"done": true}`}
	e := &explore.Explorer{Page: session(t), Recorder: exploretest.NewRecorder(),
		Model: llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "m"})}
	res, err := e.Run(context.Background(), explore.Input{BaseURL: base, Goal: exploretest.ZooGoal, MaxActions: 1,
		MaxDuration: time.Minute, Scope: []string{"/zoo/"}})
	if err != nil {
		t.Fatal(err)
	}
	if shown || !inspected {
		t.Fatalf("the link was in the page view: %v; found by the inspection: %v", shown, inspected)
	}
	if len(res.Trace) != 1 || !strings.Contains(res.Trace[0].Command.Target.Ref, "e") || len(res.Coverage.States) < 2 ||
		!strings.HasSuffix(res.Coverage.States[1].URL, "/zoo/maintenance") {
		t.Errorf("the model's click did not open the page: trace %+v, states %+v", res.Trace, res.Coverage.States)
	}
}
