package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
)

// rebuild restores the page a checkpoint was taken on. Cookies and storage
// survive in the checkpoint, but in-page state (a filled field, a ticked
// box, an open menu) does not: it is rebuilt by loading the checkpoint's
// document again and replaying, in order, the commands the completed steps
// ran on it. Replayed commands are data from the report and manifest (no
// model call, no charge); targets are the robust locators recorded when
// they ran, never the refs of a representation that no longer exists.
func (r *run) rebuild(ctx context.Context, cp *Checkpoint) error {
	doc := cp.Document
	if doc.URL == "" {
		// A checkpoint without a document (it could not be read): its URL
		// is the best there is.
		return r.Page.Navigate(ctx, cp.URL)
	}
	replay, err := r.replayable(doc.ID)
	if err != nil {
		return err
	}
	if err := r.Page.Navigate(ctx, doc.URL); err != nil {
		return err
	}
	now, err := r.Page.Document(ctx)
	if err != nil {
		return err
	}
	if !cp.RestoreStorage() {
		r.freshDoc = now.ID
	}
	for _, rc := range replay {
		start := time.Now()
		real := rc.cmd
		real.Value = r.secrets.fill(r.expand(rc.cmd.Value))
		// The element was there when the step ran: a replay waits for it
		// as long as a navigation waits for its page, so that a worker
		// resuming on a busy machine does not fail a job a quicker one
		// finishes.
		out := r.Page.Execute(ctx, real, browser.ExecOptions{Timeout: browser.NavigationTimeout})
		r.Page.Settle(ctx, browser.SettleOptions{Since: start, StartURL: r.Page.URL()})
		// A verification is replayed as a wait for the state it saw; only an
		// action that cannot be done again means the page was not rebuilt.
		if out.Err != nil && !rc.cmd.IsVerify() {
			return fmt.Errorf("could not rebuild the page: replaying step %d (%s %s) failed: %s",
				rc.step+1, rc.cmd.Describe(), rc.cmd.Target, cleanError(out.Err))
		}
		rc.report.Document = now.ID
	}
	r.Log.Info("page rebuilt for resume", "url", r.secrets.redact(doc.URL), "replayed", len(replay),
		"fresh", !cp.RestoreStorage())
	return nil
}

// replayCommand is one recorded command to run again.
type replayCommand struct {
	step   int
	cmd    browser.Command
	report *CommandReport
}

// errNotReplayable means a recorded command has no target that survives
// its representation (a ref with no fingerprint).
var errNotReplayable = errors.New("a command of a completed step cannot be replayed")

// replayable lists the successful commands of the completed steps that ran
// on document docID, with the targets to replay them by: the fingerprint's
// robust locator for a command that targeted an element.
func (r *run) replayable(docID string) ([]replayCommand, error) {
	var out []replayCommand
	for si := range r.steps {
		rep := &r.steps[si]
		ok := 0 // manifest entries are the successful commands, in order
		for ci := range rep.Commands {
			c := &rep.Commands[ci]
			if !c.OK || c.Command.Action == actionRead { // reads (extract_data) change nothing and have no manifest entry
				continue
			}
			entry := ManifestEntry{Command: c.Command}
			if ok < len(rep.Manifest) {
				entry = rep.Manifest[ok]
			}
			ok++
			if c.Document != docID {
				continue
			}
			cmd := c.Command
			if entry.Element != nil && !entry.Element.Locator.IsZero() {
				cmd.Target = entry.Element.Locator
			} else if cmd.Target.Ref != "" {
				return nil, fmt.Errorf("%w: step %d's %s on %s has no recorded locator", errNotReplayable,
					rep.Index+1, cmd.Describe(), cmd.Target)
			}
			out = append(out, replayCommand{step: rep.Index, cmd: cmd, report: c})
		}
	}
	return out, nil
}
