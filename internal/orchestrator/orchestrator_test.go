package orchestrator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// memRecorder keeps what the agent records, so tests can check it.
type memRecorder struct {
	mu          sync.Mutex
	events      []orchestrator.Event
	calls       []orchestrator.Call
	checkpoints []orchestrator.Checkpoint
	extracted   map[string]json.RawMessage
	artifacts   []orchestrator.Artifact
	hold        int64
	spent       int64
	reserved    int64
}

func (m *memRecorder) History(_ context.Context, ev []orchestrator.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, ev...)
	return nil
}

func (m *memRecorder) Reserve(_ context.Context, c orchestrator.Call) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	max := llm.DefaultPrices.MicroCredits(c.Model, c.Usage)
	if m.spent+max > m.hold {
		return fmt.Errorf("%w: %d left, up to %d needed", orchestrator.ErrOverBudget, m.hold-m.spent, max)
	}
	m.reserved = max
	return nil
}

func (m *memRecorder) Settle(_ context.Context, c orchestrator.Call) (int64, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, c)
	m.spent += min(llm.DefaultPrices.MicroCredits(c.Model, c.Usage), m.reserved)
	m.reserved = 0
	return m.spent, m.hold, nil
}

func (m *memRecorder) Checkpoint(_ context.Context, cp orchestrator.Checkpoint) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.checkpoints = append(m.checkpoints, cp)
	return nil
}

func (m *memRecorder) Artifact(_ context.Context, a orchestrator.Artifact) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.artifacts = append(m.artifacts, a)
	return nil
}

func (m *memRecorder) Extracted(_ context.Context, k string, v json.RawMessage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.extracted == nil {
		m.extracted = map[string]json.RawMessage{}
	}
	m.extracted[k] = v
	return nil
}

func demo(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(demoapp.Handler(demoapp.Options{Delay: 300 * time.Millisecond}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestDeterministicScenarioProducesPassingSpec(t *testing.T) {
	t.Parallel()
	base := demo(t)
	sc := scenario.Scenario{
		Name:    "login and shop",
		BaseURL: base + "/login",
		Data:    map[string]string{"EMAIL": demoapp.Email},
		Secrets: map[string]string{"PASSWORD": demoapp.Password},
		Steps: []scenario.Step{
			{Text: `Fill "Email" with "{{EMAIL}}"`},
			{Text: `Fill "Password" with "{{PASSWORD}}"`},
			{Text: `Check "Remember me"`},
			{Text: `Click "Sign in"`},
			{Text: `Verify "Welcome back" is visible`},
			{Text: `Verify URL contains /dashboard`},
			{Text: "Go to /list"},
			{Text: `Fill "New item" with "Oat milk"`},
			{Text: `Press Enter`},
			{Text: `Verify "Oat milk" is visible`},
			{Text: `Click "Delete Bread"`},
			{Text: `Verify "Bread" is not visible`},
			{Text: "Go to /delayed"},
			{Text: `Verify "Report ready" is visible`},
			{Type: "query", Rule: "element_exists", Target: &scenario.Target{CSS: "table tbody tr"}},
		},
	}
	rec := &memRecorder{hold: 1}
	a := &orchestrator.Agent{Page: browsertest.Session(t), Recorder: rec}
	res, err := a.Run(context.Background(), orchestrator.Input{Scenario: sc, Secrets: sc.Secrets})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Error, res.Script)
	}
	mustPassSpec(t, res, sc.Secrets)
	for _, s := range res.Steps {
		if s.Tier != "deterministic" || s.Usage.PromptTokens != 0 {
			t.Errorf("step %d ran in tier %s with %d tokens", s.Index+1, s.Tier, s.Usage.PromptTokens)
		}
	}
	if len(rec.calls) != 0 {
		t.Fatalf("deterministic steps called the model %d times", len(rec.calls))
	}
	if len(rec.checkpoints) != len(sc.Steps) {
		t.Fatalf("%d checkpoints for %d steps", len(rec.checkpoints), len(sc.Steps))
	}
	for _, want := range []string{
		"// step 1: Fill \"Email\" with \"{{EMAIL}}\"",
		"await page.getByRole('textbox', { name: 'Email' }).fill('demo@webpilot.test');",
		"fill(process.env.PASSWORD ?? '')",
		"await page.getByRole('button', { name: 'Sign in' }).click();",
		"await expect(page).toHaveURL(/\\/dashboard/);",
		"await page.goto('/list');",
	} {
		if !strings.Contains(res.Script, want) {
			t.Errorf("spec lacks %q", want)
		}
	}
	if strings.Contains(res.Script, demoapp.Password) {
		t.Fatal("the spec contains the password")
	}
	blob, _ := json.Marshal(rec.events)
	if strings.Contains(string(blob), demoapp.Password) {
		t.Fatal("history contains the password")
	}
	if len(res.Manifest) == 0 || res.Manifest[0].Entries[0].Element == nil || res.Manifest[0].Entries[0].Element.Tag != "input" {
		t.Fatalf("manifest lacks fingerprints: %+v", res.Manifest)
	}
	out, err := browsertest.RunSpec(context.Background(), res.Script, map[string]string{"PASSWORD": demoapp.Password})
	if err != nil {
		t.Fatalf("generated spec fails under @playwright/test: %v\n%s\n%s", err, out, res.Script)
	}
}

func TestAgentStepWithScriptedModel(t *testing.T) {
	t.Parallel()
	base := demo(t)
	model := llmtest.New(t,
		// First turn: a ref that does not exist is refused and fed back.
		llmtest.Reply{Content: `{"status":"continue","commands":[{"action":"click","target":{"ref":"nope"}}]}`, PromptTokens: 900, CompletionTokens: 40},
		// Second: a batch of fills and a click, declared complete.
		llmtest.Reply{Content: "```json\n" + llmtest.JSON(map[string]any{
			"status": "complete", "reasoning": "log in",
			"commands": []map[string]any{
				{"action": "fill", "target": map[string]string{"label": "Email"}, "value": "{{EMAIL}}"},
				{"action": "fill", "target": map[string]string{"label": "Password"}, "value": "{{PASSWORD}}"},
				{"action": "click", "target": map[string]string{"role": "button", "name": "Sign in"}},
			},
			"experiences": []string{"login redirects to /dashboard"},
		}) + "\n```\nthat should do it", PromptTokens: 1000, CachedTokens: 500, CompletionTokens: 60},
	)
	sc := scenario.Scenario{Name: "agent login", BaseURL: base + "/login",
		Data: map[string]string{"EMAIL": demoapp.Email}, Secrets: map[string]string{"PASSWORD": demoapp.Password},
		Steps: []scenario.Step{{Text: "Log in as the demo user"}, {Text: `Verify "Welcome back" is visible`}}}
	rec := &memRecorder{hold: 10_000_000}
	client := llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"})
	a := &orchestrator.Agent{Page: browsertest.Session(t), Model: client, Recorder: rec}
	res, err := a.Run(context.Background(), orchestrator.Input{Scenario: sc, Secrets: sc.Secrets})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	mustPassSpec(t, res, sc.Secrets)
	if res.Steps[0].Tier != "agent" || res.Steps[0].Iterations != 2 || res.Steps[1].Tier != "deterministic" {
		t.Fatalf("tiers/iterations: %+v", res.Steps)
	}
	if got := res.Steps[0].Usage; got.PromptTokens != 1900 || got.CompletionTokens != 100 || got.CachedTokens != 500 {
		t.Fatalf("step usage = %+v", got)
	}
	reqs := model.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].Raw, `ref \"nope\" is not in the latest page representation`) {
		t.Fatalf("the invalid ref was not fed back to the model")
	}
	for _, rq := range reqs {
		if strings.Contains(rq.Raw, demoapp.Password) {
			t.Fatal("a prompt contained the password")
		}
	}
	if len(res.Experiences) != 1 {
		t.Fatalf("experiences = %v", res.Experiences)
	}
	out, err := browsertest.RunSpec(context.Background(), res.Script, map[string]string{"PASSWORD": demoapp.Password})
	if err != nil {
		t.Fatalf("generated spec fails: %v\n%s\n%s", err, out, res.Script)
	}
}
