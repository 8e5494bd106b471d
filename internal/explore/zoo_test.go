package explore_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/explore/exploretest"
	"github.com/webpilot/webpilot/internal/jobs"
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

// exploreZoo explores the zoo without a model under the bench's budget.
func exploreZoo(t *testing.T, base string) explore.Result {
	t.Helper()
	e := &explore.Explorer{Page: session(t), Recorder: exploretest.NewRecorder(), Config: explore.Config{AxeSource: browsertest.AxeSource(t)}}
	res, err := e.Run(context.Background(), explore.Input{BaseURL: base, Goal: "find bugs", MaxActions: 200,
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
	_, base := zoo(t)
	res := exploreZoo(t, base)
	zooCovered(t, res)
	if !strings.HasPrefix(res.Stopped, "the frontier is empty") || len(res.Coverage.Frontier) != 0 {
		t.Errorf("stopped: %q with frontier %v; want an empty frontier within 200 actions", res.Stopped, res.Coverage.Frontier)
	}
	matched := map[int]bool{}
	for _, d := range demoapp.ZooDefects {
		if d.Detector == string(explore.TypeFunctional) {
			continue
		}
		got := zooFinds(res, d)
		if len(got) != 1 {
			t.Errorf("%s %s (%s %q): found %d times, want once", d.Page, d.What, d.Detector, d.Title, len(got))
		}
		for _, f := range got {
			matched[f.Seq] = true
		}
	}
	for _, f := range res.Findings {
		if !matched[f.Seq] {
			t.Errorf("false positive: [%s] %s (%s)", f.Type, f.Title, f.Evidence.Message)
		}
		if f.Type == explore.TypePageError && !strings.HasSuffix(f.URL, "/zoo/widgets") && !strings.HasSuffix(f.URL, "/zoo/search") {
			t.Errorf("the load error %q is placed at %s, not on the page that threw it", f.Title, f.URL)
		}
		if f.Confidence != explore.ConfidenceObserved || f.Severity == "" {
			t.Errorf("finding %q: confidence %q, severity %q", f.Title, f.Confidence, f.Severity)
		}
	}
	// The footer's contrast is one finding with a place on every page.
	if c := zooFinds(res, demoapp.ZooDefect{Detector: "accessibility", Title: "(color-contrast,"}); len(c) == 1 && len(c[0].Evidence.Places) < demoapp.ZooTemplates()-5 {
		t.Errorf("the contrast finding has %d places, want one per page", len(c[0].Evidence.Places))
	}
	zooNoise(t, res)
}

func TestTheBugFreeZooHasOnlyNoise(t *testing.T) {
	app, base := zoo(t)
	app.SetZooBugs(false)
	res := exploreZoo(t, base)
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

func zooFinds(res explore.Result, d demoapp.ZooDefect) []explore.Finding {
	var out []explore.Finding
	for _, f := range res.Findings {
		if string(f.Type) == d.Detector && strings.Contains(f.Title, d.Title) ||
			d.Detector == string(explore.TypeBrokenLink) && f.Type == explore.TypeErrorPage && strings.Contains(f.Title, d.Title) {
			out = append(out, f)
		}
	}
	return out
}
