package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

type navigateInput struct {
	URL  string `json:"url" jsonschema:"the http(s) URL to open; the first one is the test's start"`
	View bool   `json:"view,omitempty" jsonschema:"answer with the page view once loaded"`
}

type snapshotInput struct{}

type sequenceInput struct {
	Commands  []browser.Command `json:"commands" jsonschema:"the commands, run in order; the first that fails stops the rest"`
	Intent    string            `json:"intent,omitempty" jsonschema:"what the batch is for, as the spec's comment"`
	View      bool              `json:"view,omitempty" jsonschema:"answer with the whole page view after the batch, not only what changed"`
	TimeoutMS int               `json:"timeout_ms,omitempty" jsonschema:"how long each command may wait for its element or condition, in milliseconds (default 5000 for an action, 10000 for a check)"`
}

type check struct {
	Assert browser.Assertion `json:"assert" jsonschema:"what to check"`
	Target browser.Target    `json:"target,omitempty" jsonschema:"the element checked (none for url, title and dialog checks)"`
	Value  string            `json:"value,omitempty" jsonschema:"the expected text, value, count, class, attribute or URL"`
}

type verifyInput struct {
	Checks    []check `json:"checks" jsonschema:"the checks, in order; each waits for its condition as the spec's expect does"`
	TimeoutMS int     `json:"timeout_ms,omitempty" jsonschema:"how long each check may wait for its condition, in milliseconds (default 10000)"`
}

type screenshotInput struct {
	FullPage bool `json:"full_page,omitempty" jsonschema:"the whole page rather than the viewport"`
}

type tabsInput struct {
	Action string `json:"action,omitempty" jsonschema:"list (the default), switch to page, or close the current page"`
	Page   int    `json:"page,omitempty" jsonschema:"the page number to switch to (from the list)"`
}

type dialogsInput struct {
	Answer string `json:"answer,omitempty" jsonschema:"how to answer the next dialog: accept, dismiss or accept:TEXT for a prompt; empty lists the dialogs so far"`
}

type specInput struct{}

// RunInput is a whole scenario to run as a job: inline, as text, or (on
// the platform) a stored test.
type RunInput struct {
	Scenario *scenario.Scenario `json:"scenario,omitempty" jsonschema:"the scenario, as the API's POST /v1/jobs takes it"`
	Text     string             `json:"text,omitempty" jsonschema:"the steps, one per line (a first line 'base: URL' names the start)"`
	BaseURL  string             `json:"base_url,omitempty" jsonschema:"the start URL of a text scenario"`
	TestID   string             `json:"test_id,omitempty" jsonschema:"a stored test to run again (remote mode)"`
}

// StepProgress is one finished step of a running scenario.
type StepProgress struct {
	Step, Total int
	Goal        string
	Status      string
	Tier        string
	Error       string
}

// RunResult is how a scenario run ended.
type RunResult struct {
	JobID  string
	Status string
	Error  string
	Steps  int
	Spec   string
	// CreditsMicro is what the run was charged (remote mode).
	CreditsMicro int64
}

// schemas are the tools' input schemas, built once: every MCP session's
// server shares them (and, through schemaCache, their resolution).
var schemas = struct {
	navigate, snapshot, sequence, verify, screenshot, tabs, dialogs, spec, run *jsonschema.Schema
}{inputSchema[navigateInput](), inputSchema[snapshotInput](), inputSchema[sequenceInput](), inputSchema[verifyInput](),
	inputSchema[screenshotInput](), inputSchema[tabsInput](), inputSchema[dialogsInput](), inputSchema[specInput](), inputSchema[RunInput]()}

func addTools(srv *mcp.Server, st *session) {
	mcp.AddTool(srv, &mcp.Tool{Name: "navigate", InputSchema: schemas.navigate,
		Description: "Open a URL. The first navigation opens the browser and is where the spec starts; later ones are steps of it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in navigateInput) (*mcp.CallToolResult, any, error) {
			c, err := st.open(ctx)
			if err != nil {
				return nil, nil, err
			}
			res, err := c.Navigate(ctx, in.URL, in.View)
			if err != nil {
				return nil, nil, err
			}
			return text(sequenceText(res)), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "snapshot", InputSchema: schemas.snapshot,
		Description: "The page view: the accessibility tree with a ref per element ([ref=s1e12]), long lists elided, passwords redacted."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ snapshotInput) (*mcp.CallToolResult, any, error) {
			c, err := st.open(ctx)
			if err != nil {
				return nil, nil, err
			}
			v, err := c.View(ctx)
			if err != nil {
				return nil, nil, err
			}
			return text(v), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "execute_sequence", InputSchema: schemas.sequence,
		Description: "Run several commands in one call: in order, stopping at the first that fails, the page settled once at the end (network, DOM, animations). " +
			"Answers each command's outcome and what changed on the page in the view's terms (+ appeared, - disappeared, ~ changed), with dialogs answered and pages opened. " +
			"Commands are the agent's: " + joined(browser.Actions()) + "; verify checks (assert: " + joined(browser.Assertions()) + ")."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sequenceInput) (*mcp.CallToolResult, any, error) {
			if len(in.Commands) == 0 {
				return nil, nil, errors.New("commands: at least one command")
			}
			c, err := st.open(ctx)
			if err != nil {
				return nil, nil, err
			}
			res, err := c.Sequence(ctx, in.Commands, orchestrator.SequenceOptions{Goal: in.Intent, View: in.View, Timeout: millis(in.TimeoutMS)})
			if err != nil {
				return nil, nil, err
			}
			if len(res.Problems) > 0 {
				return errorText("nothing ran: " + strings.Join(res.Problems, "; ")), nil, nil
			}
			out := text(sequenceText(res))
			out.IsError = res.Stopped != ""
			return out, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "verify", InputSchema: schemas.verify,
		Description: "Check the page without acting; each check waits for its condition as the spec's expect does, and becomes an assertion of the spec."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in verifyInput) (*mcp.CallToolResult, any, error) {
			if len(in.Checks) == 0 {
				return nil, nil, errors.New("checks: at least one check")
			}
			cmds := make([]browser.Command, len(in.Checks))
			for i, ch := range in.Checks {
				cmds[i] = browser.Command{Action: browser.ActionVerify, Assert: ch.Assert, Target: ch.Target, Value: ch.Value}
			}
			c, err := st.open(ctx)
			if err != nil {
				return nil, nil, err
			}
			res, err := c.Sequence(ctx, cmds, orchestrator.SequenceOptions{Goal: "verify", Timeout: millis(in.TimeoutMS)})
			if err != nil {
				return nil, nil, err
			}
			if len(res.Problems) > 0 {
				return errorText("nothing was checked: " + strings.ReplaceAll(strings.Join(res.Problems, "; "), "command ", "check ")), nil, nil
			}
			out := text(checksText(res))
			out.IsError = res.Stopped != ""
			return out, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "screenshot", InputSchema: schemas.screenshot,
		Description: "A PNG of the page, secrets and password fields painted over."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in screenshotInput) (*mcp.CallToolResult, any, error) {
			c, err := st.open(ctx)
			if err != nil {
				return nil, nil, err
			}
			png, err := c.Screenshot(in.FullPage)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: png, MIMEType: "image/png"}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "tabs", InputSchema: schemas.tabs,
		Description: "List the open pages (tabs, popups), switch to one, or close the current one; switching and closing are steps of the spec."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in tabsInput) (*mcp.CallToolResult, any, error) {
			c, err := st.open(ctx)
			if err != nil {
				return nil, nil, err
			}
			var cmd browser.Command
			switch in.Action {
			case "", "list":
				return text(pagesText(c.Pages())), nil, nil
			case "switch":
				if in.Page < 1 {
					return nil, nil, errors.New("page: the number of the page to switch to (1 is the first)")
				}
				cmd = browser.Command{Action: browser.ActionSwitchPage, Value: strconv.Itoa(in.Page)}
			case "close":
				cmd = browser.Command{Action: browser.ActionClosePage}
			default:
				return nil, nil, fmt.Errorf("action: list, switch or close, not %q", in.Action)
			}
			res, err := c.Sequence(ctx, []browser.Command{cmd}, orchestrator.SequenceOptions{Goal: in.Action + " page"})
			if err != nil {
				return nil, nil, err
			}
			if res.Stopped != "" {
				return errorText(res.Stopped), nil, nil
			}
			return text(pagesText(c.Pages())), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "dialogs", InputSchema: schemas.dialogs,
		Description: "The native dialogs (alert, confirm, prompt, beforeunload) so far and how each was answered; with answer, how the next one is answered (the default dismisses, as Playwright does)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in dialogsInput) (*mcp.CallToolResult, any, error) {
			c, err := st.open(ctx)
			if err != nil {
				return nil, nil, err
			}
			if in.Answer != "" {
				if _, err := browser.ParseDialogAnswer(in.Answer); err != nil {
					return nil, nil, fmt.Errorf("answer: %w", err)
				}
				res, err := c.Sequence(ctx, []browser.Command{{Action: browser.ActionDialog, Value: in.Answer}}, orchestrator.SequenceOptions{Goal: "answer the next dialog"})
				if err != nil {
					return nil, nil, err
				}
				if res.Stopped != "" {
					return errorText(res.Stopped), nil, nil
				}
			}
			return text(dialogsText(c.Dialogs(), in.Answer)), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "spec", InputSchema: schemas.spec,
		Description: "The @playwright/test file of everything done in this session so far: stable locators, the waits the page needed, dialogs and popups, secrets read from the environment."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ specInput) (*mcp.CallToolResult, any, error) {
			c, err := st.open(ctx)
			if err != nil {
				return nil, nil, err
			}
			spec, err := c.Spec()
			if err != nil {
				return nil, nil, err
			}
			return text(spec), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "run_scenario", InputSchema: schemas.run,
		Description: "Run a whole scenario (steps in plain sentences or commands) to its end as a job does, in a browser of its own; each finished step is sent as a progress notification. Answers the job's status and its spec."},
		func(ctx context.Context, req *mcp.CallToolRequest, in RunInput) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			var progress func(StepProgress)
			if token != nil {
				progress = func(p StepProgress) {
					msg := fmt.Sprintf("step %d/%d %s: %s", p.Step, p.Total, p.Status, p.Goal)
					if p.Error != "" {
						msg += " (" + p.Error + ")"
					}
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
						Progress: float64(p.Step), Total: float64(p.Total), Message: msg})
				}
			} else {
				progress = func(StepProgress) {}
			}
			res, err := st.backend.Run(ctx, in, progress)
			if err != nil {
				return nil, nil, err
			}
			var b strings.Builder
			if res.JobID != "" {
				fmt.Fprintf(&b, "job: %s\n", res.JobID)
			}
			fmt.Fprintf(&b, "status: %s (%d steps)\n", res.Status, res.Steps)
			if res.Error != "" {
				fmt.Fprintf(&b, "error: %s\n", res.Error)
			}
			if res.CreditsMicro > 0 {
				fmt.Fprintf(&b, "credits: %.6f\n", float64(res.CreditsMicro)/1e6)
			}
			if res.Spec != "" {
				b.WriteString("spec:\n" + res.Spec)
			}
			out := text(b.String())
			out.IsError = res.Status != string(orchestrator.StatusSucceeded)
			return out, nil, nil
		})
}

// maxTimeout bounds what a client may ask a command to wait.
const maxTimeout = 2 * time.Minute

func millis(ms int) time.Duration {
	if ms <= 0 {
		return 0
	}
	return min(time.Duration(ms)*time.Millisecond, maxTimeout)
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func errorText(s string) *mcp.CallToolResult {
	r := text(s)
	r.IsError = true
	return r
}

// joined lists a vocabulary's words for a tool's description.
func joined[T ~string](xs []T) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = string(x)
	}
	return strings.Join(parts, ", ")
}

// sequenceText is a batch's answer: one line per command, why it stopped,
// where the page is and what changed (or the whole view when asked).
func sequenceText(res orchestrator.SequenceResult) string {
	var b strings.Builder
	for i, c := range res.Commands {
		fmt.Fprintf(&b, "%d. %s", i+1, commandText(c.Command))
		switch {
		case c.Skipped:
			b.WriteString(" — not run\n")
		case c.OK:
			fmt.Fprintf(&b, " — ok (%d ms)\n", c.DurationMS)
		default:
			fmt.Fprintf(&b, " — FAILED: %s\n", c.Error)
		}
	}
	if res.Stopped != "" {
		fmt.Fprintf(&b, "stopped: %s\n", res.Stopped)
	}
	fmt.Fprintf(&b, "url: %s\ntitle: %s\n", res.URL, res.Title)
	if res.View != "" {
		if res.Changes != "" && len(res.Commands) > 0 {
			b.WriteString("changes:\n" + res.Changes)
		}
		b.WriteString("view:\n" + res.View)
		return b.String()
	}
	b.WriteString("changes:\n" + res.Changes)
	return b.String()
}

func commandText(c browser.Command) string {
	s := c.Describe()
	if !c.Target.IsZero() {
		s += " " + c.Target.String()
	}
	if c.Value != "" {
		s += fmt.Sprintf(" %q", c.Value)
	}
	return s
}

func checksText(res orchestrator.SequenceResult) string {
	var b strings.Builder
	passed := 0
	for i, c := range res.Commands {
		switch {
		case c.Skipped:
			fmt.Fprintf(&b, "%d. %s — not checked\n", i+1, commandText(c.Command))
		case c.OK:
			passed++
			fmt.Fprintf(&b, "%d. %s — passed\n", i+1, commandText(c.Command))
		default:
			fmt.Fprintf(&b, "%d. %s — FAILED: %s\n", i+1, commandText(c.Command), c.Error)
		}
	}
	fmt.Fprintf(&b, "%d of %d checks passed\n", passed, len(res.Commands))
	return b.String()
}

func pagesText(pages []browser.PageInfo) string {
	var b strings.Builder
	for _, p := range pages {
		state := ""
		switch {
		case p.Current:
			state = " (current)"
		case p.Closed:
			state = " (closed)"
		}
		fmt.Fprintf(&b, "page %d%s: %s\n", p.Number, state, p.URL)
	}
	if b.Len() == 0 {
		return "no page yet: navigate first\n"
	}
	return b.String()
}

func dialogsText(ds []browser.Dialog, next string) string {
	var b strings.Builder
	for i, d := range ds {
		fmt.Fprintf(&b, "%d. %s on page %d: %q — %s", i+1, d.Type, d.Page, d.Message, d.Answer)
		if d.PromptText != "" {
			fmt.Fprintf(&b, " with %q", d.PromptText)
		}
		b.WriteString("\n")
	}
	if len(ds) == 0 {
		b.WriteString("no dialog so far\n")
	}
	if next != "" {
		fmt.Fprintf(&b, "the next dialog will be answered: %s\n", next)
	}
	return b.String()
}
