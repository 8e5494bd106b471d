package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/scenario"
)

// Session is a run an outside client drives one batch at a time, in the
// model's place (the MCP server's sessions): it runs each batch exactly as
// a job's agent step does (the same validation, early stop, settling,
// delta, secret handling and history) and writes the same spec.
//
// A Session is safe for concurrent use; its calls run one at a time.
type Session struct {
	mu      sync.Mutex
	r       *run
	allowed []string // origins navigation may reach besides the first page's
	started bool
	batches int
}

// SessionInput opens a session.
type SessionInput struct {
	// Name names the spec's test.
	Name string
	// AllowedOrigins are the origins (scheme://host[:port]) navigation may
	// reach; empty allows the first page's origin only. When set, the first
	// page must be on one of them too.
	AllowedOrigins []string
	// Secrets are typed where a command's value says {{NAME}}; they are
	// never shown, and the spec reads them from the environment.
	Secrets map[string]string
	// Device emulates a phone or tablet as the session's browser does.
	Device string
}

// ErrNotStarted is a call that needs a page before the session navigated.
var ErrNotStarted = errors.New("no page yet: navigate first")

// NewSession opens a session on the agent's page. The agent's Model is not
// used: the client decides.
func (a *Agent) NewSession(in SessionInput) *Session {
	if a.Recorder == nil {
		a.Recorder = NopRecorder{}
	}
	if a.Log == nil {
		a.Log = slog.Default()
	}
	limits := a.Limits
	if limits.MaxIterationsPerStep == 0 {
		limits = DefaultLimits()
	}
	sc := scenario.Scenario{Name: in.Name, Options: scenario.Options{Device: in.Device}}
	r := &run{Agent: a, sc: sc, limits: limits, secrets: newSecrets(in.Secrets), vars: map[string]string{},
		extracted: map[string]json.RawMessage{}, boundary: NewBoundary()}
	r.guardSecrets(in.Secrets)
	r.spec = newSpecWriter(r.sc, r.secrets, r.vars, nil)
	s := &Session{r: r}
	for _, o := range in.AllowedOrigins {
		s.allowed = append(s.allowed, strings.ToLower(strings.TrimRight(o, "/")))
	}
	return s
}

// CommandOutcome is how one command of a sequence went, as a client reads it.
type CommandOutcome struct {
	Command browser.Command `json:"command"`
	OK      bool            `json:"ok"`
	Error   string          `json:"error,omitempty"`
	// Skipped: an earlier command failed, so this one did not run.
	Skipped    bool  `json:"skipped,omitempty"`
	DurationMS int64 `json:"duration_ms"`
	// Locator is the stable locator the spec uses for the element.
	Locator string `json:"locator,omitempty"`
}

// SequenceResult is what one batch did and what it changed.
type SequenceResult struct {
	Commands  []CommandOutcome `json:"commands"`
	Completed int              `json:"completed"`
	// Stopped says why the rest of the batch did not run (empty when all ran).
	Stopped string `json:"stopped,omitempty"`
	URL     string `json:"url"`
	Title   string `json:"title"`
	// Changes is what changed on the page, in the page view's own terms
	// (its refs and lines), with the dialogs answered and pages opened.
	Changes string        `json:"changes"`
	Delta   browser.Delta `json:"-"`
	// View is the page view after the batch, when asked for or when the
	// batch loaded another document.
	View string `json:"view,omitempty"`
	// Problems are invalid commands: nothing ran.
	Problems []string `json:"problems,omitempty"`
	// DurationMS is the batch's wall time, settling included.
	DurationMS int64 `json:"duration_ms"`
}

// Navigate opens url. The first navigation opens the session's page and
// is the spec's start; later ones are navigate commands.
func (s *Session) Navigate(ctx context.Context, raw string, view bool) (SequenceResult, error) {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return s.Sequence(ctx, []browser.Command{{Action: browser.ActionNavigate, Value: raw}}, SequenceOptions{Goal: "navigate to " + raw, View: view})
	}
	defer s.mu.Unlock()
	start := time.Now()
	if err := browser.NavigableURL(raw); err != nil {
		return SequenceResult{}, err
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return SequenceResult{}, fmt.Errorf("navigate: the first page needs an absolute http(s) URL, not %q", raw)
	}
	r := s.r
	r.sc.BaseURL = u.String()
	r.origins = origins{originOf(u)}
	if len(s.allowed) > 0 {
		if !origins(s.allowed).allow(u) {
			return SequenceResult{}, fmt.Errorf("navigate: %s is not an allowed origin (%s)", originOf(u), strings.Join(s.allowed, ", "))
		}
		r.origins = append(origins{}, s.allowed...)
	}
	r.spec = newSpecWriter(r.sc, r.secrets, r.vars, nil)
	if err := r.Page.Navigate(ctx, r.sc.BaseURL); err != nil {
		return SequenceResult{}, fmt.Errorf("open %s: %w", r.sc.BaseURL, err)
	}
	if doc, err := r.Page.Document(ctx); err == nil {
		r.freshDoc = doc.ID
	}
	r.pagesSeen = len(r.Page.Pages())
	s.started = true
	out := SequenceResult{URL: r.secrets.redact(r.Page.URL()), Title: r.secrets.redact(r.Page.Title()), Changes: "new page\n"}
	if view {
		snap, err := s.view(ctx)
		if err != nil {
			return out, err
		}
		out.View = snap
	}
	out.DurationMS = time.Since(start).Milliseconds()
	return out, nil
}

// View is the page view with refs, as the agent's model sees it (secrets
// redacted); a command's target.ref names a line's element.
func (s *Session) View(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return "", ErrNotStarted
	}
	return s.view(ctx)
}

func (s *Session) view(ctx context.Context) (string, error) {
	r := s.r
	r.catchUp(ctx)
	snap, err := r.Page.Snapshot(ctx, r.snapshotOptions())
	if err != nil {
		return "", fmt.Errorf("page view: %w", err)
	}
	r.nextView = &snap
	return viewText(r, snap), nil
}

// viewText renders a snapshot as the client reads it: where it is, then
// the open pages' tree with refs.
func viewText(r *run, snap browser.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "url: %s\ntitle: %s\n", snap.URL, snap.Title)
	if snap.Truncated {
		fmt.Fprintf(&b, "(the view was trimmed from %d characters; interactive lines come first)\n", snap.RawChars)
	}
	b.WriteString(snap.Text)
	return r.secrets.redact(b.String())
}

// SequenceOptions say how a batch runs and what its answer holds.
type SequenceOptions struct {
	// Goal names the batch in the spec's comments (default: its commands).
	Goal string
	// View answers the whole page view after the batch.
	View bool
	// Timeout is how long each command may wait for its element or
	// condition (0: the engine's default).
	Timeout time.Duration
}

// Sequence validates cmds as the agent's answers are validated, runs them
// in order with an early stop on the first failure, settles once at the end
// and answers what each did and what changed. A batch with invalid
// commands runs nothing.
func (s *Session) Sequence(ctx context.Context, cmds []browser.Command, o SequenceOptions) (SequenceResult, error) {
	goal, view := o.Goal, o.View
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return SequenceResult{}, ErrNotStarted
	}
	start := time.Now()
	r := s.r
	before := r.nextView
	if before == nil {
		// The delta is against what is on the page now.
		r.catchUp(ctx)
		snap, err := r.Page.Snapshot(ctx, r.snapshotOptions())
		if err != nil {
			return SequenceResult{}, fmt.Errorf("page view: %w", err)
		}
		before = &snap
	}
	refs := before.Refs
	problems := append(checkCommands(cmds, refs, r.limits.MaxCommandsPerBatch*4, true), r.navigationProblems(cmds)...)
	if len(problems) > 0 {
		return SequenceResult{Problems: problems}, nil
	}
	rep := StepReport{Index: len(r.steps), Goal: goal, Type: scenario.StepAIAction, Tier: "client"}
	res := r.batchWith(ctx, &rep, 0, cmds, before, o.Timeout)
	if strings.TrimSpace(rep.Goal) == "" {
		// What the spec's comment names is what ran.
		rep.Goal = describeBatch(cmds[:res.completed])
	}
	if res.failed >= 0 {
		rep.Status, rep.Error = StepFailed, res.err
	} else {
		rep.Status = StepPassed
	}
	// Only what succeeded goes into the spec: the batch's failed command
	// is the client's to retry.
	rep.Lines = r.spec.stepLines(rep)
	rep.Duration = time.Since(start)
	r.steps = append(r.steps, rep)
	s.batches++

	out := SequenceResult{Completed: res.completed, URL: r.secrets.redact(r.Page.URL()), Title: r.secrets.redact(r.Page.Title()),
		Delta: res.delta, Changes: res.delta.String()}
	for i, c := range cmds {
		o := CommandOutcome{Command: c, Skipped: i >= len(rep.Commands)}
		if !o.Skipped {
			cr := rep.Commands[i]
			o.OK, o.Error, o.DurationMS, o.Locator = cr.OK, cr.Error, cr.Duration.Milliseconds(), r.secrets.redact(cr.Locator)
		}
		out.Commands = append(out.Commands, o)
	}
	if res.failed >= 0 {
		out.Stopped = r.secrets.redact(res.err)
		if rest := len(cmds) - res.failed - 1; rest > 0 {
			out.Stopped += fmt.Sprintf("; the %d command(s) after it did not run", rest)
		}
	}
	// On a new document every line is new: the delta is the view.
	if (view || res.delta.NewPage) && r.nextView != nil {
		out.View = viewText(r, *r.nextView)
	}
	out.DurationMS = time.Since(start).Milliseconds()
	return out, nil
}

func describeBatch(cmds []browser.Command) string {
	var parts []string
	for _, c := range cmds {
		d := c.Describe()
		if !c.Target.IsZero() {
			d += " " + c.Target.String()
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, ", ")
}

// Spec is the @playwright/test file for everything the session did so
// far, written as a job's spec is (stable locators, waits the page needed,
// dialogs and popups, secrets from the environment).
func (s *Session) Spec() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return "", ErrNotStarted
	}
	// A failed command is the client's to retry, not a failure of the
	// test: the spec holds what succeeded, numbered as it is written.
	var steps []StepReport
	for _, st := range s.r.steps {
		if len(st.Lines) == 0 {
			continue
		}
		st.Index, st.Status, st.Error = len(steps), StepPassed, ""
		steps = append(steps, st)
	}
	return emitSpec(s.r.sc, steps), nil
}

// Dialogs lists the native dialogs so far and how each was answered.
func (s *Session) Dialogs() []browser.Dialog {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, _ := s.r.newDialogs(0)
	return d
}

// Pages lists the open pages (tabs, popups); Current is the one commands
// act on.
func (s *Session) Pages() []browser.PageInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	pages := s.r.Page.Pages()
	for i := range pages {
		pages[i].URL = s.r.secrets.redact(pages[i].URL)
	}
	return pages
}

// Screenshot pictures the page with every secret painted over.
func (s *Session) Screenshot(fullPage bool) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return nil, ErrNotStarted
	}
	return s.r.Page.Screenshot(fullPage)
}

// Steps are the session's batches as reports, oldest first.
func (s *Session) Steps() []StepReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]StepReport(nil), s.r.steps...)
}

// Redact hides the session's secrets in text shown to the client.
func (s *Session) Redact(text string) string { return s.r.secrets.redact(text) }

// NopRecorder keeps nothing: a session an outside client drives keeps
// its steps itself (Session.Steps), and holds no credits.
type NopRecorder struct{}

// History keeps nothing.
func (NopRecorder) History(context.Context, []Event) error { return nil }

// Reserve allows every call.
func (NopRecorder) Reserve(context.Context, Call) error { return nil }

// Checkpoint keeps nothing.
func (NopRecorder) Checkpoint(context.Context, Checkpoint) error { return nil }

// Extracted keeps nothing.
func (NopRecorder) Extracted(context.Context, string, json.RawMessage) error { return nil }

// Artifact keeps nothing.
func (NopRecorder) Artifact(context.Context, Artifact) error { return nil }

// Settle charges nothing and leaves an unbounded hold.
func (NopRecorder) Settle(context.Context, Call) (int64, int64, error) { return 0, 1 << 40, nil }
