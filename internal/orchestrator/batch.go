package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
)

// batchResult says how a batch went: commands run in order and the first
// failure stops the rest.
type batchResult struct {
	completed int
	failed    int // index of the failed command, -1 if none
	err       string
	delta     browser.Delta
	settle    browser.SettleReport
}

// batch executes commands sequentially with early stop, waits for the page
// to settle, computes the state delta and records history. before is the
// representation the commands were decided on; nil (a deterministic step,
// which no model watches) skips the representations and the delta.
func (r *run) batch(ctx context.Context, rep *StepReport, iter int, cmds []browser.Command, before *browser.Snapshot) batchResult {
	return r.batchWith(ctx, rep, iter, cmds, before, 0)
}

// batchWith is batch with each command given timeout (0: the default).
func (r *run) batchWith(ctx context.Context, rep *StepReport, iter int, cmds []browser.Command, before *browser.Snapshot, timeout time.Duration) batchResult {
	res := batchResult{failed: -1}
	t := time.Now()
	r.nextView = nil // the page is about to change
	startURL := r.Page.URL()
	r.lateOpened(rep)
	dialogsSeen, pagesSeen := len(r.Page.Dialogs()), len(r.Page.Pages())
	r.timing.Browser += time.Since(t)

	batchStart := time.Now()
	var events []Event
	actor := -1           // the report index of the batch's last successful command that acts on the page
	prevEnd := batchStart // when the previous command finished

	for i, shown := range cmds {
		if shown.IsVerify() {
			// A check must not pass on the page as it was before the
			// previous action took effect.
			r.catchUp(ctx)
		}
		real := shown
		real.Value = r.commandValue(shown)
		page := r.Page.CurrentPage()
		// Document: which document the command changes, for an exact resume.
		out := r.Page.Execute(ctx, real, browser.ExecOptions{Fingerprint: true, RequireLocator: true, Files: r.files, Timeout: timeout, Document: true})
		doc := out.Document
		r.timing.Browser += out.Duration
		end := time.Now()
		if out.Waited > time.Second {
			// It waited for the page: everything since the previous command
			// ended is what the page took, and what the spec must allow.
			out.Waited = end.Sub(prevEnd)
		}
		prevEnd = end
		cr := CommandReport{Command: shown, OK: out.Err == nil, Duration: out.Duration, Waited: out.Waited, Document: doc.ID, Page: page, Via: out.Via}
		ev := Event{Step: rep.Index, Iteration: iter, Kind: "command", Action: shown.Describe(), Target: shown.Target.String(),
			OK: out.Err == nil, Duration: out.Duration}
		if shown.IsVerify() {
			ev.Kind = "verification"
		}
		if out.Err == nil {
			cr.Locator = locatorCode(shown, out.Element)
			if cr.Locator == "" && needsLocator(shown) {
				// The job must never check or do what its spec cannot.
				out.Err = fmt.Errorf("no stable locator could be written for %s, so the test could not do the same; target it another way", shown.Target)
				cr.OK, ev.OK = false, false
			}
		}
		if out.Err != nil {
			cr.Error = r.secrets.redact(cleanError(out.Err))
			ev.Error = cr.Error
		} else {
			rep.Manifest = append(rep.Manifest, ManifestEntry{Command: shown, Element: out.Element, Timeout: specTimeout(cr)})
		}
		rep.Commands = append(rep.Commands, cr)
		events = append(events, ev)
		here := len(rep.Commands) - 1
		if out.Err == nil && !shown.IsVerify() && shown.Action != "dialog" {
			actor = here
		}
		// A dialog or popup can be reported after its command returned: one
		// seen during a check or a dialog answer belongs to the action before.
		to := actor
		if to < 0 {
			to = here
		}
		dialogsSeen, pagesSeen = r.attribute(rep, to, dialogsSeen, pagesSeen)
		if out.Err != nil {
			res.failed = i
			res.err = fmt.Sprintf("command %d (%s %s) failed: %s", i+1, shown.Describe(), shown.Target, cr.Error)
			break
		}
		res.completed++
	}

	ran := cmds[:min(len(cmds), res.completed+1)]
	full := browser.SettleOptions{Since: batchStart, StartURL: startURL, Acted: acted(ran), Ended: time.Now()}
	so := full
	switch {
	case before == nil && onlyChecks(ran):
		// Checks change nothing, and nobody looks at the page next.
	case before == nil:
		// Nobody looks at the page before the next command, which waits for
		// its own element as the spec does, and a check polls after taking
		// up this wait: the watch for what starts late is left for the next
		// check or representation, if any.
		so.Acted, so.QuietWindow = false, lightQuietWindow
		r.unsettled = &full
		fallthrough
	default:
		if before != nil {
			r.unsettled = nil
		}
		res.settle = r.Page.Settle(ctx, so)
		r.timing.Settle += res.settle.Duration
		rep.Settle = append(rep.Settle, res.settle)
	}
	// What appeared while the page settled belongs to the last action.
	if actor >= 0 {
		_, pagesSeen = r.attribute(rep, actor, dialogsSeen, pagesSeen)
	}
	r.pagesSeen = pagesSeen

	var after browser.Snapshot
	var err error = errNoDelta
	if before != nil {
		t = time.Now()
		after, err = r.Page.Snapshot(ctx, r.snapshotOptions())
		r.timing.Browser += time.Since(t)
	}
	if err == nil {
		r.nextView = &after // the next iteration shows this representation: the delta's refs are its refs
		d := browser.DiffSnapshots(*before, after, 10)
		start := len(rep.Commands) - len(events)
		pages := r.Page.Pages()
		for _, c := range rep.Commands[max(0, start):] {
			d.Dialogs = append(d.Dialogs, c.Dialogs...)
			for _, n := range c.Opened {
				if n-1 < len(pages) {
					d.Opened = append(d.Opened, pages[n-1])
				}
			}
		}
		res.delta = r.redactDelta(d)
		rep.Delta = &res.delta
	}
	// Dialogs and opened pages are history too: a later turn must know of them.
	for _, c := range rep.Commands[max(0, len(rep.Commands)-len(events)):] {
		for _, d := range c.Dialogs {
			events = append(events, Event{Step: rep.Index, Iteration: iter, Kind: "dialog", Action: d.Type,
				Target: fmt.Sprintf("%q answered: %s", d.Message, d.Answer), OK: true})
		}
		for _, n := range c.Opened {
			events = append(events, Event{Step: rep.Index, Iteration: iter, Kind: "page opened", Action: fmt.Sprintf("page %d", n), OK: true})
		}
	}
	if len(events) > 0 {
		obs, _ := json.Marshal(map[string]any{"delta": res.delta, "settle": res.settle})
		events[len(events)-1].Observation = json.RawMessage(r.secrets.redact(string(obs)))
	}
	events = append(events, r.blockEvents(rep, iter)...)
	r.remember(events)
	if err := r.persist(func() error { return r.Recorder.History(ctx, events) }); err != nil {
		r.Log.Warn("history not recorded", "err", err)
	}
	return res
}

// lightQuietWindow is how long the DOM must be unchanged after a batch no
// model looks at (a deterministic step, a replay).
const lightQuietWindow = 10 * time.Millisecond

// catchUp finishes the wait the last batch left short before the page is
// shown to the model: only what is still missing is waited for.
func (r *run) catchUp(ctx context.Context) {
	if r.unsettled == nil {
		return
	}
	o := *r.unsettled
	r.unsettled = nil
	rep := r.Page.Settle(ctx, o)
	r.timing.Settle += rep.Duration
}

// errNoDelta marks a batch that computes no delta.
var errNoDelta = fmt.Errorf("no delta wanted")

// lateOpened gives a page that opened after the previous batch ended
// (seen only now, a slow popup) to the last action that ran: the spec must
// wait for it there, before anything acts on it.
func (r *run) lateOpened(rep *StepReport) {
	opened, seen := r.newPages(r.pagesSeen)
	if len(opened) == 0 {
		return
	}
	r.pagesSeen = seen
	owner := func(s *StepReport) bool {
		for i := len(s.Commands) - 1; i >= 0; i-- {
			c := &s.Commands[i]
			if c.OK && !c.Command.IsVerify() && c.Command.Action != "dialog" {
				c.Opened = append(c.Opened, opened...)
				return true
			}
		}
		return false
	}
	if owner(rep) {
		return
	}
	for i := len(r.steps) - 1; i >= 0; i-- {
		if owner(&r.steps[i]) {
			r.steps[i].Lines = r.stepLines(r.steps[i])
			return
		}
	}
}

// attribute gives the dialogs and pages opened since those seen to the
// command at index idx of the report, and returns the new counts seen.
func (r *run) attribute(rep *StepReport, idx, dialogsSeen, pagesSeen int) (int, int) {
	dl, d := r.newDialogs(dialogsSeen)
	op, p := r.newPages(pagesSeen)
	rep.Commands[idx].Dialogs = append(rep.Commands[idx].Dialogs, dl...)
	rep.Commands[idx].Opened = append(rep.Commands[idx].Opened, op...)
	return d, p
}

// newDialogs returns the dialogs opened since the first seen ones.
func (r *run) newDialogs(seen int) ([]browser.Dialog, int) {
	all := r.Page.Dialogs()
	if len(all) <= seen {
		return nil, seen
	}
	out := append([]browser.Dialog(nil), all[seen:]...)
	for i := range out {
		out[i].Message = r.secrets.redact(out[i].Message)
	}
	return out, len(all)
}

// newPages returns the numbers of pages opened since the first seen ones.
func (r *run) newPages(seen int) ([]int, int) {
	all := r.Page.Pages()
	var out []int
	for _, p := range all[min(seen, len(all)):] {
		out = append(out, p.Number)
	}
	return out, max(seen, len(all))
}

// needsLocator says whether a successful command must have a spec locator.
func needsLocator(c browser.Command) bool {
	if c.Target.IsCoordinate() {
		return false
	}
	return c.NeedsTarget() || (!c.Target.IsZero() && (c.Action == "press" || c.Action == "scroll" || c.Action == "wait"))
}

// remember keeps this attempt's events for the prompt's history window and recall_history.
func (r *run) remember(events []Event) {
	r.all = append(r.all, events...)
}

func (r *run) redactDelta(d browser.Delta) browser.Delta {
	b, err := json.Marshal(d)
	if err != nil {
		return d
	}
	var out browser.Delta
	if json.Unmarshal([]byte(r.secrets.redact(string(b))), &out) != nil {
		return d
	}
	return out
}

// cleanError keeps the first line of Playwright's often multi-line errors.
func cleanError(err error) string {
	s := err.Error()
	for i, c := range s {
		if c == '\n' {
			s = s[:i]
			break
		}
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// commandValue is the value a command runs with: test data and extracted
// values substituted, and secrets only where text is typed into a field,
// never into a URL.
func (r *run) commandValue(c browser.Command) string {
	if c.Action == "navigate" {
		return r.expand(c.Value)
	}
	return r.secrets.fill(r.expand(c.Value))
}

// acted reports whether commands include one whose effects can start
// after it returned (see browser.SettleOptions.Acted).
// onlyChecks says a batch only verified.
func onlyChecks(cmds []browser.Command) bool {
	for _, c := range cmds {
		if !c.IsVerify() {
			return false
		}
	}
	return len(cmds) > 0
}

func acted(cmds []browser.Command) bool {
	for _, c := range cmds {
		switch c.Action {
		case "click", "dblclick", "rightclick", "press", "check", "uncheck", "select", "drag", "upload":
			return true
		}
	}
	return false
}

// navigationProblems says why model-issued navigations may not run: a
// secret placeholder in the URL (secrets are only typed into fields), or a
// destination outside the scenario's origin and the job's allowed origins.
func (r *run) navigationProblems(cmds []browser.Command) []string {
	var problems []string
	for i, c := range cmds {
		if c.Action != "navigate" {
			continue
		}
		for _, name := range r.secrets.names {
			if strings.Contains(c.Value, "{{"+name+"}}") {
				problems = append(problems, fmt.Sprintf("command %d: secrets may only be typed into fields, never put into a URL", i+1))
			}
		}
		dest, err := resolveAgainst(r.Page.URL(), r.expand(c.Value))
		if err != nil {
			problems = append(problems, fmt.Sprintf("command %d: %v", i+1, err))
			continue
		}
		if !r.originAllowed(dest) {
			problems = append(problems, fmt.Sprintf("command %d: navigation is limited to %s; %s is another origin",
				i+1, strings.Join(r.allowedOrigins(), ", "), originOf(dest)))
		}
	}
	return problems
}

// allowedOrigins are the scenario's own origin and those its options allow.
func (r *run) allowedOrigins() []string {
	out := []string{strings.ToLower(r.sc.Origin())}
	for _, o := range r.sc.Options.AllowedOrigins {
		out = append(out, strings.ToLower(strings.TrimRight(o, "/")))
	}
	return out
}

func (r *run) originAllowed(u *url.URL) bool {
	o := originOf(u)
	for _, a := range r.allowedOrigins() {
		if o == a {
			return true
		}
	}
	return false
}

func originOf(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }

func resolveAgainst(base, ref string) (*url.URL, error) {
	r, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	if b, err := url.Parse(base); err == nil && b.Scheme != "" && b.Scheme != "about" {
		r = b.ResolveReference(r)
	}
	return r, nil
}

// blockEvents reports what the egress guard refused since it last looked:
// in the step's report and as history events, so every block is visible in
// the job, not only in the worker's log.
func (r *run) blockEvents(rep *StepReport, iter int) []Event {
	denied := r.Page.Denied()
	if len(denied) <= r.blocksSeen {
		return nil
	}
	var events []Event
	for _, d := range denied[r.blocksSeen:] {
		d = r.secrets.redact(d)
		if len(rep.Blocked) < 50 {
			rep.Blocked = append(rep.Blocked, d)
		}
		events = append(events, Event{Step: rep.Index, Iteration: iter, Kind: "blocked", Action: "egress refused",
			Target: d, OK: false, Error: "refused by the egress policy"})
	}
	r.blocksSeen = len(denied)
	return events
}
