package llm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
)

func TestChatRetriesAndReportsUsage(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t,
		llmtest.Reply{Status: 429},
		llmtest.Reply{Status: 503},
		llmtest.Reply{Content: `{"status":"complete"}`, PromptTokens: 1200, CachedTokens: 200, CompletionTokens: 80},
	)
	c := llm.New(llm.Config{APIKey: "test", BaseURL: srv.BaseURL(), Model: "gpt-4o-mini", Backoff: time.Millisecond})
	rep, err := c.Chat(context.Background(), llm.Request{JSON: true, Messages: []llm.Message{{Role: "user", Text: "hi", Images: [][]byte{{0x89, 'P', 'N', 'G'}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Attempts != 3 || rep.Text != `{"status":"complete"}` {
		t.Fatalf("attempts=%d text=%q", rep.Attempts, rep.Text)
	}
	if rep.Usage != (llm.Usage{PromptTokens: 1200, CachedTokens: 200, CompletionTokens: 80}) {
		t.Fatalf("usage = %+v", rep.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[2].ResponseFormat == nil || reqs[2].ResponseFormat.Type != "json_object" {
		t.Fatalf("JSON response format not requested: %+v", reqs)
	}
	if !strings.Contains(reqs[2].Raw, "data:image/png;base64,") {
		t.Fatal("image part not sent")
	}
	// 1000 uncached * 15 + 200 cached * 7.5 + 80 * 60 = 15000 + 1500 + 4800
	if got := llm.DefaultPrices.MicroCredits("gpt-4o-mini", rep.Usage); got != 21300 {
		t.Fatalf("cost = %d micro-credits, want 21300", got)
	}
}

func TestChatDoesNotRetryClientErrors(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.Reply{Status: 400}, llmtest.Reply{Content: "{}"})
	c := llm.New(llm.Config{APIKey: "test", BaseURL: srv.BaseURL(), Model: "m", Backoff: time.Millisecond})
	if _, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Text: "x"}}}); err == nil {
		t.Fatal("a 400 should fail without retrying")
	}
	if srv.Remaining() != 1 {
		t.Fatalf("client retried a 400")
	}
}

// TestChatRetriesItsOwnTimeout: the HTTP client's per-request timeout is a
// transport failure to retry, while the caller's expired context is final.
func TestChatRetriesItsOwnTimeout(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t,
		llmtest.Reply{Content: `{"late":true}`, Delay: 2 * time.Second},
		llmtest.Reply{Content: `{"status":"complete"}`, PromptTokens: 10},
	)
	c := llm.New(llm.Config{APIKey: "test", BaseURL: srv.BaseURL(), Model: "m", Backoff: time.Millisecond, Timeout: 300 * time.Millisecond})
	req := llm.Request{Messages: []llm.Message{{Role: "user", Text: "x"}}, ClientRequestID: "job/1/7"}
	rep, err := c.Chat(context.Background(), req)
	if err != nil || rep.Attempts != 2 || rep.Text != `{"status":"complete"}` {
		t.Fatalf("after a client timeout: %+v %v", rep, err)
	}
	reqs := srv.Requests()
	if reqs[0].ClientRequestID != "job/1/7" || reqs[0].MaxTokens != llm.DefaultMaxTokens {
		t.Fatalf("request id %q, max_tokens %d", reqs[0].ClientRequestID, reqs[0].MaxTokens)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	srv.Push(llmtest.Reply{Content: "{}", Delay: time.Second}, llmtest.Reply{Content: "{}"})
	if _, err := c.Chat(ctx, req); err == nil {
		t.Fatal("the caller's expired context was retried")
	}
}
