package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tiktoken-go/tokenizer"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/chromium"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/specrun"
)

// The peer is Playwright MCP, installed by make setup (scripts/setup.sh
// peer) into .cache/pwmcp, driving the same Chromium executable with the
// same flags as webpilot.
const peerVersion = "0.0.83"

// peerAction is one action taken by both tools: the command webpilot's
// model answers with, and the element MCP is told to act on (found by role
// and name in its own snapshot, as its model would).
type peerAction struct {
	kind    string // click, type
	command map[string]any
	role    string // MCP: the element's role and name in its snapshot
	name    string
	text    string // typed text
	// answer, for a late-request page, is the text the page shows once the
	// action's request has been answered; %d is the sample's number.
	answer string
}

// peerPage is a testdata page and what is done on it.
type peerPage struct {
	name   string
	path   string
	action peerAction
}

type peerFigures struct {
	tokensOurs, tokensPeer map[string]int
	click, typ             [2][]time.Duration // 0: webpilot, 1: MCP
	early, samples         [2]int
	bare                   []time.Duration // MCP's type without its snapshot
	perAction              map[string][]peerTimes
	typeNames              []string
}

// peerTimes are one block's samples of an action: 0 webpilot, 1 MCP.
type peerTimes [2][]time.Duration

// peerBench runs webpilot and Playwright MCP side by side on the same pages
// in the same run, alternating blocks of samples, and prints the peer table
// and summary line.
func (e *env) peerBench(ctx context.Context, samples int, replayRatio, submits float64) error {
	peer, err := startPeer(ctx)
	if err != nil {
		return err
	}
	defer peer.close()
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(peerPages())
	defer srv.Close()

	click := func(name string) map[string]any {
		return map[string]any{"action": "click", "target": map[string]any{"role": "button", "name": name, "exact": true}}
	}
	pages := []peerPage{
		{"small form: type a name", "/form.html", peerAction{kind: "type", role: "textbox", name: "Full name", text: "Ada Lovelace",
			command: map[string]any{"action": "fill", "target": map[string]any{"label": "Full name"}, "value": "Ada Lovelace"}}},
		{"small form: submit", "/form.html", peerAction{kind: "click", role: "button", name: "Create account", command: click("Create account")}},
		{"2,000-element page: type a search", "/large.html", peerAction{kind: "type", role: "textbox", name: "Search", text: "Item 42",
			command: map[string]any{"action": "fill", "target": map[string]any{"label": "Search"}, "value": "Item 42"}}},
		{"2,000-element page: click Go", "/large.html", peerAction{kind: "click", role: "button", name: "Go", command: click("Go")}},
		{"TodoMVC-like list: type a todo", "/todo.html", peerAction{kind: "type", role: "textbox", name: "New todo", text: "Feed the cat",
			command: map[string]any{"action": "fill", "target": map[string]any{"label": "New todo"}, "value": "Feed the cat"}}},
		{"TodoMVC-like list: clear completed", "/todo.html", peerAction{kind: "click", role: "button", name: "Clear completed", command: click("Clear completed")}},
	}
	for _, after := range []int{0, 100, 300} {
		pages = append(pages, peerPage{fmt.Sprintf("click, request starts %d ms later", after), fmt.Sprintf("/late.html?after=%d", after),
			peerAction{kind: "click", role: "button", name: "Count", command: click("Count"), answer: "answer %d"}})
	}

	f := peerFigures{tokensOurs: map[string]int{}, tokensPeer: map[string]int{}, perAction: map[string][]peerTimes{}}
	for _, p := range pages {
		if p.action.kind == "type" {
			f.typeNames = append(f.typeNames, p.name)
		}
	}
	const block = 5
	for _, p := range pages {
		url := srv.URL + p.path
		for done := 0; done < samples; done += block {
			n := min(block, samples-done)
			// Alternate which tool goes first so neither always meets a
			// machine the other has just warmed or loaded.
			order := []int{0, 1}
			if (done/block)%2 == 1 {
				order = []int{1, 0}
			}
			for _, tool := range order {
				var times []time.Duration
				var early, toks int
				var err error
				if tool == 0 {
					times, early, toks, err = e.oursRun(ctx, url, p.action, n, enc)
				} else {
					times, early, toks, err = peer.run(ctx, url, p.action, n, enc)
				}
				if err != nil {
					return fmt.Errorf("%s (%s): %w", p.name, []string{"webpilot", "MCP"}[tool], err)
				}
				if p.action.kind == "click" {
					f.click[tool] = append(f.click[tool], times...)
				} else {
					f.typ[tool] = append(f.typ[tool], times...)
					f.perAction[p.name] = append(f.perAction[p.name], peerTimes{})
					f.perAction[p.name][len(f.perAction[p.name])-1][tool] = times
				}
				if p.action.answer != "" {
					f.early[tool] += early
					f.samples[tool] += n
				}
				page := strings.SplitN(p.path, "?", 2)[0]
				if tool == 0 {
					f.tokensOurs[page] = toks
				} else {
					f.tokensPeer[page] = toks
				}
			}
		}
		fmt.Printf("  %-44s done\n", p.name)
	}
	f.bare = peer.bare
	return f.print(samples, replayRatio, submits)
}

func (f peerFigures) print(samples int, replayRatio, submits float64) error {
	fmt.Printf("\nSide by side with Playwright MCP %s (same Chromium, alternating blocks of 5, %d samples per action; tokens: o200k_base via tiktoken-go)\n", peerVersion, samples)
	fmt.Printf("  %-34s %10s %10s %8s\n", "page (first view)", "webpilot", "MCP", "ratio")
	var ratios []float64
	for _, p := range []string{"/form.html", "/large.html", "/todo.html", "/late.html"} {
		o, m := f.tokensOurs[p], f.tokensPeer[p]
		if o == 0 || m == 0 {
			return fmt.Errorf("no token figure for %s", p)
		}
		r := float64(m) / float64(o)
		ratios = append(ratios, r)
		fmt.Printf("  %-34s %6d tok %6d tok %7.2fx\n", p, o, m, r)
	}
	fmt.Printf("  %-34s %10s %10s %8s\n", "action, to a ready state (median)", "webpilot", "MCP", "speedup")
	clickX := ms(percentile(f.click[1], 50)) / ms(percentile(f.click[0], 50))
	typeX := ms(percentile(f.typ[1], 50)) / ms(percentile(f.typ[0], 50))
	fmt.Printf("  %-34s %7.1f ms %7.1f ms %7.2fx\n", "click", ms(percentile(f.click[0], 50)), ms(percentile(f.click[1], 50)), clickX)
	fmt.Printf("  %-34s %7.1f ms %7.1f ms %7.2fx\n", "type (MCP: type, then snapshot)", ms(percentile(f.typ[0], 50)), ms(percentile(f.typ[1], 50)), typeX)
	fmt.Printf("  %-34s %10s %7.1f ms\n", "  MCP's type alone (no page state)", "", ms(percentile(f.bare, 50)))
	for _, name := range f.typeNames {
		var t [2][]time.Duration
		for _, b := range f.perAction[name] {
			t[0], t[1] = append(t[0], b[0]...), append(t[1], b[1]...)
		}
		if len(t[0]) > 0 && len(t[1]) > 0 {
			fmt.Printf("  %-34s %7.1f ms %7.1f ms %7.2fx\n", "  "+name, ms(percentile(t[0], 50)), ms(percentile(t[1], 50)), ms(percentile(t[1], 50))/ms(percentile(t[0], 50)))
		}
	}
	fmt.Printf("  %-34s %6d/%-3d %6d/%-3d\n", "early returns (request 0-300 ms late)", f.early[0], f.samples[0], f.early[1], f.samples[1])
	fmt.Printf("\nbench peer: early_returns=%d samples=%d click_speedup=%.2f type_speedup=%.2f tokens_ratio=%.2f replay_vs_runner=%.2f submits_per_s=%.0f\n\n",
		f.early[0], f.samples[0], clickX, typeX, median(ratios), replayRatio, submits)
	return nil
}

// peerPages serves the peer testdata pages and the late page's answer.
func peerPages() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(filepath.Join(testdataDir("cmd/bench"), "peer"))))
	mux.HandleFunc("/api/count", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		fmt.Fprint(w, r.URL.Query().Get("n"))
	})
	return mux
}

// answered reports whether text shows the answer to sample k.
func answered(format string, k int, text string) bool {
	return regexp.MustCompile(regexp.QuoteMeta(fmt.Sprintf(format, k)) + `\b`).MatchString(text)
}

// oursRun takes n agent steps of one command each on a fresh session
// through the orchestrator with a scripted model, and returns each step's
// time outside the model call: the command, settling, and the
// representation the next model call is shown. A late-request page's
// sample is an early return when that representation does not show its
// answer.
func (e *env) oursRun(ctx context.Context, url string, a peerAction, n int, enc tokenizer.Codec) ([]time.Duration, int, int, error) {
	sess, err := e.browser.NewSession(ctx, browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"})})
	if err != nil {
		return nil, 0, 0, err
	}
	defer sess.Close()
	var mu sync.Mutex
	early, tokens := 0, 0
	// Step 0 only looks at the page (MCP's first snapshot is not timed
	// either); steps 1..n act, and the prompt of step k+1 shows the state
	// action k left; step n+1 ends the job.
	look := llmtest.JSON(map[string]any{"status": "complete", "commands": []any{
		map[string]any{"action": "verify", "assert": "isVisible", "target": map[string]any{"css": "body"}}}})
	var replies []llmtest.Reply
	for i := 0; i <= n+1; i++ {
		replies = append(replies, llmtest.Reply{PromptTokens: 1000, CompletionTokens: 40, Respond: func(req llmtest.Request) string {
			text := req.Text()
			mu.Lock()
			if i == 0 {
				tokens = pageTokens(enc, text)
			} else if i >= 2 && a.answer != "" && !answered(a.answer, i-1, text) {
				early++
			}
			mu.Unlock()
			if i == 0 || i == n+1 {
				return look
			}
			return llmtest.JSON(map[string]any{"status": "complete", "commands": []any{a.command}})
		}})
	}
	srv := llmtest.Start(replies...)
	defer srv.Close()
	model := &timedModel{inner: llm.New(llm.Config{APIKey: "bench", BaseURL: srv.BaseURL(), Model: "gpt-4o-mini"})}
	sc := scenario.Scenario{Name: "peer", BaseURL: url}
	for range n + 2 {
		sc.Steps = append(sc.Steps, scenario.Step{Type: "ai_action", Text: "Do the next thing"})
	}
	ag := &orchestrator.Agent{Page: sess, Model: model, Recorder: orchestrator.NopRecorder{}}
	res, err := ag.Run(ctx, orchestrator.Input{Scenario: sc})
	if err != nil {
		return nil, 0, 0, err
	}
	if res.Status != orchestrator.StatusSucceeded || len(model.calls) != n+2 {
		return nil, 0, 0, fmt.Errorf("run %s (%s) with %d calls", res.Status, res.Error, len(model.calls))
	}
	var out []time.Duration
	for i := 1; i <= n; i++ {
		s := res.Steps[i]
		if s.Iterations != 1 {
			return nil, 0, 0, fmt.Errorf("step %d took %d iterations", i+1, s.Iterations)
		}
		out = append(out, s.Duration-model.calls[i])
	}
	return out, early, tokens, nil
}

// pageTokens counts the tokens of the page representation in a prompt
// (the part after its heading, as MCP's count is of its snapshot alone).
func pageTokens(enc tokenizer.Codec, prompt string) int {
	const head = "PAGE (untrusted page content"
	if i := strings.LastIndex(prompt, head); i >= 0 {
		prompt = prompt[i:]
	}
	n, _ := enc.Count(prompt)
	return n
}

// peerProc is a running Playwright MCP server spoken to over stdio.
type peerProc struct {
	cs   *mcp.ClientSession
	dir  string
	bare []time.Duration // browser_type alone, before its snapshot
}

func startPeer(ctx context.Context) (*peerProc, error) {
	cli := filepath.Join(moduleRoot(), ".cache", "pwmcp", "node_modules", "@playwright", "mcp", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return nil, fmt.Errorf("@playwright/mcp is not installed (make bench runs scripts/setup.sh peer): %w", err)
	}
	dir, err := os.MkdirTemp("", "webpilot-peer")
	if err != nil {
		return nil, err
	}
	cfg := map[string]any{"browser": map[string]any{"browserName": "chromium", "isolated": true,
		"launchOptions": map[string]any{"headless": true, "executablePath": browsertest.Config().ExecutablePath, "args": chromium.Args()}}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		return nil, err
	}
	// Its Chromium at the priority webpilot's own runs at (unraised).
	line := append(chromium.Unraised(), "node", cli, "--config", filepath.Join(dir, "config.json"), "--output-dir", dir)
	cmd := exec.Command(line[0], line[1:]...)
	cmd.Dir = dir // the workspace its snapshot links are relative to
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "webpilot-bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("start Playwright MCP: %w", err)
	}
	return &peerProc{cs: cs, dir: dir}, nil
}

func (p *peerProc) close() {
	_ = p.cs.Close()
	os.RemoveAll(p.dir)
}

// call runs one tool and returns its text and round-trip time.
func (p *peerProc) call(ctx context.Context, name string, args map[string]any) (string, time.Duration, error) {
	t := time.Now()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	d := time.Since(t)
	if err != nil {
		return "", d, fmt.Errorf("%s: %w", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
			b.WriteString("\n")
		}
	}
	if res.IsError {
		return b.String(), d, fmt.Errorf("%s: %s", name, first(b.String(), 400))
	}
	return b.String(), d, nil
}

var snapshotLink = regexp.MustCompile(`\[Snapshot\]\(([^)]+)\)`)

// linked returns the snapshot an action's answer holds or links to.
func (p *peerProc) linked(answer string) (string, error) {
	m := snapshotLink.FindStringSubmatch(answer)
	if m == nil {
		return answer, nil
	}
	path := m[1]
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.dir, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the snapshot MCP linked: %w", err)
	}
	return string(b), nil
}

var mcpRefLine = regexp.MustCompile(`- (\w+) "([^"]*)"[^\n]*\[ref=(\w+)\]`)

// ref finds the element of role and name in an MCP snapshot.
func ref(snapshot, role, name string) (string, error) {
	for _, m := range mcpRefLine.FindAllStringSubmatch(snapshot, -1) {
		if m[1] == role && m[2] == name {
			return m[3], nil
		}
	}
	return "", fmt.Errorf("no %s %q in the snapshot", role, name)
}

// run takes n actions through MCP on a freshly loaded page: the tool's
// round trip is its latency to a ready state (MCP waits inside the tool
// call); a late-request sample is an early return when the snapshot the
// click returned does not show its answer.
func (p *peerProc) run(ctx context.Context, url string, a peerAction, n int, enc tokenizer.Codec) ([]time.Duration, int, int, error) {
	if _, _, err := p.call(ctx, "browser_navigate", map[string]any{"url": url}); err != nil {
		return nil, 0, 0, err
	}
	snap, _, err := p.call(ctx, "browser_snapshot", map[string]any{})
	if err != nil {
		return nil, 0, 0, err
	}
	tokens, _ := enc.Count(snap)
	r, err := ref(snap, a.role, a.name)
	if err != nil {
		return nil, 0, 0, err
	}
	var out []time.Duration
	early := 0
	for i := 1; i <= n; i++ {
		var text string
		var d time.Duration
		if a.kind == "click" {
			text, d, err = p.call(ctx, "browser_click", map[string]any{"element": a.name, "target": r})
		} else {
			text, d, err = p.call(ctx, "browser_type", map[string]any{"element": a.name, "target": r, "text": a.text})
			if err == nil {
				// MCP's type answers with no page state (0.0.83): its
				// post-action state is the snapshot its model asks for next,
				// as webpilot's step ends with the page it shows next.
				var ds time.Duration
				_, ds, err = p.call(ctx, "browser_snapshot", map[string]any{})
				p.bare = append(p.bare, d)
				d += ds
			}
		}
		if err != nil {
			return nil, 0, 0, err
		}
		if a.answer != "" {
			// An action's snapshot is written to a file the answer links.
			state, err := p.linked(text)
			if err != nil {
				return nil, 0, 0, err
			}
			if !answered(a.answer, i, state) {
				early++
			}
		}
		out = append(out, d)
	}
	return out, early, tokens, nil
}

func first(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// fourteenSteps is a deterministic job on the demo app: signing in, a
// shopping list and a contact form.
func fourteenSteps(base string) scenario.Scenario {
	texts := []string{
		`Fill "Email" with "` + demoapp.Email + `"`,
		`Fill "Password" with "{{PASSWORD}}"`,
		`Click "Sign in"`,
		`Verify "Welcome back" is visible`,
		`Go to ` + base + `/list`,
		`Fill "New item" with "Tea"`,
		`Click "Add"`,
		`Verify "Tea" is visible`,
		`Fill "New item" with "Milk"`,
		`Click "Add"`,
		`Verify "3 items" is visible`,
		`Go to ` + base + `/form`,
		`Fill "Full name" with "Ada"`,
		`Verify "Full name" has value "Ada"`,
	}
	sc := scenario.Scenario{Name: "fourteen steps", BaseURL: base + "/login", Secrets: map[string]string{"PASSWORD": demoapp.Password}}
	for _, t := range texts {
		sc.Steps = append(sc.Steps, scenario.Step{Text: t})
	}
	return sc
}

// replayVsRunner runs a 14-step deterministic job through the orchestrator
// on an open session and the spec it wrote under @playwright/test, in turn,
// and returns the median of the job's run time over the median of the
// test's body (its time without opening the context and page, which the
// job's session has already done).
func (e *env) replayVsRunner(ctx context.Context, runs int) (float64, error) {
	runner := specrun.Runner{Dir: os.Getenv("WEBPILOT_SPEC_RUNNER")}
	if err := runner.Available(); err != nil {
		return 0, err
	}
	sc := fourteenSteps(e.demo)
	var ours, replays, body []time.Duration
	run := func(in orchestrator.Input) (orchestrator.Result, time.Duration, error) {
		sess, err := e.browser.NewSession(ctx, browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"})})
		if err != nil {
			return orchestrator.Result{}, 0, err
		}
		defer sess.Close()
		t := time.Now()
		res, err := (&orchestrator.Agent{Page: sess, Recorder: orchestrator.NopRecorder{}}).Run(ctx, in)
		return res, time.Since(t), err
	}
	for i := 0; i <= runs; i++ { // the first of each warms up
		res, d, err := run(orchestrator.Input{Scenario: sc, Secrets: sc.Secrets})
		if err != nil {
			return 0, err
		}
		// The same test replayed from its stored manifest, as a suite run does.
		rep, dr, err := run(orchestrator.Input{Scenario: sc, Secrets: sc.Secrets, Replay: &orchestrator.Replay{Steps: res.Manifest}})
		if err != nil {
			return 0, err
		}
		if rep.Status != orchestrator.StatusSucceeded {
			return 0, fmt.Errorf("the 14-step job's replay %s: %s", rep.Status, rep.Error)
		}
		if res.Status != orchestrator.StatusSucceeded {
			return 0, fmt.Errorf("the 14-step job %s: %s", res.Status, res.Error)
		}
		for _, s := range res.Steps {
			if s.Tier != orchestrator.TierDeterministic {
				return 0, fmt.Errorf("step %d took tier %s, want deterministic", s.Index+1, s.Tier)
			}
		}
		results, err := runner.RunReport(ctx, res.Script, specrun.Options{Env: map[string]string{"PASSWORD": demoapp.Password}})
		if err != nil {
			return 0, err
		}
		if len(results) != 1 || results[0].Status != "passed" {
			return 0, fmt.Errorf("the 14-step job's spec under @playwright/test: %+v", results)
		}
		if i > 0 {
			ours, replays, body = append(ours, d), append(replays, dr), append(body, results[0].Body)
		}
	}
	fmt.Printf("Replay of a 14-step deterministic job (median of %d) against its spec under @playwright/test\n", runs)
	fmt.Printf("  %-58s %9.1f ms\n", "webpilot run (open session, navigation to the last check)", ms(percentile(ours, 50)))
	fmt.Printf("  %-58s %9.1f ms\n", "webpilot replay of its stored manifest (a suite run)", ms(percentile(replays, 50)))
	fmt.Printf("  %-58s %9.1f ms\n", "@playwright/test test body (without context/page fixtures)", ms(percentile(body, 50)))
	fmt.Println()
	return ms(percentile(ours, 50)) / ms(percentile(body, 50)), nil
}
