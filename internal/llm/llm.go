// Package llm talks to any OpenAI-compatible chat endpoint through go-openai:
// JSON replies, images, retries with backoff on 429 and 5xx, and token usage
// for every call.
package llm

import (
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/webpilot/webpilot/internal/tracing"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Config selects the endpoint and model.
type Config struct {
	APIKey     string
	BaseURL    string // e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1
	Model      string
	MaxRetries int
	Backoff    time.Duration // first retry delay; doubles each time
	Timeout    time.Duration // per request
}

// Client is a chat client with retries and usage accounting.
type Client struct {
	c   *openai.Client
	cfg Config
}

// New builds a client.
func New(cfg Config) *Client {
	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 120 * time.Second
	}
	// Each call is a client span of the job's trace when tracing is on.
	oc.HTTPClient = &http.Client{Timeout: cfg.Timeout, Transport: headerTransport{base: otelhttp.NewTransport(http.DefaultTransport,
		otelhttp.WithPropagators(tracing.Propagator),
		otelhttp.WithSpanNameFormatter(func(string, *http.Request) string { return "model call" }))}}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 4
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 500 * time.Millisecond
	}
	return &Client{c: openai.NewClientWithConfig(oc), cfg: cfg}
}

// Model is the configured model name.
func (c *Client) Model() string { return c.cfg.Model }

// Message is one chat message; Images are PNG bytes sent alongside Text.
type Message struct {
	Role   string // system, user, assistant
	Text   string
	Images [][]byte
}

// Request is one chat call.
type Request struct {
	Messages  []Message
	JSON      bool // ask for a JSON object reply
	MaxTokens int  // completion allowance; 0 means DefaultMaxTokens
	// ClientRequestID, when set, is sent as X-Client-Request-Id so the call
	// can be matched with its charge on both sides (endpoint logs, ledger).
	ClientRequestID string
}

// ClientRequestHeader carries Request.ClientRequestID.
const ClientRequestHeader = "X-Client-Request-Id"

type clientRequestKey struct{}

// headerTransport adds the request's client id from its context.
type headerTransport struct{ base http.RoundTripper }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if id, _ := r.Context().Value(clientRequestKey{}).(string); id != "" {
		r = r.Clone(r.Context())
		r.Header.Set(ClientRequestHeader, id)
	}
	return t.base.RoundTrip(r)
}

// DefaultMaxTokens is the completion allowance of a request that sets none.
// Every request carries one, so that its cost is bounded before it is sent.
const DefaultMaxTokens = 2000

// Usage is what a call cost in tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CachedTokens     int `json:"cached_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Reply is the model's answer.
type Reply struct {
	Text     string
	Model    string
	Usage    Usage
	Attempts int
	Latency  time.Duration
}

// Chat sends a request, retrying 429s, 5xxs and transport errors with
// exponential backoff and jitter.
func (c *Client) Chat(ctx context.Context, r Request) (Reply, error) {
	req := openai.ChatCompletionRequest{Model: c.cfg.Model}
	for _, m := range r.Messages {
		req.Messages = append(req.Messages, toOpenAI(m))
	}
	if r.JSON {
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	maxTokens := r.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	// Reasoning-family models reject max_tokens.
	if reasoningModel(c.cfg.Model) {
		req.MaxCompletionTokens = maxTokens
	} else {
		//lint:ignore SA1019 most OpenAI-compatible servers other than OpenAI's accept only max_tokens
		req.MaxTokens = maxTokens
	}
	if r.ClientRequestID != "" {
		ctx = context.WithValue(ctx, clientRequestKey{}, r.ClientRequestID)
	}
	start := time.Now()
	var lastErr error
	for attempt := 1; attempt <= c.cfg.MaxRetries+1; attempt++ {
		resp, err := c.c.CreateChatCompletion(ctx, req)
		if err == nil {
			if len(resp.Choices) == 0 {
				return Reply{}, errors.New("llm: reply has no choices")
			}
			rep := Reply{Text: resp.Choices[0].Message.Content, Model: resp.Model, Attempts: attempt, Latency: time.Since(start)}
			if rep.Model == "" {
				rep.Model = c.cfg.Model
			}
			rep.Usage = Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens}
			if resp.Usage.PromptTokensDetails != nil {
				rep.Usage.CachedTokens = resp.Usage.PromptTokensDetails.CachedTokens
			}
			return rep, nil
		}
		lastErr = err
		if !retryable(ctx, err) || attempt > c.cfg.MaxRetries {
			break
		}
		delay := c.cfg.Backoff << (attempt - 1)
		delay += time.Duration(rand.Int64N(int64(delay)/4 + 1))
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return Reply{}, fmt.Errorf("llm: %w (after %v)", ctx.Err(), lastErr)
		}
	}
	return Reply{}, fmt.Errorf("llm: chat completion: %w", lastErr)
}

func toOpenAI(m Message) openai.ChatCompletionMessage {
	if len(m.Images) == 0 {
		return openai.ChatCompletionMessage{Role: m.Role, Content: m.Text}
	}
	parts := []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: m.Text}}
	for _, img := range m.Images {
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
			ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(img), Detail: openai.ImageURLDetailAuto}})
	}
	return openai.ChatCompletionMessage{Role: m.Role, MultiContent: parts}
}

func reasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// retryable says whether a failed call may be sent again: rate limits,
// server errors and transport errors, including the HTTP client's own
// per-request timeout; never the caller's cancelled or expired context.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode == 429 || apiErr.HTTPStatusCode >= 500
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode == 429 || reqErr.HTTPStatusCode >= 500
	}
	return true // transport errors and the client's timeout (the caller's context is live)
}
