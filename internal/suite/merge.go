package suite

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// PatchedFile is a file a part of a repair changed, whole as it left it.
type PatchedFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// PatchedFiles are the files of p that differ from orig (or are new), as
// a part of a repair reports them for its parent to merge.
func PatchedFiles(orig, p Project) []PatchedFile {
	var out []PatchedFile
	for _, f := range p.Files {
		if o, ok := orig.File(f.Path); !ok || string(o.Content) != string(f.Content) {
			out = append(out, PatchedFile{Path: f.Path, Content: string(f.Content)})
		}
	}
	return out
}

// MergeConflict is a part of a repair whose edits of a file overlap
// another part's edits of the same lines with other text: its edits are
// left out of the merge.
type MergeConflict struct {
	Part int
	File string
}

func (c MergeConflict) Error() string {
	return fmt.Sprintf("%s: this file's heal changed lines another file's heal changed otherwise", c.File)
}

// MergePatches merges what each part of a repair patched, every part
// against the same original project, into one project. Each part's
// changes are taken as line edits of the original: edits two parts made
// alike are made once, and a part whose edits of a file overlap another's
// with other text is left out whole (its other files too: its heals were
// verified together), reported as a conflict. Parts are merged in order,
// so the first part's edits win.
func MergePatches(orig Project, parts [][]PatchedFile) (Project, []MergeConflict) {
	merged := map[string][]udiff.Edit{}
	var conflicts []MergeConflict
	for i, part := range parts {
		next := map[string][]udiff.Edit{}
		ok := true
		for _, f := range part {
			o, _ := orig.File(f.Path)
			m, fine := udiff.Merge(merged[f.Path], lineEdits(string(o.Content), f.Content))
			if !fine {
				conflicts = append(conflicts, MergeConflict{Part: i, File: f.Path})
				ok = false
				break
			}
			next[f.Path] = m
		}
		if !ok {
			continue
		}
		for path, m := range next {
			merged[path] = m
		}
	}
	out := Project{Files: slices.Clone(orig.Files)}
	paths := make([]string, 0, len(merged))
	for p := range merged {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		o, had := orig.File(path)
		content, err := udiff.Apply(string(o.Content), merged[path])
		if err != nil {
			// Merge answers ordered, disjoint edits of the original: this
			// cannot happen, and a part that caused it is not guessed at.
			conflicts = append(conflicts, MergeConflict{Part: -1, File: path})
			continue
		}
		if !had {
			out.Files = append(out.Files, File{Path: path, Content: []byte(content)})
			sort.Slice(out.Files, func(a, b int) bool { return out.Files[a].Path < out.Files[b].Path })
			continue
		}
		for j := range out.Files {
			if out.Files[j].Path == path {
				out.Files[j] = File{Path: path, Content: []byte(content)}
			}
		}
	}
	return out, conflicts
}

// lineEdits are the edits from before to after, one per changed line where
// a block of lines was replaced by as many: two parts that healed
// neighbouring lines of a page object do not conflict.
func lineEdits(before, after string) []udiff.Edit {
	var out []udiff.Edit
	for _, e := range udiff.Lines(before, after) {
		old := strings.SplitAfter(before[e.Start:e.End], "\n")
		now := strings.SplitAfter(e.New, "\n")
		if len(old) != len(now) {
			out = append(out, e)
			continue
		}
		at := e.Start
		for i := range old {
			if old[i] != now[i] {
				out = append(out, udiff.Edit{Start: at, End: at + len(old[i]), New: now[i]})
			}
			at += len(old[i])
		}
	}
	return out
}

// RepairPart is what the repair of one part of a project (its test files,
// repaired on their own) reported to the repair that fanned it out.
type RepairPart struct {
	Files   []string
	Report  RepairReport
	Patched []PatchedFile
	// Failed says why the part has no report (its job failed or stopped).
	Failed string
}

// MergeRepairs merges a project's parts, each repaired against p on its
// own, into one repair: every part's verdicts and errors, one patch of the
// heals each part verified (MergePatches), and that patch verified once,
// the patched parts' files run whole and together. A part whose heals
// conflict with an earlier part's keeps none; a merged patch under which
// a healed test fails, or a test that passed fails, is not verified and is
// not proposed. o.Listing names the tests of a part that has no report.
func (r ProjectRunner) MergeRepairs(ctx context.Context, p Project, parts []RepairPart, o RunOptions) (RepairReport, error) {
	var rep RepairReport
	var patches [][]PatchedFile
	var from []int // the part of each patch
	for i, part := range parts {
		if part.Failed != "" {
			rep.Errors = append(rep.Errors, strings.Join(part.Files, ", ")+": "+part.Failed)
			for _, t := range o.Listing {
				if slices.Contains(part.Files, t.File) {
					rep.Tests = append(rep.Tests, RepairedTest{ID: t.ID, File: t.File, Title: t.Title(), Verdict: orchestrator.VerdictNotRun,
						Reason: "its file's repair did not end: " + part.Failed})
				}
			}
			continue
		}
		rep.Tests = append(rep.Tests, part.Report.Tests...)
		rep.Errors = append(rep.Errors, part.Report.Errors...)
		if part.Report.Verified && len(part.Patched) > 0 {
			patches, from = append(patches, part.Patched), append(from, i)
		}
	}
	sort.SliceStable(rep.Tests, func(i, j int) bool {
		return rep.Tests[i].File+rep.Tests[i].Title < rep.Tests[j].File+rep.Tests[j].Title
	})
	merged, conflicts := MergePatches(p, patches)
	refused := map[int]string{}
	for _, c := range conflicts {
		if c.Part < 0 {
			return rep, fmt.Errorf("merge the files' heals: %w", c)
		}
		refused[from[c.Part]] = c.Error()
	}
	var files []string // the files of the parts whose heals were merged
	for _, i := range from {
		part := parts[i]
		if why, ok := refused[i]; ok {
			for j := range rep.Tests {
				if t := &rep.Tests[j]; slices.Contains(part.Files, t.File) && t.Verdict == orchestrator.VerdictHealed {
					t.Verdict, t.Reason = orchestrator.VerdictUnrepairable, "healed on its own, left out of the patch: "+why
				}
			}
			continue
		}
		for _, ch := range part.Report.Changes {
			// A page object's line healed alike for two files is one change.
			k := slices.IndexFunc(rep.Changes, func(c Change) bool {
				return c.File == ch.File && c.Line == ch.Line && c.Old == ch.Old && c.New == ch.New
			})
			if k < 0 {
				rep.Changes = append(rep.Changes, ch)
				continue
			}
			for _, title := range ch.Tests {
				if !slices.Contains(rep.Changes[k].Tests, title) {
					rep.Changes[k].Tests = append(rep.Changes[k].Tests, title)
				}
			}
		}
		files = append(files, part.Files...)
	}
	if len(files) == 0 {
		return rep, nil
	}
	// Each test is judged as the runner judges it, with the project's
	// retries: a test flaky by nature passes on a retry as in the
	// customer's CI, and vetoes no heal it has nothing to do with.
	ro := o
	ro.Files, ro.NoRetries, ro.Trace, ro.Only = files, false, false, nil
	if budget := r.budgetOf(o.Listing, files, o.Ceiling); budget > 0 {
		ro.Wall = budget
	}
	run, err := r.Run(ctx, merged, inPhase(ro, "merged", nil))
	if err != nil {
		return rep, fmt.Errorf("verify the merged patch: %w", err)
	}
	defer func() { _ = os.RemoveAll(run.Dir) }()
	got := map[string]TestOutcome{}
	for _, t := range run.Tests {
		got[t.ID] = t
	}
	rep.Verified = len(run.Errors) == 0
	rep.Errors = append(rep.Errors, run.Errors...)
	for j := range rep.Tests {
		t := &rep.Tests[j]
		if !slices.Contains(files, t.File) {
			continue
		}
		switch now := got[t.ID].Status; {
		case t.Verdict == orchestrator.VerdictHealed && now != StatusPassed && now != StatusFlaky:
			rep.Verified = false
			t.Reason += fmt.Sprintf("; with every file's heals it %s", cmpOr(string(now), "did not run"))
		case t.Verdict == orchestrator.VerdictPassed && now == StatusFailed:
			rep.Verified = false
			t.Reason = "passed, and fails with every file's heals merged, on every retry the project allows"
		case t.Verdict == orchestrator.VerdictFlaky && now == StatusFailed:
			// Seen flaky before any patch: its failure is its own.
			t.Reason = cmpOr(t.Reason, "flaky") + "; failed again with every file's heals merged"
		}
	}
	if rep.Verified {
		rep.Diff, rep.Patched = projectDiff(p, merged), &merged
	}
	return rep, nil
}
