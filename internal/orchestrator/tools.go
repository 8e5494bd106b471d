package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
)

// tool is something the model may ask for instead of, or before, acting.
// Descriptions are generated into the prompt from this registry.
type tool struct {
	name   string
	params string // JSON shape of args
	desc   string
	run    func(ctx context.Context, r *run, a *agentStep, args json.RawMessage) (toolResult, error)
}

// toolResult is what a tool returns to the model.
type toolResult struct {
	text  string
	image []byte
	// changedPage means the tool navigated: the model must see a fresh
	// page representation before acting.
	changedPage bool
}

// actionRead marks the report of a read (extract_data) call: the spec
// writes it as a variable assignment, the browser never runs it. Its Value
// names the variable and its Assert says what was read.
const actionRead browser.Action = "read"

// What a read took from its element: readText, readValue, or readAttribute
// followed by the attribute's name.
const (
	readText      browser.Assertion = "text"
	readValue     browser.Assertion = "value"
	readAttribute browser.Assertion = "attribute:"
)

var tools = []tool{
	{name: "take_screenshot", params: `{"full_page": false}`,
		desc: "a PNG of the viewport (or the whole page) to look at layout, icons or canvas content",
		run: func(ctx context.Context, r *run, a *agentStep, args json.RawMessage) (toolResult, error) {
			var p struct {
				FullPage bool `json:"full_page"`
			}
			_ = json.Unmarshal(args, &p)
			if a.shotsSinceAction >= 2 {
				return toolResult{}, fmt.Errorf("refused: %d screenshots without an action; act on what you have seen", a.shotsSinceAction)
			}
			img, err := r.Page.Screenshot(p.FullPage)
			if err != nil {
				return toolResult{}, err
			}
			a.shotsSinceAction++
			a.lastShot = img
			return toolResult{text: fmt.Sprintf("screenshot attached (%d bytes)", len(img)), image: img}, nil
		}},
	{name: "view_previous_screenshot", params: `{}`,
		desc: "the last screenshot taken in this step again",
		run: func(ctx context.Context, r *run, a *agentStep, args json.RawMessage) (toolResult, error) {
			if a.lastShot == nil {
				return toolResult{}, fmt.Errorf("no screenshot was taken in this step")
			}
			return toolResult{text: "previous screenshot attached", image: a.lastShot}, nil
		}},
	{name: "recall_history", params: `{"query": "optional words", "max_steps": 20}`,
		desc: "older history of this job than the recent window, optionally only entries matching words",
		run: func(ctx context.Context, r *run, a *agentStep, args json.RawMessage) (toolResult, error) {
			var p struct {
				Query    string `json:"query"`
				MaxSteps int    `json:"max_steps"`
			}
			_ = json.Unmarshal(args, &p)
			if p.MaxSteps <= 0 || p.MaxSteps > 50 {
				p.MaxSteps = 20
			}
			var lines []string
			for i := len(r.all) - 1; i >= 0 && len(lines) < p.MaxSteps; i-- {
				e := r.all[i]
				line := historyLine(e)
				if p.Query == "" || strings.Contains(strings.ToLower(line), strings.ToLower(p.Query)) {
					lines = append([]string{line}, lines...)
				}
			}
			if len(lines) == 0 {
				return toolResult{text: "no matching history"}, nil
			}
			return toolResult{text: strings.Join(lines, "\n")}, nil
		}},
	{name: "inspect_page", params: `{"ref": "s3e12"} or {"search": "text"}`,
		desc: "the full subtree under a ref with the element's attributes (id, class, data-test*, value, href), or the page lines mentioning some text (with their refs)",
		run: func(ctx context.Context, r *run, a *agentStep, args json.RawMessage) (toolResult, error) {
			var p struct {
				Ref    string `json:"ref"`
				Search string `json:"search"`
			}
			_ = json.Unmarshal(args, &p)
			// The latest snapshot's full text: a new snapshot would invalidate the refs the model holds.
			if p.Ref != "" {
				if sub, ok := browser.Subtree(a.full, p.Ref); ok {
					return toolResult{text: sub + attributeLine(ctx, r, p.Ref)}, nil
				}
				if attrs := attributeLine(ctx, r, p.Ref); attrs != "" {
					return toolResult{text: strings.TrimPrefix(attrs, "\n")}, nil
				}
				return toolResult{}, fmt.Errorf("ref %q is not in the latest page representation", p.Ref)
			}
			if p.Search == "" {
				return toolResult{}, fmt.Errorf("give a ref or a search text")
			}
			var hits []string
			withAttrs := 0
			for _, h := range browser.SearchRepresentation(a.full, p.Search) {
				hit := h.Line
				// Text without a ref of its own is given the element it is in,
				// so every match can be targeted.
				if h.Within && h.Ref != "" {
					hit += " (in [ref=" + h.Ref + "])"
				}
				if h.Ref != "" && withAttrs < 10 {
					withAttrs++
					hit += strings.ReplaceAll(attributeLine(ctx, r, h.Ref), "\nattributes:", "; attributes:")
				}
				hits = append(hits, hit)
			}
			if len(hits) == 0 {
				return toolResult{text: fmt.Sprintf("nothing on the page mentions %q", p.Search)}, nil
			}
			return toolResult{text: strings.Join(first(hits, 40), "\n")}, nil
		}},
	{name: "check_page_ready", params: `{}`,
		desc: "waits for the page to settle and says whether it is ready (loading, requests in flight, busy indicators)",
		run: func(ctx context.Context, r *run, a *agentStep, args json.RawMessage) (toolResult, error) {
			rep := r.Page.Settle(ctx, browser.SettleOptions{Since: time.Now().Add(-time.Minute), Timeout: 3 * time.Second})
			r.timing.Settle += rep.Duration
			if rep.TimedOut {
				return toolResult{text: "not ready after 3s: " + rep.Reason}, nil
			}
			return toolResult{text: fmt.Sprintf("ready (settled in %s)", rep.Duration.Round(time.Millisecond))}, nil
		}},
	{name: "extract_data", params: `{"target": {"ref": "s3e12"}, "name": "order_id", "attribute": "optional"}`,
		desc: "reads an element's text (or value, or attribute) and saves it as {{name}} for later steps; the test reads it the same way",
		run: func(ctx context.Context, r *run, a *agentStep, args json.RawMessage) (toolResult, error) {
			var p struct {
				Target    browser.Target `json:"target"`
				Name      string         `json:"name"`
				Attribute string         `json:"attribute"`
			}
			if err := json.Unmarshal(args, &p); err != nil {
				return toolResult{}, fmt.Errorf("bad args: %v", err)
			}
			if !placeholderName(p.Name) {
				return toolResult{}, fmt.Errorf("name must be letters, digits and underscores")
			}
			if p.Target.Ref != "" && !a.refs[p.Target.Ref] {
				return toolResult{}, fmt.Errorf("ref %q is not in the latest page representation", p.Target.Ref)
			}
			v, fp, err := r.Page.Read(ctx, p.Target, p.Attribute)
			if err != nil {
				return toolResult{}, err
			}
			v = r.secrets.redact(v)
			b, _ := json.Marshal(v)
			if err := r.keepExtracted(ctx, map[string]json.RawMessage{p.Name: b}); err != nil {
				return toolResult{}, err
			}
			how := readText
			switch {
			case p.Attribute != "":
				how = readAttribute + browser.Assertion(p.Attribute)
			case fp.Tag == "input" || fp.Tag == "textarea" || fp.Tag == "select":
				how = readValue
			}
			a.rep.Commands = append(a.rep.Commands, CommandReport{OK: true, Locator: locatorCode(browser.Command{Action: actionRead}, fp),
				Command: browser.Command{Action: actionRead, Target: p.Target, Value: p.Name, Assert: how}})
			return toolResult{text: fmt.Sprintf("saved {{%s}} = %s", p.Name, b)}, nil
		}},
	{name: "navigate_back", params: `{}`, desc: "the browser's back button",
		run: func(ctx context.Context, r *run, a *agentStep, args json.RawMessage) (toolResult, error) {
			return r.toolCommand(ctx, a, browser.Command{Action: browser.ActionBack})
		}},
	{name: "refresh_page", params: `{}`, desc: "reloads the page",
		run: func(ctx context.Context, r *run, a *agentStep, args json.RawMessage) (toolResult, error) {
			return r.toolCommand(ctx, a, browser.Command{Action: browser.ActionReload})
		}},
	{name: "navigate_to_url", params: `{"url": "/path or a URL on the app's host"}`,
		desc: "opens a URL on the scenario's own host (other hosts are refused)",
		run: func(ctx context.Context, r *run, a *agentStep, args json.RawMessage) (toolResult, error) {
			var p struct {
				URL string `json:"url"`
			}
			_ = json.Unmarshal(args, &p)
			base, err := url.Parse(r.sc.BaseURL)
			if err != nil {
				return toolResult{}, err
			}
			u, err := base.Parse(p.URL)
			if err != nil || u.Host != base.Host || (u.Scheme != "http" && u.Scheme != "https") {
				return toolResult{}, fmt.Errorf("refused: %q is not on %s", p.URL, base.Host)
			}
			return r.toolCommand(ctx, a, browser.Command{Action: browser.ActionNavigate, Value: specPath(r.sc.BaseURL, u.String())})
		}},
	{name: "refresh_som_markers", params: `{}`,
		desc: "a fresh Set-of-Marks screenshot: every interactive element in view boxed and labelled with its ref",
		run: func(ctx context.Context, r *run, a *agentStep, args json.RawMessage) (toolResult, error) {
			snap, err := r.Page.Snapshot(ctx, r.snapshotOptions())
			if err != nil {
				return toolResult{}, err
			}
			a.see(r, snap)
			img, marks, err := r.Page.SetOfMarks(ctx, snap, 80)
			if err != nil {
				return toolResult{}, err
			}
			a.lastShot = img
			m, _ := json.Marshal(marks)
			return toolResult{text: "marked screenshot attached; marks: " + r.secrets.redact(string(m)) +
				"\npage representation (refs refreshed):\n" + r.secrets.redact(snap.Text), image: img}, nil
		}},
}

func lookupTool(name string) (tool, bool) {
	for _, t := range tools {
		if t.name == name {
			return t, true
		}
	}
	return tool{}, false
}

// toolDescriptions lists the registry for the prompt.
func toolDescriptions() string {
	var b strings.Builder
	sorted := append([]tool(nil), tools...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	for _, t := range sorted {
		fmt.Fprintf(&b, "- %s %s: %s\n", t.name, t.params, t.desc)
	}
	return b.String()
}

// toolCommand runs a navigation tool as a one-command batch, so it is
// recorded, settled and written into the spec like any command.
func (r *run) toolCommand(ctx context.Context, a *agentStep, c browser.Command) (toolResult, error) {
	b := r.batch(ctx, a.rep, a.iter, []browser.Command{c}, a.snap)
	if b.failed >= 0 {
		return toolResult{}, fmt.Errorf("%s", b.err)
	}
	a.delta = &b.delta
	return toolResult{text: "done; " + b.delta.String(), changedPage: true}, nil
}

// runTools executes the requested tools (bounded), records them in history
// and returns their results as text and images.
func (r *run) runTools(ctx context.Context, a *agentStep, calls []toolCall) (string, [][]byte, bool) {
	var b strings.Builder
	var images [][]byte
	changed := false
	var events []Event
	for i, c := range calls {
		if a.toolCalls >= r.limits.MaxToolCalls {
			msg := fmt.Sprintf("refused: at most %d tool calls per iteration", r.limits.MaxToolCalls)
			fmt.Fprintf(&b, "[%d %s] %s\n", i+1, c.Name, msg)
			events = append(events, Event{Step: a.rep.Index, Iteration: a.iter, Kind: "tool", Action: c.Name,
				Target: r.secrets.redact(string(c.Args)), OK: false, Error: msg})
			continue
		}
		a.toolCalls++
		t, ok := lookupTool(c.Name)
		start := time.Now()
		var res toolResult
		var err error
		if !ok {
			err = fmt.Errorf("unknown tool (available: %s)", strings.Join(toolNames(), ", "))
		} else {
			res, err = t.run(ctx, r, a, c.Args)
		}
		ev := Event{Step: a.rep.Index, Iteration: a.iter, Kind: "tool", Action: c.Name, Target: r.secrets.redact(string(c.Args)),
			OK: err == nil, Duration: time.Since(start)}
		if err != nil {
			ev.Error = r.secrets.redact(cleanError(err))
			fmt.Fprintf(&b, "[%d %s] error: %s\n", i+1, c.Name, ev.Error)
		} else {
			fmt.Fprintf(&b, "[%d %s]\n%s\n", i+1, c.Name, r.secrets.redact(res.text))
			if res.image != nil {
				images = append(images, res.image)
			}
			changed = changed || res.changedPage
		}
		events = append(events, ev)
	}
	r.remember(events)
	if err := r.persist(func() error { return r.Recorder.History(ctx, events) }); err != nil {
		r.Log.Warn("tool history not recorded", "err", err)
	}
	return b.String(), images, changed
}

func toolNames() []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.name
	}
	return out
}

func historyLine(e Event) string {
	res := "ok"
	if !e.OK {
		res = "FAILED: " + e.Error
	}
	return fmt.Sprintf("step %d iter %d: %s %s %s -> %s", e.Step+1, e.Iteration, e.Kind, e.Action, e.Target, res)
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func placeholderName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// attributeLine is the "attributes:" line inspect_page adds for a ref, empty
// when the element cannot be read (the subtree is still worth showing).
func attributeLine(ctx context.Context, r *run, ref string) string {
	attrs, err := r.Page.Attributes(ctx, browser.Target{Ref: ref})
	if err != nil || len(attrs) == 0 {
		return ""
	}
	parts := make([]string, len(attrs))
	for i, kv := range attrs {
		parts[i] = kv[0] + "=" + strconv.Quote(kv[1])
	}
	return "\nattributes: " + strings.Join(parts, " ")
}
