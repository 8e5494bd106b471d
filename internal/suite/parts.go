package suite

import (
	"cmp"
	"fmt"
	"slices"
)

// PartTests is about the most tests one part of a run holds: a project
// larger than parts × PartTests is cut into more parts, so that no one
// runner's time budget (the sandbox's wall) has to cover hundreds of
// tests.
const PartTests = 100

// Parts cuts a run of files into the parts that run side by side, each
// one runner over some files: at most most parts (more when the tests
// outgrow PartTests a part), never more than the files, balanced by the
// tests each file holds (the listing's). Every runner pays its start (a
// node, the config compiled, a browser per worker: about 1.5 CPU-seconds)
// once per part, not once per file; a run of 12 files of 5 tests cut per
// file took twice the runner's own time. The cut is the same for the same
// listing and files, so a fan-out retried after a crash makes the same
// parts. Files keep their order within a part, and parts the order of
// their first files.
func Parts(listed []TestOutcome, files []string, most int) [][]string {
	if len(files) == 0 {
		return nil
	}
	count := map[string]int{}
	total := 0
	for _, t := range listed {
		if slices.Contains(files, t.File) {
			count[t.File]++
			total++
		}
	}
	n := min(len(files), max(most, 1, (total+PartTests-1)/PartTests))
	// The largest files first, each to the part holding the fewest tests
	// so far: parts end at about the same time.
	order := slices.Clone(files)
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(count[b], count[a]) })
	held := make([]int, n)
	part := map[string]int{}
	for _, f := range order {
		i := 0
		for j := range held {
			if held[j] < held[i] {
				i = j
			}
		}
		part[f] = i
		held[i] += max(count[f], 1)
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
