package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/worker"
)

// reflector is an app that shows what was typed into its password field in
// every way pages do: in the title, as text, JSON-escaped in a script
// block, HTML-escaped in an attribute, in the URL (a GET form), and long
// enough to be cut when captured.
const reflector = `<!doctype html><html><head><meta charset="utf-8"><title>Reflector</title></head><body><main>
<form id="f" method="get" action="/reflect">
<label for="pw">Password</label><input id="pw" name="pw" type="password">
<button type="button" onclick="reflect()">Reflect</button></form>
<p id="hello"></p><pre id="json"></pre><p id="attr"></p><p id="long"></p>
<script>
function reflect() {
  const v = document.getElementById('pw').value;
  document.title = 'Hello ' + v;
  document.getElementById('hello').textContent = 'Welcome back, ' + v;
  document.getElementById('json').textContent = JSON.stringify({password: v, nested: JSON.stringify({pw: v})});
  document.getElementById('attr').setAttribute('data-echo', v);
  document.getElementById('attr').textContent = 'echoed';
  document.getElementById('long').textContent = 'Your account key starts with ' + v + v;
  history.replaceState(null, '', '/reflect?pw=' + encodeURIComponent(v) + '&q=' + encodeURIComponent(v).replace(/%20/g, '+'));
}
</script></main></body></html>`

// syncBuffer is a log destination tests can read while the worker writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecretShapesNeverLeak types secrets of awkward shapes into a page
// that reflects them everywhere, lets the agent look at the page, and
// searches every place a secret could end up — the prompts, the history,
// the progress stream, the result, the checkpoint, the worker's log — for
// any representation of it (raw, JSON-escaped once or twice, HTML-escaped,
// URL-encoded) or a truncated copy of its first six characters.
func TestSecretShapesNeverLeak(t *testing.T) {
	t.Parallel()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, reflector)
	}))
	t.Cleanup(app.Close)
	s := newStack(t, 10*time.Second, 0)
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	look := llmtest.Reply{PromptTokens: 1000, CompletionTokens: 40, Content: llmtest.JSON(map[string]any{
		"status": "complete", "reasoning": "the greeting is shown", "note": "greeting checked",
		"commands": []map[string]any{{"action": "verify", "assert": "textContains", "target": map[string]string{"css": "#hello"}, "value": "Welcome back"}}})}
	for i, secret := range []string{
		`Pa"ss\word<&>'x`,
		"tr\u00e4n\u00e4 \u65e5\u672c pass+word/?=&#",
		"very-long-secret-value-0123456789-abcdefghijklmnopqrstuvwxyz-more-than-sixty-characters",
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			model := llmtest.New(t, look)
			stop := s.startWorkerLogged(t, llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"}),
				worker.Config{ID: fmt.Sprint("secretive-", i)}, logger)
			defer stop()
			_, key := s.tenant(t, fmt.Sprint("secretive ", i), 5)
			job := s.submit(t, key, map[string]any{"name": "reflect", "base_url": app.URL + "/",
				"secrets": map[string]string{"PW": secret},
				"steps":   []any{`Fill "Password" with "{{PW}}"`, `Click "Reflect"`, "Check that the greeting is shown", `Verify "echoed" is visible`}})
			// Follow the progress stream as a client would.
			var stream bytes.Buffer
			done := make(chan struct{})
			go func() {
				defer close(done)
				req, _ := http.NewRequest("GET", s.api.URL+"/v1/jobs/"+job.ID+"/events", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					_, _ = io.Copy(&stream, resp.Body)
					resp.Body.Close()
				}
			}()
			v := s.wait(t, key, job.ID, 60*time.Second)
			if v.State != "succeeded" {
				t.Fatalf("job ended %s: %s", v.State, v.Error)
			}
			<-done
			_, hist := s.call(t, "GET", "/v1/jobs/"+job.ID+"/history", key, nil)
			_, res := s.call(t, "GET", "/v1/jobs/"+job.ID, key, nil)
			_, script := s.call(t, "GET", "/v1/jobs/"+job.ID+"/script", key, nil)
			var checkpoint, result, stored string
			_ = s.store.Pool().QueryRow(context.Background(), `SELECT COALESCE(checkpoint::text, ''), COALESCE(result::text, ''),
				(SELECT COALESCE(string_agg(COALESCE(observation::text, '') || error || target, ' '), '') FROM history WHERE job_id = $1)
				FROM jobs WHERE id = $1`, job.ID).Scan(&checkpoint, &result, &stored)
			var prompts strings.Builder
			for _, rq := range model.Requests() {
				prompts.WriteString(rq.Raw)
			}
			if !strings.Contains(prompts.String(), "Welcome back") {
				t.Fatal("the model never saw the reflecting page; the test proves nothing")
			}
			places := map[string]string{"prompts": prompts.String(), "history": string(hist), "stream": stream.String(),
				"result": string(res), "script": string(script), "checkpoint": checkpoint, "stored result": result,
				"stored history": stored, "worker log": logs.String()}
			for where, text := range places {
				for _, form := range shapes(secret) {
					if strings.Contains(text, form) {
						t.Errorf("%s holds the secret as %q", where, form)
					}
				}
			}
		})
	}
}

// shapes are the representations a leak would take, and the truncated copy.
func shapes(v string) []string {
	esc := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
	out := []string{v, esc(v), esc(esc(v)), html.EscapeString(v), url.QueryEscape(v), url.PathEscape(v)}
	i, n := 0, 0
	for n < 6 && i < len(v) {
		_, size := utf8.DecodeRuneInString(v[i:])
		i, n = i+size, n+1
	}
	return append(out, v[:i]+"…")
}
