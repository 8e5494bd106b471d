package suite

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/sandbox"
)

// TestStatus is a test's outcome in a run, as the runner's own summary
// counts it, or that the run did not reach it.
type TestStatus string

// Test statuses.
const (
	StatusPassed  TestStatus = "passed"  // passed on its first attempt
	StatusFailed  TestStatus = "failed"  // failed on every attempt
	StatusFlaky   TestStatus = "flaky"   // failed, then passed on a retry
	StatusSkipped TestStatus = "skipped" // skipped (by itself, or by a failure before it)
	// StatusNotRun is a test a run did not reach (or did not see to its
	// end) before its time budget ended.
	StatusNotRun TestStatus = "not run"
)

// progressJS is webpilot's progress reporter, run beside the JSON report:
// it appends a line as each test starts and ends.
//
//go:embed progress.cjs
var progressJS []byte

// Where the progress reporter and its lines are, inside a run's directory.
const (
	progressReporter = ".webpilot/progress.cjs"
	progressPath     = ".webpilot/progress.jsonl"
)

// runnerBudget is the runner's own global timeout for a run whose
// sandbox stops it at wall: early enough that the runner ends its last
// test and writes its report (its start and teardown take seconds, more
// on a busy machine).
func runnerBudget(wall time.Duration) time.Duration {
	margin := max(20*time.Second, wall/6)
	return max(wall-margin, wall/2)
}

// Budget is the time a run of tests may need at most: every test
// running to its own timeout on every attempt its retries allow, each
// failed attempt followed by its worker's restart, workers at a time,
// after the runner's start; between a floor and ceiling. A test whose
// timeout is not known counts the runner's default, 30 s.
func Budget(tests []TestOutcome, workers int, ceiling time.Duration) time.Duration {
	var all time.Duration
	for _, t := range tests {
		timeout := time.Duration(t.TimeoutMS) * time.Millisecond
		if timeout <= 0 {
			timeout = 30 * time.Second
		}
		all += (timeout + workerRestart) * time.Duration(1+max(t.Retries, 0))
	}
	b := budgetStart + all/time.Duration(max(workers, 1))
	return min(max(b, budgetFloor), ceiling)
}

// What a run's budget allows besides its tests: the runner's start (its
// config compiled, a browser launched, on a busy machine), a worker's
// restart after a failed attempt (a new node and browser: seconds quiet,
// tens of seconds at a load of 20) and a floor. A budget too short
// leaves tests "not run" that would have failed, and so hides what they
// say: of five tests of a file failing on their 2 s checks, three were
// not reached in two minutes on a loaded machine.
const (
	budgetStart   = time.Minute
	workerRestart = 15 * time.Second
	budgetFloor   = 4 * time.Minute
)

// progressLine is one line of the progress reporter's.
type progressLine struct {
	Event    string         `json:"event"` // begin, start, end
	Tests    []progressLine `json:"tests"` // of begin
	File     string         `json:"file"`
	Line     int            `json:"line"`
	Column   int            `json:"column"`
	Titles   []string       `json:"titles"`
	Project  string         `json:"project"`
	Status   string         `json:"status"`  // the attempt's: passed, failed, timedOut, skipped, interrupted
	Outcome  string         `json:"outcome"` // the test's so far: expected, unexpected, flaky, skipped
	Duration float64        `json:"duration"`
	Error    string         `json:"error"`
	Trace    string         `json:"trace"`
}

// outcome is the test a progress line names, its file made
// project-relative.
func (l progressLine) outcome() (TestOutcome, bool) {
	file, ok := strings.CutPrefix(l.File, sandbox.WorkDir+"/")
	if !ok || len(l.Titles) == 0 {
		return TestOutcome{}, false
	}
	o := TestOutcome{File: file, Line: l.Line, Column: l.Column, Titles: l.Titles, Project: l.Project}
	o.ID = testID(o.File, o.Project, o.Titles)
	return o, true
}

// RunProgress is how far a run is, from the lines its tests wrote as they
// started and ended.
type RunProgress struct {
	// Phase is what the run is for, in a repair: evidence, baseline,
	// trial 1…, timing, flow ("" for a plain run).
	Phase string `json:"phase,omitempty"`
	// Tests is how many tests the run runs; Ended how many have their
	// verdict, Passed and Failed among them.
	Tests  int `json:"tests"`
	Ended  int `json:"ended"`
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	// Running are the tests started and not ended (title paths, at most 8).
	Running []string `json:"running,omitempty"`
	// Healed, Flagged and Left are a repair's counts so far: tests healed
	// (verified), tests found to be app regressions, and failing tests it
	// has not yet told apart.
	Healed  int `json:"healed,omitempty"`
	Flagged int `json:"flagged,omitempty"`
	Left    int `json:"left,omitempty"`
	// Files and FilesEnded are, for a repair done in parts, how many
	// files it repairs and how many of them are in parts whose repairs
	// have ended; the rest is then the progress of the part that reported
	// last (its Phase names its files), with Healed, Flagged and Left
	// summed over every part.
	Files      int `json:"files,omitempty"`
	FilesEnded int `json:"files_ended,omitempty"`
}

// FilesProgress is the progress of a repair done in parts (each part's
// files): of each part's repair, its last progress (nil: none yet), when
// it was reported, and whether the part's repair has ended.
func FilesProgress(parts [][]string, last []*RunProgress, at []time.Time, ended []bool) RunProgress {
	var out RunProgress
	newest := -1
	for i, p := range last {
		out.Files += len(parts[i])
		if ended[i] {
			out.FilesEnded += len(parts[i])
		}
		if p == nil {
			continue
		}
		out.Healed += p.Healed
		out.Flagged += p.Flagged
		out.Left += p.Left
		if !ended[i] && (newest < 0 || at[i].After(at[newest])) {
			newest = i
		}
	}
	if newest >= 0 {
		p := last[newest]
		out.Phase = strings.Join(parts[newest], ",")
		if len(parts[newest]) > 2 {
			out.Phase = PartKey(parts[newest])
		}
		if p.Phase != "" {
			out.Phase += " " + p.Phase
		}
		out.Tests, out.Ended, out.Passed, out.Failed, out.Running = p.Tests, p.Ended, p.Passed, p.Failed, p.Running
	}
	return out
}

// progressOf sums a run's progress lines up.
func progressOf(raw []byte) RunProgress {
	var p RunProgress
	status := map[string]TestStatus{}
	running := map[string]string{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), len(raw)+1)
	for sc.Scan() {
		var l progressLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch l.Event {
		case "begin":
			p.Tests = len(l.Tests)
		case "start", "end":
			o, ok := l.outcome()
			if !ok {
				continue
			}
			if l.Event == "start" {
				running[o.ID] = o.File + " › " + o.Title()
				order = append(order, o.ID)
				continue
			}
			delete(running, o.ID)
			status[o.ID] = verdict(l.Outcome)
		}
	}
	for _, s := range status {
		p.Ended++
		switch s {
		case StatusPassed, StatusFlaky:
			p.Passed++
		case StatusFailed:
			p.Failed++
		}
	}
	for _, id := range order {
		if t, ok := running[id]; ok && len(p.Running) < 8 && !slices.Contains(p.Running, t) {
			p.Running = append(p.Running, t)
		}
	}
	return p
}

// watchProgress calls report with the run's progress every interval
// until stop is closed, and then no more.
func watchProgress(ctx context.Context, dir string, interval time.Duration, report func(RunProgress), stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	last := -1
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		raw, err := sandbox.ReadResult(ctx, dir, progressPath, maxProgressPoll)
		if err != nil {
			continue
		}
		p := progressOf(raw)
		if key := p.Tests*1_000_000 + p.Ended*1000 + len(p.Running); key != last {
			last = key
			report(p)
		}
	}
}

// maxProgressPoll bounds what a look at a running run's progress reads.
const maxProgressPoll = 8 << 20

// fromProgress reads the tests of a run the sandbox stopped before its
// runner reported from the progress lines the run wrote (untrusted, as
// all it leaves): a test that ended has its verdict, the others are
// StatusNotRun. False when the run wrote no list of its tests.
func (rep *RunReport) fromProgress(raw []byte, dir string) bool {
	var order []string
	tests := map[string]*TestOutcome{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), len(raw)+1)
	for sc.Scan() {
		var l progressLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue // a line the stop cut short
		}
		switch l.Event {
		case "begin":
			for _, t := range l.Tests {
				if o, ok := t.outcome(); ok && tests[o.ID] == nil {
					o.Status = StatusNotRun
					tests[o.ID] = &o
					order = append(order, o.ID)
				}
			}
		case "end":
			o, ok := l.outcome()
			if !ok || tests[o.ID] == nil {
				continue
			}
			t := tests[o.ID]
			t.Duration += time.Duration(l.Duration * float64(time.Millisecond))
			t.Status, t.Error = verdict(l.Outcome), lastBytes(stripANSI(l.Error), 2000)
			if l.Outcome == "unexpected" && l.Status == "interrupted" {
				t.Status = StatusNotRun
			}
			if p, ok := strings.CutPrefix(l.Trace, sandbox.WorkDir+"/"); ok {
				t.Trace, t.RunDir = p, dir
			}
		}
	}
	if len(order) == 0 {
		return false
	}
	for _, id := range order {
		rep.Tests = append(rep.Tests, *tests[id])
	}
	return true
}

// budgetEnded says the runner stopped itself at its global timeout.
func (rep *RunReport) budgetEnded() bool {
	for _, e := range rep.Errors {
		if strings.HasPrefix(e, "Timed out waiting") && strings.Contains(e, "for the test suite to run") {
			return true
		}
	}
	return false
}

// notRun marks the tests a stopped run did not see to their end, and
// says so (stopped says what stopped it) in one error in place of the
// runner's and the sandbox's.
func (rep *RunReport) notRun(stopped string) {
	rep.NotRun = 0
	for i := range rep.Tests {
		t := &rep.Tests[i]
		if t.Status == StatusNotRun || t.unreached() {
			t.Status, t.Error = StatusNotRun, ""
			rep.NotRun++
		}
	}
	errs := rep.Errors[:0]
	for _, e := range rep.Errors {
		if !strings.HasPrefix(e, "Timed out waiting") && !strings.HasPrefix(e, sandboxStopped) {
			errs = append(errs, e)
		}
	}
	rep.Errors = append(errs, fmt.Sprintf("%s: %d of %d tests did not run to their end", stopped, rep.NotRun, len(rep.Tests)))
}

// sandboxStopped starts the error of a run a sandbox limit ended.
const sandboxStopped = "the sandbox stopped the run at its "
