package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/scenario"
)

// agentStep is the loop's state within one step.
type agentStep struct {
	rep              *StepReport
	step             scenario.Step
	goal             string
	iter             int
	snap             *browser.Snapshot // the latest representation the model saw
	refs             map[string]bool   // its refs
	full             string            // that representation untrimmed (secrets redacted), for inspect_page
	warnings         []string
	delta            *browser.Delta
	toolNotes        string // tool results carried into the next iteration
	failedCmds       map[string]int
	failures         int // consecutive failed batches
	toolCalls        int // this iteration
	shotsSinceAction int
	lastShot         []byte
	repair           *repairContext // set in repair mode
}

func (a *agentStep) warn(format string, args ...any) {
	a.warnings = append(a.warnings, fmt.Sprintf(format, args...))
}

// stepFailed ends a step as failed without ending the run.
type stepFailed struct{ msg string }

func (e stepFailed) Error() string { return e.msg }

// maxToolRounds bounds re-asking inside one iteration.
const maxToolRounds = 3

// agent runs the observe-decide-act-settle-record loop for one step. It
// returns an error only for what must end the whole run (budget, cancel,
// a superseded attempt); a step that cannot be done is reported as failed.
func (r *run) agent(ctx context.Context, rep *StepReport, st scenario.Step) error {
	a := &agentStep{rep: rep, step: st, goal: r.expand(st.Text), failedCmds: map[string]int{}}
	err := r.agentLoop(ctx, a)
	var sf stepFailed
	if errors.As(err, &sf) {
		rep.Status, rep.Error = StepFailed, r.secrets.redact(sf.msg)
		return nil
	}
	return err
}

func (r *run) agentLoop(ctx context.Context, a *agentStep) error {
	for a.iter = 1; a.iter <= r.limits.MaxIterationsPerStep; a.iter++ {
		if r.iters >= r.limits.MaxTotalIterations {
			return stepFailed{fmt.Sprintf("guardrail: the job reached its limit of %d agent iterations", r.limits.MaxTotalIterations)}
		}
		if r.cancelled() {
			return errCancelled
		}
		if ctx.Err() != nil {
			return stepFailed{"step timed out"}
		}
		r.iters++
		a.rep.Iterations = a.iter
		a.toolCalls = 0

		snap, err := r.representation(ctx)
		if err != nil {
			return stepFailed{"could not read the page: " + cleanError(err)}
		}
		a.see(r, snap)
		msgs, err := r.prompt(ctx, a, snap)
		if err != nil {
			return stepFailed{err.Error()}
		}
		a.warnings, a.toolNotes = nil, ""

		d, err := r.decide(ctx, a, msgs)
		if err != nil {
			return err
		}
		if d == nil { // unusable reply: the warning goes into the next iteration
			continue
		}
		done, err := r.act(ctx, a, d)
		if err != nil || done {
			return err
		}
	}
	return stepFailed{fmt.Sprintf("guardrail: the step was not complete after %d iterations", r.limits.MaxIterationsPerStep)}
}

// decide asks the model, runs the tools it asks for and re-asks within the
// iteration when it needs their results. A nil decision means the reply was
// unusable.
func (r *run) decide(ctx context.Context, a *agentStep, msgs []llm.Message) (*decision, error) {
	for round := 0; ; round++ {
		reply, err := r.ask(ctx, a, msgs)
		if err != nil {
			return nil, err
		}
		d, perr := parseDecision(reply.Text)
		if perr != nil {
			a.warn("your previous reply could not be used: %v. Answer with one JSON object following the schema.", perr)
			return nil, nil
		}
		if d.Note != "" {
			r.note, r.noteStep = d.Note, a.rep.Index
		}
		r.learn(d.Experiences)
		if err := r.keepExtracted(ctx, d.Extracted); err != nil {
			return nil, err
		}
		if len(d.ToolCalls) == 0 {
			return &d, nil
		}
		results, images, changed := r.runTools(ctx, a, d.ToolCalls)
		if changed {
			snap, err := r.representation(ctx)
			if err == nil {
				a.see(r, snap)
				// Framed as untrusted with the rest of the tool results.
				results += "\nTHE PAGE CHANGED; NEW PAGE REPRESENTATION:\n" + r.secrets.redact(snap.Text) + "\n"
			}
		}
		if !d.NeedsToolResults || round+1 >= maxToolRounds {
			a.toolNotes = results
			if changed {
				// Commands decided before the page changed would use stale refs.
				d.Commands, d.Blocker = nil, nil
				if d.Status == "complete" {
					d.Status = "continue"
				}
			}
			return &d, nil
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Text: reply.Text},
			llm.Message{Role: "user", Text: "TOOL RESULTS (they can show page content):\n" +
				r.untrusted(func(w *strings.Builder) { w.WriteString(results) }) + "Now decide, with the same schema.", Images: images})
	}
}

// ask makes one model call. Its maximum cost is reserved from the job's
// hold before it is sent (errBudget when the hold cannot cover it), and it
// is settled at its reported cost when the reply arrives, so a crash in
// between leaves a reservation the next attempt charges, never a free call.
func (r *run) ask(ctx context.Context, a *agentStep, msgs []llm.Message) (llm.Reply, error) {
	seq := r.calls + 1
	req := llm.Request{Messages: msgs, JSON: true, MaxTokens: llm.DefaultMaxTokens}
	if r.in.CallIDPrefix != "" {
		req.ClientRequestID = fmt.Sprintf("%s/%d", r.in.CallIDPrefix, seq)
	}
	if err := r.persist(func() error {
		return r.Recorder.Reserve(ctx, Call{Seq: seq, Model: r.Model.Model(), Usage: llm.MaxUsage(req)})
	}); err != nil {
		if errors.Is(err, ErrOverBudget) {
			r.budgetNote = err.Error()
			return llm.Reply{}, errBudget
		}
		return llm.Reply{}, fmt.Errorf("reserve model call: %w", err)
	}
	r.calls = seq // used even if the call fails: a sequence number is never reused
	t := time.Now()
	reply, chatErr := r.Model.Chat(ctx, req)
	r.timing.Model += time.Since(t)
	model := reply.Model
	if model == "" {
		model = r.Model.Model()
	}
	// A failed call is settled at nothing: errors are not billed.
	if err := r.persist(func() error {
		_, _, serr := r.Recorder.Settle(context.WithoutCancel(ctx), Call{Seq: seq, Model: model, Usage: reply.Usage})
		return serr
	}); err != nil {
		return reply, fmt.Errorf("settle model call: %w", err)
	}
	if chatErr != nil {
		return reply, stepFailed{"the model could not be reached: " + cleanError(chatErr)}
	}
	a.rep.Usage = addUsage(a.rep.Usage, reply.Usage)
	return reply, nil
}

// act applies a decision: blocker commands, then the batch, then the
// status, with the system's overrides. done means the step ended.
func (r *run) act(ctx context.Context, a *agentStep, d *decision) (bool, error) {
	coords := r.sc.Options.CoordinateFallback && a.failures >= 3
	if d.Blocker != nil && len(d.Blocker.Commands) > 0 {
		if problems := append(checkCommands(d.Blocker.Commands, a.refs, r.limits.MaxCommandsPerBatch, coords),
			r.navigationProblems(d.Blocker.Commands)...); len(problems) > 0 {
			a.warn("the blocker's commands were not executed: %s", strings.Join(problems, "; "))
			r.refusedEvent(ctx, a, "blocker", problems)
			return false, nil
		}
		b := r.batch(ctx, a.rep, a.iter, d.Blocker.Commands, a.snap)
		a.delta = &b.delta
		if b.failed >= 0 {
			a.warn("clearing the blocker (%s) failed: %s", d.Blocker.Description, b.err)
			a.failures++
			return false, nil
		}
		a.rep.Notes = append(a.rep.Notes, "blocker cleared: "+r.secrets.redact(d.Blocker.Description))
		if len(d.Commands) > 0 {
			// The blocker's removal may have changed the refs the batch uses: resolve again next turn.
			a.warn("the blocker (%s) was cleared; send the step's commands again against the new page", d.Blocker.Description)
			return false, nil
		}
	}
	if e := d.StepEvaluation; e != nil && e.Verdict != "" && e.Verdict != "ok" {
		a.rep.Notes = append(a.rep.Notes, "step evaluation: "+e.Verdict+": "+r.secrets.redact(e.Reason))
		if e.Verdict == "already_done" && len(d.Commands) == 0 {
			return true, nil
		}
	}
	problems := append(checkCommands(d.Commands, a.refs, r.limits.MaxCommandsPerBatch, coords), r.navigationProblems(d.Commands)...)
	if a.repair != nil {
		for _, c := range d.Commands {
			if c.IsVerify() {
				// A repair never writes checks: the recorded ones run as recorded.
				problems = append(problems, "verifications are not allowed in repair mode (the step's recorded checks run after you)")
				break
			}
		}
	}
	if len(problems) > 0 {
		a.warn("nothing was executed: %s", strings.Join(problems, "; "))
		r.refusedEvent(ctx, a, "batch", problems)
		return false, nil
	}
	failed := false
	if len(d.Commands) > 0 {
		a.shotsSinceAction = 0
		b := r.batch(ctx, a.rep, a.iter, d.Commands, a.snap)
		a.delta = &b.delta
		if b.failed >= 0 {
			failed = true
			a.failures++
			a.warn("%s; %d of %d commands completed", b.err, b.completed, len(d.Commands))
			key, _ := json.Marshal(d.Commands[b.failed])
			if a.failedCmds[string(key)]++; a.failedCmds[string(key)] >= 2 {
				a.warn("the same command (%s %s) has now failed %d times: do something different",
					d.Commands[b.failed].Describe(), d.Commands[b.failed].Target, a.failedCmds[string(key)])
			}
			if a.failures >= 2 {
				a.warn("%d batches in a row failed in this step: look at the page again (a tool may help) before acting", a.failures)
			}
			if a.failures == 3 && r.sc.Options.CoordinateFallback {
				a.warn("coordinate targets ({\"x\": percent, \"y\": percent} of the viewport) are allowed from now on")
			}
		} else {
			a.failures = 0
		}
	}
	switch d.Status {
	case "complete":
		if failed {
			a.warn("you said the step is complete, but a command failed, so it is not")
			return false, nil
		}
		if err := r.acceptResult(ctx, a, d); err != nil {
			var af assessFailed
			if errors.As(err, &af) {
				return true, stepFailed{af.Error()}
			}
			a.warn("%v", err)
			return false, nil
		}
		return true, nil
	case "stuck", "infeasible":
		return true, stepFailed{d.Status + ": " + d.Reasoning}
	}
	return false, nil
}

// refusedEvent records commands the system refused to run, so history
// shows them next to what did run.
func (r *run) refusedEvent(ctx context.Context, a *agentStep, what string, problems []string) {
	ev := []Event{{Step: a.rep.Index, Iteration: a.iter, Kind: "refused", Action: what, OK: false,
		Error: r.secrets.redact(strings.Join(problems, "; "))}}
	r.remember(ev)
	if err := r.persist(func() error { return r.Recorder.History(ctx, ev) }); err != nil {
		r.Log.Warn("history not recorded", "err", err)
	}
}

// acceptResult checks an ai_query step's result and keeps it.
func (r *run) acceptResult(ctx context.Context, a *agentStep, d *decision) error {
	st := a.step
	if st.Type != scenario.StepAIQuery {
		return nil
	}
	if len(d.Result) == 0 {
		return fmt.Errorf("an %s query completes with its answer in \"result\"", st.Method)
	}
	switch st.Method {
	case "extract":
		if problems := validateSchema(st.Schema, d.Result); len(problems) > 0 {
			return fmt.Errorf("the result does not match the step's schema: %s", strings.Join(problems, "; "))
		}
	case "observe":
		var els []json.RawMessage
		if json.Unmarshal(d.Result, &els) != nil {
			return fmt.Errorf("an observe query's result is a list of the matching elements")
		}
	case "assess":
		var as struct {
			Passed   *bool  `json:"passed"`
			Evidence string `json:"evidence"`
		}
		if json.Unmarshal(d.Result, &as) != nil || as.Passed == nil {
			return fmt.Errorf(`an assess query's result is {"passed": true|false, "evidence": "..."}`)
		}
		if !*as.Passed {
			a.rep.Result = json.RawMessage(r.secrets.redact(string(d.Result)))
			return assessFailed{as.Evidence}
		}
	}
	a.rep.Result = json.RawMessage(r.secrets.redact(string(d.Result)))
	if st.SaveAs != "" {
		a.rep.SaveAs = st.SaveAs
		return r.keepExtracted(ctx, map[string]json.RawMessage{st.SaveAs: a.rep.Result})
	}
	return nil
}

// assessFailed is an assessment that did not pass; act fails the step with it.
type assessFailed struct{ evidence string }

func (e assessFailed) Error() string { return "assessment failed: " + e.evidence }

// maxExperience bounds one experience's length.
const maxExperience = 300

// SafeExperience applies the rules of safeExperience for an app at origin
// (scheme://host): what an exploration learned is kept, and shown to later
// jobs, on the same terms as a scenario's.
func SafeExperience(e, origin string) bool {
	return safeExperience(e, func(u *url.URL) bool { return strings.EqualFold(originOf(u), origin) })
}

// learn keeps new experiences, de-duplicated, filtered and capped.
func (r *run) learn(exps []string) {
	for _, e := range exps {
		e = strings.TrimSpace(r.secrets.redact(e))
		if !r.safeExperience(e) {
			r.Log.Warn("experience refused: untrusted content (instructions, foreign URLs or too long)", "len", len(e))
			continue
		}
		dup := false
		for _, have := range append(append([]string{}, r.in.Experiences...), r.learned...) {
			if strings.EqualFold(have, e) {
				dup = true
				break
			}
		}
		if !dup && len(r.learned) < r.limits.ExperiencesCap {
			r.learned = append(r.learned, e)
		}
	}
}

// keepExtracted stores values the model extracted and makes them available
// to later steps as {{name}}.
func (r *run) keepExtracted(ctx context.Context, vals map[string]json.RawMessage) error {
	for k, v := range vals {
		if !placeholderName(k) || !json.Valid(v) {
			continue
		}
		v = json.RawMessage(r.secrets.redact(string(v)))
		r.extracted[k] = v
		r.setVar(k, v)
		if err := r.persist(func() error { return r.Recorder.Extracted(ctx, k, v) }); err != nil {
			return fmt.Errorf("record extracted %s: %w", k, err)
		}
	}
	return nil
}

// setVar makes an extracted value available as {{name}}, and the fields of
// an object as {{name.field}}.
func (r *run) setVar(name string, v json.RawMessage) {
	r.vars[name] = plain(v)
	var obj map[string]json.RawMessage
	if strings.Count(name, ".") < 3 && json.Unmarshal(v, &obj) == nil {
		for k, fv := range obj {
			if placeholderName(k) {
				r.setVar(name+"."+k, fv)
			}
		}
	}
}

// representation is the page as the model is shown it: the one the last
// batch left (its delta names that representation's refs), else a new one.
func (r *run) representation(ctx context.Context) (browser.Snapshot, error) {
	if r.nextView != nil {
		snap := *r.nextView
		r.nextView = nil
		return snap, nil
	}
	r.catchUp(ctx)
	t := time.Now()
	snap, err := r.Page.Snapshot(ctx, r.snapshotOptions())
	r.timing.Browser += time.Since(t)
	return snap, err
}

// see makes snap the representation the model holds.
func (a *agentStep) see(r *run, snap browser.Snapshot) {
	a.snap = &snap
	a.refs, a.full = snap.Refs, r.secrets.redact(snap.Full)
}

func (r *run) snapshotOptions() browser.SnapshotOptions {
	return browser.SnapshotOptions{Budget: r.limits.SnapshotBudget, FullPage: r.sc.Options.FullPage}
}
