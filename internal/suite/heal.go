package suite

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/aymanbagabas/go-udiff"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// RepairedTest is how one test of a project came out of a repair.
type RepairedTest struct {
	ID      string               `json:"id"`
	File    string               `json:"file"`
	Title   string               `json:"title"`
	Verdict orchestrator.Verdict `json:"verdict"`
	// Reason says why it was healed, refused or left failing.
	Reason string `json:"reason,omitempty"`
	// Evidence is the failing call from the trace of the run that failed.
	Evidence      *TraceAction `json:"evidence,omitempty"`
	ConsoleErrors []string     `json:"console_errors,omitempty"`
	// ModelCalls and ModelCreditsMicro are what asking the agent about
	// this test's failures cost (each call charged to the job).
	ModelCalls        int   `json:"model_calls,omitempty"`
	ModelCreditsMicro int64 `json:"model_credits_micro,omitempty"`
}

// Change is one literal a repair rewrote, where the locator is defined.
type Change struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Method   string   `json:"method"`
	Selector string   `json:"selector"`
	Old      string   `json:"old"`
	New      string   `json:"new"`
	Tests    []string `json:"tests"` // the tests it healed
	// Agent says the element came from the agent (no run recorded it);
	// the change was kept only because the tests it heals then passed.
	Agent bool `json:"agent,omitempty"`
}

// RepairReport is what a repair of a project did.
type RepairReport struct {
	Tests   []RepairedTest `json:"tests"`
	Changes []Change       `json:"changes,omitempty"`
	// Errors are what kept a file's run from its end (its time budget, a
	// limit, a file that does not load); the rest of the repair went on.
	Errors []string `json:"errors,omitempty"`
	// Diff is one unified diff over the customer's files (git apply takes
	// it); empty when nothing was healed.
	Diff string `json:"diff,omitempty"`
	// Verified says the patched project was run in the sandbox and every
	// healed test passed with no test that passed before failing.
	Verified bool `json:"verified"`
	// Patched is the project with the patch applied (nil: nothing healed).
	Patched *Project `json:"-"`
}

// ProjectRepairResult is a project_repair job's result: the repair of
// one version of a project, and the version it proposed.
type ProjectRepairResult struct {
	Project string               `json:"project"`
	Version string               `json:"version"`
	Repair  RepairReport         `json:"report"`
	Verdict orchestrator.Verdict `json:"verdict"`
	// Proposed is the verified patched project's version, when one was.
	Proposed string `json:"proposed,omitempty"`
	Accepted bool   `json:"accepted,omitempty"`
	// BrowserSeconds is how long the repair held the sandbox's browser and
	// runner, all its runs together, and CreditsMicro what that was charged.
	BrowserSeconds float64 `json:"browser_seconds"`
	CreditsMicro   int64   `json:"credits_micro"`
	// ModelCalls and ModelCreditsMicro are the questions the agent was
	// asked about the tests' failures, every file's together, and their
	// charge (apart from CreditsMicro).
	ModelCalls        int   `json:"model_calls,omitempty"`
	ModelCreditsMicro int64 `json:"model_credits_micro,omitempty"`
	// Files is how many files' repairs, each on its own, the repair merged
	// (0: it repaired the project in one).
	Files int `json:"files,omitempty"`
}

// maxRepairRounds bounds the runs of one repair: a healed step can reveal
// the next drifted locator of the same test.
const maxRepairRounds = 4

// trial is one run of a repair: every test's outcome with its evidence,
// and the page as each failing test's trace last saw it.
type trial struct {
	tests map[string]TestOutcome
	dom   map[string][]SnapshotElement
	// errors are what kept the run from its end (its time budget).
	errors []string
}

func (r ProjectRunner) evidenceRun(ctx context.Context, p Project, o RunOptions) (trial, error) {
	o.Trace, o.List = true, false
	rep, err := r.Run(ctx, p, o)
	if rep.Dir != "" {
		defer os.RemoveAll(rep.Dir)
	}
	if err != nil {
		return trial{}, err
	}
	out := trial{tests: map[string]TestOutcome{}, dom: map[string][]SnapshotElement{}}
	if rep.NotRun > 0 {
		for _, e := range rep.Errors {
			if len(o.Files) > 0 {
				e = strings.Join(o.Files, ", ") + ": " + e
			}
			out.errors = append(out.errors, e)
		}
	}
	for _, t := range rep.Tests {
		_ = t.Evidence()
		if t.Status == StatusFailed && t.Trace != "" {
			call := ""
			if t.Failure != nil {
				call = t.Failure.callID
			}
			if dom, err := FailureDOM(t.RunDir, t.Trace, call); err == nil {
				out.dom[t.ID] = dom
			}
		}
		out.tests[t.ID] = t
	}
	if len(rep.Tests) == 0 && len(rep.Errors) > 0 {
		return out, fmt.Errorf("the project did not load: %s", strings.Join(rep.Errors, "; "))
	}
	return out, nil
}

// evidence is a repair's first run. With the project's listing, each test
// file runs on its own, in its own sandbox with its own time budget (two at
// a time): a file whose tests outlast their budget, or that cannot run,
// leaves its unfinished tests not run and says why in errs, and the rest
// of the repair goes on. Without it, the project runs once.
func (r ProjectRunner) evidence(ctx context.Context, p Project, o RunOptions) (trial, []string, error) {
	files := map[string][]TestOutcome{}
	var order []string
	for _, t := range o.Listing {
		if len(o.Files) > 0 && !slices.Contains(o.Files, t.File) {
			continue
		}
		if files[t.File] == nil {
			order = append(order, t.File)
		}
		files[t.File] = append(files[t.File], t)
	}
	if len(order) < 2 || len(o.Only) > 0 {
		if budget := r.budgetOf(o.Listing, o.Files, o.Ceiling); budget > 0 && len(o.Only) == 0 {
			o.Wall = budget
		}
		tr, err := r.evidenceRun(ctx, p, o)
		return tr, tr.errors, err
	}
	out := trial{tests: map[string]TestOutcome{}, dom: map[string][]SnapshotElement{}}
	var errs []string
	var mu sync.Mutex
	sem := make(chan struct{}, evidenceRuns)
	var wg sync.WaitGroup
	for _, f := range order {
		fo := o
		fo.Files, fo.Wall = []string{f}, Budget(files[f], r.Workers, r.ceiling(o.Ceiling))
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			tr, err := r.evidenceRun(ctx, p, fo)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				// The file's tests are left as the listing has them, not run.
				errs = append(errs, fmt.Sprintf("%s: %v", f, err))
				for _, t := range files[f] {
					t.Status = StatusNotRun
					out.tests[t.ID] = t
				}
				return
			}
			maps.Copy(out.tests, tr.tests)
			maps.Copy(out.dom, tr.dom)
			errs = append(errs, tr.errors...)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return trial{}, nil, err
	}
	slices.Sort(errs)
	return out, errs, nil
}

// evidenceRuns is how many of a repair's files run at once.
const evidenceRuns = 2

// budgetOf is the time budget of a run of files (all when none is
// named), from the listing, within the tenant's ceiling; 0 when the
// listing is not known.
func (r ProjectRunner) budgetOf(listing []TestOutcome, files []string, ceiling time.Duration) time.Duration {
	var tests []TestOutcome
	for _, t := range listing {
		if len(files) == 0 || slices.Contains(files, t.File) {
			tests = append(tests, t)
		}
	}
	if len(tests) == 0 {
		return 0
	}
	return Budget(tests, r.Workers, r.ceiling(ceiling))
}

// Repair runs the project, and heals the tests that failed because the app
// drifted: a locator that finds nothing any more, whose element is still
// on the page (found by its fingerprint from the last passing run, prints,
// keyed by test id), is rewritten where the project defines it, in its own
// idiom. A test whose element is there but says something else is an app
// regression, reported with its evidence and never healed; an asserted
// text is never changed. The patched project is run again in the sandbox:
// only a verified patch is reported.
func (r ProjectRunner) Repair(ctx context.Context, p Project, prints map[string][]TraceAction, o RunOptions) (RepairReport, error) {
	cur := p
	// The evidence: each test runs once, whatever the CI's retries (each
	// retry of a failing test waits out its timeouts again); confirm runs
	// again, once, the failures of tests the config retries that a second
	// run could tell from flakiness.
	eo := o
	eo.NoRetries, eo.TraceFailures = true, true
	first, fileErrs, err := r.evidence(ctx, cur, inPhase(eo, "evidence", nil))
	if err != nil {
		return RepairReport{}, err
	}
	if o.Baseline != nil {
		if prints, err = r.baselinePrints(ctx, cur, first, prints, inPhase(o, "baseline", nil)); err != nil {
			return RepairReport{}, err
		}
	}
	again, err := r.confirm(ctx, cur, &first, prints, inPhase(o, "confirm", nil))
	if err != nil {
		return RepairReport{}, err
	}
	before := map[string]TestStatus{} // each test's status before any patch
	for id, t := range first.tests {
		before[id] = t.Status
		if t.unreached() {
			before[id] = statusUnreached
		}
	}
	last := trial{tests: map[string]TestOutcome{}, dom: map[string][]SnapshotElement{}}
	last.adopt(first)
	tests := map[string]*RepairedTest{}
	var order []string
	for id, t := range first.tests {
		rt := &RepairedTest{ID: id, File: t.File, Title: t.Title(), Verdict: orchestrator.Verdict(t.Status)}
		switch t.Status {
		case StatusPassed:
			rt.Verdict = orchestrator.VerdictPassed
		case StatusFlaky:
			rt.Verdict = orchestrator.VerdictFlaky
			if again[id] {
				rt.Reason = "failed in the first run (" + failedAt(t) + "), then passed when run again with nothing changed: flaky, not drift"
			} else if t.Error != "" {
				rt.Reason = "failed, then passed on a retry in the same run: " + firstLine(t.Error)
			}
		case StatusFailed:
			rt.Evidence, rt.ConsoleErrors = t.Failure, t.ConsoleErrors
		case StatusNotRun:
			rt.Verdict, rt.Reason = orchestrator.VerdictNotRun, "its file's run did not reach it within its time budget"
		}
		tests[id] = rt
		order = append(order, id)
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := tests[order[i]], tests[order[j]]
		return a.File+a.Title < b.File+b.Title
	})
	var changes []Change
	onBaseline := map[string]bool{} // tests run on the baseline for their elements
	for id := range first.tests {
		onBaseline[id] = first.tests[id].Status == StatusFailed
	}
	for round := 0; round < maxRepairRounds; round++ {
		sites, err := projectSites(cur)
		if err != nil {
			return RepairReport{}, err
		}
		if o.Baseline != nil && round > 0 {
			// A test a failing one kept from running (a setup project's
			// dependent) that now runs and fails is run on the baseline
			// too, as the project was uploaded, for its elements.
			var now trial
			now.tests = map[string]TestOutcome{}
			for id, t := range last.tests {
				if t.Status == StatusFailed && !onBaseline[id] && len(prints[id]) == 0 {
					now.tests[id], onBaseline[id] = t, true
				}
			}
			if len(now.tests) > 0 {
				if prints, err = r.baselinePrints(ctx, p, now, prints, inPhase(o, "baseline", tests)); err != nil {
					return RepairReport{}, err
				}
			}
		}
		edits := map[string][]edit{}
		var healing []string
		quiet := quietSites(last.tests)
		for _, id := range order {
			t, rt := last.tests[id], tests[id]
			if t.Status != StatusFailed || rt.Verdict == orchestrator.VerdictRegression || rt.Verdict == orchestrator.VerdictUnrepairable || rt.Verdict == orchestrator.VerdictFlaky {
				// A test seen flaky before any patch fails by its nature
				// as often as not: its failure in a trial is no drift.
				continue
			}
			// An overlay that took the action is a flow change, not the
			// element's (which is there, behind it).
			ch, e, owhy, overlay := overlayEdit(cur, t, last.dom[id], quiet)
			var verdict orchestrator.Verdict
			var why string
			switch {
			case overlay && owhy != "":
				verdict, why = orchestrator.VerdictUnrepairable, owhy
			case overlay:
				rt.Reason = reasonStep + ch.New
			default:
				ch, e, verdict, why = diagnose(t, prints[id], last.dom[id], sites)
				rt.Reason = ""
			}
			if verdict != "" {
				rt.Verdict, rt.Reason = verdict, why
				if t.Failure != nil {
					rt.Evidence = t.Failure
				}
				continue
			}
			add := func(ch Change, e edit) {
				if !slices.ContainsFunc(edits[e.file], func(x edit) bool { return x.start == e.start }) {
					edits[e.file] = append(edits[e.file], e)
					ch.Tests = []string{rt.Title}
					changes = append(changes, ch)
					return
				}
				for i := range changes {
					if changes[i].File == ch.File && changes[i].Line == ch.Line && !slices.Contains(changes[i].Tests, rt.Title) {
						changes[i].Tests = append(changes[i].Tests, rt.Title)
					}
				}
			}
			add(ch, e)
			if !overlay {
				for _, h := range aheadHeals(t, prints[id], last.dom[id], sites) {
					add(h.ch, h.e)
				}
			}
			healing = append(healing, id)
		}
		if len(edits) == 0 {
			break
		}
		if cur, err = applyEdits(cur, edits); err != nil {
			return RepairReport{}, err
		}
		// Verify: the patched files run again, whole, with the files of
		// tests that were skipped only because a test they depend on (a
		// setup project, a serial neighbour) failed.
		var files []string
		var judged []string // the tests the trial is for
		for _, id := range order {
			if f := tests[id].File; slices.Contains(healing, id) || last.tests[id].Status == StatusFailed || collateral(id, before, prints) {
				judged = append(judged, id)
				if !slices.Contains(files, f) {
					files = append(files, f)
				}
			}
		}
		ro := o
		ro.Files, ro.NoRetries = files, true
		if budget := r.budgetOf(o.Listing, files, o.Ceiling); budget > 0 {
			ro.Wall = budget
		}
		if o.MergedLater {
			ro.Only = trialSites(cur, files, judged, first, before)
		}
		next, err := r.evidenceRun(ctx, cur, inPhase(ro, fmt.Sprintf("trial %d", round+1), tests))
		if err != nil {
			return RepairReport{}, err
		}
		last.adopt(next)
	}
	// The agent: a failing call that no run recorded the element of.
	if o.Agent != nil {
		agent, err := r.agentRounds(ctx, &cur, &last, tests, order, o)
		if err != nil {
			return RepairReport{}, err
		}
		changes = append(changes, agent...)
	}
	// Timing: an assertion that gave up on an element that is there may
	// be the app being slower than the test waits; a run that waits longer
	// tells that from the app being wrong.
	timed, err := r.timingTrial(ctx, &cur, &last, tests, order, inPhase(o, "timing", tests))
	if err != nil {
		return RepairReport{}, err
	}
	changes = append(changes, timed...)
	// Flow: a step whose element is gone may be a step the app no longer
	// asks for; a run without it tells.
	dropped, err := r.stepTrial(ctx, &cur, &last, tests, order, prints, inPhase(o, "flow", tests))
	if err != nil {
		return RepairReport{}, err
	}
	changes = append(changes, dropped...)
	rep := RepairReport{Verified: true, Errors: fileErrs}
	for _, id := range order {
		rt, t := tests[id], last.tests[id]
		if before[id] == StatusFailed {
			switch {
			case t.Status == StatusPassed && untouched(first.tests[id], rt.Title, changes):
				// It failed on every attempt of the first run and passed
				// later with nothing of it rewritten: the failure did not
				// repeat (a loaded machine, a slow app), and there is no
				// drift to heal nor a regression to report.
				rt.Verdict, rt.Reason = orchestrator.VerdictFlaky, "failed in the first run ("+failedAt(first.tests[id])+
					"), then passed in a later run with nothing it runs rewritten: flaky, not drift"
			case t.Status == StatusPassed && rt.Verdict == orchestrator.VerdictHealed:
				// Healed by a longer wait (its reason says so).
			case t.Status == StatusPassed && rt.Verdict != orchestrator.VerdictRegression:
				rt.Verdict, rt.Reason = orchestrator.VerdictHealed, cmpOr(rt.Reason, "passes with the rewritten locators")
			case rt.Verdict == orchestrator.VerdictFailed:
				rt.Verdict = orchestrator.VerdictUnrepairable
				if rt.Reason == "" {
					rt.Reason = "still fails after the repair"
				} else if step, ok := strings.CutPrefix(rt.Reason, reasonStep); ok {
					rt.Reason = "still fails with the step the app seemed to ask for: " + step
				}
			}
		} else if collateral(id, before, prints) && t.Status == StatusPassed && len(changes) > 0 {
			rt.Verdict, rt.Reason = orchestrator.VerdictHealed, "skipped while a test it depends on failed; runs and passes with the repair"
		} else if collateral(id, before, prints) && t.Status == StatusSkipped {
			// It cannot pass until the app is fixed: reported with the
			// evidence of the regression it waits on, never healed.
			if dep := blockedBy(rt, tests, order); dep != nil {
				rt.Verdict, rt.Evidence = orchestrator.VerdictRegression, dep.Evidence
				rt.Reason = fmt.Sprintf("did not run: it waits on %q, which fails on an app regression", dep.Title)
			}
		} else if collateral(id, before, prints) && t.Status == StatusFailed {
			// Never seen passing here: with the repair it runs, and fails
			// on its own; the patch broke nothing it was seen to do.
			if rt.Verdict != orchestrator.VerdictRegression && rt.Verdict != orchestrator.VerdictUnrepairable {
				rt.Verdict, rt.Reason = orchestrator.VerdictUnrepairable, "skipped while a test it depends on failed; with the repair it runs and fails: "+clip(firstLine(t.Error), 200)
			}
		} else if t.Status == StatusFailed && (rt.Verdict == orchestrator.VerdictFlaky || untouched(t, rt.Title, changes)) {
			// It was seen flaky, or it runs nothing the repair rewrote: its
			// failure in a trial (each test once there, whatever the
			// config's retries) is its own, and it vetoes no heal.
			rt.Verdict = orchestrator.VerdictFlaky
			rt.Reason = "passed before the repair and failed in a trial with nothing it runs rewritten: flaky, not broken by the patch (" +
				failedAt(t) + ")"
		} else if t.Status == StatusFailed {
			// A patch broke a test that passed: nothing is proposed.
			rep.Verified = false
			rt.Reason = "a rewritten locator broke it"
		}
		rep.Tests = append(rep.Tests, *rt)
	}
	healed := slices.ContainsFunc(rep.Tests, func(t RepairedTest) bool { return t.Verdict == orchestrator.VerdictHealed })
	if !healed || !rep.Verified {
		rep.Verified = false
		return rep, nil
	}
	// Only the changes that healed a test are kept in the patch.
	rep.Changes = changes
	rep.Diff = projectDiff(p, cur)
	rep.Patched = &cur
	return rep, nil
}

// inPhase tells o's progress what the run is for, with the repair's
// counts as they stand (tests: the repair's verdicts so far, or nil).
func inPhase(o RunOptions, phase string, tests map[string]*RepairedTest) RunOptions {
	report := o.OnProgress
	if report == nil {
		return o
	}
	var healed, flagged, left int
	for _, t := range tests {
		switch t.Verdict {
		case orchestrator.VerdictHealed:
			healed++
		case orchestrator.VerdictRegression:
			flagged++
		case orchestrator.VerdictFailed:
			left++
		}
	}
	o.OnProgress = func(p RunProgress) {
		p.Phase, p.Healed, p.Flagged, p.Left = phase, healed, flagged, left
		report(p)
	}
	return o
}

// Baseline is a deployment where a suite still passes (production, the
// last release) and how a run reaches it.
type Baseline struct {
	// BaseURL is every test's baseURL there ("": the project's own).
	BaseURL string
	// Origins remaps the origins the tests name, for the baseline.
	Origins map[string]string
	// Proxy is the baseline run's way out (its tunnel remaps Origins).
	Proxy *Proxy
}

// baselinePrints adds to prints (a copy) the elements the tests that
// failed in first, and that no passing run recorded, act on where the
// suite still passes: they are run once on the baseline, with traces.
// A test that fails there too keeps no print (its failure is not drift
// the baseline can tell).
func (r ProjectRunner) baselinePrints(ctx context.Context, p Project, first trial, prints map[string][]TraceAction, o RunOptions) (map[string][]TraceAction, error) {
	var only []TestSite
	var projects []string
	for _, t := range first.tests {
		if t.Status != StatusFailed || len(prints[t.ID]) > 0 {
			continue
		}
		only = append(only, TestSite{File: t.File, Line: t.Line})
		if t.Project != "" && !slices.Contains(projects, t.Project) {
			projects = append(projects, t.Project)
		}
	}
	if len(only) == 0 {
		return prints, nil
	}
	bo := RunOptions{Only: only, Projects: projects, BaseURL: o.Baseline.BaseURL, Origins: o.Baseline.Origins, Proxy: o.Baseline.Proxy,
		Env: o.Env, MaxRetries: 1, Wall: o.Wall, Ceiling: o.Ceiling, OnProgress: o.OnProgress}
	base, err := r.evidenceRun(ctx, p, bo)
	if err != nil {
		return nil, fmt.Errorf("the run on the baseline: %w", err)
	}
	out := maps.Clone(prints)
	if out == nil {
		out = map[string][]TraceAction{}
	}
	for id, t := range base.tests {
		if (t.Status == StatusPassed || t.Status == StatusFlaky) && len(t.Actions) > 0 && len(out[id]) == 0 && first.tests[id].Status == StatusFailed {
			out[id] = t.Actions
		}
	}
	return out, nil
}

// trialSites are the places of the tests a trial judges, when only they
// need to run: a file whose tests depend on one another (serial mode, or
// a test the failing run skipped for its neighbour) runs whole, as its
// tests' outcomes depend on the ones before them. Nil: every file whole.
func trialSites(p Project, files, judged []string, first trial, before map[string]TestStatus) []TestSite {
	var only []TestSite
	for _, f := range files {
		src, _ := p.File(f)
		whole := serialMode.Match(src.Content)
		var sites []TestSite
		for _, id := range judged {
			t := first.tests[id]
			if t.File != f {
				continue
			}
			whole = whole || before[id] == statusUnreached || before[id] == StatusSkipped
			if s := (TestSite{File: f, Line: t.Line}); t.Line > 0 && !slices.Contains(sites, s) {
				sites = append(sites, s)
			}
		}
		if whole || len(sites) == 0 {
			return nil
		}
		only = append(only, sites...)
	}
	return only
}

// serialMode finds a file whose tests run in order, each after the one
// before it passed: test.describe.serial, or configure({ mode: 'serial' }).
var serialMode = regexp.MustCompile(`describe\.serial|mode:\s*['"]serial['"]`)

// reasonStep starts the reason of a test healed by a step the app now
// asks for (until its verification says otherwise).
const reasonStep = "passes with the step the app now asks for: "

// blockedBy is the app regression a test skipped for another's failure
// waits on: a failing test of its own file (a serial neighbour) first,
// else of another file (a setup project); nil when none is a regression.
func blockedBy(rt *RepairedTest, tests map[string]*RepairedTest, order []string) *RepairedTest {
	var other *RepairedTest
	for _, id := range order {
		t := tests[id]
		if t == nil || t.ID == rt.ID || t.Verdict != orchestrator.VerdictRegression {
			continue
		}
		if t.File == rt.File {
			return t
		}
		if other == nil {
			other = t
		}
	}
	return other
}

// collateral reports whether a test was skipped in the failing run though
// it was meant to run (or passed as written): a test it depends on (a
// serial neighbour, a setup project) failed, not the test itself.
func collateral(id string, before map[string]TestStatus, prints map[string][]TraceAction) bool {
	return before[id] == statusUnreached || (before[id] == StatusSkipped && prints[id] != nil)
}

// statusUnreached is, before any patch, a test the run skipped though it
// did not skip itself: it was not reached.
const statusUnreached = "unreached"

// timingTrial gives each assertion or action that timed out on an
// element that is there, or on an entry not shown yet (a regression so
// far), a longer timeout, runs the tests again, and keeps the longer
// timeouts of the tests that then pass, verified by a run of exactly
// those; the others stay regressions. A test that then runs out of its
// own timeout gets a longer one too. cur and last move on to the kept
// patch.
func (r ProjectRunner) timingTrial(ctx context.Context, cur *Project, last *trial, tests map[string]*RepairedTest, order []string,
	o RunOptions) ([]Change, error) {
	type candidate struct {
		id     string
		e      edit // the call's longer timeout
		ch     Change
		test   *edit // the test's longer timeout, once it ran out of its own
		testCh Change
		whole  bool // e is the test's longer timeout (the call had none, or the test ran out during it)
		key    edit // e as the candidate began: what the first trials know it by
	}
	var cands []candidate
	for _, id := range order {
		t, rt := last.tests[id], tests[id]
		if t.Status != StatusFailed || rt.Verdict != orchestrator.VerdictRegression || t.Failure == nil {
			continue
		}
		e, ch, err := timingEdit(*cur, t.Failure, t.Error)
		if err != nil && t.Failure.Pending {
			// The call had no timeout of its own and waited out the
			// test's: the test's is the one made longer.
			if e, ch, err = testTimeoutEdit(*cur, t); err == nil {
				ch.Tests = []string{rt.Title}
				cands = append(cands, candidate{id: id, e: e, ch: ch, test: &e, testCh: ch, whole: true, key: e})
			}
			continue
		}
		if err != nil {
			continue
		}
		ch.Tests = []string{rt.Title}
		c := candidate{id: id, e: e, ch: ch, key: e}
		if outlasts(ch, t) {
			// The call's longer wait alone outlasts the test's time: the
			// test is given longer with it, not after a trial spent
			// running out (under a regression, every candidate's).
			if te, tch, err := testTimeoutLonger(*cur, t, t.TimeoutMS); err == nil {
				tch.Tests = []string{rt.Title}
				c.test, c.testCh = &te, tch
			}
		}
		cands = append(cands, c)
	}
	site := func(a, b candidate) bool { return a.e.file == b.e.file && a.e.start == b.e.start }
	// try runs the candidates' files, or only their own tests, with their
	// edits; it answers the patched project, the run, the tests that
	// passed, and whether any test that passed before broke.
	try := func(cs []candidate, only bool) (Project, trial, map[string]bool, bool, error) {
		var edits []edit
		var ids []string
		for _, c := range cs {
			edits = append(edits, c.e)
			if c.test != nil && !c.whole {
				edits = append(edits, *c.test)
			}
			ids = append(ids, c.id)
		}
		p, next, broke, err := r.retry(ctx, *cur, last, edits, ids, only, o)
		if err != nil {
			return Project{}, trial{}, nil, false, err
		}
		passed := map[string]bool{}
		for id, t := range next.tests {
			passed[id] = t.Status == StatusPassed
		}
		return p, next, passed, broke, nil
	}
	// longer gives a candidate that ran out of its test's timeout in the
	// run next a longer one; and one whose test, given longer, then ran
	// out of its call's own wait (the test's time had ended during the
	// call: a loaded machine, a slow start) a longer wait for the call
	// too. It reports whether it did.
	longer := func(c *candidate, next trial) bool {
		t, ok := next.tests[c.id]
		if !ok || t.Status != StatusFailed {
			return false
		}
		if c.test == nil {
			e, ch, err := testTimeoutEdit(*cur, t)
			if err != nil {
				return false
			}
			ch.Tests = []string{tests[c.id].Title}
			c.test, c.testCh = &e, ch
			return true
		}
		if !c.whole || t.Failure == nil {
			return false
		}
		f, ok := beforeEdit(*cur, *c.test, *t.Failure)
		if !ok {
			return false
		}
		e, ch, err := timingEdit(*cur, &f, t.Error)
		if err != nil {
			return false
		}
		ch.Tests = []string{tests[c.id].Title}
		c.e, c.ch, c.whole = e, ch, false
		return true
	}
	// First one test per call site: under a regression every candidate
	// waits its longer timeout in vain, and a call site shared by many
	// tests (a page object's assertion) answers for all of them. Only the
	// sites whose test then passes are tried on their whole files.
	if len(cands) > 1 {
		// Of one config project where it can: each project named runs
		// every test on the lines named.
		first := last.tests[cands[0].id].Project
		var reps []candidate
		for _, c := range cands {
			i := slices.IndexFunc(reps, func(x candidate) bool { return site(x, c) })
			switch {
			case i < 0:
				reps = append(reps, c)
			case last.tests[reps[i].id].Project != first && last.tests[c.id].Project == first:
				reps[i] = c
			}
		}
		good := map[edit]candidate{} // by call site, as it passed
		for tries, pending := 0, reps; tries < 2 && len(pending) > 0; tries++ {
			_, next, passed, _, err := try(pending, true)
			if err != nil {
				return nil, err
			}
			var again []candidate
			for _, c := range pending {
				switch {
				case passed[c.id]:
					good[c.key] = c
				case longer(&c, next):
					again = append(again, c)
				}
			}
			pending = again
		}
		var next []candidate
		for _, c := range cands {
			if rep, ok := good[c.key]; ok {
				if rep.id == c.id {
					c = rep // with the test's longer timeout, if it took one
				}
				next = append(next, c)
			}
		}
		cands = next
	}
	for tries := 0; len(cands) > 0 && tries < 4; tries++ {
		p, next, passed, broke, err := try(cands, false)
		if err != nil {
			return nil, err
		}
		var kept []candidate
		extended := false
		for _, c := range cands {
			switch {
			case passed[c.id]:
				kept = append(kept, c)
			case longer(&c, next):
				kept, extended = append(kept, c), true
			}
		}
		if len(kept) == len(cands) && !broke && !extended {
			*cur = p
			last.adopt(next)
			var out []Change
			for _, c := range kept {
				rt := tests[c.id]
				rt.Verdict = orchestrator.VerdictHealed
				rt.Reason = fmt.Sprintf("the app took longer than the test waited: %s now waits %s (it waited %s)", c.ch.Method, c.ch.New, c.ch.Old)
				if c.whole {
					rt.Reason = fmt.Sprintf("the app took longer than the test waited: the test may take %s (it had %s)", c.ch.New, c.ch.Old)
				}
				out = withTest(out, c.ch, rt.Title)
				if c.test != nil && !c.whole {
					rt.Reason += fmt.Sprintf(", and the test may take %s (it had %s)", c.testCh.New, c.testCh.Old)
					out = withTest(out, c.testCh, rt.Title)
				}
			}
			return out, nil
		}
		// Only the longer waits that healed (or ran out of the test's
		// time) are tried again.
		if broke || (len(kept) == len(cands) && !extended) {
			return nil, nil
		}
		cands = kept
	}
	return nil, nil
}

// retry applies edits to cur and runs again, each test once, the files of
// the tests ids, or with only just those tests (of their config projects);
// it answers the patched project, the run, and whether a test that had not
// failed before failed in it.
func (r ProjectRunner) retry(ctx context.Context, cur Project, last *trial, edits []edit, ids []string, only bool,
	o RunOptions) (Project, trial, bool, error) {
	byFile := map[string][]edit{}
	for _, e := range edits {
		if !slices.ContainsFunc(byFile[e.file], func(x edit) bool { return x.start == e.start }) {
			byFile[e.file] = append(byFile[e.file], e)
		}
	}
	ro := o
	ro.Files, ro.Only, ro.Projects, ro.NoRetries = nil, nil, nil, true
	for _, id := range ids {
		t := last.tests[id]
		if !slices.Contains(ro.Files, t.File) {
			ro.Files = append(ro.Files, t.File)
		}
		if s := (TestSite{t.File, t.Line}); only && !slices.Contains(ro.Only, s) {
			ro.Only = append(ro.Only, s)
		}
		if only && t.Project != "" && !slices.Contains(ro.Projects, t.Project) {
			ro.Projects = append(ro.Projects, t.Project)
		}
	}
	p, err := applyEdits(cur, byFile)
	if err != nil {
		return Project{}, trial{}, false, err
	}
	next, err := r.evidenceRun(ctx, p, ro)
	if err != nil {
		return Project{}, trial{}, false, err
	}
	broke := false
	for id, t := range next.tests {
		if t.Status == StatusFailed && last.tests[id].Status != StatusFailed {
			broke = true
		}
	}
	return p, next, broke, nil
}

// confirm runs once more, on their own, the tests that failed in the
// repair's first run and that their config retries (it says they may be
// flaky), but for a failure that is plainly drift (renamed): a test that
// then passes is flaky (its status in first says so), never healed, sent
// to the agent or reported a regression on one failure. It answers the
// tests that passed when run again. A test its config does not retry is
// taken at its one run, as the config asks; a later trial may still find
// its failure does not repeat.
func (r ProjectRunner) confirm(ctx context.Context, p Project, first *trial, prints map[string][]TraceAction, o RunOptions) (map[string]bool, error) {
	sites, err := projectSites(p)
	if err != nil {
		return nil, err
	}
	var ids, files []string
	for id, t := range first.tests {
		if t.Status == StatusFailed && t.Retries > 0 && !renamed(t, prints[id], first.dom[id], sites) {
			ids = append(ids, id)
			if !slices.Contains(files, t.File) {
				files = append(files, t.File)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	slices.Sort(ids)
	// A file whose tests run in order runs whole: its test alone is not
	// the test as it ran.
	only := !slices.ContainsFunc(files, func(f string) bool {
		src, _ := p.File(f)
		return serialMode.Match(src.Content)
	})
	if budget := r.budgetOf(o.Listing, files, o.Ceiling); budget > 0 {
		o.Wall = budget
	}
	_, next, _, err := r.retry(ctx, p, first, nil, ids, only, o)
	if err != nil {
		return nil, err
	}
	passed := map[string]bool{}
	for _, id := range ids {
		if t, ok := next.tests[id]; ok && (t.Status == StatusPassed || t.Status == StatusFlaky) {
			ft := first.tests[id]
			ft.Status = StatusFlaky
			first.tests[id], passed[id] = ft, true
		}
	}
	return passed, nil
}

// renamed reports whether a failing test's failure is plainly drift, which
// running it again would only repeat: its failing call names an element by
// a test id or id that is nowhere on the failure's page, while the element
// it found before (prints) is there carrying another value of it, and the
// call heals.
func renamed(t TestOutcome, prints []TraceAction, dom []SnapshotElement, sites []LocatorSite) bool {
	f := t.Failure
	if f == nil || len(dom) == 0 {
		return false
	}
	at := slices.IndexFunc(prints, func(a TraceAction) bool { return a.File == f.File && a.Line == f.Line && a.Column == f.Column })
	if at < 0 || prints[at].Selector != f.Selector {
		return false
	}
	if _, ok := renamedOn(prints[at], dom); !ok {
		return false
	}
	_, _, verdict, _ := diagnose(t, prints, dom, sites)
	return verdict == ""
}

// renamedOn is the element of dom most like a's (as a passing run
// recorded it) when a's locator names it by a test id or id that is
// nowhere on dom, and that element carries another value of it: the
// attribute was renamed on a page that is otherwise there.
func renamedOn(a TraceAction, dom []SnapshotElement) (SnapshotElement, bool) {
	attr, value, ok := staticSelector(a.Selector)
	if !ok || a.Target == nil || a.Target.Attributes[attr] != value {
		return SnapshotElement{}, false
	}
	if slices.ContainsFunc(dom, func(e SnapshotElement) bool { return e.Attributes[attr] == value }) {
		return SnapshotElement{}, false // the locator still finds it
	}
	cand, _, _, ok := relocateIn(*a.Target, dom)
	if !ok || cand.Attributes[attr] == "" {
		return SnapshotElement{}, false
	}
	return cand, true
}

// adopt takes the outcomes of a later run as the latest.
func (last *trial) adopt(next trial) {
	for id, t := range next.tests {
		last.tests[id], last.dom[id] = t, next.dom[id]
	}
}

// failedAt says where and how a test failed: its failing call's method
// and site when the trace names it, and the error's first line.
func failedAt(t TestOutcome) string {
	why := clip(firstLine(t.Error), 160)
	if f := t.Failure; f != nil && f.File != "" {
		return fmt.Sprintf("%s at %s:%d: %s", f.Method, f.File, f.Line, why)
	}
	return why
}

// untouched reports whether a test that failed in the first run (first)
// is known to run nothing the repair rewrote: no change names it, and
// none rewrote the call it failed at or a locator its calls used. A test
// the first run's trace says nothing of is never called untouched.
func untouched(first TestOutcome, title string, changes []Change) bool {
	if first.Failure == nil && len(first.Actions) == 0 {
		return false
	}
	calls := first.Actions
	if first.Failure != nil {
		calls = append(slices.Clip(calls), *first.Failure)
	}
	for _, ch := range changes {
		if slices.Contains(ch.Tests, title) {
			return false
		}
		// A run of the patched project names the new literal, one before
		// it the old.
		lit, neu := strings.Trim(ch.Old, "'\"`"), strings.Trim(ch.New, "'\"`")
		for _, a := range calls {
			if (a.File == ch.File && a.Line == ch.Line) || (lit != "" && strings.Contains(a.Selector, lit)) ||
				(neu != "" && strings.Contains(a.Selector, neu)) {
				return false
			}
		}
	}
	return true
}

// withTest adds ch to changes for the test titled title, or only the title
// to the change already made on ch's line.
func withTest(changes []Change, ch Change, title string) []Change {
	i := slices.IndexFunc(changes, func(x Change) bool { return x.File == ch.File && x.Line == ch.Line })
	if i < 0 {
		ch.Tests = []string{title}
		return append(changes, ch)
	}
	if !slices.Contains(changes[i].Tests, title) {
		changes[i].Tests = append(changes[i].Tests, title)
	}
	return changes
}

// edit replaces bytes [start, end) of a file.
type edit struct {
	file       string
	start, end int
	text       string
}

func applyEdits(p Project, edits map[string][]edit) (Project, error) {
	out := Project{Files: make([]File, len(p.Files))}
	copy(out.Files, p.Files)
	for i, f := range out.Files {
		es := edits[f.Path]
		if len(es) == 0 {
			continue
		}
		sort.Slice(es, func(a, b int) bool { return es[a].start > es[b].start })
		b := append([]byte(nil), f.Content...)
		for _, e := range es {
			if e.start < 0 || e.end > len(b) || e.start > e.end {
				return Project{}, fmt.Errorf("%s: an edit outside the file", f.Path)
			}
			b = append(b[:e.start], append([]byte(e.text), b[e.end:]...)...)
		}
		out.Files[i].Content = b
	}
	return out, nil
}

// projectDiff is one unified diff (a/ and b/ paths, as git apply takes it)
// over the files that differ.
func projectDiff(old, cur Project) string {
	var b strings.Builder
	for _, f := range cur.Files {
		o, _ := old.File(f.Path)
		if string(o.Content) == string(f.Content) {
			continue
		}
		d := udiff.Unified("a/"+f.Path, "b/"+f.Path, string(o.Content), string(f.Content))
		b.WriteString("diff --git a/" + f.Path + " b/" + f.Path + "\n" + d)
	}
	return b.String()
}

// sourceFile reports whether the runner would load p as code.
func sourceFile(p string) bool {
	for _, ext := range []string{".ts", ".js", ".mjs", ".cjs", ".mts", ".cts", ".tsx", ".jsx"} {
		if strings.HasSuffix(p, ext) && !strings.HasSuffix(p, ".d.ts") {
			return true
		}
	}
	return false
}

// projectSites are the locator-building calls of every source file.
func projectSites(p Project) ([]LocatorSite, error) {
	var out []LocatorSite
	for _, f := range p.Files {
		if !sourceFile(f.Path) || strings.HasPrefix(f.Path, "playwright.config") {
			continue
		}
		sites, err := FindLocatorSites(f.Path, f.Content)
		if err != nil {
			continue // a file the runner loaded may use syntax esbuild refuses: its locators are not healed
		}
		out = append(out, sites...)
	}
	return out, nil
}

// hasText is a selector's text filter (filter({ hasText: 'Honey' })).
var hasText = regexp.MustCompile(`internal:has-text="((?:[^"\\]|\\.)*)"`)

// filterText is the text a selector filters its elements by, if any.
func filterText(selector string) (string, bool) {
	m := hasText.FindStringSubmatch(selector)
	if m == nil {
		return "", false
	}
	return strings.ReplaceAll(m[1], `\"`, `"`), true
}

// received is an assertion's report of what it found.
var received = regexp.MustCompile(`(?m)^\s*Received(?: string| value| array| number)?:\s*(.+)$`)

// holdsOther reports whether an assertion's error says it found its
// elements holding something else (a count of 2, another text) rather
// than finding nothing.
func holdsOther(msg string) bool {
	m := received.FindStringSubmatch(msg)
	return m != nil && !strings.Contains(m[1], "element(s) not found") && !strings.Contains(m[1], "<element")
}

// notFound reports whether a runner error says the locator found nothing
// (as opposed to an element that is there with another value).
var notFound = regexp.MustCompile(`(?i)waiting for (?:get|locator|internal)|element\(s\) not found|to be visible|resolved to 0 elements|strict mode violation: .* resolved to 0`)

// diagnose says how a failing test's failure is healed (a change and its
// edit) or why it is not (a verdict and a reason). A regression found on
// another page than the call ran on when the test passed says so: it is
// the evidence a person reads first (a sign-in refused leaves the test on
// the login page).
func diagnose(t TestOutcome, passing []TraceAction, dom []SnapshotElement, sites []LocatorSite) (Change, edit, orchestrator.Verdict, string) {
	ch, e, verdict, why := diagnoseCall(t, passing, dom, sites)
	if f := t.Failure; verdict == orchestrator.VerdictRegression && f != nil {
		if was := urlAt(passing, f); was != "" && f.URL != "" && !samePage(f.URL, was) && !strings.Contains(why, f.URL) {
			why += fmt.Sprintf(" (the page was at %s; when the test passed, this call ran at %s)", f.URL, was)
		}
	}
	return ch, e, verdict, why
}

// diagnoseCall is diagnose, but for where the page was.
func diagnoseCall(t TestOutcome, passing []TraceAction, dom []SnapshotElement, sites []LocatorSite) (Change, edit, orchestrator.Verdict, string) {
	f := t.Failure
	if f != nil && f.Selector == "" && f.checksPage() {
		// Where the page is, or what it is called, is what the call
		// checks: the app went elsewhere (a longer wait is tried).
		return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the page is not where the test checks it is (%s at %s:%d; the page was at %s): %s",
			cmpOr(f.API, f.Method), f.File, f.Line, cmpOr(f.URL, "an unknown address"), firstLine(f.Error))
	}
	if f == nil || f.Selector == "" {
		return Change{}, edit{}, orchestrator.VerdictUnrepairable, "the failure is not on an element the trace names"
	}
	if f.Read {
		return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the test read the element (%s at %s:%d) and the value it got is not what it checks: %s",
			f.Method, f.File, f.Line, valueGot(t.Error))
	}
	if f.Target != nil {
		// The element was found and said something else: the app changed
		// what the test checks.
		return Change{}, edit{}, orchestrator.VerdictRegression, "the element is there but does not hold what the test checks: " + checked(t.Error, f.Error)
	}
	assertion := f.Method == "expect" || strings.HasPrefix(f.API, "expect")
	if assertion && holdsOther(t.Error+"\n"+f.Error) {
		// The elements are there (a count, a text, a value was received):
		// the app changed what the test checks, or was slower than it waits.
		return Change{}, edit{}, orchestrator.VerdictRegression, "the elements are there but do not hold what the test checks: " + checked(t.Error, f.Error)
	}
	// A call that never ended waited for its element until the test ran
	// out of time (a suite without an action timeout waits that way): it
	// is read as a locator that found nothing, as its own timeout would
	// have said.
	if !f.Pending && !notFound.MatchString(t.Error+" "+f.Error) {
		return Change{}, edit{}, orchestrator.VerdictUnrepairable, "the failure is not a missing element: " + firstLine(f.Error)
	}
	var old *SnapshotElement
	for i := range passing {
		a := passing[i]
		if a.File == f.File && a.Line == f.Line && a.Column == f.Column && a.Target != nil {
			old = a.Target
		}
	}
	if old == nil {
		for i := range passing {
			if a := passing[i]; a.Selector == f.Selector && a.Target != nil {
				old = a.Target
			}
		}
	}
	if old == nil {
		// A heal earlier on the line moved the call's column (a literal
		// rewritten longer or shorter): the one call of its method there.
		var on []*SnapshotElement
		for i := range passing {
			if a := passing[i]; a.File == f.File && a.Line == f.Line && a.Method == f.Method && a.Target != nil {
				on = append(on, a.Target)
			}
		}
		if len(on) == 1 {
			old = on[0]
		}
	}
	if old == nil {
		// No record of the element, but its locator's own words may name
		// what the test entered (a button "Delete Apples" after a fill of
		// "Apples"): shown nowhere, the app lost it, whatever the element.
		if v, at, ok := lostEntry(namedBy(f.Selector), t.Actions, f, dom); ok && len(dom) > 0 {
			return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the element the test needs is named for %q, which the test entered (%s:%d), and the page shows it nowhere: the app did not keep it",
				clip(v, 80), at.File, at.Line)
		}
		return Change{}, edit{}, orchestrator.VerdictUnrepairable, reasonNoRecord
	}
	if len(dom) == 0 {
		return Change{}, edit{}, orchestrator.VerdictUnrepairable, "the trace holds no picture of the page at the failure"
	}
	if v, at, ok := lostEntry(old.Text+"\n"+old.Attributes["aria-label"], t.Actions, f, dom); ok {
		// The element held what the test entered, and the page shows that
		// nowhere: the app did not keep the entry (or has not yet: a
		// longer wait is tried), and no other element is the one.
		return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the element the test needs held %q, which the test entered (%s:%d), and the page shows it nowhere: the app did not keep it",
			clip(v, 80), at.File, at.Line)
	}
	if ch, e, ok := ancestorIDHeal(f, *old, dom, sites); ok {
		return ch, e, "", ""
	}
	cand, top, why, ok := relocateIn(*old, dom)
	if !ok && top >= 0.95 {
		// The element is there as it was, more than once: which one the
		// locator meant is what changed, and nothing the app does.
		return Change{}, edit{}, orchestrator.VerdictUnrepairable, "the element is on the page as it was, but not alone: " + why
	}
	if !ok {
		return Change{}, edit{}, orchestrator.VerdictRegression, reasonGone + why
	}
	if !strings.Contains(f.Selector, "internal:") && !control(old) && old.Text != "" && !sameWords(old.Text, cand.Text) {
		// A CSS selector found content (a flash message, a status) and the
		// element most like it holds other words: the page is in another
		// state (an error where a success was), which no selector changes.
		return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the element the test waits for held %q; the one most like it on the page holds %q",
			clip(old.Text, 80), clip(cand.Text, 80))
	}
	return healAt(f, declaredAt(t, f), func(LocatorSite) SnapshotElement { return *old }, cand, sites, assertion)
}

// reasonNoRecord is why a failing call is not healed without a record of
// its element (a passing run, a baseline, the customer's traces) or the
// agent.
const reasonNoRecord = "no passing run recorded the element this call acted on"

// healAt rewrites, where the failing call's locator is defined, the
// literal that found old (as each site knew it) so that it finds cand:
// the change and its edit, or the verdict and why not.
//
// from is the line the failing test is declared at, when in the call's
// file (else 0): a literal between it and the call is the test's own.
func healAt(f *TraceAction, from int, old func(LocatorSite) SnapshotElement, cand SnapshotElement, sites []LocatorSite, assertion bool) (Change, edit, orchestrator.Verdict, string) {
	if text, ok := filterText(f.Selector); ok && !strings.Contains(strings.ToLower(cand.Text), strings.ToLower(text)) {
		// The test looks for an element holding a text (filter({ hasText }))
		// and the element most like the one it found before holds another:
		// the text is what the app no longer shows.
		return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("no element holds %q, which the test looks for", text)
	}
	// The last part of a chain with a call site of its own names the
	// element (getByRole('form').getByRole('button', …): the button); the
	// parts before it name its containers, which never take the element's
	// name, and parts no call writes (nth=, a filter) are passed over.
	parts := selectorParts(f.Selector)
	for i := len(parts) - 1; i >= 0; i-- {
		part := parts[i]
		// The literal written on the call's own line is the one it used
		// (two tests may each write page.fill('#password', …)); else the
		// first that makes the selector (a page object's, a helper's).
		var matching []LocatorSite
		for _, s := range sites {
			if s.Selector == part {
				matching = append(matching, s)
			}
		}
		if len(matching) == 0 {
			continue
		}
		// Else the nearest before it in the test's own body (const add =
		// page.getByRole(…) above a loop of add.click()): five tests may
		// each write the same literal, and the first is another test's.
		own := slices.IndexFunc(matching, func(s LocatorSite) bool { return s.File == f.File && s.Line == f.Line })
		if own < 0 && from > 0 {
			for i, s := range matching {
				if s.File == f.File && s.Line >= from && s.Line < f.Line && (own < 0 || s.Line > matching[own].Line) {
					own = i
				}
			}
		}
		if own > 0 {
			matching[0], matching[own] = matching[own], matching[0]
		}
		for _, s := range matching {
			lit, text, why := rewrite(s, old(s), cand, assertion)
			if lit == nil && why == errAsserted {
				// The element is there and its text is not what the test
				// checks: the app changed, not the test.
				checked := s.Arg
				if s.Name != nil {
					checked = *s.Name
				}
				return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the element is there but reads %q, not what the test checks (%s)",
					clip(cmpOr(cand.Attributes["aria-label"], cand.Text), 80), stringOf(s, checked))
			}
			if lit == nil {
				return Change{}, edit{}, orchestrator.VerdictUnrepairable, why
			}
			if text == stringOf(s, *lit) || !lit.Regex && text == quoteLike(*lit, lit.Value) {
				// The locator still names the element: it was there and
				// the call waited for something else (it was covered or
				// disabled until the test ran out of time).
				return Change{}, edit{}, orchestrator.VerdictUnrepairable, "the element is there as the locator names it; the call waited on it for something else: " + firstLine(f.Error)
			}
			ch := Change{File: s.File, Line: s.Line, Method: s.Method, Selector: part, Old: stringOf(s, *lit), New: text}
			return ch, edit{file: s.File, start: lit.Start, end: lit.End, text: text}, "", ""
		}
	}
	return Change{}, edit{}, orchestrator.VerdictUnrepairable, errNoSite.Error() + ": " + f.Selector
}

// declaredAt is the line test t is declared at when the call is in its
// file, else 0.
func declaredAt(t TestOutcome, f *TraceAction) int {
	if t.File != f.File || t.Line > f.Line {
		return 0
	}
	return t.Line
}

// namedWords is a selector's accessible name, text or label filter.
var namedWords = regexp.MustCompile(`(?:\[name|internal:has-text|internal:text|internal:label)="((?:[^"\\]|\\.)*)"`)

// namedBy is the words a selector finds its element by (a role's name, a
// text, a label), one per line.
func namedBy(selector string) string {
	var words []string
	for _, m := range namedWords.FindAllStringSubmatch(selector, -1) {
		words = append(words, strings.ReplaceAll(m[1], `\"`, `"`))
	}
	return strings.Join(words, "\n")
}

// lostEntry finds what the test entered before its failure (a fill, a
// type) that the element it needed held (its text and label, or the words
// its locator names it by), and the failure's page shows in no element:
// the entry and the call that made it.
func lostEntry(held string, actions []TraceAction, failure *TraceAction, dom []SnapshotElement) (string, TraceAction, bool) {
	held = strings.ToLower(held)
	for _, a := range actions {
		if a.Error != "" && a.File == failure.File && a.Line == failure.Line && a.Column == failure.Column {
			break // only what was entered before the failure
		}
		v := strings.ToLower(strings.TrimSpace(a.Typed))
		if len([]rune(v)) < 2 || !strings.Contains(held, v) || (a.Target != nil && a.Target.Attributes["type"] == "password") {
			continue
		}
		shown := slices.ContainsFunc(dom, func(e SnapshotElement) bool {
			return e.Tag != "input" && e.Tag != "textarea" &&
				(strings.Contains(strings.ToLower(e.Text), v) || strings.Contains(strings.ToLower(e.Attributes["aria-label"]), v))
		})
		if !shown {
			return strings.TrimSpace(a.Typed), a, true
		}
	}
	return "", TraceAction{}, false
}

// expected is a value check's report of what it wanted.
var expected = regexp.MustCompile(`(?m)^\s*Expected(?: string| substring| pattern| value| array| number)?:\s*(.+)$`)

// valueGot is a failed value check's expected and received values, else
// its first line.
func valueGot(msg string) string {
	exp := expected.FindStringSubmatch(msg)
	got := received.FindStringSubmatch(msg)
	if exp == nil || got == nil {
		return firstLine(msg)
	}
	return fmt.Sprintf("expected %s, received %s", clip(exp[1], 80), clip(got[1], 80))
}

// checked is what a failed check expected and received, from the test's
// error (the runner's words) or the call's, else the call's first line.
func checked(testErr, callErr string) string {
	for _, m := range []string{testErr, callErr} {
		if expected.MatchString(m) && received.MatchString(m) {
			return valueGot(m)
		}
	}
	return firstLine(cmpOr(callErr, testErr))
}

func stringOf(s LocatorSite, l Literal) string {
	if l.Regex {
		return "/" + l.Value + "/" + l.Flags
	}
	return l.Value
}

// relocateIn finds the element of dom most like old, by the same weighted
// similarity and thresholds as a live re-location, with the best score
// (0 when nothing is like it).
func relocateIn(old SnapshotElement, dom []SnapshotElement) (el SnapshotElement, top float64, why string, ok bool) {
	of := asFingerprint(old)
	type scored struct {
		el    SnapshotElement
		score float64
	}
	var all []scored
	for _, e := range dom {
		all = append(all, scored{e, browser.Similarity(of, asFingerprint(e))})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	if len(all) == 0 || all[0].score < browser.RelocateMinScore {
		return SnapshotElement{}, 0, "nothing on the page is like it", false
	}
	if len(all) > 1 && all[0].score-all[1].score < browser.RelocateMinMargin {
		return SnapshotElement{}, all[0].score, fmt.Sprintf("two elements are about as like it (%.2f, %.2f)", all[0].score, all[1].score), false
	}
	return all[0].el, all[0].score, "", true
}

// asFingerprint describes a snapshot element the way re-location compares.
func asFingerprint(e SnapshotElement) browser.Fingerprint {
	a := e.Attributes
	attrs := map[string]string{}
	for _, k := range []string{"id", "name", "type", "class", "href"} {
		if a[k] != "" {
			attrs[k] = a[k]
		}
	}
	name := cmpOr(a["aria-label"], a["label"])
	if name == "" && len(e.Text) <= 80 {
		name = e.Text
	}
	return browser.Fingerprint{Tag: e.Tag, Role: a["role"], Name: name, Label: a["label"], Placeholder: a["placeholder"],
		TestID: a["data-testid"], Alt: a["alt"], Title: a["title"], Text: e.Text, Tags: e.Path, Attributes: attrs}
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// rewrite writes a site's literal anew for the relocated element, in the
// site's idiom: a test id stays a test id, a role stays a role and name, a
// regular expression stays one (with its flags), a CSS id stays an id. In
// an assertion, a text that is the content the test checks (a getByText,
// a heading's or an alert's name) is never changed; a control's name or
// label is how the assertion finds it, and drifts as any locator does.
func rewrite(s LocatorSite, old, cand SnapshotElement, assertion bool) (*Literal, string, string) {
	name := cmpOr(cand.Attributes["aria-label"], cand.Attributes["label"], cand.Text)
	was := cmpOr(old.Attributes["aria-label"], old.Attributes["label"], old.Text)
	textual := func(l Literal, now string) (*Literal, string, string) {
		if assertion && checksContent(s) {
			return nil, "", errAsserted
		}
		if now == "" {
			return nil, "", "the element found has no text to name it by"
		}
		if l.Regex {
			re, err := regexp.Compile(jsRegex(l.Value, l.Flags))
			if err == nil && re.MatchString(now) {
				return nil, "", "the regular expression still matches the element; the drift is elsewhere"
			}
			return &l, regexLike(l, now), ""
		}
		return &l, quoteLike(l, keepAround(l.Value, was, now)), ""
	}
	switch s.Method {
	case "getByTestId":
		id := cand.Attributes["data-testid"]
		if id == "" || s.Arg.Regex {
			return nil, "", "the element found has no test id"
		}
		return &s.Arg, quoteLike(s.Arg, id), ""
	case "locator", "click", "dblclick", "fill", "type", "check", "uncheck", "selectOption", "hover", "press", "focus", "tap",
		"textContent", "innerText", "inputValue", "isVisible", "isHidden", "isChecked", "isEnabled", "getAttribute",
		"waitForSelector", "setInputFiles", "dispatchEvent", "$", "$$", "$eval", "$$eval":
		css := s.Arg.Value
		switch oldID, newID := old.Attributes["id"], cand.Attributes["id"]; {
		case oldID != "" && newID != "" && strings.Contains(css, "#"+oldID):
			return &s.Arg, quoteLike(s.Arg, replaceToken(css, "#"+oldID, "#"+newID)), ""
		case old.Attributes["data-testid"] != "" && cand.Attributes["data-testid"] != "" && strings.Contains(css, old.Attributes["data-testid"]):
			return &s.Arg, quoteLike(s.Arg, strings.ReplaceAll(css, old.Attributes["data-testid"], cand.Attributes["data-testid"])), ""
		}
		return nil, "", "the CSS names no id or test id that moved"
	case "getByRole":
		if s.Name == nil {
			return nil, "", "the role alone names the element; nothing to rewrite"
		}
		return textual(*s.Name, name)
	case "getByLabel":
		return textual(s.Arg, cmpOr(cand.Attributes["label"], cand.Attributes["aria-label"]))
	case "getByPlaceholder":
		return textual(s.Arg, cand.Attributes["placeholder"])
	case "getByText":
		return textual(s.Arg, cand.Text)
	case "getByAltText":
		return textual(s.Arg, cand.Attributes["alt"])
	case "getByTitle":
		return textual(s.Arg, cand.Attributes["title"])
	}
	return nil, "", "a locator of this kind is not rewritten"
}

// keepAround writes now as lit wrote was: what lit holds around the
// element's text as the page's markup holds it stays around the new text.
// A name copied from the accessibility tree holds what no snapshot of the
// markup shows, such as an icon font's glyph drawn by CSS (' Login',
// the button's markup reading "Login"); the new name keeps it (' Log
// in'), or the button is found by no name at all.
func keepAround(lit, was, now string) string {
	was = strings.Join(strings.Fields(was), " ")
	if was == "" {
		return now
	}
	i := strings.Index(strings.ToLower(lit), strings.ToLower(was))
	if i < 0 || len(strings.ToLower(lit)) != len(lit) {
		return now
	}
	return lit[:i] + now + lit[i+len(was):]
}

// controlTags are the elements a user acts on: their text names them.
var controlTags = map[string]bool{"a": true, "button": true, "input": true, "select": true, "textarea": true,
	"option": true, "label": true, "summary": true}

// control says el is something a user acts on rather than content shown.
func control(el *SnapshotElement) bool {
	_, role := el.Attributes["role"]
	return controlTags[el.Tag] || role && !contentRoles[el.Attributes["role"]]
}

// sameWords says the text now holds at least half the words was held
// (letters and digits; marks like × aside): the same content, reworded.
func sameWords(was, now string) bool {
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	old, cur := words(was), words(now)
	if len(old) == 0 {
		return true
	}
	shared := 0
	for _, w := range old {
		if slices.Contains(cur, w) {
			shared++
		}
	}
	return 2*shared >= len(old)
}

// contentRoles are the roles whose accessible name is their content (a
// heading's text, an alert's message): in an assertion that name is what
// the test checks, not how it finds a control.
var contentRoles = map[string]bool{"heading": true, "alert": true, "status": true, "log": true, "marquee": true,
	"timer": true, "paragraph": true, "cell": true, "gridcell": true, "columnheader": true, "rowheader": true,
	"row": true, "listitem": true, "note": true, "tooltip": true, "caption": true, "term": true, "definition": true,
	"blockquote": true, "code": true, "emphasis": true, "strong": true, "mark": true, "text": true}

// checksContent says a locator's text is the content an assertion on it
// checks (expect(page.getByText('Saved')).toBeVisible() checks that Saved
// is shown), not the name a control is found by
// (expect(page.getByRole('button', { name: 'Add' })).toBeVisible() checks
// that the button is there). Only a text matcher's own expected value
// (toHaveText('…')) is asserted otherwise, and no locator holds that.
func checksContent(s LocatorSite) bool {
	return s.Method == "getByText" || (s.Method == "getByRole" && contentRoles[s.Arg.Value])
}

// errAsserted is why a text a test asserts is never rewritten.
const errAsserted = "the assertion checks this text; it is never rewritten"

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// replaceToken replaces a CSS #id token only where it ends (#count must not
// rewrite #counter).
func replaceToken(css, old, new string) string {
	re := regexp.MustCompile(regexp.QuoteMeta(old) + `($|[^\w-])`)
	return re.ReplaceAllString(css, strings.ReplaceAll(new, "$", "$$")+"${1}")
}

// staticSelector reads a selector that names an element by an attribute
// that does not change with the page's state (a test id, an id): the
// attribute and its value. Others (a role and its name, a text) may name
// an element only in some states, and are not read.
func staticSelector(sel string) (attr, value string, ok bool) {
	if m := testIDSelector.FindStringSubmatch(sel); m != nil {
		return m[1], strings.ReplaceAll(strings.ReplaceAll(m[2], `\"`, `"`), `\\`, `\`), true
	}
	if m := idSelector.FindStringSubmatch(sel); m != nil {
		return "id", m[1], true
	}
	return "", "", false
}

// aheadHeal is one of aheadHeals: the change and its edit.
type aheadHeal struct {
	ch Change
	e  edit
}

var (
	testIDSelector = regexp.MustCompile(`^internal:testid=\[([\w-]+)="((?:[^"\\]|\\.)*)"s\]$`)
	idSelector     = regexp.MustCompile(`^#([A-Za-z][\w-]*)$`)
)

// aheadHeals are the heals of the calls a failing test makes after its
// failing one (as a passing run recorded them, prints) whose element is
// on the failure's page already and no longer carries the test id or id
// the call's locator names, while the element most like it carries
// another: the same drift, a few calls on, healed in the same trial
// instead of a trial each (a renamed field, then the renamed button
// beside it). A call whose locator still names something on the page, or
// whose element is not there yet, is left to its own failure.
func aheadHeals(t TestOutcome, prints []TraceAction, dom []SnapshotElement, sites []LocatorSite) []aheadHeal {
	f := t.Failure
	if f == nil || len(dom) == 0 {
		return nil
	}
	at := slices.IndexFunc(prints, func(a TraceAction) bool { return a.File == f.File && a.Line == f.Line && a.Column == f.Column })
	if at < 0 {
		return nil
	}
	var out []aheadHeal
	seen := map[string]bool{f.Selector: true}
	for _, a := range prints[at+1:] {
		if a.Target == nil || seen[a.Selector] {
			continue
		}
		seen[a.Selector] = true
		cand, ok := renamedOn(a, dom)
		if !ok {
			continue
		}
		old := *a.Target
		ch, e, verdict, _ := healAt(&a, declaredAt(t, &a), func(LocatorSite) SnapshotElement { return old }, cand, sites,
			a.Method == "expect" || strings.HasPrefix(a.API, "expect"))
		if verdict == "" {
			out = append(out, aheadHeal{ch, e})
		}
	}
	return out
}
