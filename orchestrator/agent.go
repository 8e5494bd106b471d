package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/webpilot/webpilot/browser"
	"github.com/webpilot/webpilot/llm"
	"github.com/webpilot/webpilot/scenario"
)

// agent runs the observe-decide-act-settle-record loop for one step. It
// returns an error only for what must end the whole run (budget, cancel,
// a superseded attempt); a step that cannot be done is reported as failed.
func (r *run) agent(ctx context.Context, rep *StepReport, st scenario.Step) error {
	goal := r.expand(st.Text)
	var warnings []string
	var delta *browser.Delta
	failedBefore := map[string]int{}
	for iter := 1; iter <= r.limits.MaxIterationsPerStep; iter++ {
		if r.iters >= r.limits.MaxTotalIterations {
			rep.Status, rep.Error = StepFailed, fmt.Sprintf("guardrail: the job reached its limit of %d agent iterations", r.limits.MaxTotalIterations)
			return nil
		}
		if r.cancelled() {
			return errCancelled
		}
		if ctx.Err() != nil {
			rep.Status, rep.Error = StepFailed, "step timed out"
			return nil
		}
		r.iters++
		rep.Iterations = iter

		t := time.Now()
		snap, err := r.Page.Snapshot(ctx, r.limits.SnapshotBudget)
		r.timing.Browser += time.Since(t)
		if err != nil {
			rep.Status, rep.Error = StepFailed, "could not read the page: "+cleanError(err)
			return nil
		}
		msgs := r.prompt(rep.Index, goal, snap, delta, warnings)
		warnings = nil

		t = time.Now()
		reply, err := r.Model.Chat(ctx, llm.Request{Messages: msgs, JSON: true, MaxTokens: 2000})
		r.timing.Model += time.Since(t)
		if err != nil {
			rep.Status, rep.Error = StepFailed, "the model could not be reached: "+cleanError(err)
			return nil
		}
		r.calls++
		var spent, hold int64
		if err := r.persist(func() error {
			var uerr error
			spent, hold, uerr = r.Recorder.Usage(ctx, Call{Seq: r.calls, Model: reply.Model, Usage: reply.Usage})
			return uerr
		}); err != nil {
			return fmt.Errorf("record usage: %w", err)
		}
		rep.Usage = addUsage(rep.Usage, reply.Usage)
		overBudget := hold > 0 && spent >= hold

		d, err := parseDecision(reply.Text)
		if err != nil {
			warnings = append(warnings, "your previous reply could not be used: "+err.Error()+". Answer with one JSON object following the schema.")
			if overBudget {
				return errBudget
			}
			continue
		}
		if d.Note != "" {
			r.note = d.Note
		}
		r.learn(d.Experiences)
		if err := r.keepExtracted(ctx, d.Extracted); err != nil {
			return err
		}
		if problems := checkCommands(d.Commands, snap.Refs, r.limits.MaxCommandsPerBatch); len(problems) > 0 {
			warnings = append(warnings, "nothing was executed: "+strings.Join(problems, "; "))
			if overBudget {
				return errBudget
			}
			continue
		}
		failed := false
		if len(d.Commands) > 0 {
			b := r.batch(ctx, rep, iter, d.Commands)
			delta = &b.delta
			if b.failed >= 0 {
				failed = true
				warnings = append(warnings, fmt.Sprintf("%s; %d of %d commands completed", b.err, b.completed, len(d.Commands)))
				key, _ := json.Marshal(d.Commands[b.failed])
				failedBefore[string(key)]++
				if failedBefore[string(key)] >= 2 {
					warnings = append(warnings, fmt.Sprintf("the same command (%s %s) has now failed %d times: do something different",
						d.Commands[b.failed].Describe(), d.Commands[b.failed].Target, failedBefore[string(key)]))
				}
			}
		}
		switch d.Status {
		case "complete":
			if !failed {
				rep.Status = StepPassed
				return nil
			}
			warnings = append(warnings, "you said the step is complete, but a command failed, so it is not")
		case "stuck", "infeasible":
			rep.Status, rep.Error = StepFailed, d.Status+": "+r.secrets.redact(d.Reasoning)
			return nil
		}
		if overBudget {
			return errBudget
		}
	}
	rep.Status, rep.Error = StepFailed, fmt.Sprintf("guardrail: the step was not complete after %d iterations", r.limits.MaxIterationsPerStep)
	return nil
}

// learn keeps new experiences, de-duplicated and capped.
func (r *run) learn(exps []string) {
	for _, e := range exps {
		e = strings.TrimSpace(r.secrets.redact(e))
		if e == "" || len(e) > 300 {
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
		if k == "" || !json.Valid(v) {
			continue
		}
		v = json.RawMessage(r.secrets.redact(string(v)))
		r.extracted[k] = v
		r.vars[k] = plain(v)
		if err := r.persist(func() error { return r.Recorder.Extracted(ctx, k, v) }); err != nil {
			return fmt.Errorf("record extracted %s: %w", k, err)
		}
	}
	return nil
}
