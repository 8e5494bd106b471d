package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tiktoken-go/tokenizer"
)

// The mcp area runs whole tasks through the MCP protocol against webpilot
// (webpilot mcp, over stdio) and Playwright MCP 0.0.83 (over stdio, the
// same Chromium and flags), each driven by a scripted client that plays
// the model's part with the same plan: it reads the page once, finds the
// elements the plan names in what the tool showed it, and uses each tool
// the way a model would, the most economical one where a tool takes
// several actions at once (Playwright MCP's browser_fill_form for fields,
// browser_type with submit; webpilot's execute_sequence).

// taskStep is one action or check of a plan, naming its element by role
// and accessible name as both tools' page views show them.
type taskStep struct {
	kind  string // fill, select, check, click, press, expectText
	role  string
	name  string
	value string
}

type mcpTask struct {
	name  string
	path  string
	steps []taskStep
}

func mcpTasks() []mcpTask {
	return []mcpTask{
		{"sign up on a form", "/form.html", []taskStep{
			{kind: "fill", role: "textbox", name: "Full name", value: "Ada Lovelace"},
			{kind: "fill", role: "textbox", name: "Email", value: "ada@example.com"},
			{kind: "select", role: "combobox", name: "Plan", value: "Team"},
			{kind: "check", role: "checkbox", name: "I accept the terms"},
			{kind: "click", role: "button", name: "Create account"},
			{kind: "expectText", value: "Thanks, Ada Lovelace!"},
		}},
		{"add two todos and complete one", "/todo.html", []taskStep{
			{kind: "fill", role: "textbox", name: "New todo", value: "Feed the cat"},
			{kind: "press", value: "Enter"},
			{kind: "fill", role: "textbox", name: "New todo", value: "Pay bills"},
			{kind: "press", value: "Enter"},
			{kind: "check", role: "checkbox", name: "Toggle Feed the cat"},
			{kind: "click", role: "link", name: "Completed"},
			{kind: "expectText", value: "9 items left"},
		}},
		{"search a 2,000-element page", "/large.html", []taskStep{
			{kind: "fill", role: "textbox", name: "Search", value: "Item 42"},
			{kind: "select", role: "combobox", name: "Sort", value: "Price"},
			{kind: "click", role: "button", name: "Go"},
			{kind: "expectText", value: "Item 42"},
		}},
		{"count with late answers", "/late.html?after=300", []taskStep{
			{kind: "click", role: "button", name: "Count"},
			{kind: "click", role: "button", name: "Count"},
			{kind: "click", role: "button", name: "Count"},
			{kind: "expectText", value: "answer 3"},
		}},
		{"complete two todos and clear them", "/todo.html", []taskStep{
			{kind: "check", role: "checkbox", name: "Toggle Walk the dog"},
			{kind: "check", role: "checkbox", name: "Toggle Pay rent"},
			{kind: "click", role: "button", name: "Clear completed"},
			{kind: "click", role: "link", name: "All"},
			{kind: "expectText", value: "6 items left"},
		}},
	}
}

// mcpFigures are one tool's figures for one task run.
type mcpFigures struct {
	calls  int
	tokens int
	wall   time.Duration
}

// mcpClient is a started MCP server and the client session to it.
type mcpClient struct {
	cs   *mcp.ClientSession
	dir  string
	enc  tokenizer.Codec
	figs *mcpFigures
}

// call runs one tool, counting the call and the tokens it returned.
func (c *mcpClient) call(ctx context.Context, name string, args map[string]any) (string, error) {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	c.figs.calls++
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
			b.WriteString("\n")
		}
	}
	n, _ := c.enc.Count(b.String())
	c.figs.tokens += n
	if os.Getenv("WEBPILOT_BENCH_MCP_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "--- %s %v\n%s\n", name, args, b.String())
	}
	if res.IsError {
		return b.String(), fmt.Errorf("%s: %s", name, first(b.String(), 600))
	}
	return b.String(), nil
}

// webpilotTask plays a task against webpilot: the page's view once, then
// the plan as one execute_sequence, its checks included.
func webpilotTask(ctx context.Context, c *mcpClient, url string, t mcpTask) error {
	if _, err := c.call(ctx, "navigate", map[string]any{"url": url, "view": true}); err != nil {
		return err
	}
	var cmds []any
	for _, s := range t.steps {
		target := map[string]any{"role": s.role, "name": s.name, "exact": true}
		switch s.kind {
		case "fill", "select":
			cmds = append(cmds, map[string]any{"action": s.kind, "target": target, "value": s.value})
		case "check", "click":
			cmds = append(cmds, map[string]any{"action": s.kind, "target": target})
		case "press":
			cmds = append(cmds, map[string]any{"action": "press", "value": s.value})
		case "expectText":
			cmds = append(cmds, map[string]any{"action": "verify", "assert": "isVisible", "target": map[string]any{"text": s.value, "exact": true}})
		}
	}
	out, err := c.call(ctx, "execute_sequence", map[string]any{"commands": cmds, "intent": t.name})
	if err != nil {
		return err
	}
	if n := strings.Count(out, "— ok"); n != len(cmds) {
		return fmt.Errorf("webpilot: %d of %d commands ok:\n%s", n, len(cmds), out)
	}
	return nil
}

// peerTask plays a task against Playwright MCP: its navigate answers the
// page, each action is a tool call on the element's ref (consecutive form
// fields in one browser_fill_form, a fill followed by Enter as one
// browser_type with submit), each check a browser_wait_for the text.
func peerTask(ctx context.Context, c *mcpClient, url string, t mcpTask) error {
	page, err := c.call(ctx, "browser_navigate", map[string]any{"url": url})
	if err != nil {
		return err
	}
	// A linked snapshot is read (its tokens counted) only when the client
	// needs an element it has not seen: the peer is charged for no more
	// than a model must read.
	snap, unread := c.snapshotOf(page), ""
	refOf := func(s taskStep) (string, error) {
		if r, err := ref(snap, s.role, s.name); err == nil {
			return r, nil
		}
		if unread != "" {
			snap, unread = c.snapshotOf(unread), ""
			if r, err := ref(snap, s.role, s.name); err == nil {
				return r, nil
			}
		}
		// The element is not in what the client was shown: it looks again.
		out, err := c.call(ctx, "browser_snapshot", map[string]any{})
		if err != nil {
			return "", err
		}
		snap = c.snapshotOf(out)
		return ref(snap, s.role, s.name)
	}
	// act calls a tool on a step's element; a ref the page no longer has
	// (a list re-rendered) makes the client read the newest snapshot and
	// try again, as the error tells a model to.
	act := func(s taskStep, call func(ref string) (string, error)) (string, error) {
		r, err := refOf(s)
		if err != nil {
			return "", err
		}
		out, err := call(r)
		if err == nil || !strings.Contains(out, "not found in the current page snapshot") {
			return out, err
		}
		snap = ""
		if r, err = refOf(s); err != nil {
			return "", err
		}
		return call(r)
	}
	after := func(out string) {
		if snapshotLink.MatchString(out) {
			unread = out
		} else if strings.Contains(out, "[ref=") {
			snap, unread = out, ""
		}
	}
	for i := 0; i < len(t.steps); i++ {
		s := t.steps[i]
		var out string
		switch s.kind {
		case "fill", "select":
			if s.kind == "fill" && i+1 < len(t.steps) && t.steps[i+1].kind == "press" && t.steps[i+1].value == "Enter" {
				if out, err = act(s, func(r string) (string, error) {
					return c.call(ctx, "browser_type", map[string]any{"element": s.name, "target": r, "text": s.value, "submit": true})
				}); err != nil {
					return err
				}
				i++
				break
			}
			var fields []any
			for ; i < len(t.steps) && (t.steps[i].kind == "fill" || t.steps[i].kind == "select"); i++ {
				f := t.steps[i]
				r, err := refOf(f)
				if err != nil {
					return err
				}
				typ := map[string]string{"fill": "textbox", "select": "combobox"}[f.kind]
				fields = append(fields, map[string]any{"name": f.name, "type": typ, "target": r, "value": f.value})
			}
			i--
			if out, err = c.call(ctx, "browser_fill_form", map[string]any{"fields": fields}); err != nil {
				return err
			}
		case "click", "check":
			// A checkbox is clicked: browser_fill_form's checkbox waits out
			// its timeout when the list re-renders the box it ticked.
			if out, err = act(s, func(r string) (string, error) {
				return c.call(ctx, "browser_click", map[string]any{"element": s.name, "target": r})
			}); err != nil {
				return err
			}
		case "press":
			if out, err = c.call(ctx, "browser_press_key", map[string]any{"key": s.value}); err != nil {
				return err
			}
		case "expectText":
			if out, err = c.call(ctx, "browser_wait_for", map[string]any{"text": s.value}); err != nil {
				return err
			}
		}
		after(out)
	}
	return nil
}

// snapshotOf is the page state an answer holds, or the file it links
// (read as the model would read it, its tokens counted as returned).
func (c *mcpClient) snapshotOf(answer string) string {
	m := snapshotLink.FindStringSubmatch(answer)
	if m == nil {
		return answer
	}
	path := m[1]
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.dir, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return answer
	}
	n, _ := c.enc.Count(string(b))
	c.figs.tokens += n
	return string(b)
}

// startWebpilotMCP builds webpilot and starts webpilot mcp over stdio as a
// client's configuration does.
func startWebpilotMCP(ctx context.Context, origin string) (*mcp.ClientSession, func(), error) {
	dir, err := os.MkdirTemp("", "webpilot-bench-mcp")
	if err != nil {
		return nil, nil, err
	}
	bin := filepath.Join(dir, "webpilot")
	build := exec.Command("go", "build", "-o", bin, "./cmd/webpilot")
	build.Dir = moduleRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("build webpilot: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "mcp", "--allow-origin", origin)
	cmd.Dir = moduleRoot() // where make setup installed the driver
	cmd.Env = append(os.Environ(), "WEBPILOT_LOG_LEVEL=warn")
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "webpilot-bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("start webpilot mcp: %w", err)
	}
	return cs, func() { _ = cs.Close(); os.RemoveAll(dir) }, nil
}

// mcpRounds is how many times each task runs on each tool.
var mcpRounds int

// mcpBench runs each task rounds times on both tools, alternating which
// goes first, and prints the table and the summary line.
func (e *env) mcpBench(ctx context.Context, rounds int) error {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(peerPages())
	defer srv.Close()
	ours, stopOurs, err := startWebpilotMCP(ctx, srv.URL)
	if err != nil {
		return err
	}
	defer stopOurs()
	peer, err := startPeer(ctx)
	if err != nil {
		return err
	}
	defer peer.close()

	tasks := mcpTasks()
	type sums struct {
		calls, tokens int
		wall          []time.Duration
	}
	results := make([][2]sums, len(tasks)) // 0: webpilot, 1: Playwright MCP
	for round := 0; round < rounds; round++ {
		for i, t := range tasks {
			order := []int{0, 1}
			if round%2 == 1 {
				order = []int{1, 0}
			}
			for _, who := range order {
				f := &mcpFigures{}
				start := time.Now()
				if who == 0 {
					err = webpilotTask(ctx, &mcpClient{cs: ours, enc: enc, figs: f}, srv.URL+t.path, t)
				} else {
					err = peerTask(ctx, &mcpClient{cs: peer.cs, dir: peer.dir, enc: enc, figs: f}, srv.URL+t.path, t)
				}
				if err != nil {
					return fmt.Errorf("task %q (%s): %w", t.name, []string{"webpilot", "Playwright MCP"}[who], err)
				}
				f.wall = time.Since(start)
				r := &results[i][who]
				r.calls, r.tokens = f.calls, f.tokens
				r.wall = append(r.wall, f.wall)
			}
		}
	}

	fmt.Printf("\nWhole tasks through MCP (%d rounds each; calls and tokens per run, wall time the median)\n", rounds)
	fmt.Printf("%-34s %7s %7s %9s %9s %9s %9s\n", "task", "calls", "peer", "tokens", "peer", "ms", "peer ms")
	var calls, tokens [2]int
	var wall [2]time.Duration
	for i, t := range tasks {
		o, p := results[i][0], results[i][1]
		wo, wp := percentile(o.wall, 50), percentile(p.wall, 50)
		fmt.Printf("%-34s %7d %7d %9d %9d %9.0f %9.0f\n", t.name+fmt.Sprintf(" (%d)", len(t.steps)), o.calls, p.calls, o.tokens, p.tokens, ms(wo), ms(wp))
		calls[0] += o.calls
		calls[1] += p.calls
		tokens[0] += o.tokens
		tokens[1] += p.tokens
		wall[0] += wo
		wall[1] += wp
	}
	fmt.Printf("bench mcp: tasks=%d calls_ratio=%.2f tokens_ratio=%.2f time_ratio=%.2f\n", len(tasks),
		float64(calls[1])/float64(calls[0]), float64(tokens[1])/float64(tokens[0]), float64(wall[1])/float64(wall[0]))
	return nil
}
