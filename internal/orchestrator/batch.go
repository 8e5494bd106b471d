package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/scenario"
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

// batchWith is batch with each command given timeout (0: the default). It
// runs the commands, settles the page as the batch's watcher needs, takes
// the delta and records the history, each in its own step.
func (r *run) batchWith(ctx context.Context, rep *StepReport, iter int, cmds []browser.Command, before *browser.Snapshot, timeout time.Duration) batchResult {
	b := r.startBatch(rep, iter)
	res := b.execute(ctx, cmds, timeout)
	ran := cmds[:min(len(cmds), res.completed+1)]
	res.settle = b.settle(ctx, ran, before)
	if err := r.Page.FillChecked(); err != nil && res.failed < 0 && len(b.events) > 0 {
		b.fillFailed(&res, err)
	}
	res.delta = b.observe(ctx, before)
	b.record(ctx, res)
	return res
}

// batchRun is the state one batch carries from its commands to its
// settling, delta and history.
type batchRun struct {
	r          *run
	rep        *StepReport
	iter       int
	start      time.Time // when the first command started
	startURL   string
	events     []Event
	actor      int // the report index of the batch's last successful command that acts on the page; -1 if none
	dialogSeen int // dialogs already attributed to a command
	pagesSeen  int // pages already attributed to a command
}

func (r *run) startBatch(rep *StepReport, iter int) *batchRun {
	t := time.Now()
	r.nextView = nil // the page is about to change
	b := &batchRun{r: r, rep: rep, iter: iter, startURL: r.Page.URL(), actor: -1}
	r.lateOpened(rep)
	b.dialogSeen, b.pagesSeen = len(r.Page.Dialogs()), len(r.Page.Pages())
	r.timing.Browser += time.Since(t)
	b.start = time.Now()
	return b
}

// execute runs cmds in order and stops at the first failure, reporting
// each command, its manifest entry and its event.
func (b *batchRun) execute(ctx context.Context, cmds []browser.Command, timeout time.Duration) batchResult {
	r, rep := b.r, b.rep
	res := batchResult{failed: -1}
	prevEnd := b.start // when the previous command finished
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
		// The batch's last fill is checked by the settle that follows it.
		out := r.Page.Execute(ctx, real, browser.ExecOptions{Fingerprint: true, RequireLocator: true, Files: r.files, Timeout: timeout, Document: true,
			SettleChecksFill: i == len(cmds)-1})
		doc := out.Document
		r.timing.Browser += out.Duration
		end := time.Now()
		if out.Waited > time.Second {
			// It waited for the page: everything since the previous command
			// ended is what the page took, and what the spec must allow.
			out.Waited = end.Sub(prevEnd)
		}
		prevEnd = end
		out.Waited = r.dependentWait(shown, out)
		cr := CommandReport{Command: shown, OK: out.Err == nil, Duration: out.Duration, Waited: out.Waited, Document: doc.ID, Page: page, Via: out.Via}
		ev := Event{Step: rep.Index, Iteration: b.iter, Kind: "command", Action: shown.Describe(), Target: shown.Target.String(),
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
		b.events = append(b.events, ev)
		here := len(rep.Commands) - 1
		if out.Err == nil && !shown.IsVerify() && shown.Action != browser.ActionDialog {
			b.actor = here
		}
		// A dialog or popup can be reported after its command returned: one
		// seen during a check or a dialog answer belongs to the action before.
		to := b.actor
		if to < 0 {
			to = here
		}
		b.dialogSeen, b.pagesSeen = r.attribute(rep, to, b.dialogSeen, b.pagesSeen)
		if out.Err != nil {
			res.failed = i
			res.err = fmt.Sprintf("command %d (%s %s) failed: %s", i+1, shown.Describe(), shown.Target, cr.Error)
			break
		}
		res.completed++
	}
	return res
}

// settle waits for the page after the commands that ran, as long as the
// batch's watcher needs: fully when a model looks next, lightly (leaving
// the rest for the next check) when nobody does, not at all after checks
// nobody watches.
func (b *batchRun) settle(ctx context.Context, ran []browser.Command, before *browser.Snapshot) browser.SettleReport {
	r := b.r
	var report browser.SettleReport
	full := browser.SettleOptions{Since: b.start, StartURL: b.startURL, Acted: acted(ran), Typed: typedOnly(ran), Ended: time.Now()}
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
		report = r.Page.Settle(ctx, so)
		r.timing.Settle += report.Duration
		b.rep.Settle = append(b.rep.Settle, report)
	}
	// What appeared while the page settled belongs to the last action.
	if b.actor >= 0 {
		_, b.pagesSeen = r.attribute(b.rep, b.actor, b.dialogSeen, b.pagesSeen)
	}
	r.pagesSeen = b.pagesSeen
	return report
}

// fillFailed turns the batch's last command, a fill the settle found had
// no effect, into the failure it is: as if its own check had said so.
func (b *batchRun) fillFailed(res *batchResult, err error) {
	r, rep := b.r, b.rep
	i := len(b.events) - 1
	at := len(rep.Commands) - 1
	cr := &rep.Commands[at]
	cr.OK = false
	cr.Locator = ""
	cr.Error = r.secrets.redact(cleanError(err))
	b.events[i].OK, b.events[i].Error = false, cr.Error
	rep.Manifest = rep.Manifest[:len(rep.Manifest)-1]
	if b.actor == at {
		b.actor = -1
	}
	res.failed, res.completed = i, i
	res.err = fmt.Sprintf("command %d (%s %s) failed: %s", i+1, cr.Command.Describe(), cr.Command.Target, cr.Error)
}

// observe takes the representation the next iteration shows and the delta
// from before to it, with the batch's dialogs and opened pages; nothing
// when no model watches (before is nil).
func (b *batchRun) observe(ctx context.Context, before *browser.Snapshot) browser.Delta {
	r, rep := b.r, b.rep
	if before == nil {
		return browser.Delta{}
	}
	t := time.Now()
	after, err := r.Page.Snapshot(ctx, r.snapshotOptions())
	r.timing.Browser += time.Since(t)
	if err != nil {
		return browser.Delta{}
	}
	r.nextView = &after // the next iteration shows this representation: the delta's refs are its refs
	d := browser.DiffSnapshots(*before, after, 10)
	pages := r.Page.Pages()
	for _, c := range b.ranReports() {
		d.Dialogs = append(d.Dialogs, c.Dialogs...)
		for _, n := range c.Opened {
			if n-1 < len(pages) {
				d.Opened = append(d.Opened, pages[n-1])
			}
		}
	}
	delta := r.redactDelta(d)
	rep.Delta = &delta
	return delta
}

// ranReports are the command reports of this batch.
func (b *batchRun) ranReports() []CommandReport {
	return b.rep.Commands[max(0, len(b.rep.Commands)-len(b.events)):]
}

// record writes the batch's history: its commands, then the dialogs and
// pages they opened (a later turn must know of them), the last event
// carrying what the batch observed, then any egress refusals.
func (b *batchRun) record(ctx context.Context, res batchResult) {
	r, rep := b.r, b.rep
	events := b.events
	for _, c := range b.ranReports() {
		for _, d := range c.Dialogs {
			events = append(events, Event{Step: rep.Index, Iteration: b.iter, Kind: "dialog", Action: d.Type,
				Target: fmt.Sprintf("%q answered: %s", d.Message, d.Answer), OK: true})
		}
		for _, n := range c.Opened {
			events = append(events, Event{Step: rep.Index, Iteration: b.iter, Kind: "page opened", Action: fmt.Sprintf("page %d", n), OK: true})
		}
	}
	if len(events) > 0 {
		obs, _ := json.Marshal(map[string]any{"delta": res.delta, "settle": res.settle})
		events[len(events)-1].Observation = json.RawMessage(r.secrets.redact(string(obs)))
	}
	events = append(events, r.blockEvents(rep, b.iter)...)
	r.remember(events)
	if err := r.persist(func() error { return r.Recorder.History(ctx, events) }); err != nil {
		r.Log.Warn("history not recorded", "err", err)
	}
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
			if c.OK && !c.Command.IsVerify() && c.Command.Action != browser.ActionDialog {
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
			r.steps[i].Lines = r.spec.stepLines(r.steps[i])
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
	return c.NeedsTarget() || (!c.Target.IsZero() && (c.Action == browser.ActionPress || c.Action == browser.ActionScroll || c.Action == browser.ActionWait))
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
	if c.Action == browser.ActionNavigate {
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

// typedOnly says every command typed into a field.
func typedOnly(cmds []browser.Command) bool {
	for _, c := range cmds {
		if c.Action != browser.ActionFill && c.Action != browser.ActionType {
			return false
		}
	}
	return len(cmds) > 0
}

func acted(cmds []browser.Command) bool {
	for _, c := range cmds {
		switch c.Action {
		case browser.ActionClick, browser.ActionDblClick, browser.ActionRightClick, browser.ActionTap, browser.ActionPress, browser.ActionCheck, browser.ActionUncheck, browser.ActionSelect, browser.ActionDrag, browser.ActionUpload:
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
		if c.Action != browser.ActionNavigate {
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
		if !r.origins.allow(dest) {
			problems = append(problems, fmt.Sprintf("command %d: navigation is limited to %s; %s is another origin",
				i+1, strings.Join(r.origins, ", "), originOf(dest)))
		}
	}
	return problems
}

// origins are where a run may navigate: the scenario's own origin and
// those its options allow, lower-cased scheme://host[:port].
type origins []string

func originsOf(sc scenario.Scenario) origins {
	out := origins{strings.ToLower(sc.Origin())}
	for _, o := range sc.Options.AllowedOrigins {
		out = append(out, strings.ToLower(strings.TrimRight(o, "/")))
	}
	return out
}

// allow reports whether u is on one of the origins.
func (o origins) allow(u *url.URL) bool { return slices.Contains(o, originOf(u)) }

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

// dependentWait is how long the spec's command must be allowed to wait:
// what it waited itself, or, for the first check after an action, all the
// page had from that action's end to the moment the check held (settling,
// snapshots and pictures included; the model's and the recorder's time
// left out): a click whose settle absorbed five seconds of loading is
// followed, in the spec, by a check that must wait as long.
func (r *run) dependentWait(c browser.Command, out browser.Outcome) time.Duration {
	waited := out.Waited
	switch {
	case out.Err != nil:
	case c.IsVerify():
		if p := r.pending; p != nil {
			waited = max(waited, time.Since(p.at)-(r.timing.Model-p.model)-(r.timing.Persist-p.persist))
			r.pending = nil
		}
	case c.Action != browser.ActionDialog && c.Action != browser.ActionWait:
		r.pending = &pendingCheck{at: time.Now(), model: r.timing.Model, persist: r.timing.Persist}
	}
	return waited
}

// pendingCheck is when the last action ended, with the model's and the
// recorder's time so far, until the first check after it holds.
type pendingCheck struct {
	at             time.Time
	model, persist time.Duration
}
