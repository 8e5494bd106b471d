package orchestrator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// memCache is a step cache in memory, stored as JSON as the real one is.
type memCache struct {
	mu      sync.Mutex
	entries map[orchestrator.StepKey][]byte
}

func (c *memCache) CachedStep(_ context.Context, k orchestrator.StepKey) ([]orchestrator.ManifestEntry, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	raw, ok := c.entries[k]
	if !ok {
		return nil, false, nil
	}
	var out []orchestrator.ManifestEntry
	return out, true, json.Unmarshal(raw, &out)
}

func (c *memCache) CacheStep(_ context.Context, k orchestrator.StepKey, e []orchestrator.ManifestEntry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	raw, err := json.Marshal(e)
	if c.entries == nil {
		c.entries = map[orchestrator.StepKey][]byte{}
	}
	c.entries[k] = raw
	return err
}

// fruitStand serves two fruits to buy; drifted renames the buy buttons
// (a release that reworded them).
func fruitStand(t *testing.T, drifted *atomic.Bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		verb := "Buy"
		if drifted.Load() {
			verb = "Purchase"
		}
		fmt.Fprintf(w, `<!doctype html><html><head><title>Fruit stand</title></head><body>
<article><h3>Apple</h3><p>$2.00</p><button aria-label="%[1]s Apple" onclick="msg.textContent='Thanks for buying Apple'">%[1]s</button></article>
<article><h3>Pear</h3><p>$1.00</p><button aria-label="%[1]s Pear" onclick="msg.textContent='Thanks for buying Pear'">%[1]s</button></article>
<p id="msg" role="status"></p></body></html>`, verb)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// runCached runs a scenario with a step cache and the scripted replies.
func runCached(t *testing.T, sc scenario.Scenario, cache orchestrator.StepCache, replies ...llmtest.Reply) (orchestrator.Result, *llmtest.Server) {
	t.Helper()
	model := llmtest.New(t, replies...)
	a := &orchestrator.Agent{Page: browsertest.Session(t), Recorder: &memRecorder{hold: 100_000_000}, Cache: cache,
		Model: llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"})}
	res, err := a.Run(context.Background(), orchestrator.Input{Scenario: sc})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s (%+v)", res.Status, res.Error, res.Steps)
	}
	mustPassSpec(t, res, nil)
	return res, model
}

// TestARerunTakesTheAgentsStepFromTheCacheUntilTheAppDrifts: the second run
// of a scenario makes no model call and writes the same spec; after a
// release renames the button the cached locator named, the entry is not
// replayed blindly: the agent takes the step again, the spec passes, and
// the refreshed entry serves the next run.
func TestARerunTakesTheAgentsStepFromTheCacheUntilTheAppDrifts(t *testing.T) {
	t.Parallel()
	var drifted atomic.Bool
	sc := scenario.Scenario{Name: "cheapest", BaseURL: fruitStand(t, &drifted), Steps: []scenario.Step{
		{Text: "Buy the cheapest fruit"},
		{Text: `Verify "Thanks for buying Pear" is visible`},
	}}
	buy := func(verb string) llmtest.Reply {
		return respond(func(req llmtest.Request) map[string]any {
			return map[string]any{"status": "complete", "reasoning": "the pear costs least", "commands": []any{
				cmd("click", refTarget(ref(req, "button", verb+" Pear")), "")}}
		})
	}
	cache := &memCache{}

	first, model := runCached(t, sc, cache, buy("Buy"))
	if first.Steps[0].Tier != orchestrator.TierAgent || len(model.Requests()) != 1 {
		t.Fatalf("first run: tier %s, %d model calls", first.Steps[0].Tier, len(model.Requests()))
	}

	second, model := runCached(t, sc, cache)
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("the second run made %d model calls, want 0", n)
	}
	if second.Steps[0].Tier != orchestrator.TierCached || second.Steps[0].Usage.PromptTokens != 0 || second.Tiers["cached"] != 1 {
		t.Fatalf("second run: step 1 tier %s with %d tokens, tiers %v", second.Steps[0].Tier, second.Steps[0].Usage.PromptTokens, second.Tiers)
	}
	// The same spec but for the timeouts of commands the machine made slow.
	if browsertest.Untimed(second.Script) != browsertest.Untimed(first.Script) {
		t.Fatalf("the re-run wrote another spec:\n%s\nwant:\n%s", second.Script, first.Script)
	}

	drifted.Store(true)
	third, model := runCached(t, sc, cache, buy("Purchase"))
	if third.Steps[0].Tier != orchestrator.TierAgent || len(model.Requests()) != 1 {
		t.Fatalf("after the drift: tier %s, %d model calls; notes %v", third.Steps[0].Tier, len(model.Requests()), third.Steps[0].Notes)
	}
	if len(third.Steps[0].Notes) == 0 {
		t.Error("the report does not say why the cached step was not used")
	}

	fourth, model := runCached(t, sc, cache)
	if fourth.Steps[0].Tier != orchestrator.TierCached || len(model.Requests()) != 0 || browsertest.Untimed(fourth.Script) != browsertest.Untimed(third.Script) {
		t.Fatalf("the refreshed entry was not used: tier %s, %d calls", fourth.Steps[0].Tier, len(model.Requests()))
	}
}

func TestPathTemplateFoldsIDs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://a.test/orders/1234":                                 "/orders/:id",
		"http://a.test/orders/98/items?x=1":                         "/orders/:id/items",
		"http://a.test/u/3f2b9c1e-aaaa-bbbb-cccc-1234567890ab/edit": "/u/:id/edit",
		"http://a.test/shop/size-guide":                             "/shop/size-guide",
		"http://a.test":                                             "/",
	} {
		if got := orchestrator.PathTemplate(in); got != want {
			t.Errorf("PathTemplate(%q) = %q, want %q", in, got, want)
		}
	}
}
