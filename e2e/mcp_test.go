package e2e

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/worker"
)

// bearerTransport sends a tenant's key (and session secrets) with every
// MCP request, as a client's configuration does.
type bearerTransport struct {
	key     string
	secrets []string
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	for _, s := range b.secrets {
		r.Header.Add("X-Webpilot-Secret", s)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (s *stack) mcpClient(t *testing.T, key string, secrets ...string) *mcp.ClientSession {
	t.Helper()
	return s.mcpClientAt(t, s.api.URL, key, secrets...)
}

// mcpClientAt connects to the MCP endpoint of the dispatcher at base.
func (s *stack) mcpClientAt(t *testing.T, base, key string, secrets ...string) *mcp.ClientSession {
	t.Helper()
	endpoint := base + "/mcp?allow_origin=" + url.QueryEscape(s.demo)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerTransport{key: key, secrets: secrets}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect to the dispatcher's MCP endpoint: %v", err)
	}
	return cs
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		t.Fatalf("%s failed: %s", name, text)
	}
	return text
}

// TestARemoteMCPSessionRunsAsAChargedJob: through the dispatcher's /mcp
// with a tenant's key, a session is a job a worker holds: a login and a
// search in one execute_sequence (the password a sealed session secret,
// never shown), its spec passes, every call is charged to the tenant and
// recorded in the job's history, and the job ends with the spec when the
// client leaves. Another tenant can neither reach the session nor see its
// job.
func TestARemoteMCPSessionRunsAsAChargedJob(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 300*time.Millisecond)
	s.startWorker(t, nil)
	aliceID, alice := s.tenant(t, "alice", 10)
	_, bob := s.tenant(t, "bob", 10)
	before := s.account(t, aliceID)

	cs := s.mcpClient(t, alice, "PASSWORD="+demoapp.Password)
	mcpCall(t, cs, "navigate", map[string]any{"url": s.demo + "/login"})
	out := mcpCall(t, cs, "execute_sequence", map[string]any{"commands": []any{
		map[string]any{"action": "fill", "target": map[string]any{"label": "Email"}, "value": demoapp.Email},
		map[string]any{"action": "fill", "target": map[string]any{"label": "Password"}, "value": "{{PASSWORD}}"},
		map[string]any{"action": "click", "target": map[string]any{"role": "button", "name": "Sign in"}},
		map[string]any{"action": "click", "target": map[string]any{"role": "link", "name": "Search orders"}},
		map[string]any{"action": "fill", "target": map[string]any{"role": "searchbox", "name": "Search"}, "value": "oat milk"},
		map[string]any{"action": "press", "value": "Enter"},
		map[string]any{"action": "verify", "assert": "textContains", "target": map[string]any{"css": "#summary"}, "value": "2 results"},
	}})
	if strings.Count(out, "— ok") != 7 || !strings.Contains(out, "Order 1003: oat milk, coffee") || strings.Contains(out, demoapp.Password) {
		t.Fatalf("the remote sequence answered:\n%s", out)
	}
	spec := mcpCall(t, cs, "spec", map[string]any{})
	if strings.Contains(spec, demoapp.Password) || !strings.Contains(spec, "process.env.PASSWORD") {
		t.Fatalf("the remote spec:\n%s", spec)
	}

	// A whole scenario is submitted as the tenant's job, the session's
	// secrets going with it sealed.
	ran := mcpCall(t, cs, "run_scenario", map[string]any{"base_url": s.demo + "/login", "text": strings.Join([]string{
		`Fill "Email" with "` + demoapp.Email + `"`, `Fill "Password" with "{{PASSWORD}}"`, `Click "Sign in"`, `Verify "Welcome back" is visible`}, "\n")})
	if !strings.Contains(ran, "status: succeeded (4 steps)") || !strings.Contains(ran, "job: ") || strings.Contains(ran, demoapp.Password) {
		t.Fatalf("run_scenario answered:\n%s", ran)
	}

	_, ranSpec, _ := strings.Cut(ran, "spec:\n")
	browsertest.MustPassSpec(t, ranSpec, map[string]string{"PASSWORD": demoapp.Password})
	// The scenario's job stored a test; run_scenario replays it by id.
	var tests api.TestList
	s.mustJSON(t, "GET", "/v1/tests", alice, nil, http.StatusOK, &tests)
	if len(tests.Tests) != 1 {
		t.Fatalf("alice's tests: %+v", tests.Tests)
	}
	replayed := mcpCall(t, cs, "run_scenario", map[string]any{"test_id": tests.Tests[0].ID})
	if !strings.Contains(replayed, "status: succeeded") || !strings.Contains(replayed, "process.env.PASSWORD") || strings.Contains(replayed, demoapp.Password) {
		t.Fatalf("run_scenario of the stored test answered:\n%s", replayed)
	}

	var list api.JobList
	s.mustJSON(t, "GET", "/v1/jobs", alice, nil, http.StatusOK, &list)
	var sessionJob string
	replays := 0
	for _, j := range list.Jobs {
		if j.Kind == "replay" {
			replays++
		}
	}
	if replays != 1 {
		t.Errorf("%d replay jobs, want the one run_scenario submitted", replays)
	}
	for _, j := range list.Jobs {
		if j.Kind == "session" {
			sessionJob = j.ID
		}
	}
	if sessionJob == "" {
		t.Fatalf("no session job among alice's: %+v", list.Jobs)
	}
	// Bob's key reaches neither the MCP session nor its job.
	if code, body := s.callWith(t, "POST", "/mcp?allow_origin="+url.QueryEscape(s.demo), bob,
		[]byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"spec","arguments":{}}}`),
		map[string]string{"Mcp-Session-Id": cs.ID(), "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}); code != http.StatusNotFound {
		t.Fatalf("bob's call on alice's MCP session answered %d: %s", code, body)
	}
	if code, _ := s.call(t, "GET", "/v1/jobs/"+sessionJob, bob, nil); code != http.StatusNotFound {
		t.Fatalf("bob sees alice's session job: %d", code)
	}

	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	v := s.waitEnd(t, alice, sessionJob, time.Minute)
	if v.State != "succeeded" {
		t.Fatalf("the session job ended %s: %s", v.State, v.Error)
	}
	// navigate, execute_sequence (7 commands) and spec, at the price of a
	// command each (a call without commands counts one); run_scenario is
	// a job of its own, and the MCP endpoint's readiness probe is free.
	want := float64(worker.SessionCommandPrice) * (1 + 7 + 1) / 1e6
	if math.Abs(v.ChargedCredits-want) > 1e-9 {
		t.Errorf("the session was charged %g credits, want %g", v.ChargedCredits, want)
	}
	var jobsCharged float64
	s.mustJSON(t, "GET", "/v1/jobs", alice, nil, http.StatusOK, &list)
	for _, j := range list.Jobs {
		jobsCharged += j.ChargedCredits
	}
	after := s.account(t, aliceID)
	if spent := float64(before.Balance-after.Balance) / 1e6; math.Abs(spent-jobsCharged) > 1e-9 {
		t.Errorf("alice's balance went down by %g, her jobs were charged %g", spent, jobsCharged)
	}
	if n := s.count(t, `SELECT count(*) FROM history WHERE job_id = $1`, sessionJob); n < 7 {
		t.Errorf("the session's history holds %d entries, want its 7 commands at least", n)
	}
	code, script := s.call(t, "GET", "/v1/jobs/"+sessionJob+"/script", alice, nil)
	if code != http.StatusOK || string(script) != spec {
		t.Fatalf("the job's script (%d) is not the session's spec:\n%s", code, script)
	}
	browsertest.MustPassSpec(t, spec, map[string]string{"PASSWORD": demoapp.Password})
}

// TestAnMCPSessionNeedsWhereItMayGo: the endpoint answers a field-specific
// 400 for a session with no allowed origin or a bad one, and 401 without a
// key.
func TestAnMCPSessionNeedsWhereItMayGo(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 0)
	_, key := s.tenant(t, "carol", 1)
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	for _, c := range []struct {
		query, field string
	}{
		{"", "query.allow_origin"},
		{"?allow_origin=ftp://x", "query.allow_origin[0]"},
		{"?allow_origin=" + url.QueryEscape(s.demo) + "&max_credits=lots", "query.max_credits"},
		{"?allow_origin=" + url.QueryEscape(s.demo) + "&device=Nokia%203310", "query.device"},
	} {
		code, body := s.callWith(t, "POST", "/mcp"+c.query, key, init, hdr)
		var e api.ErrorBody
		_ = json.Unmarshal(body, &e)
		if code != http.StatusBadRequest || len(e.Fields) == 0 || e.Fields[0].Field != c.field {
			t.Errorf("%q: %d %s, want 400 naming %s", c.query, code, body, c.field)
		}
	}
	if code, _ := s.callWith(t, "POST", "/mcp?allow_origin="+url.QueryEscape(s.demo), "", init, hdr); code != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", code)
	}
}

// TestAnMCPCallOutlastsTheDispatchersWriteTimeout: a call whose commands
// take longer than the dispatcher's write timeout (60 s in production, 1 s
// here) still gets its answer: MCP answers are written when the commands
// have run.
func TestAnMCPCallOutlastsTheDispatchersWriteTimeout(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	_, key := s.tenant(t, "dora", 10)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := api.NewHTTPServer("", s.contract, api.ServerTimeouts{ReadHeader: time.Second, Read: time.Second, Write: time.Second, Idle: time.Minute})
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	cs := s.mcpClientAt(t, "http://"+ln.Addr().String(), key)
	mcpCall(t, cs, "navigate", map[string]any{"url": s.demo + "/login"})
	out := mcpCall(t, cs, "execute_sequence", map[string]any{"commands": []any{map[string]any{"action": "wait", "value": "1500"}}})
	if !strings.Contains(out, "— ok") {
		t.Fatalf("the slow call answered:\n%s", out)
	}
	_ = cs.Close()
}
