package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/scenario"
)

// Replay runs a stored test from its recorded commands, with no model call
// while they still work. With Repair set, a failure is classified before
// anything is touched, and only test drift is healed: a locator that
// drifted, a flow that gained or lost a step, timing. An app regression —
// a different value than asserted, an action without effect, an error, an
// unreachable goal — is reported with evidence and never healed; expected
// values are never changed.
type Replay struct {
	// Steps are the stored manifest, by scenario step (Step is 1-based).
	Steps []ManifestStep
	// Repair heals drift; without it a failure only gets its class.
	Repair bool
}

// Verdict is what a replay or a repair found a test to be: of a stored
// test, or of a test of a customer's project.
type Verdict string

// Verdicts.
const (
	VerdictPassed       Verdict = "passed"         // every recorded command worked as recorded
	VerdictHealed       Verdict = "healed"         // test drift was repaired
	VerdictFlaky        Verdict = "flaky"          // it passed once the page was given time, or on a retry
	VerdictRegression   Verdict = "app_regression" // the app no longer does what the test checks
	VerdictUnrepairable Verdict = "unrepairable"   // it fails and could not be repaired
	VerdictFailed       Verdict = "failed"         // it fails (a replay that repairs nothing)
	VerdictSkipped      Verdict = "skipped"        // a project's run skipped it (by itself, or after a failure before it)
	VerdictNotRun       Verdict = "not run"        // a project file's run did not reach it within its time budget
)

// Verdicts lists every verdict.
var Verdicts = []Verdict{VerdictPassed, VerdictHealed, VerdictFlaky, VerdictRegression, VerdictUnrepairable, VerdictFailed,
	VerdictSkipped, VerdictNotRun}

// FailureClass is what a failing command was found to be.
type FailureClass string

// Failure classes.
const (
	ClassLocatorDrift FailureClass = "locator_drift"
	ClassFlowDrift    FailureClass = "flow_drift"
	ClassTiming       FailureClass = "timing"
	ClassRegression   FailureClass = "app_regression"
	ClassUnknown      FailureClass = "unknown"
)

// RepairChange is what a repair did to a step.
type RepairChange string

// Changes.
const (
	ChangeUnchanged RepairChange = "unchanged"
	ChangeModified  RepairChange = "modified" // a locator or a command replaced
	ChangeInserted  RepairChange = "inserted" // commands added before a recorded one
	ChangeRemoved   RepairChange = "removed"  // the step is no longer needed
)

// Repair tiers, cheapest first.
const (
	TierReplay   = "replay"   // the recorded commands as they are
	TierSettle   = "settle"   // retried after the page settled, with more time
	TierRelocate = "relocate" // the element re-located from its fingerprint
	TierAgent    = "agent"    // the agent in repair mode
)

// StepRepair says how a replayed step went and what was changed.
type StepRepair struct {
	Change     RepairChange        `json:"change"`
	Class      FailureClass        `json:"class,omitempty"`
	Tier       string              `json:"tier"`
	Reason     string              `json:"reason,omitempty"`
	Evidence   *Evidence           `json:"evidence,omitempty"`
	Relocation *browser.Relocation `json:"relocation,omitempty"`
	Inserted   []string            `json:"inserted,omitempty"` // commands added, described
	Tokens     int                 `json:"tokens,omitempty"`   // what the agent tier used
	Duration   time.Duration       `json:"duration_ns"`        // what repairing took
}

// Evidence is what a failure showed: what was expected and observed, the
// app's errors, where the page was. The screenshot of the failing state is
// an artifact of the job.
type Evidence struct {
	Command    string            `json:"command"`
	Error      string            `json:"error,omitempty"`
	Expected   string            `json:"expected,omitempty"`
	Observed   string            `json:"observed,omitempty"`
	Problems   []browser.Problem `json:"problems,omitempty"`
	URL        string            `json:"url,omitempty"`
	Screenshot string            `json:"screenshot,omitempty"` // the artifact's name
	// NoScreenshot says why no picture was taken (one could have shown a
	// secret where it cannot be masked).
	NoScreenshot string `json:"no_screenshot,omitempty"`
}

// Artifact is a file a run produced for the job (a failing state's
// screenshot).
type Artifact struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Content []byte `json:"-"`
}

// replaySettleTimeout is how long the timing tier lets the page settle,
// and retryFactor how much more time the retried command gets.
const (
	replaySettleTimeout = 5 * time.Second
	retryFactor         = 2
	defaultSpecTimeout  = 5 * time.Second // what @playwright/test waits by default
)

// manifestFor returns the recorded commands of scenario step i.
func (r *run) manifestFor(i int) ([]ManifestEntry, bool) {
	if r.in.Replay == nil {
		return nil, false
	}
	for _, s := range r.in.Replay.Steps {
		if s.Step == i+1 {
			return s.Entries, true
		}
	}
	return nil, false
}

// replayTarget is the target a recorded command is replayed by: the
// robust locator its element had (a ref never survives its page), except
// for counts and absence, which are about the target as named.
func replayTarget(e ManifestEntry) (browser.Command, error) {
	c := e.Command
	if e.Element != nil && !e.Element.Locator.IsZero() && !byName(c) {
		c.Target = e.Element.Locator
	}
	if c.Target.Ref != "" {
		return c, fmt.Errorf("%s on %s has no recorded locator", c.Describe(), c.Target)
	}
	return c, nil
}

// replayStep runs step i from its recorded commands, repairing drift when
// the replay allows it.
func (r *run) replayStep(ctx context.Context, rep *StepReport, i int, entries []ManifestEntry) error {
	rep.Tier = TierReplay
	fix := &StepRepair{Change: ChangeUnchanged, Tier: TierReplay}
	rep.Repair = fix
	// The app's errors are looked for since the previous step began: the
	// action that broke something usually ran there.
	since := r.replayMark
	r.replayMark = time.Now()
	if since.IsZero() {
		since = r.replayMark
	}
	for k := 0; k < len(entries); k++ {
		e := entries[k]
		cmd, err := replayTarget(e)
		if err != nil {
			rep.Status, rep.Error = StepFailed, "cannot replay: "+err.Error()
			fix.Class, fix.Reason = ClassUnknown, rep.Error
			return nil
		}
		timeout := e.Timeout
		if timeout == 0 {
			timeout = defaultSpecTimeout
		}
		attempt := time.Now()
		failed, ok := r.replayOne(ctx, rep, cmd, timeout)
		if ok {
			continue
		}
		start := time.Now()
		ev := r.evidence(ctx, cmd, failed, since)
		fix.Evidence = ev
		if !r.in.Replay.Repair {
			fix.Class, fix.Reason = r.classifyOnly(ctx, cmd, e, ev)
			rep.Status, rep.Error = StepFailed, failed.Error
			fix.Duration += time.Since(start)
			return nil
		}
		outcome, err := r.heal(ctx, rep, i, entries, k, cmd, e, ev, timeout, attempt)
		fix.Duration += time.Since(start)
		if err != nil {
			return err
		}
		switch outcome {
		case healFailed:
			if rep.Error == "" {
				rep.Error = failed.Error
			}
			rep.Status = StepFailed
			return nil
		case healRemoved:
			return nil
		}
	}
	return nil
}

type healOutcome int

const (
	healDone    healOutcome = iota // the command (or its replacement) ran; go on
	healFailed                     // the step fails: a regression, or nothing helped
	healRemoved                    // the rest of the step is obsolete
)

// replayOne runs one recorded command as the spec would (within timeout)
// and reports whether it worked. A success stays in rep (a spec line); a
// failure is taken out and returned, as evidence rather than a line.
func (r *run) replayOne(ctx context.Context, rep *StepReport, cmd browser.Command, timeout time.Duration) (CommandReport, bool) {
	if b := r.batchWith(ctx, rep, 0, []browser.Command{cmd}, nil, timeout); b.failed < 0 {
		return CommandReport{}, true
	}
	failed := rep.Commands[len(rep.Commands)-1]
	rep.Commands = rep.Commands[:len(rep.Commands)-1]
	return failed, false
}

// evidence gathers what the failing state shows.
func (r *run) evidence(ctx context.Context, cmd browser.Command, failed CommandReport, since time.Time) *Evidence {
	ev := &Evidence{Command: cmd.Describe() + " " + cmd.Target.String(), Error: failed.Error, URL: r.secrets.redact(r.Page.URL())}
	if cmd.IsVerify() {
		ev.Expected = r.secrets.redact(cmd.Value)
	}
	for _, p := range r.Page.Problems(since) {
		p.Text, p.URL = r.secrets.redact(p.Text), r.secrets.redact(p.URL)
		ev.Problems = append(ev.Problems, p)
	}
	switch shot, err := r.Page.Screenshot(false); {
	case err == nil:
		ev.Screenshot = fmt.Sprintf("step-%d-failure.png", len(r.steps)+1)
		r.artifacts = append(r.artifacts, Artifact{Kind: "screenshot", Name: ev.Screenshot, Content: shot})
	case errors.Is(err, browser.ErrUnsafePicture):
		ev.NoScreenshot = r.secrets.redact(err.Error())
	}
	return ev
}

// appErrors is the part of the evidence that shows the app failing.
func appErrors(ev *Evidence) string {
	var out []string
	for _, p := range ev.Problems {
		out = append(out, string(p.Kind)+": "+p.Text)
	}
	return strings.Join(first(out, 3), "; ")
}

// observe reads what a verification's element shows now, for the evidence.
func (r *run) observe(ctx context.Context, cmd browser.Command) string {
	if !cmd.IsVerify() || cmd.Target.IsZero() {
		return ""
	}
	attr := ""
	if cmd.Assert == browser.AssertHasAttribute {
		attr, _, _ = strings.Cut(cmd.Value, "=")
	}
	if cmd.Assert == browser.AssertHasClass {
		attr = "class"
	}
	v, _, err := r.Page.Read(ctx, cmd.Target, attr)
	if err != nil {
		return ""
	}
	return r.secrets.redact(clip(v, 200))
}

// presence reports whether a verification asserts something about the
// element's own text (its presence, state or text), so that re-location
// may never point it at an element that says something else.
func presence(cmd browser.Command) bool {
	switch cmd.Assert {
	case browser.AssertTextContains, browser.AssertTextEquals, browser.AssertValueEquals, browser.AssertValueEmpty, browser.AssertSelectedLabel, browser.AssertSortedAscending, browser.AssertSortedDescending:
		return false // the assertion itself checks what the element says
	}
	return true
}

// classifyOnly names a failure's class without changing anything.
func (r *run) classifyOnly(ctx context.Context, cmd browser.Command, e ManifestEntry, ev *Evidence) (FailureClass, string) {
	if msg := appErrors(ev); msg != "" {
		return ClassRegression, "the app reported errors: " + msg
	}
	if cmd.IsVerify() {
		if n, err := r.Page.Count(ctx, cmd.Target); err == nil && n == 1 {
			ev.Observed = r.observe(ctx, cmd)
			return ClassRegression, "the element is there but shows a different value than asserted"
		}
	}
	return ClassUnknown, "not repaired (replay only)"
}

// heal classifies the failure of entries[k] and repairs it if it is drift.
func (r *run) heal(ctx context.Context, rep *StepReport, i int, entries []ManifestEntry, k int, cmd browser.Command,
	e ManifestEntry, ev *Evidence, timeout time.Duration, attempt time.Time) (healOutcome, error) {
	fix := rep.Repair
	regression := func(reason string) (healOutcome, error) {
		fix.Class, fix.Reason = ClassRegression, reason
		rep.Error = "app regression: " + reason
		return healFailed, nil
	}
	// An app that reports errors has regressed: nothing is healed past them.
	if msg := appErrors(ev); msg != "" {
		return regression("the app reported errors: " + msg)
	}

	// Tier 1, timing: the same command once the page settled, with more time.
	r.Page.Settle(ctx, browser.SettleOptions{Since: time.Now().Add(-time.Minute), Timeout: replaySettleTimeout})
	if _, ok := r.replayOne(ctx, rep, cmd, retryFactor*max(timeout, defaultSpecTimeout)); ok {
		// The spec must allow what it took from the first try on.
		last := &rep.Commands[len(rep.Commands)-1]
		last.Waited = time.Since(attempt)
		rep.Manifest[len(rep.Manifest)-1].Timeout = specTimeout(*last)
		fix.Class, fix.Tier = ClassTiming, TierSettle
		fix.Reason = fmt.Sprintf("passed when given more time (%s from the first try)", last.Waited.Round(100*time.Millisecond))
		return healDone, nil
	}

	// A dialog the app now opens (a confirmation before an add) holds the
	// flow back: the agent is asked before any verdict, and the step's
	// checks stay the recorded ones, so a regression still fails them.
	if r.Model != nil && r.dialogOpen(ctx) {
		return r.repairWithAgent(ctx, rep, i, entries, k, cmd, timeout)
	}

	n, _ := r.Page.Count(ctx, cmd.Target)
	if cmd.IsVerify() {
		switch {
		case cmd.Assert.Counts() || cmd.Assert == browser.AssertIsHidden || cmd.IsPageCheck() || cmd.Target.IsZero():
			ev.Observed = r.observePage(ctx, cmd)
			return regression(fmt.Sprintf("%s no longer holds", cmd.Describe()))
		case n >= 1:
			// The element is found and shows something else: the value the
			// test asserts is never changed to match.
			ev.Observed = r.observe(ctx, cmd)
			return regression(fmt.Sprintf("the element is there but %s does not hold", cmd.Describe()))
		}
	}

	// Tier 2: re-locate the element from its fingerprint (0 tokens). A
	// verification gets here only when its element is gone; an action whose
	// element is there failed for another reason (something covers it).
	rel, looked := r.relocate(ctx, cmd, e, n)
	if looked {
		fix.Relocation = &rel
	}
	if looked && rel.Element != nil {
		if cmd.IsVerify() && presence(cmd) && e.Element.Text != "" && !browser.SameText(rel.Element.Text, e.Element.Text) {
			// Found elsewhere saying something else: the app shows a
			// different value than the test asserts.
			ev.Expected = r.secrets.redact(e.Element.Text)
			ev.Observed = r.secrets.redact(clip(rel.Element.Text, 200))
			return regression(fmt.Sprintf("the checked element now says %q instead of %q", ev.Observed, ev.Expected))
		}
		moved := cmd
		moved.Target = rel.Element.Locator
		if _, ok := r.replayOne(ctx, rep, moved, retryFactor*timeout); ok {
			fix.Change, fix.Class, fix.Tier = ChangeModified, ClassLocatorDrift, TierRelocate
			fix.Reason = fmt.Sprintf("the element moved: %s is now %s (similarity %.2f, next best %.2f)",
				cmd.Target, rel.Element.Locator, rel.Score, rel.RunnerUp)
			return healDone, nil
		}
		if cmd.IsVerify() {
			ev.Observed = r.observe(ctx, moved)
			return regression(fmt.Sprintf("the element moved to %s and %s does not hold there", rel.Element.Locator, cmd.Describe()))
		}
	}

	// Tier 3: the agent in repair mode, for flow drift.
	if r.Model == nil {
		fix.Class, fix.Reason = ClassUnknown, "re-location found no element and no model is configured to repair the flow"
		if cmd.IsVerify() {
			// Without the agent a missing checked element cannot be told
			// from a missing feature: it is reported, never healed.
			return regression(fmt.Sprintf("the checked element is gone (%s)", cmd.Target))
		}
		rep.Error = fix.Reason
		return healFailed, nil
	}
	return r.repairWithAgent(ctx, rep, i, entries, k, cmd, timeout)
}

// openDialogs are the dialogs that stand open over a page.
var openDialogs = browser.Target{CSS: "dialog[open], [role=dialog][aria-modal=true], [role=alertdialog][aria-modal=true]"}

// dialogOpen reports whether a dialog stands open on the page.
func (r *run) dialogOpen(ctx context.Context) bool {
	n, err := r.Page.Count(ctx, openDialogs)
	return err == nil && n > 0
}

// relocate looks for where a failed command's element went, when that can
// help: its element is not found as recorded and a fingerprint was recorded.
// A presence check is first looked for among all elements (finding it
// saying something else is a regression); when that finds nothing, only
// among elements with its recorded text. ok is false when nothing was
// looked for; a Relocation without Element found nothing.
func (r *run) relocate(ctx context.Context, cmd browser.Command, e ManifestEntry, n int) (browser.Relocation, bool) {
	if e.Element == nil || n == 1 {
		return browser.Relocation{}, false
	}
	opts := browser.RelocateOptions{Visible: !cmd.IsVerify()}
	if cmd.IsVerify() && presence(cmd) && e.Element.Text != "" {
		if rel, err := r.Page.Relocate(ctx, *e.Element, opts); err == nil && rel.Element != nil {
			return rel, true
		}
	}
	opts.SameText = cmd.IsVerify() && presence(cmd)
	rel, err := r.Page.Relocate(ctx, *e.Element, opts)
	return rel, err == nil
}

// observePage reads the page-level value a failed verification was about.
func (r *run) observePage(ctx context.Context, cmd browser.Command) string {
	switch cmd.Assert {
	case browser.AssertUrlContains, browser.AssertUrlEquals:
		return r.secrets.redact(r.Page.URL())
	case browser.AssertTitleContains, browser.AssertTitleEquals:
		return r.secrets.redact(r.Page.Title())
	case browser.AssertDialogContains:
		if d := r.Page.Dialogs(); len(d) > 0 {
			return r.secrets.redact(d[len(d)-1].Message)
		}
		return "no dialog"
	}
	if n, err := r.Page.Count(ctx, cmd.Target); err == nil {
		return fmt.Sprintf("%d matching elements", n)
	}
	return ""
}

// repairWithAgent asks the agent to get the recorded command's step past
// what blocks it on the current UI (an interstitial, a confirmation, a
// changed flow), then runs the recorded command again. The step's
// verifications are always the recorded ones: the agent only acts.
func (r *run) repairWithAgent(ctx context.Context, rep *StepReport, i int, entries []ManifestEntry, k int,
	cmd browser.Command, timeout time.Duration) (healOutcome, error) {
	fix := rep.Repair
	before := len(rep.Commands)
	usage := rep.Usage
	st := r.sc.Steps[i]
	a := &agentStep{rep: rep, step: st, goal: r.expand(st.Describe()), failedCmds: map[string]int{},
		repair: &repairContext{entries: entries, failed: k, err: fix.Evidence.Error}}
	err := r.agentLoop(ctx, a)
	fix.Tier = TierAgent
	defer func() {
		fix.Tokens = rep.Usage.PromptTokens + rep.Usage.CompletionTokens - usage.PromptTokens - usage.CompletionTokens
	}()
	var sf stepFailed
	switch {
	case err == nil:
	case errors.As(err, &sf):
		if strings.HasPrefix(sf.msg, "stuck") || strings.HasPrefix(sf.msg, "infeasible") {
			fix.Class, fix.Reason = ClassRegression, "the goal is unreachable on the current app: "+r.secrets.redact(sf.msg)
			rep.Error = "app regression: " + fix.Reason
			return healFailed, nil
		}
		fix.Class, fix.Reason = ClassUnknown, "the agent could not repair the step: "+r.secrets.redact(sf.msg)
		rep.Error = fix.Reason
		return healFailed, nil
	default:
		return healFailed, err
	}
	var added []string
	for _, c := range rep.Commands[before:] {
		if c.OK {
			added = append(added, c.Command.Describe()+" "+c.Command.Target.String())
		}
	}
	if len(added) == 0 {
		// Nothing to do: the rest of the step is obsolete — unless it checks
		// something, which is never dropped.
		for _, e := range entries[k:] {
			if e.Command.IsVerify() {
				fix.Class, fix.Reason = ClassRegression, fmt.Sprintf("the agent found nothing to do, but the step's check %s does not hold", e.Command.Describe())
				rep.Error = "app regression: " + fix.Reason
				return healFailed, nil
			}
		}
		fix.Change, fix.Class, fix.Reason = ChangeRemoved, ClassFlowDrift, "the step is no longer needed: the agent found nothing left to do for it"
		if len(rep.Notes) > 0 {
			fix.Reason += " (" + strings.Join(rep.Notes, "; ") + ")"
		}
		rep.Status = StepSkipped
		return healRemoved, nil
	}
	fix.Inserted = added
	// The recorded command again, after what the agent cleared.
	if _, ok := r.replayOne(ctx, rep, cmd, timeout); ok {
		fix.Change, fix.Class, fix.Reason = ChangeInserted, ClassFlowDrift, "commands were needed before the recorded one"
		return healDone, nil
	}
	if cmd.IsVerify() {
		ev := fix.Evidence
		ev.Observed = r.observe(ctx, cmd)
		fix.Class, fix.Reason = ClassRegression, fmt.Sprintf("after the agent's commands, %s still does not hold", cmd.Describe())
		rep.Error = "app regression: " + fix.Reason
		return healFailed, nil
	}
	// The agent's commands did what the recorded action was for.
	fix.Change, fix.Class, fix.Reason = ChangeModified, ClassFlowDrift, "the recorded action was replaced by the agent's"
	return healDone, nil
}

// repairContext is what the agent is told in repair mode.
type repairContext struct {
	entries []ManifestEntry
	failed  int
	err     string
}

// write adds the repair section to the agent's prompt.
func (rc *repairContext) write(b *strings.Builder, r *run) {
	b.WriteString("REPAIR MODE: this step comes from a stored test that used to pass; the app changed.\n")
	b.WriteString("THE STEP'S RECORDED COMMANDS:\n")
	for j, e := range rc.entries {
		mark := "done"
		switch {
		case j == rc.failed:
			mark = "FAILED: " + r.secrets.redact(rc.err)
		case j > rc.failed:
			mark = "not run yet"
		}
		el := ""
		if e.Element != nil {
			el = " (was " + r.secrets.redact(e.Element.Describe()) + ")"
		}
		fmt.Fprintf(b, "  %d. %s %s%s [%s]\n", j+1, e.Command.Describe(), r.secrets.redact(e.Command.Target.String()), el, mark)
	}
	b.WriteString("Do only what the current UI now needs before the failed command can run (accept a cookie wall, confirm an " +
		"interstitial, go through an added page), or, if that command's element is gone, what it was for. The recorded " +
		"command and the step's checks run again after you, as recorded: never send verifications, and never work around " +
		"a feature that is broken — answer status \"stuck\" with what you saw when the app no longer lets the step be done. " +
		"If the step is no longer needed (already done, or its element and purpose are gone), answer status \"complete\" with no commands.\n")
}

// clip shortens s to at most n bytes on a character boundary, marked.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// verdict sums up a replay: a regression anywhere wins; a failure that is
// not one could not be repaired; any change means healed; a retry that
// needed time means flaky.
func verdict(status Status, steps []StepReport, repair bool) Verdict {
	changed, timing := false, false
	for _, s := range steps {
		if s.Repair == nil {
			continue
		}
		if s.Repair.Class == ClassRegression {
			return VerdictRegression
		}
		changed = changed || s.Repair.Change != ChangeUnchanged
		timing = timing || s.Repair.Class == ClassTiming
	}
	switch {
	case status != StatusSucceeded && !repair:
		return VerdictFailed
	case status != StatusSucceeded:
		return VerdictUnrepairable
	case changed:
		return VerdictHealed
	case timing:
		return VerdictFlaky
	}
	return VerdictPassed
}

// repairedScenario drops the steps a repair removed, renumbering the rest.
func repairedScenario(sc scenario.Scenario, steps []StepReport) (scenario.Scenario, []StepReport) {
	out := sc
	out.Steps = nil
	var kept []StepReport
	removed := map[int]bool{}
	for _, s := range steps {
		if s.Repair != nil && s.Repair.Change == ChangeRemoved {
			removed[s.Index] = true
		}
	}
	for i, st := range sc.Steps {
		if !removed[i] {
			out.Steps = append(out.Steps, st)
		}
	}
	for _, s := range steps {
		if removed[s.Index] {
			continue
		}
		shift := 0
		for j := range removed {
			if j < s.Index {
				shift++
			}
		}
		s.Index -= shift
		kept = append(kept, s)
	}
	return out, kept
}
