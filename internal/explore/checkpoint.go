package explore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// Checkpoint is what a later attempt of the exploration resumes from: the
// map so far, the trace, the findings already reported (so none is
// reported twice) and the page it was on.
type Checkpoint struct {
	URL          string                       `json:"url"`
	StorageState []byte                       `json:"storage_state,omitempty"` // the recorder seals it
	StartURL     string                       `json:"start_url"`
	Prefix       []orchestrator.ManifestEntry `json:"prefix,omitempty"`
	States       []*stateNode                 `json:"states"`
	Current      string                       `json:"current"`
	CurPath      []orchestrator.ManifestEntry `json:"cur_path"`
	Transitions  []transition                 `json:"transitions,omitempty"`
	Exercised    []string                     `json:"exercised,omitempty"`
	NavTries     map[string]int               `json:"nav_tries,omitempty"`
	Tried        []string                     `json:"tried,omitempty"`
	Probed       map[string]int               `json:"probed,omitempty"`
	PageDone     []string                     `json:"page_done,omitempty"`
	LinksChecked []string                     `json:"links_checked,omitempty"`
	LinkCount    int                          `json:"link_count"`
	Trace        []orchestrator.ManifestEntry `json:"trace"`
	Landed       []string                     `json:"landed"`
	On           []string                     `json:"on,omitempty"`
	Shown        map[int]string               `json:"shown,omitempty"`
	Findings     []Finding                    `json:"findings"`
	Rejected     []Claim                      `json:"rejected,omitempty"`
	Actions      int                          `json:"actions"`
	Calls        int                          `json:"calls"`
	Iterations   int                          `json:"iterations"`
	Usage        llm.Usage                    `json:"usage"`
	ModelDone    bool                         `json:"model_done"`
	GoalMet      bool                         `json:"goal_met"`
	BudgetOut    bool                         `json:"budget_out"`
	Note         string                       `json:"note,omitempty"`
	Learned      []string                     `json:"learned,omitempty"`
	Elapsed      time.Duration                `json:"elapsed_ns"`
}

// checkpoint stores progress after a batch.
func (r *run) checkpoint(ctx context.Context) error {
	if r.cur == nil {
		return nil
	}
	cp := Checkpoint{URL: r.Page.URL(), StartURL: r.startURL, Prefix: r.prefix, Current: r.cur.ID, CurPath: r.curPath,
		Transitions: r.trans, NavTries: r.navTries, LinkCount: r.linkCount, Trace: r.trace, Landed: r.landed, On: r.on, Shown: r.shown, Findings: r.findings,
		Rejected: r.rejected, Actions: r.actions, Calls: r.calls, Iterations: r.iters, Usage: r.usage,
		ModelDone: r.modelDone, GoalMet: r.goalMet, BudgetOut: r.budgetOut, Note: r.note, Learned: r.learned,
		Elapsed: r.elapsed()}
	for _, id := range r.order {
		cp.States = append(cp.States, r.states[id])
	}
	for k := range r.exercised {
		cp.Exercised = append(cp.Exercised, k)
	}
	for k := range r.linksDone {
		cp.LinksChecked = append(cp.LinksChecked, k)
	}
	cp.Tried, cp.PageDone, cp.Probed = setList(r.tried), setList(r.pageDone), r.probed
	if st, err := r.Page.StorageState(); err == nil {
		cp.StorageState = st
	}
	if err := r.Recorder.Progress(ctx, cp); err != nil {
		return fmt.Errorf("%w: save checkpoint: %w", errRecorder, err)
	}
	return nil
}

// restore takes up a checkpoint's progress.
func (r *run) restore(cp *Checkpoint) {
	r.startURL, r.prefix, r.trans, r.linkCount = cp.StartURL, cp.Prefix, cp.Transitions, cp.LinkCount
	r.trace, r.landed, r.findings, r.rejected = cp.Trace, cp.Landed, cp.Findings, cp.Rejected
	r.on = cp.On
	if cp.Shown != nil {
		r.shown = cp.Shown
	}
	r.actions, r.calls, r.iters, r.usage = cp.Actions, cp.Calls, cp.Iterations, cp.Usage
	r.modelDone, r.goalMet, r.budgetOut, r.note, r.learned = cp.ModelDone, cp.GoalMet, cp.BudgetOut, cp.Note, cp.Learned
	r.earlier = cp.Elapsed
	if cp.NavTries != nil {
		r.navTries = cp.NavTries
	}
	if cp.Probed != nil {
		r.probed = cp.Probed
	}
	for _, k := range cp.Tried {
		r.tried[k] = true
	}
	for _, k := range cp.PageDone {
		r.pageDone[k] = true
	}
	for _, st := range cp.States {
		r.states[st.ID] = st
		r.order = append(r.order, st.ID)
	}
	for _, k := range cp.Exercised {
		r.exercised[k] = true
	}
	for _, k := range cp.LinksChecked {
		r.linksDone[k] = true
	}
	for i, f := range r.findings {
		r.bySig[f.Signature] = i
	}
	// The page is read again on arrival; its state continues the path.
	if st := r.states[cp.Current]; st != nil {
		r.cur, r.curPath = st, cp.CurPath
	}
}

// setList is a set's members, sorted.
func setList(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}
