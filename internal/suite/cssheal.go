package suite

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/webpilot/webpilot/internal/browser"
)

// cssIDToken is an id token of a CSS selector, with the tag written before it.
var cssIDToken = regexp.MustCompile(`([A-Za-z][\w-]*)?#([A-Za-z][\w-]*)`)

// ancestorIDHeal heals a CSS locator that reaches its element through a
// container's id the app renamed (#checkboxes input, after the form's id
// became checkbox-form; #dropdown, whose option a selectOption marks):
// the id it names is nowhere on the failure's page, elements like the one
// it found before are there (two alike, often), and one of their
// containers carries an id most like the old one (of the tag the selector
// gives). The id is rewritten, nothing else; the trial that runs the heal
// is what proves it.
func ancestorIDHeal(f *TraceAction, old SnapshotElement, dom []SnapshotElement, sites []LocatorSite) (Change, edit, bool) {
	onPage := map[string]bool{}
	for _, e := range dom {
		if id := e.Attributes["id"]; id != "" {
			onPage[id] = true
		}
	}
	parents := parentsOf(dom)
	of := asFingerprint(old)
	for _, part := range selectorParts(f.Selector) {
		for _, s := range sites {
			if s.Selector != part || s.Arg.Regex || !(s.Method == "locator" || selectorMethods[s.Method]) {
				continue
			}
			for _, m := range cssIDToken.FindAllStringSubmatch(s.Arg.Value, -1) {
				tag, gone := strings.ToLower(m[1]), m[2]
				if onPage[gone] || gone == old.Attributes["id"] {
					continue // the element's own id is healed as the element is
				}
				best, score := "", 0.5
				for i, e := range dom {
					if e.Tag != old.Tag || browser.Similarity(of, asFingerprint(e)) < browser.RelocateMinScore {
						continue
					}
					for p := parents[i]; p >= 0; p = parents[p] {
						id := dom[p].Attributes["id"]
						if id == "" || (tag != "" && dom[p].Tag != tag) || strings.Contains(s.Arg.Value, "#"+id) {
							continue
						}
						if r := idLikeness(gone, id); r > score {
							best, score = id, r
						}
					}
				}
				if best == "" {
					continue
				}
				text := quoteLike(s.Arg, replaceToken(s.Arg.Value, "#"+gone, "#"+best))
				return Change{File: s.File, Line: s.Line, Method: s.Method, Selector: part, Old: s.Arg.Value, New: text},
					edit{file: s.File, start: s.Arg.Start, end: s.Arg.End, text: text}, true
			}
		}
	}
	return Change{}, edit{}, false
}

// parentsOf finds each element's parent in a page listed in document
// order with its root-to-element path (-1: none).
func parentsOf(dom []SnapshotElement) []int {
	out := make([]int, len(dom))
	var stack []int // the open elements, by depth
	for i, e := range dom {
		depth := strings.Count(e.Path, " ")
		stack = slices.DeleteFunc(stack, func(j int) bool { return strings.Count(dom[j].Path, " ") >= depth })
		out[i] = -1
		if len(stack) > 0 {
			out[i] = stack[len(stack)-1]
		}
		stack = append(stack, i)
	}
	return out
}

// idLikeness is how much of old a new id keeps from its start, letters
// and digits only (checkboxes → checkbox-form: 0.8; username → user-name:
// 1).
func idLikeness(old, new string) float64 {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToLower(r)
			}
			return -1
		}, s)
	}
	old, new = norm(old), norm(new)
	n := 0
	for n < len(old) && n < len(new) && old[n] == new[n] {
		n++
	}
	if len(old) == 0 {
		return 0
	}
	return float64(n) / float64(len(old))
}
