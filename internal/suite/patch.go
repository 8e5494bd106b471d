// A repair's patch: edits of a project's files and their unified diff.

package suite

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

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
