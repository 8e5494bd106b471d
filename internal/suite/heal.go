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
	// StoredTests is what the version, accepted at once (auto_accept),
	// wrote back to the stored tests a project of them holds.
	StoredTests *WrittenBack `json:"stored_tests,omitempty"`
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
