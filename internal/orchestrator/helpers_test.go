package orchestrator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// pages serves testdata/ on 127.0.0.1.
func pages(t *testing.T) string { return browsertest.Serve(t, "testdata") }

// paymentOrigin serves a payment form on localhost: another origin than the
// 127.0.0.1 pages that frame it.
func paymentOrigin(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><body><form onsubmit="event.preventDefault();document.getElementById('r').textContent='Payment accepted'">
<label for="cc">Card number</label><input id="cc"><button>Pay now</button></form><p id="r" role="status"></p></body></html>`)
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
}

// ref finds the ref of the element `role "name"` in the page the model was shown.
func ref(req llmtest.Request, role, name string) string {
	re := regexp.MustCompile(regexp.QuoteMeta(role+` "`+name+`"`) + `[^\n]*\[ref=([a-z0-9]+)\]`)
	if m := re.FindStringSubmatch(req.Text()); m != nil {
		return m[1]
	}
	return "missing-" + role + "-" + name
}

var refOf = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)

// refNear finds the ref on the line of the page representation that mentions text.
func refNear(req llmtest.Request, text string) string {
	for _, line := range strings.Split(req.Text(), "\n") {
		if strings.Contains(line, text) && refOf.MatchString(line) {
			return refOnLine(line)
		}
	}
	return "missing-" + text
}

func refOnLine(line string) string {
	if m := refOf.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

// decision builds a scripted model reply.
func decision(d map[string]any) llmtest.Reply {
	return llmtest.Reply{Content: llmtest.JSON(d), PromptTokens: 1500, CompletionTokens: 80}
}

// respond builds a reply computed from the request.
func respond(f func(req llmtest.Request) map[string]any) llmtest.Reply {
	return llmtest.Reply{PromptTokens: 1500, CompletionTokens: 80, Respond: func(req llmtest.Request) string { return llmtest.JSON(f(req)) }}
}

func cmd(action string, target map[string]any, value string) map[string]any {
	c := map[string]any{"action": action, "target": target}
	if value != "" {
		c["value"] = value
	}
	return c
}

func refTarget(r string) map[string]any { return map[string]any{"ref": r} }

// runAgent runs a scenario with the scripted replies and returns the result,
// the recorder and the model server.
func runAgent(t *testing.T, sc scenario.Scenario, replies ...llmtest.Reply) (orchestrator.Result, *memRecorder, *llmtest.Server) {
	t.Helper()
	model := llmtest.New(t, replies...)
	rec := &memRecorder{hold: 100_000_000}
	a := &orchestrator.Agent{Page: browsertest.Session(t), Recorder: rec,
		Model: llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"})}
	res, err := a.Run(context.Background(), orchestrator.Input{Scenario: sc, Secrets: sc.Secrets})
	if err != nil {
		t.Fatal(err)
	}
	// The invariant: a succeeded job's spec passes where the job passed.
	if res.Status == orchestrator.StatusSucceeded {
		mustPassSpec(t, res, sc.Secrets)
	}
	return res, rec, model
}

// mustPassSpec runs the generated spec under @playwright/test (once per script).
func mustPassSpec(t *testing.T, res orchestrator.Result, env map[string]string) {
	t.Helper()
	browsertest.MustPassSpec(t, res.Script, env)
}

// noSecret fails if secret appears in any prompt, history event or the spec.
func noSecret(t *testing.T, secret string, res orchestrator.Result, rec *memRecorder, model *llmtest.Server) {
	t.Helper()
	for i, rq := range model.Requests() {
		if strings.Contains(rq.Raw, secret) {
			t.Fatalf("request %d to the model contains the secret", i+1)
		}
	}
	ev, _ := json.Marshal(rec.events)
	if strings.Contains(string(ev), secret) {
		t.Fatal("history contains the secret")
	}
	all, _ := json.Marshal(res)
	if strings.Contains(res.Script, secret) || strings.Contains(string(all), secret) {
		t.Fatal("the result or spec contains the secret")
	}
}

// runWithoutModel runs a scenario with no model configured on page (a
// fresh session when nil), failing the test on an error.
func runWithoutModel(t *testing.T, sc scenario.Scenario, page *browser.Session) orchestrator.Result {
	t.Helper()
	if page == nil {
		page = browsertest.Session(t)
	}
	a := &orchestrator.Agent{Page: page, Recorder: &memRecorder{hold: 1}}
	res, err := a.Run(context.Background(), orchestrator.Input{Scenario: sc, Secrets: sc.Secrets})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// mustSucceed fails the test, with each step's tier and error, unless the
// run succeeded.
func mustSucceed(t *testing.T, res orchestrator.Result) {
	t.Helper()
	if res.Status != orchestrator.StatusSucceeded {
		for _, s := range res.Steps {
			t.Logf("step %d %s %s: %s", s.Index+1, s.Tier, s.Status, s.Error)
		}
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
}
