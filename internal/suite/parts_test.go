package suite_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/suite"
)

// listing makes a listing of files holding these many tests each.
func listing(sizes map[string]int) []suite.TestOutcome {
	var out []suite.TestOutcome
	for f, n := range sizes {
		for i := range n {
			out = append(out, suite.TestOutcome{ID: fmt.Sprintf("%s#%d", f, i), File: f, Titles: []string{fmt.Sprint(i)}})
		}
	}
	return out
}

// every is every third of files from the i-th: alike files go round the
// parts.
func every(files []string, i int) []string {
	var out []string
	for ; i < len(files); i += 3 {
		out = append(out, files[i])
	}
	return out
}

// TestARunIsCutIntoBalancedParts: a run's files go into the parts asked
// for (more only when its tests outgrow a part's time or count), balanced
// by the time their tests took (a test never timed counts
// UnknownTestTime), each file in one part, in the run's order.
func TestARunIsCutIntoBalancedParts(t *testing.T) {
	t.Parallel()
	twelve := map[string]int{}
	var files12 []string
	for i := range 12 {
		f := fmt.Sprintf("tests/%02d.spec.ts", i)
		twelve[f], files12 = 5, append(files12, f)
	}
	big := map[string]int{}
	var files50 []string
	for i := range 50 {
		f := fmt.Sprintf("tests/%02d.spec.ts", i)
		big[f], files50 = 10, append(files50, f)
	}
	two := suite.PartPlan{Most: 2}
	for _, c := range []struct {
		name  string
		sizes map[string]int
		files []string
		plan  suite.PartPlan
		want  [][]string
	}{
		{"one file", map[string]int{"a": 3}, []string{"a"}, two, [][]string{{"a"}}},
		{"as many files as parts", map[string]int{"a": 3, "b": 1}, []string{"a", "b"}, two, [][]string{{"a"}, {"b"}}},
		{"a large file alone", map[string]int{"a": 1, "b": 9, "c": 2, "d": 3}, []string{"a", "b", "c", "d"}, two, [][]string{{"a", "c", "d"}, {"b"}}},
		{"twelve alike files in two parts", twelve, files12, two, nil},
		{"a file not in the listing still runs", map[string]int{"a": 4}, []string{"a", "z"}, two, [][]string{{"a"}, {"z"}}},
		{"one part asked", map[string]int{"a": 2, "b": 2}, []string{"a", "b"}, suite.PartPlan{Most: 1}, [][]string{{"a", "b"}}},
		// a's one test took a minute last time: more than b, c and d's
		// seven never timed (35 s).
		{"a slow file alone", map[string]int{"a": 1, "b": 3, "c": 2, "d": 2}, []string{"a", "b", "c", "d"},
			suite.PartPlan{Most: 2, Took: map[string]time.Duration{"a#0": time.Minute}}, [][]string{{"a"}, {"b", "c", "d"}}},
		// 60 tests never timed are 300 s: three parts of at most 100 s.
		{"more parts when the time outgrows a part", twelve, files12, suite.PartPlan{Most: 2, Time: 100 * time.Second},
			[][]string{every(files12, 0), every(files12, 1), every(files12, 2)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := suite.Parts(listing(c.sizes), c.files, c.plan)
			if c.name == "twelve alike files in two parts" {
				if len(got) != 2 || len(got[0]) != 6 || len(got[1]) != 6 {
					t.Fatalf("parts %v, want two of six files", got)
				}
				return
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("parts %v, want %v", got, c.want)
			}
		})
	}
	t.Run("500 tests outgrow two parts", func(t *testing.T) {
		got := suite.Parts(listing(big), files50, two)
		seen := map[string]bool{}
		for _, p := range got {
			if n := len(p) * 10; n > suite.PartTests {
				t.Errorf("a part of %d tests: %v", n, p)
			}
			for _, f := range p {
				if seen[f] {
					t.Errorf("%s in two parts", f)
				}
				seen[f] = true
			}
		}
		if len(got) != 5 || len(seen) != 50 {
			t.Errorf("%d parts holding %d files, want 5 holding 50", len(got), len(seen))
		}
	})
	t.Run("the same cut each time", func(t *testing.T) {
		for range 20 {
			if a, b := suite.Parts(listing(big), files50, suite.PartPlan{Most: 3}), suite.Parts(listing(big), files50, suite.PartPlan{Most: 3}); !reflect.DeepEqual(a, b) {
				t.Fatalf("%v then %v", a, b)
			}
		}
	})
	if k := suite.PartKey([]string{"a"}); k != "a" {
		t.Errorf("key of one file %q", k)
	}
	if k := suite.PartKey([]string{"a", "b", "c"}); k != "a and 2 more" {
		t.Errorf("key of three files %q", k)
	}
}

// TestARepairInPartsCountsFiles: the progress of a repair done in parts
// counts files, not parts (a part of two files ended is two files
// repaired), sums what each part healed and flagged, and names the files
// of the part that reported last.
func TestARepairInPartsCountsFiles(t *testing.T) {
	t.Parallel()
	now := time.Now()
	parts := [][]string{{"tests/a.spec.js"}, {"tests/b.spec.js", "tests/c.spec.js"}, {"tests/d.spec.js", "tests/e.spec.js", "tests/f.spec.js"}}
	last := []*suite.RunProgress{{Healed: 2}, {Phase: "baseline", Tests: 4, Ended: 1, Healed: 1, Flagged: 1}, nil}
	p := suite.FilesProgress(parts, last, []time.Time{now, now.Add(time.Second), {}}, []bool{true, false, false})
	if p.Files != 6 || p.FilesEnded != 1 || p.Healed != 3 || p.Flagged != 1 || p.Phase != "tests/b.spec.js,tests/c.spec.js baseline" || p.Tests != 4 {
		t.Errorf("progress %+v", p)
	}
	last[2] = &suite.RunProgress{Phase: "trial 1"}
	p = suite.FilesProgress(parts, last, []time.Time{now, now.Add(time.Second), now.Add(2 * time.Second)}, []bool{true, true, false})
	if p.FilesEnded != 3 || p.Phase != "tests/d.spec.js and 2 more trial 1" {
		t.Errorf("progress %+v", p)
	}
}
