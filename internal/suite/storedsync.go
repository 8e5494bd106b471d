package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
)

// storedIndex is the file of a project of stored tests that says which
// test each spec is (its path to the test's id): what an accepted repair
// of the project is written back to.
const storedIndex = "webpilot-tests.json"

// StoredTestUpdate is a stored test's new script and manifest, from a
// version of its project that a person accepted.
type StoredTestUpdate struct {
	TestID string
	File   string
	Script string
	// Manifest is the test's steps with each rewritten locator's literal
	// changed where its commands and elements name it.
	Manifest json.RawMessage
	// Changes are the locators the version rewrote, as a repair reports
	// them; Diff is the spec's unified diff.
	Changes []Change
	Diff    string
}

// StoredTestSkip is a changed spec of a project of stored tests that is
// not written back to its test, and why.
type StoredTestSkip struct {
	File   string `json:"file"`
	TestID string `json:"test_id,omitempty"`
	Reason string `json:"reason"`
}

// StoredTestUpdates says what an accepted version of a project of stored
// tests changes in the tests it holds, against the version it was made
// from (parent): each spec whose locators' literals were rewritten, and
// nothing else, gives its test the new spec and a manifest whose commands
// and recorded elements name the new literals, so that the test's replays
// act on what its spec acts on. A spec changed in any other way (a step
// added or taken out, a longer wait) is skipped and says why: its steps
// cannot be told from the spec alone.
func StoredTestUpdates(parent, accepted Project) ([]StoredTestUpdate, []StoredTestSkip, error) {
	idx, ok := accepted.File(storedIndex)
	if !ok {
		return nil, nil, &ProjectError{Path: storedIndex, Problem: "the project does not say which stored test each spec is (write the tests as a project again)"}
	}
	var index map[string]string
	if err := json.Unmarshal(idx.Content, &index); err != nil {
		return nil, nil, &ProjectError{Path: storedIndex, Problem: "cannot be read: " + err.Error()}
	}
	files := make([]string, 0, len(index))
	for f := range index {
		files = append(files, f)
	}
	slices.Sort(files)
	var updates []StoredTestUpdate
	var skips []StoredTestSkip
	for _, file := range files {
		id := index[file]
		now, ok := accepted.File(file)
		if !ok {
			continue
		}
		was, ok := parent.File(file)
		if !ok || bytes.Equal(was.Content, now.Content) {
			continue
		}
		skip := func(format string, a ...any) {
			skips = append(skips, StoredTestSkip{File: file, TestID: id, Reason: fmt.Sprintf(format, a...)})
		}
		if manifestOf(file) == "" {
			skip("it is not a stored test's spec (tests/NAME.spec.ts)")
			continue
		}
		changes, why := literalChanges(file, was.Content, now.Content)
		if why != "" {
			skip("%s", why)
			continue
		}
		var manifest []orchestrator.ManifestStep
		m, ok := parent.File(manifestOf(file))
		if !ok || json.Unmarshal(m.Content, &manifest) != nil {
			skip("its steps' manifest is missing or cannot be read")
			continue
		}
		for _, c := range changes {
			if renameInManifest(manifest, c.field, c.from, c.to) == 0 {
				skip("no step of its manifest names %s %q, which the spec's line %d rewrote", c.Method, c.from, c.Line)
				manifest = nil
				break
			}
		}
		if manifest == nil {
			continue
		}
		raw, err := json.Marshal(manifest)
		if err != nil {
			return nil, nil, err
		}
		u := StoredTestUpdate{TestID: id, File: file, Script: string(now.Content), Manifest: raw,
			Diff: udiff.Unified("a/"+file, "b/"+file, string(was.Content), string(now.Content))}
		for _, c := range changes {
			u.Changes = append(u.Changes, c.Change)
		}
		updates = append(updates, u)
	}
	return updates, skips, nil
}

// manifestOf is the path of a stored test's manifest beside its spec
// ("" for a file that is not a stored test's spec).
func manifestOf(spec string) string {
	stem, ok := strings.CutSuffix(spec, ".spec.ts")
	if !ok || stem == "" {
		return ""
	}
	return stem + ".steps.json"
}

// literalChange is one locator literal a version rewrote: which of a
// target's fields it names (testid, label, name …), from what to what.
type literalChange struct {
	Change
	field    string
	from, to string
}

// literalChanges pairs the locator calls of a spec before and after, in
// order, and lists the literals that changed; why says what else changed
// when the spec differs in more than those literals.
func literalChanges(file string, before, after []byte) ([]literalChange, string) {
	was, err := FindLocatorSites(file, before)
	if err != nil {
		return nil, "the spec as written cannot be read: " + err.Error()
	}
	now, err := FindLocatorSites(file, after)
	if err != nil {
		return nil, "the accepted spec cannot be read: " + err.Error()
	}
	if len(was) != len(now) {
		return nil, fmt.Sprintf("the accepted spec builds %d locators where it built %d: its steps changed, not only what they find", len(now), len(was))
	}
	var out []literalChange
	type swap struct{ old, new Literal }
	var swaps []swap
	splice := func(old, new Literal) { swaps = append(swaps, swap{old, new}) }
	for i := range was {
		a, b := was[i], now[i]
		if a.Method != b.Method || (a.Name == nil) != (b.Name == nil) {
			return nil, fmt.Sprintf("line %d calls %s where it called %s", b.Line, b.Method, a.Method)
		}
		if a.Arg.Raw != b.Arg.Raw {
			splice(a.Arg, b.Arg)
			out = append(out, literalChange{Change: Change{File: file, Line: b.Line, Method: b.Method, Selector: b.Selector, Old: a.Arg.Raw, New: b.Arg.Raw},
				field: argField[a.Method], from: a.Arg.Value, to: b.Arg.Value})
		}
		if a.Name != nil && a.Name.Raw != b.Name.Raw {
			splice(*a.Name, *b.Name)
			out = append(out, literalChange{Change: Change{File: file, Line: b.Line, Method: b.Method, Selector: b.Selector, Old: a.Name.Raw, New: b.Name.Raw},
				field: "name", from: a.Name.Value, to: b.Name.Value})
		}
	}
	// The spec with each changed literal spelled as accepted must be the
	// accepted spec: anything else changed too.
	slices.SortFunc(swaps, func(a, b swap) int { return a.old.Start - b.old.Start })
	var spliced bytes.Buffer
	at := 0
	for _, s := range swaps {
		if s.old.Start < at || s.old.End > len(before) {
			return nil, "the spec's locators overlap"
		}
		spliced.Write(before[at:s.old.Start])
		spliced.WriteString(s.new.Raw)
		at = s.old.End
	}
	spliced.Write(before[at:])
	if !bytes.Equal(spliced.Bytes(), after) {
		return nil, "the accepted spec changed more than its locators' literals (a step or a wait)"
	}
	for _, c := range out {
		if c.field == "" {
			return nil, fmt.Sprintf("line %d's %s literal has no place in a step's target", c.Line, c.Method)
		}
	}
	return out, ""
}

// argField is the field of a command's target a locator call's first
// argument fills.
var argField = map[string]string{"locator": "css", "getByTestId": "testid", "getByRole": "role", "getByLabel": "label",
	"getByPlaceholder": "placeholder", "getByText": "text", "getByAltText": "alt", "getByTitle": "title"}

// renameInManifest changes a target field's value from one literal to
// another wherever the manifest's commands and recorded elements name it
// (a spec's line is written from the element's own locator where it
// recorded one, else from the command's target), and counts the entries
// it changed.
func renameInManifest(steps []orchestrator.ManifestStep, field, from, to string) int {
	n := 0
	for i := range steps {
		for j := range steps[i].Entries {
			e := &steps[i].Entries[j]
			hit := renameTarget(&e.Command.Target, field, from, to)
			hit = renameTarget(&e.Command.To, field, from, to) || hit
			if e.Element != nil && renameTarget(&e.Element.Locator, field, from, to) {
				hit = true
			}
			if hit {
				n++
				if e.Element != nil {
					renameElement(e.Element, field, from, to)
				}
			}
		}
	}
	return n
}

// renameTarget changes one field of a target (and of the target it lies
// within) from one value to another.
func renameTarget(t *browser.Target, field, from, to string) bool {
	hit := false
	set := func(v *string) {
		if from != "" && *v == from {
			*v, hit = to, true
		}
	}
	switch field {
	case "css":
		set(&t.CSS)
	case "testid":
		set(&t.TestID)
	case "role":
		set(&t.Role)
	case "name":
		set(&t.Name)
	case "label":
		set(&t.Label)
	case "placeholder":
		set(&t.Placeholder)
	case "text":
		set(&t.Text)
	case "alt":
		set(&t.Alt)
	case "title":
		set(&t.Title)
	}
	if t.Within != nil && renameTarget(t.Within, field, from, to) {
		hit = true
	}
	return hit
}

// renameElement changes what a recorded element says of itself where the
// rewritten literal names it (its test id, label, accessible name …).
func renameElement(f *browser.Fingerprint, field, from, to string) {
	if from == "" {
		return
	}
	set := func(v *string) {
		if *v == from {
			*v = to
		}
	}
	switch field {
	case "testid":
		set(&f.TestID)
		if f.Attributes["data-testid"] == from {
			f.Attributes["data-testid"] = to
		}
	case "role":
		set(&f.Role)
	case "name":
		set(&f.Name)
	case "label":
		set(&f.Label)
	case "placeholder":
		set(&f.Placeholder)
	case "text":
		set(&f.Text)
	case "alt":
		set(&f.Alt)
	case "title":
		set(&f.Title)
	}
}

// VersionStore is what accepting a project's version needs of the store.
type VersionStore interface {
	AcceptProjectVersion(ctx context.Context, tenantID, project, digest string) (store.ProjectVersion, error)
	ProjectArchive(ctx context.Context, tenantID, digest string) ([]byte, error)
	AcceptScripts(ctx context.Context, tenantID string, updates []store.ScriptUpdate) (map[string]int, []string, error)
}

// WrittenBack is what accepting a version of a project of stored tests
// did to the tests it holds.
type WrittenBack struct {
	// Tests are the tests given the version's spec, each at its new
	// version.
	Tests []UpdatedTest `json:"tests,omitempty"`
	// Skipped are the changed specs left out, with why.
	Skipped []StoredTestSkip `json:"skipped,omitempty"`
}

// UpdatedTest is a stored test given an accepted project version's spec.
type UpdatedTest struct {
	TestID  string `json:"test_id"`
	File    string `json:"file"`
	Version int    `json:"version"`
}

// AcceptVersion makes a version of a tenant's project current. When it is
// a project of stored tests made from another version (a repair's), the
// tests whose specs it rewrote take them (StoredTestUpdates), each as its
// new accepted version, so that a repair through the project is the
// tests' repair; a test whose script moved on since the project was
// written is left alone and named. Accepting the same version again
// writes nothing twice.
func AcceptVersion(ctx context.Context, st VersionStore, tenantID, project, digest string) (store.ProjectVersion, WrittenBack, error) {
	v, err := st.AcceptProjectVersion(ctx, tenantID, project, digest)
	if err != nil || v.Parent == "" {
		return v, WrittenBack{}, err
	}
	open := func(digest string) (Project, error) {
		archive, err := st.ProjectArchive(ctx, tenantID, digest)
		if err != nil {
			return Project{}, err
		}
		return ReadArchive(archive)
	}
	accepted, err := open(v.Digest)
	if err != nil {
		return v, WrittenBack{}, fmt.Errorf("read the accepted version: %w", err)
	}
	if !IsStoredTestsProject(accepted) {
		return v, WrittenBack{}, nil
	}
	parent, err := open(v.Parent)
	if err != nil {
		return v, WrittenBack{}, fmt.Errorf("read the version it was made from: %w", err)
	}
	updates, skipped, err := StoredTestUpdates(parent, accepted)
	var pe *ProjectError
	if errors.As(err, &pe) {
		return v, WrittenBack{Skipped: []StoredTestSkip{{File: pe.Path, Reason: pe.Problem}}}, nil
	}
	if err != nil {
		return v, WrittenBack{}, err
	}
	out := WrittenBack{Skipped: skipped}
	if len(updates) == 0 {
		return v, out, nil
	}
	ups := make([]store.ScriptUpdate, 0, len(updates))
	for _, u := range updates {
		was, _ := parent.File(u.File)
		changes, _ := json.Marshal(u.Changes)
		ups = append(ups, store.ScriptUpdate{TestID: u.TestID, From: string(was.Content), Script: u.Script, Manifest: u.Manifest,
			Verdict: string(orchestrator.VerdictHealed), Changes: changes, Diff: u.Diff,
			Summary: fmt.Sprintf("locators rewritten by version %s of project %s, accepted", shortDigest(v.Digest), project)})
	}
	made, stale, err := st.AcceptScripts(ctx, tenantID, ups)
	if err != nil {
		return v, WrittenBack{}, err
	}
	for _, u := range updates {
		if n, ok := made[u.TestID]; ok {
			out.Tests = append(out.Tests, UpdatedTest{TestID: u.TestID, File: u.File, Version: n})
		} else if slices.Contains(stale, u.TestID) {
			out.Skipped = append(out.Skipped, StoredTestSkip{File: u.File, TestID: u.TestID,
				Reason: "the test's script is no longer the one written into the project (it was repaired, or is gone)"})
		}
	}
	return v, out, nil
}

// shortDigest is a version's digest as the CLI and console show it.
func shortDigest(d string) string { return d[:min(12, len(d))] }
