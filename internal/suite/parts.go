package suite

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// PartTests is about the most tests one part of a run holds, so that no
// one report or runner has hundreds of tests to carry.
const PartTests = 100

// UnknownTestTime is what a test no run has timed counts when a run is
// cut into parts.
const UnknownTestTime = 5 * time.Second

// PartPlan says how a run's files are cut into parts.
type PartPlan struct {
	// Most is how many parts a run has, more when its tests outgrow Time
	// or PartTests a part; never more than its files.
	Most int
	// Time is about the most test time one part should hold: a part must
	// end within one run's wall, or its last tests are not run.
	Time time.Duration
	// Took is each test's time in the project's last runs, by test id.
	Took map[string]time.Duration
}

// Parts cuts a run of files into the parts that run side by side, each
// one runner over whole files, balanced by the time their tests took in
// the last runs (UnknownTestTime each where none did). Every runner pays
// its start (a node, the config compiled, a browser per worker: about
// 1.5 CPU-seconds) once per part, not once per file: a run of 12 files of
// 5 tests cut per file took twice the runner's own time. The cut depends
// on the listing, files and times alone. Files keep their order within a
// part, and parts the order of their first files.
func Parts(listed []TestOutcome, files []string, plan PartPlan) [][]string {
	if len(files) == 0 {
		return nil
	}
	took := map[string]time.Duration{}
	tests := 0
	var total time.Duration
	for _, t := range listed {
		if !slices.Contains(files, t.File) {
			continue
		}
		d := plan.Took[t.ID]
		if d <= 0 {
			d = UnknownTestTime
		}
		took[t.File] += d
		total += d
		tests++
	}
	n := max(plan.Most, 1, (tests+PartTests-1)/PartTests)
	if plan.Time > 0 {
		n = max(n, int((total+plan.Time-1)/plan.Time))
	}
	n = min(len(files), n)
	// The longest files first, each to the part holding the least time so
	// far: parts end at about the same time.
	order := slices.Clone(files)
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(took[b], took[a]) })
	held := make([]time.Duration, n)
	part := map[string]int{}
	for _, f := range order {
		i := 0
		for j := range held {
			if held[j] < held[i] {
				i = j
			}
		}
		part[f] = i
		held[i] += max(took[f], time.Millisecond)
	}
	out := make([][]string, n)
	for _, f := range files {
		out[part[f]] = append(out[part[f]], f)
	}
	out = slices.DeleteFunc(out, func(p []string) bool { return len(p) == 0 })
	slices.SortStableFunc(out, func(a, b []string) int {
		return cmp.Compare(slices.Index(files, a[0]), slices.Index(files, b[0]))
	})
	return out
}

// PartKey names a part among its run's: its first file, and how many
// more it holds (a part of one file is named by it).
func PartKey(files []string) string {
	if len(files) <= 1 {
		return firstOr(files)
	}
	return fmt.Sprintf("%s and %d more", files[0], len(files)-1)
}

func firstOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// ResultTests are the tests a run's result holds (a project_file job's:
// its "tests"), none when it holds none or cannot be read.
func ResultTests(result json.RawMessage) []TestOutcome {
	var res struct {
		Tests []TestOutcome `json:"tests"`
	}
	_ = json.Unmarshal(result, &res)
	return res.Tests
}
