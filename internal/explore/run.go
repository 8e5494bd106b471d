package explore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// run is the state of one exploration.
type run struct {
	*Explorer
	in     Input
	cfg    Config
	scope  scope
	safety safety
	// authPages are the pages that asked for a login (Result.NeedsAuthentication).
	authPages []string
	// noise is what other hosts failed to answer (Result.Noise).
	noise []string
	// failedURLs are the requests that failed: console messages about
	// them are echoes, not findings of their own.
	failedURLs map[string]bool
	// perPage counts distinct findings by page, shots finding pictures,
	// capped what each cap left out (see Config's caps).
	perPage map[string]int
	shots   int
	capped  map[string]int
	// redactor takes the job's secrets out of every text shown or stored.
	redactor func(string) string
	started  time.Time
	// earlier is the time earlier attempts spent (resumed runs).
	earlier time.Duration

	states    map[string]*stateNode
	order     []string // state ids, first reached first
	trans     []transition
	exercised map[string]bool // template|element key
	navTries  map[string]int  // crawl navigations to a state's address
	tried     map[string]bool // page templates the crawl set out to open
	// probed counts the model's turns on each page template, and pageDone
	// the templates it said it was done with.
	probed    map[string]int
	pageDone  map[string]bool
	linksDone map[string]bool
	linkCount int
	// trace is every action that worked, in order: the journey; landed
	// the URL each of them navigated to ("" when it stayed).
	trace  []orchestrator.ManifestEntry
	landed []string
	// on is the URL each action of the trace was taken on, and shown what
	// a page's status and alert regions said after the batch that ended
	// with an action (by its index): what test plans check.
	on    []string
	shown map[int]string
	// prefix is the login's entries, which every path starts with.
	prefix []orchestrator.ManifestEntry
	// startURL is where specs begin (the login page when there is one).
	startURL string

	cur     *stateNode
	curPath []orchestrator.ManifestEntry // cur's path and the actions done on it since
	snap    browser.Snapshot
	delta   string
	// errorDoc is the URL of the latest page load that answered >= 400.
	errorDoc string
	// seen is how far the detectors' problems were read: one an action
	// caused that arrives during the next is still reported.
	seen time.Time
	// lastAct is when the latest action began.
	lastAct time.Time

	findings []Finding
	bySig    map[string]int
	rejected []Claim

	actions, calls, iters int
	usage                 llm.Usage
	modelDone, goalMet    bool
	budgetOut             bool
	stalls                int
	lastBatch             string
	repeats               int
	note                  string
	learned               []string
	feedback              []string // what the system tells the model next time
	inspected             string   // what the model asked to see, for its next turn
	appeared              string   // text the latest batch made appear (test plans check it)
	boundary              string
	detectors             []string
	stopped               string
}

// Run explores and returns what it found. Page and model errors end the
// run with a failed status; a recorder error that means the attempt was
// superseded (or ErrYielded) is returned as an error.
func (e *Explorer) Run(ctx context.Context, in Input) (Result, error) {
	if e.Log == nil {
		e.Log = slog.Default()
	}
	cfg := e.Config.WithDefaults()
	u, err := url.Parse(in.BaseURL)
	if err != nil || u.Host == "" {
		return Result{Status: orchestrator.StatusFailed, Error: "the base URL is not an absolute URL", Goal: in.Goal}, nil
	}
	r := &run{Explorer: e, in: in, cfg: cfg, scope: scope{host: u.Host, prefixes: in.Scope}, safety: newSafety(in.Deny),
		started: time.Now(), states: map[string]*stateNode{}, exercised: map[string]bool{}, navTries: map[string]int{},
		failedURLs: map[string]bool{}, shown: map[int]string{}, tried: map[string]bool{}, probed: map[string]int{}, pageDone: map[string]bool{},
		linksDone: map[string]bool{}, bySig: map[string]int{}, startURL: in.BaseURL,
		perPage: map[string]int{}, capped: map[string]int{}}
	r.boundary = orchestrator.NewBoundary()
	r.detectors = []string{"page_error", "console_error", "failed_request", "error_page", "broken_link", "dead_click", "slow_response"}
	if cfg.AxeSource != "" {
		r.detectors = append(r.detectors, "accessibility")
	}
	var secretValues []string
	for _, v := range in.Secrets {
		secretValues = append(secretValues, v)
	}
	e.Page.AvoidInLocators(secretValues)
	// Findings' pictures paint over whatever shows a secret.
	var shows func(string) bool
	r.redactor, shows = orchestrator.SecretText(in.Secrets)
	e.Page.HideInPictures(shows)
	res, err := r.execute(ctx)
	res.Duration = r.earlier + time.Since(r.started)
	return res, err
}

func (r *run) execute(ctx context.Context) (Result, error) {
	if cp := r.in.Resume; cp != nil {
		r.restore(cp)
		if err := r.Page.Navigate(ctx, cp.URL); err != nil {
			return r.result(orchestrator.StatusFailed, "the exploration could not return to "+cp.URL+": "+err.Error()), nil
		}
	} else {
		if r.in.Login != nil {
			if err := r.login(ctx); err != nil {
				return r.result(orchestrator.StatusFailed, err.Error()), nil
			}
		}
		if err := r.Page.Navigate(ctx, r.in.BaseURL); err != nil {
			return r.result(orchestrator.StatusFailed, "the start page could not be loaded: "+err.Error()), nil
		}
	}
	r.Page.Settle(ctx, browser.SettleOptions{Since: time.Now(), Timeout: 5 * time.Second})
	if err := r.observe(ctx, nil); err != nil {
		return r.result(orchestrator.StatusFailed, err.Error()), nil
	}
	if r.in.Resume == nil && len(r.prefix) > 0 {
		r.cur.Path = slices.Clone(r.prefix)
		r.curPath = slices.Clone(r.prefix)
	}
	for {
		if err := r.checkpoint(ctx); err != nil {
			return Result{}, err
		}
		switch {
		case r.in.Cancelled != nil && r.in.Cancelled():
			r.stopped = "cancelled"
			return r.result(orchestrator.StatusCancelled, "cancelled"), nil
		case r.actions >= r.in.MaxActions:
			r.stopped = fmt.Sprintf("action budget spent (%d actions)", r.in.MaxActions)
		case r.in.MaxDuration > 0 && r.elapsed() >= r.in.MaxDuration:
			r.stopped = fmt.Sprintf("time budget spent (%s)", r.in.MaxDuration)
		case r.in.Yield != nil && r.in.Yield():
			return Result{}, ErrYielded
		}
		if r.stopped != "" {
			break
		}
		var cmds []browser.Command
		if r.Model != nil && !r.modelDone && !r.budgetOut && r.probing() {
			var err error
			if cmds, err = r.decide(ctx); err != nil {
				if errors.Is(err, errBudget) {
					r.budgetOut = true
				} else if fatal(err) {
					return Result{}, err
				} else {
					r.Log.Warn("model decision failed; the crawl goes on without it", "err", err)
					r.modelDone = true
				}
			}
		}
		if len(cmds) == 0 && r.inspected != "" && r.probing() {
			continue // the model looks closer before it acts
		}
		crawl := len(cmds) == 0
		if crawl {
			c, ok := r.crawlNext()
			if !ok {
				r.stopped = fmt.Sprintf("the frontier is empty: every page template and control in scope was reached (%d page templates, %d states)",
					r.pages(), len(r.states))
				break
			}
			cmds = []browser.Command{c}
		}
		if err := r.batch(ctx, cmds, crawl); err != nil {
			return Result{}, err
		}
	}
	if left := r.leftOver(); left != "" && r.stopped != "cancelled" {
		r.stopped += "; left in the frontier: " + left
	}
	// What the last actions caused may still be arriving.
	r.settle(ctx, time.Now(), r.Page.URL())
	if err := r.detectLate(ctx); err != nil {
		return Result{}, err
	}
	status := orchestrator.StatusSucceeded
	msg := ""
	if r.budgetOut {
		status, msg = orchestrator.StatusBudgetExhausted, "the credit budget ran out before the model finished; the sweep went on without it"
	}
	return r.result(status, msg), nil
}

// fatal reports a recorder error: the attempt cannot go on (superseded,
// or the database stayed away longer than the recorder waits).
func fatal(err error) bool { return errors.Is(err, errRecorder) }

// errRecorder marks errors of the recorder, which the run cannot go on without.
var errRecorder = errors.New("recorder")

func (r *run) elapsed() time.Duration { return r.earlier + time.Since(r.started) }

// login signs in with the job's secrets, typed by webpilot alone.
func (r *run) login(ctx context.Context) error {
	l := r.in.Login
	loginURL := r.in.BaseURL
	if l.URL != "" {
		base, _ := url.Parse(r.in.BaseURL)
		u, err := resolve(base, l.URL)
		if err != nil {
			return fmt.Errorf("login url: %w", err)
		}
		loginURL = u
	}
	if !r.scope.allows(loginURL) && !sameHost(loginURL, r.scope.host) {
		return fmt.Errorf("the login page %s is not on the app's host", loginURL)
	}
	if err := r.Page.Navigate(ctx, loginURL); err != nil {
		return fmt.Errorf("the login page could not be loaded: %w", err)
	}
	r.Page.Settle(ctx, browser.SettleOptions{Since: time.Now(), Timeout: 5 * time.Second})
	snap, err := r.Page.Snapshot(ctx, browser.SnapshotOptions{FullPage: true})
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	var user, pass *element
	els := parseRepresentation(snap.Full, snap.URL).Elements
	for i := range els {
		e := &els[i]
		if e.Role != "textbox" {
			continue
		}
		if strings.Contains(strings.ToLower(e.Name), "password") {
			pass = e
			break
		}
		user = e
	}
	if user == nil || pass == nil {
		return fmt.Errorf("login: no username and password fields on %s", loginURL)
	}
	r.startURL = loginURL
	for _, f := range []struct {
		el     *element
		secret string
	}{{user, l.UsernameSecret}, {pass, l.PasswordSecret}} {
		c := browser.Command{Action: browser.ActionFill, Target: browser.Target{Ref: f.el.Ref}, Value: r.in.Secrets[f.secret]}
		out := r.Page.Execute(ctx, c, browser.ExecOptions{Fingerprint: true, RequireLocator: true})
		if out.Err != nil {
			return fmt.Errorf("login: could not fill %q: %v", f.el.Name, out.Err)
		}
		c.Value = "{{" + f.secret + "}}" // the spec reads it from the environment
		r.prefix = append(r.prefix, orchestrator.ManifestEntry{Command: c, Element: out.Element})
	}
	press := browser.Command{Action: browser.ActionPress, Value: "Enter"}
	t0, from := time.Now(), r.Page.URL()
	if out := r.Page.Execute(ctx, press, browser.ExecOptions{}); out.Err != nil {
		return fmt.Errorf("login: could not submit: %v", out.Err)
	}
	r.Page.Settle(ctx, browser.SettleOptions{Since: t0, StartURL: from, Timeout: 10 * time.Second, Acted: true})
	after, err := r.Page.Snapshot(ctx, browser.SnapshotOptions{FullPage: true})
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	for _, e := range parseRepresentation(after.Full, after.URL).Elements {
		if e.Role == "textbox" && strings.Contains(strings.ToLower(e.Name), "password") {
			return errors.New("login failed: the sign-in form is still shown after submitting the credentials")
		}
	}
	r.prefix = append(r.prefix, orchestrator.ManifestEntry{Command: press},
		orchestrator.ManifestEntry{Command: browser.Command{Action: browser.ActionNavigate, Value: r.in.BaseURL}})
	r.history(ctx, orchestrator.Event{Kind: "command", Action: "login", Target: loginURL, OK: true})
	return nil
}

// observe reads the page after an action (via; nil at the start) and
// moves the exploration to the state it is in, running the state-level
// detectors on a state seen for the first time.
func (r *run) observe(ctx context.Context, via *orchestrator.ManifestEntry) error {
	snap, err := r.Page.Snapshot(ctx, browser.SnapshotOptions{FullPage: true, Budget: r.cfg.SnapshotBudget})
	if err != nil {
		return fmt.Errorf("the page could not be read: %w", err)
	}
	r.appeared = ""
	if r.snap.Full != "" {
		d := browser.DiffSnapshots(r.snap, snap, 12)
		r.delta, r.appeared = d.String(), appearedText(d)
	}
	r.snap = snap
	p := parseRepresentation(snap.Full, snap.URL)
	id := stateID(snap.URL, p.Hash)
	st := r.states[id]
	fresh := st == nil
	if fresh {
		st = &stateNode{ID: id, Template: orchestrator.PathTemplate(snap.URL), URL: snap.URL, Title: snap.Title, Depth: r.depthOf(snap.URL)}
		r.states[id] = st
		r.order = append(r.order, id)
	}
	st.Elements = p.Elements
	prev := r.cur
	switch {
	case prev == nil:
		st.Visits++
		if st.Path == nil {
			st.Path = []orchestrator.ManifestEntry{}
		}
		r.cur, r.curPath = st, slices.Clone(st.Path)
	case prev.ID != id:
		st.Visits++
		if via != nil {
			cand := slices.Clone(r.curPath)
			if st.Path == nil || len(cand) < len(st.Path) {
				st.Path = cand
			}
			r.addTransition(prev.ID, id, describe(via.Command, prev))
		}
		if st.Path == nil {
			st.Path = slices.Clone(r.curPath)
		}
		r.cur, r.curPath = st, slices.Clone(st.Path)
	}
	if fresh {
		r.stateChecks(ctx, st)
	}
	return nil
}

func (r *run) addTransition(from, to, action string) {
	for _, t := range r.trans {
		if t.From == from && t.To == to && t.Action == action {
			return
		}
	}
	if len(r.trans) < 500 {
		r.trans = append(r.trans, transition{From: from, To: to, Action: action})
	}
}

// describe names a command for people: click button "Add to cart".
func describe(c browser.Command, st *stateNode) string {
	what := c.Target.Name
	role := c.Target.Role
	if c.Target.Ref != "" && st != nil {
		for _, e := range st.Elements {
			if e.Ref == c.Target.Ref {
				role, what = e.Role, e.Name
			}
		}
	}
	switch {
	case c.Action == browser.ActionNavigate:
		return "go to " + shortURL(c.Value)
	case c.IsVerify():
		return fmt.Sprintf("verify %s %q", c.Assert, c.Value)
	case what != "":
		s := fmt.Sprintf("%s %s %q", c.Action, role, what)
		if c.Value != "" && c.Action != browser.ActionClick {
			s += fmt.Sprintf(" with %q", c.Value)
		}
		return strings.Replace(s, "  ", " ", 1)
	}
	return strings.TrimSpace(string(c.Action) + " " + c.Value)
}

// elementOf finds the current page's element a command targets by ref.
func (r *run) elementOf(t browser.Target) *element {
	if t.Ref == "" || r.cur == nil {
		return nil
	}
	for i := range r.cur.Elements {
		if r.cur.Elements[i].Ref == t.Ref {
			return &r.cur.Elements[i]
		}
	}
	return nil
}

// refusal says why a command must not run (safety, scope), or "".
func (r *run) refusal(c browser.Command) string {
	if c.Action == browser.ActionNavigate {
		u := c.Value
		if base, err := url.Parse(r.Page.URL()); err == nil {
			if abs, err := resolve(base, c.Value); err == nil {
				u = abs
			}
		}
		if !r.scope.allows(u) {
			return fmt.Sprintf("%s is outside the exploration's scope", u)
		}
		if w := r.safety.deniesHref(u); w != "" {
			return fmt.Sprintf("the safety policy forbids %s (%q)", u, w)
		}
		return ""
	}
	switch c.Action {
	case browser.ActionClick, browser.ActionDblClick, browser.ActionRightClick, browser.ActionPress, browser.ActionCheck, browser.ActionUncheck, browser.ActionSelect, browser.ActionDrag:
	default:
		return ""
	}
	var w string
	if e := r.elementOf(c.Target); e != nil {
		if e.Role == "link" && e.Href != "" && !r.scope.allows(e.Href) {
			return fmt.Sprintf("the link leads to %s, outside the exploration's scope", e.Href)
		}
		w = r.safety.refuses(*e, r.cur.URL)
	} else if c.Target.Ref != "" {
		return "unknown ref " + c.Target.Ref + " (use a ref of the current page)"
	} else {
		w = r.safety.denies(c.Target.Name, c.Target.Text, c.Target.Label, c.Target.TestID, c.Target.Title, c.Target.Alt, c.Target.HasText)
	}
	if w == "" && c.Action == browser.ActionSelect {
		w = r.safety.denies(c.Value)
	}
	if w != "" {
		return fmt.Sprintf("the safety policy forbids clicking what suggests %q", w)
	}
	return ""
}

// batch runs commands in order, every detector watching each, then reads
// the page once: the refs of a batch belong to the page it was decided
// on, so a command that loads another page ends the batch.
//
// A crawl's navigation opens a page afresh: the path to what it reaches is
// the navigation alone (after the login).
func (r *run) batch(ctx context.Context, cmds []browser.Command, crawl bool) error {
	var last *orchestrator.ManifestEntry
	from := r.Page.URL()
	for _, c := range cmds {
		if r.actions >= r.in.MaxActions {
			break
		}
		before := r.Page.URL()
		entry, err := r.act(ctx, c)
		if err != nil {
			return err
		}
		if entry != nil {
			last, from = entry, before
			if crawl && c.Action == browser.ActionNavigate {
				r.curPath = append(slices.Clone(r.prefix), *entry)
			}
		}
		if r.Page.URL() != before {
			break
		}
	}
	oerr := r.observe(ctx, last)
	if last != nil && len(r.landed) > 0 {
		if now := r.Page.URL(); now != from {
			r.landed[len(r.landed)-1] = now
		}
		if said := cmp.Or(announced(r.snap.Full), r.appeared); said != "" {
			r.shown[len(r.trace)-1] = said
		}
	}
	if oerr != nil {
		r.Log.Warn("page unreadable after an action", "err", oerr)
		return nil
	}
	if !r.scope.allows(r.Page.URL()) {
		// A link or a redirect left the scope: go back where it was.
		r.feedback = append(r.feedback, fmt.Sprintf("the last action left the scope (%s); went back", r.Page.URL()))
		if err := r.Page.Navigate(ctx, from); err == nil {
			r.trace = append(r.trace, orchestrator.ManifestEntry{Command: browser.Command{Action: browser.ActionNavigate, Value: from}})
			r.landed = append(r.landed, from)
			r.on = append(r.on, r.Page.URL())
			r.cur = nil
			_ = r.observe(ctx, nil)
		}
	}
	return nil
}

// act runs one command with every detector watching. It returns the
// command's entry when it worked.
func (r *run) act(ctx context.Context, c browser.Command) (*orchestrator.ManifestEntry, error) {
	if why := r.refusal(c); why != "" {
		r.feedback = append(r.feedback, fmt.Sprintf("refused %s: %s", describe(c, r.cur), why))
		r.history(ctx, orchestrator.Event{Kind: "command", Action: string(c.Action), Target: describe(c, r.cur), Error: "refused: " + why})
		if e := r.elementOf(c.Target); e != nil {
			r.exercised[r.cur.Template+"|"+e.Key] = true
		}
		return nil, nil
	}
	el := r.elementOf(c.Target)
	if el != nil {
		r.exercised[r.cur.Template+"|"+el.Key] = true
	}
	// What the previous action started must be over before this one is
	// judged: a late response would pass for this action's effect (hiding
	// a dead click) and its problems would be blamed on this action. Under
	// load a request can be announced after that action's settle ended.
	if !r.lastAct.IsZero() {
		r.Page.Settle(ctx, browser.SettleOptions{Since: r.lastAct, Timeout: 8 * time.Second})
	}
	before, _ := r.Page.Activity(ctx)
	from, where := r.Page.URL(), r.cur
	exec := c
	exec.Value = r.expand(c.Value)
	t0 := time.Now()
	r.lastAct = t0
	targeted := c.NeedsTarget()
	out := r.Page.Execute(ctx, exec, browser.ExecOptions{Fingerprint: targeted, RequireLocator: targeted, Timeout: 5 * time.Second})
	r.settle(ctx, t0, from)
	r.actions++
	what := describe(c, where)
	ev := orchestrator.Event{Iteration: r.actions, Kind: "command", Action: string(c.Action), Target: what, OK: out.Err == nil,
		Duration: time.Since(t0)}
	if out.Err != nil {
		ev.Error = clip(out.Err.Error(), 300)
		r.feedback = append(r.feedback, fmt.Sprintf("%s failed: %s", what, ev.Error))
	}
	r.history(ctx, ev)
	var entry *orchestrator.ManifestEntry
	if out.Err == nil {
		entry = &orchestrator.ManifestEntry{Command: c, Element: out.Element}
		r.trace = append(r.trace, *entry)
		r.landed = append(r.landed, "")
		r.on = append(r.on, from)
		r.curPath = append(r.curPath, *entry)
	}
	return entry, r.detect(ctx, t0, c, el, out, before, from)
}

// settle waits for the page to be ready after an action (watched long
// enough to see what the action starts late; see browser.SettleOptions.Acted).
func (r *run) settle(ctx context.Context, t0 time.Time, from string) {
	r.Page.Settle(ctx, browser.SettleOptions{Since: t0, StartURL: from, Timeout: 8 * time.Second, Acted: true})
}

// expand substitutes test data for {{NAME}} in a value the model wrote.
func (r *run) expand(v string) string {
	for k, val := range r.in.Data {
		v = strings.ReplaceAll(v, "{{"+k+"}}", val)
	}
	return v
}

// history records events; failures to record are logged, not fatal,
// except a superseded attempt.
func (r *run) history(ctx context.Context, events ...orchestrator.Event) {
	for i := range events {
		events[i].Target = r.redact(events[i].Target)
		events[i].Error = r.redact(events[i].Error)
	}
	if err := r.Recorder.History(ctx, events); err != nil {
		r.Log.Warn("history not recorded", "err", err)
	}
}

// redact replaces the job's secret values, in every representation, with
// their names.
func (r *run) redact(s string) string {
	if r.redactor == nil {
		return s
	}
	return r.redactor(s)
}
