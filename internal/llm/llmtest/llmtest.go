// Package llmtest is a scripted OpenAI-compatible chat server for tests: a
// real HTTP server that answers each chat completion with the next queued
// reply, reports the queued token usage, and records every request, so
// go-openai's real request and response path is exercised.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reply is one scripted answer.
type Reply struct {
	Content          string // the assistant message (usually a JSON decision)
	PromptTokens     int
	CachedTokens     int
	CompletionTokens int
	Status           int // non-zero: answer with this HTTP status instead (e.g. 429)
	// Respond, when set, computes the content from the request, the way a
	// model reads the page it is shown (refs are only known at run time).
	Respond func(Request) string
	// Delay holds the answer back this long (a slow model); a client that
	// goes away meanwhile gets nothing and the call is not counted answered.
	Delay time.Duration
}

// JSON marshals v as a reply's content.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Request is what the server received.
type Request struct {
	Model          string            `json:"model"`
	Messages       []json.RawMessage `json:"messages"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	MaxTokens           int    `json:"max_tokens"`
	MaxCompletionTokens int    `json:"max_completion_tokens"`
	Raw                 string `json:"-"`
	// ClientRequestID is the X-Client-Request-Id header the client sent.
	ClientRequestID string `json:"-"`
}

// Text is the text of every message of the request, in order.
func (r Request) Text() string {
	var b strings.Builder
	for _, m := range r.Messages {
		var msg struct {
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(m, &msg)
		var s string
		if json.Unmarshal(msg.Content, &s) == nil {
			b.WriteString(s + "\n")
			continue
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(msg.Content, &parts) == nil {
			for _, p := range parts {
				b.WriteString(p.Text + "\n")
			}
		}
	}
	return b.String()
}

// Images counts the image parts of the request.
func (r Request) Images() int {
	return strings.Count(r.Raw, "data:image/png;base64,")
}

// Server is the scripted endpoint.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	queue    []Reply
	requests []Request
	served   int
	answered []string // client request ids of the calls answered in full
	// Fallback, when set, answers once the queue is empty (a model that
	// never runs out, for drills of many jobs).
	Fallback *Reply
}

// New starts a server, closed when the test ends.
func New(t testing.TB, replies ...Reply) *Server {
	s := Start(replies...)
	t.Cleanup(s.Close)
	return s
}

// Start starts a server outside a test (benchmarks); the caller closes it.
func Start(replies ...Reply) *Server {
	s := &Server{queue: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// BaseURL is the value for OPENAI_BASE_URL / llm.Config.BaseURL.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Push queues more replies.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	s.queue = append(s.queue, r...)
	s.mu.Unlock()
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Answered returns the client request ids of the calls whose answer was
// written in full, in order.
func (s *Server) Answered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.answered...)
}

// Remaining is how many queued replies were not used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		http.Error(w, `{"error":{"message":"missing key"}}`, http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	req.Raw = string(body)
	req.ClientRequestID = r.Header.Get("X-Client-Request-Id")
	s.mu.Lock()
	s.requests = append(s.requests, req)
	if len(s.queue) == 0 && s.Fallback != nil {
		s.queue = append(s.queue, *s.Fallback)
	}
	if len(s.queue) == 0 {
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"message":"llmtest: no scripted reply left","type":"server_error"}}`)
		return
	}
	rep := s.queue[0]
	s.queue = s.queue[1:]
	s.served++
	n := s.served
	s.mu.Unlock()
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Respond != nil {
		rep.Content = rep.Respond(req)
	}
	if rep.Status != 0 {
		w.WriteHeader(rep.Status)
		fmt.Fprintf(w, `{"error":{"message":"scripted status %d","type":"rate_limit"}}`, rep.Status)
		return
	}
	err := json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1700000000, "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": rep.Content}}},
		"usage": map[string]any{"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.CompletionTokens,
			"total_tokens":          rep.PromptTokens + rep.CompletionTokens,
			"prompt_tokens_details": map[string]any{"cached_tokens": rep.CachedTokens}},
	})
	if f, ok := w.(http.Flusher); ok && err == nil {
		f.Flush()
	}
	if err == nil { // written: if the client died before reading it, it must still be charged
		s.mu.Lock()
		s.answered = append(s.answered, req.ClientRequestID)
		s.mu.Unlock()
	}
}
