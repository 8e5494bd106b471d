package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/mcpserver"
)

const password = "s3cret-pass" // the demo app's; a secret of the session

// demo serves the demo app on loopback, which sessions may reach only
// because it is an allowed origin.
func demo(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(demoapp.New(demoapp.Options{Delay: 300 * time.Millisecond}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// overHTTP serves a local-mode server over Streamable HTTP and connects the
// SDK's own client to it.
func overHTTP(t *testing.T, origin string) *mcp.ClientSession {
	t.Helper()
	local, err := mcpserver.NewLocal(&mcpserver.Local{AllowedOrigins: []string{origin}, Secrets: map[string]string{"PASSWORD": password},
		Browser: func(context.Context) (*browser.Browser, error) { return browsertest.Browser(t), nil }, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = local.Close() })
	srv := httptest.NewServer(mcpserver.New(mcpserver.Options{Backend: local, Log: slog.New(slog.DiscardHandler)}).Handler())
	t.Cleanup(srv.Close)
	return connect(t, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// overStdio starts webpilot mcp as a client's configuration does: the
// binary from a checkout laid out as make leaves one, run from another
// directory, the secret read from the environment.
func overStdio(t *testing.T, origin string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	buildOnce.Do(func() {
		checkout, err := os.MkdirTemp("", "webpilot-mcp-bin")
		if err != nil {
			buildErr = err
			return
		}
		if buildErr = os.Symlink(filepath.Dir(browsertest.DriverDir()), filepath.Join(checkout, ".cache")); buildErr != nil {
			return
		}
		binPath = filepath.Join(checkout, "bin", "webpilot")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/webpilot/webpilot/cmd/webpilot").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	cmd := exec.Command(binPath, "mcp", "--allow-origin", origin, "--secret", "PASSWORD=env:DEMO_PASSWORD")
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PLAYWRIGHT_DRIVER_PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "DEMO_PASSWORD="+password)
	cmd.Stderr = &testWriter{t: t}
	return connect(t, &mcp.CommandTransport{Command: cmd}, opts)
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "build webpilot: " + e.err.Error() + "\n" + e.out }

// testWriter logs the server's stderr with the test.
type testWriter struct {
	t  *testing.T
	mu sync.Mutex
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func connect(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "webpilot-test", Version: "1"}, opts).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and returns its text; fail says whether the call must
// fail (a tool error) or succeed.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, fail bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError != fail {
		t.Fatalf("%s: error=%v, want %v:\n%s", name, res.IsError, fail, b.String())
	}
	return b.String()
}

func cmd(action string, target map[string]any, value string) map[string]any {
	c := map[string]any{"action": action}
	if target != nil {
		c["target"] = target
	}
	if value != "" {
		c["value"] = value
	}
	return c
}

func role(r, name string) map[string]any { return map[string]any{"role": r, "name": name} }
func label(l string) map[string]any      { return map[string]any{"label": l} }

// transports are the two ways a client reaches the server: the binary over
// stdio, as a client's configuration starts it, and Streamable HTTP.
var transports = []struct {
	name string
	open func(*testing.T, string) *mcp.ClientSession
}{
	{"stdio", func(t *testing.T, o string) *mcp.ClientSession { return overStdio(t, o, nil) }},
	{"streamable http", overHTTP},
}

// loginAndSearch signs in and searches the orders: seven commands, one call.
func loginAndSearch() map[string]any {
	return map[string]any{"intent": "sign in and search the orders for oat milk", "commands": []any{
		cmd("fill", label("Email"), demoapp.Email),
		cmd("fill", label("Password"), "{{PASSWORD}}"),
		cmd("click", role("button", "Sign in"), ""),
		cmd("click", role("link", "Search orders"), ""),
		cmd("fill", map[string]any{"role": "searchbox", "name": "Search"}, "oat milk"),
		cmd("press", nil, "Enter"),
		map[string]any{"action": "verify", "assert": "textContains", "target": map[string]any{"css": "#summary"}, "value": "2 results"},
	}}
}

// TestALoginAndASearchAreOneCall: over both transports, one
// execute_sequence signs in, searches and checks the answer; the answer
// says what each command did and what changed (the results that came
// late, after settling), never the password; the session's spec passes
// under @playwright/test with the password from the environment.
func TestALoginAndASearchAreOneCall(t *testing.T) {
	origin := demo(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.open(t, origin)
			call(t, cs, "navigate", map[string]any{"url": origin + "/login"}, false)
			out := call(t, cs, "execute_sequence", loginAndSearch(), false)
			for i := 1; i <= 7; i++ {
				if !strings.Contains(out, string(rune('0'+i))+". ") || strings.Count(out, "— ok") != 7 {
					t.Fatalf("not every command reported ok:\n%s", out)
				}
			}
			for _, want := range []string{"/search", "Order 1001: oat milk, bread", "Order 1003: oat milk, coffee", `2 results for "oat milk"`} {
				if !strings.Contains(out, want) {
					t.Errorf("the answer does not show %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "Order 1002") {
				t.Errorf("the answer shows an order the search did not find:\n%s", out)
			}
			shot, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "screenshot", Arguments: map[string]any{}})
			if err != nil || shot.IsError || len(shot.Content) != 1 {
				t.Fatalf("screenshot: %v %+v", err, shot)
			}
			if img, ok := shot.Content[0].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || !bytes.HasPrefix(img.Data, []byte("\x89PNG")) {
				t.Fatalf("screenshot is not a PNG: %T", shot.Content[0])
			}
			spec := call(t, cs, "spec", map[string]any{}, false)
			for _, text := range []string{out, spec} {
				if strings.Contains(text, password) {
					t.Fatalf("the password is shown:\n%s", text)
				}
			}
			if !strings.Contains(spec, "process.env.PASSWORD") || !strings.Contains(spec, "2 results") {
				t.Fatalf("the spec does not type the secret from the environment or check the results:\n%s", spec)
			}
			browsertest.MustPassSpec(t, spec, map[string]string{"PASSWORD": password})
		})
	}
}

// TestASequenceStopsAtTheFirstFailure: a command that fails stops the
// batch; the rest do not run, the answer says so and is a tool error, and
// the spec holds only what succeeded.
func TestASequenceStopsAtTheFirstFailure(t *testing.T) {
	origin := demo(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.open(t, origin)
			call(t, cs, "navigate", map[string]any{"url": origin + "/login"}, false)
			out := call(t, cs, "execute_sequence", map[string]any{"commands": []any{
				cmd("fill", label("Email"), demoapp.Email),
				cmd("click", role("button", "Register"), ""),
				cmd("fill", label("Password"), "{{PASSWORD}}"),
			}}, true)
			for _, want := range []string{"1. fill", "— ok", "2. click", "FAILED", "3. fill", "— not run", "stopped: command 2", "the 1 command(s) after it did not run"} {
				if !strings.Contains(out, want) {
					t.Errorf("the answer does not say %q:\n%s", want, out)
				}
			}
			spec := call(t, cs, "spec", map[string]any{}, false)
			if strings.Contains(spec, "Register") || strings.Contains(spec, "PASSWORD") || !strings.Contains(spec, demoapp.Email) {
				t.Fatalf("the spec should hold the fill that ran and nothing after it:\n%s", spec)
			}
			browsertest.MustPassSpec(t, spec, nil)
		})
	}
}

// TestADialogAndAPopup: the next dialog is answered as the client says and
// reported; a link that opens a tab is reported as opened, tabs lists and
// switches to it, and the spec answers the same dialog and waits for the
// same popup.
func TestADialogAndAPopup(t *testing.T) {
	origin := demo(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.open(t, origin)
			call(t, cs, "navigate", map[string]any{"url": origin + "/login"}, false)
			call(t, cs, "execute_sequence", map[string]any{"commands": loginAndSearch()["commands"].([]any)[:4]}, false)
			out := call(t, cs, "dialogs", map[string]any{"answer": "accept"}, false)
			if !strings.Contains(out, "no dialog so far") || !strings.Contains(out, "answered: accept") {
				t.Fatalf("dialogs before any:\n%s", out)
			}
			out = call(t, cs, "execute_sequence", map[string]any{"commands": []any{
				cmd("click", role("button", "Clear search history"), ""),
				map[string]any{"action": "verify", "assert": "textEquals", "target": map[string]any{"css": "#history"}, "value": "No recent searches"},
				cmd("click", role("link", "Search help"), ""),
			}}, false)
			for _, want := range []string{`confirm "Clear all 3 recent searches?" (accepted)`, "page 2 opened", "/help"} {
				if !strings.Contains(out, want) {
					t.Errorf("the answer does not say %q:\n%s", want, out)
				}
			}
			out = call(t, cs, "dialogs", map[string]any{}, false)
			if !strings.Contains(out, `1. confirm on page 1: "Clear all 3 recent searches?" — accept`) {
				t.Errorf("dialogs does not list the confirm:\n%s", out)
			}
			out = call(t, cs, "tabs", map[string]any{"action": "switch", "page": 2}, false)
			if !strings.Contains(out, "page 2 (current)") {
				t.Fatalf("tabs after switching:\n%s", out)
			}
			call(t, cs, "verify", map[string]any{"checks": []any{
				map[string]any{"assert": "titleContains", "value": "Search help"},
				map[string]any{"assert": "isVisible", "target": role("heading", "Search help")},
			}}, false)
			out = call(t, cs, "verify", map[string]any{"timeout_ms": 500, "checks": []any{map[string]any{"assert": "titleContains", "value": "Dashboard"}}}, true)
			if !strings.Contains(out, "0 of 1 checks passed") {
				t.Errorf("a failed check:\n%s", out)
			}
			spec := call(t, cs, "spec", map[string]any{}, false)
			for _, want := range []string{"page.once('dialog'", "waitForEvent('popup')", "No recent searches", "Search help"} {
				if !strings.Contains(spec, want) {
					t.Errorf("the spec lacks %q:\n%s", want, spec)
				}
			}
			if strings.Contains(spec, "Dashboard") {
				t.Errorf("the spec holds the check that failed:\n%s", spec)
			}
			browsertest.MustPassSpec(t, spec, map[string]string{"PASSWORD": password})
		})
	}
}

// TestToolsCarryTheEnginesVocabulary: the tools are listed with input
// schemas built from the engine's own definitions: every action and
// assertion the agent accepts, and no other.
func TestToolsCarryTheEnginesVocabulary(t *testing.T) {
	origin := demo(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.open(t, origin)
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			schemas := map[string]map[string]any{}
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				b, _ := json.Marshal(tool.InputSchema)
				var s map[string]any
				_ = json.Unmarshal(b, &s)
				schemas[tool.Name] = s
				if tool.Description == "" {
					t.Errorf("%s has no description", tool.Name)
				}
			}
			slices.Sort(names)
			want := []string{"dialogs", "execute_sequence", "navigate", "run_scenario", "screenshot", "snapshot", "spec", "tabs", "verify"}
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			cmdSchema := schemas["execute_sequence"]["properties"].(map[string]any)["commands"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)
			var actions, asserts []string
			for _, a := range cmdSchema["action"].(map[string]any)["enum"].([]any) {
				actions = append(actions, a.(string))
			}
			for _, a := range cmdSchema["assert"].(map[string]any)["enum"].([]any) {
				asserts = append(asserts, a.(string))
			}
			var wantActions, wantAsserts []string
			for _, a := range append(browser.Actions(), browser.ActionVerify) {
				wantActions = append(wantActions, string(a))
			}
			for _, a := range browser.Assertions() {
				wantAsserts = append(wantAsserts, string(a))
			}
			if !slices.Equal(actions, wantActions) || !slices.Equal(asserts, wantAsserts) {
				t.Fatalf("schema vocabulary: actions %v, assertions %v", actions, asserts)
			}
			if _, ok := schemas["execute_sequence"]["$defs"].(map[string]any)["target"]; !ok {
				t.Fatalf("the target's schema is not defined: %v", schemas["execute_sequence"])
			}
		})
	}
}

// TestBadCallsSayWhatIsWrong: an unknown action is refused by the schema
// before anything runs, a command the engine's validation refuses runs
// nothing and names the command, and navigation off the allowed origins is
// refused.
func TestBadCallsSayWhatIsWrong(t *testing.T) {
	origin := demo(t)
	cs := overHTTP(t, origin)
	out := call(t, cs, "execute_sequence", map[string]any{"commands": []any{cmd("click", role("button", "x"), "")}}, true)
	if !strings.Contains(out, "navigate first") {
		t.Errorf("a sequence before any page: %s", out)
	}
	call(t, cs, "navigate", map[string]any{"url": origin + "/login"}, false)
	for _, c := range []struct {
		name string
		cmds []any
		want string
	}{
		{"unknown action", []any{cmd("explode", nil, "")}, "explode"},
		{"a fill without its field", []any{cmd("click", label("Email"), ""), cmd("fill", nil, "x")}, "command 2: fill needs a target"},
		{"a ref never shown", []any{cmd("click", map[string]any{"ref": "s9e999"}, "")}, `ref "s9e999" is not in the latest page representation`},
		{"a script URL", []any{cmd("navigate", nil, "javascript:alert(1)")}, "only http(s) URLs"},
		{"another origin", []any{cmd("navigate", nil, "https://example.com/")}, "navigation is limited to"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := call(t, cs, "execute_sequence", map[string]any{"commands": c.cmds}, true)
			if !strings.Contains(out, c.want) {
				t.Fatalf("the error does not say %q: %s", c.want, out)
			}
		})
	}
	out = call(t, cs, "snapshot", map[string]any{}, false)
	if !strings.Contains(out, "/login") || strings.Contains(out, "Search orders") {
		t.Fatalf("a refused batch changed the page:\n%s", out)
	}
}

// TestRunScenarioStreamsItsSteps: a text scenario runs to its end in a
// browser of its own, each finished step sent as a progress notification,
// and answers its status and spec.
func TestRunScenarioStreamsItsSteps(t *testing.T) {
	origin := demo(t)
	var mu sync.Mutex
	var progress []string
	cs := overStdio(t, origin, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Message)
		mu.Unlock()
	}})
	params := &mcp.CallToolParams{Name: "run_scenario", Arguments: map[string]any{"base_url": origin + "/login", "text": strings.Join([]string{
		`Fill "Email" with "` + demoapp.Email + `"`,
		`Fill "Password" with "{{PASSWORD}}"`,
		`Click "Sign in"`,
		`Verify "Welcome back" is visible`,
	}, "\n")}}
	params.SetProgressToken("run-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || !strings.Contains(text, "status: succeeded (4 steps)") || !strings.Contains(text, "process.env.PASSWORD") || strings.Contains(text, password) {
		t.Fatalf("run_scenario answered:\n%s", text)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) != 4 || !strings.HasPrefix(progress[0], "step 1/4 passed") || !strings.HasPrefix(progress[3], "step 4/4 passed") {
		t.Fatalf("progress notifications: %q", progress)
	}
}
