package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/webpilot/webpilot/browser"
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
// to settle, computes the state delta and records history.
func (r *run) batch(ctx context.Context, rep *StepReport, iter int, cmds []browser.Command) batchResult {
	res := batchResult{failed: -1}
	t := time.Now()
	before, _ := r.Page.CaptureState(600)
	startURL := r.Page.URL()
	r.timing.Browser += time.Since(t)

	batchStart := time.Now()
	var events []Event
	for i, shown := range cmds {
		real := shown
		real.Value = r.secrets.fill(r.expand(shown.Value))
		td := time.Now()
		doc, _ := r.Page.Document(ctx) // which document the command changes, for an exact resume
		r.timing.Browser += time.Since(td)
		out := r.Page.Execute(ctx, real, browser.ExecOptions{Fingerprint: true})
		r.timing.Browser += out.Duration
		cr := CommandReport{Command: shown, OK: out.Err == nil, Duration: out.Duration, Document: doc.ID}
		ev := Event{Step: rep.Index, Iteration: iter, Kind: "command", Action: shown.Describe(), Target: shown.Target.String(),
			OK: out.Err == nil, Duration: out.Duration}
		if shown.IsVerify() {
			ev.Kind = "verification"
		}
		if out.Err != nil {
			cr.Error = r.secrets.redact(cleanError(out.Err))
			ev.Error = cr.Error
		} else {
			cr.Locator = locatorCode(shown, out.Element)
			rep.Manifest = append(rep.Manifest, ManifestEntry{Command: shown, Element: out.Element})
		}
		rep.Commands = append(rep.Commands, cr)
		events = append(events, ev)
		if out.Err != nil {
			res.failed = i
			res.err = fmt.Sprintf("command %d (%s %s) failed: %s", i+1, shown.Describe(), shown.Target, cr.Error)
			break
		}
		res.completed++
	}

	res.settle = r.Page.Settle(ctx, browser.SettleOptions{Since: batchStart, StartURL: startURL})
	r.timing.Settle += res.settle.Duration
	rep.Settle = append(rep.Settle, res.settle)

	t = time.Now()
	after, err := r.Page.CaptureState(600)
	r.timing.Browser += time.Since(t)
	if err == nil {
		res.delta = r.redactDelta(browser.Diff(before, after, 10))
		rep.Delta = &res.delta
	}
	if len(events) > 0 {
		obs, _ := json.Marshal(map[string]any{"delta": res.delta, "settle": res.settle})
		events[len(events)-1].Observation = obs
	}
	r.remember(events)
	if err := r.persist(func() error { return r.Recorder.History(ctx, events) }); err != nil {
		r.Log.Warn("history not recorded", "err", err)
	}
	return res
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
