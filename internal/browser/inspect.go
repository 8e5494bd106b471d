package browser

import "strings"

// Subtree is the lines of a page representation (Snapshot.Full) under the
// element with ref, the element's own line first; false when the ref is
// not in it. What inspect_page shows of an element, in every mode.
func Subtree(full, ref string) (string, bool) {
	lines := strings.Split(full, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "[ref="+ref+"]") {
			continue
		}
		indent := indentOf(l)
		out := []string{l}
		for _, m := range lines[i+1:] {
			if indentOf(m) <= indent {
				break
			}
			out = append(out, m)
		}
		return strings.Join(out, "\n"), true
	}
	return "", false
}

// RepresentationHit is a line of a page representation that mentions a
// text, with the ref that targets it: its own, or that of the element it
// is in (Within says so).
type RepresentationHit struct {
	Line   string
	Ref    string
	Within bool
}

// SearchRepresentation lists the lines of a page representation that
// mention text (case-insensitively), each with a ref to target it.
func SearchRepresentation(full, text string) []RepresentationHit {
	lines := strings.Split(full, "\n")
	var hits []RepresentationHit
	for i, l := range lines {
		if !strings.Contains(strings.ToLower(l), strings.ToLower(text)) {
			continue
		}
		h := RepresentationHit{Line: strings.TrimSpace(l), Ref: LineRef(l)}
		if h.Ref == "" {
			h.Ref, h.Within = enclosingRef(lines, i), true
		}
		hits = append(hits, h)
	}
	return hits
}

// LineRef is the ref a representation line carries, if any.
func LineRef(l string) string {
	if m := refPattern.FindStringSubmatch(l); m != nil {
		return m[1]
	}
	return ""
}

// enclosingRef is the ref of the nearest element line that line i is
// indented under.
func enclosingRef(lines []string, i int) string {
	indent := indentOf(lines[i])
	for j := i - 1; j >= 0; j-- {
		l := lines[j]
		if in := indentOf(l); in < indent {
			if ref := LineRef(l); ref != "" {
				return ref
			}
			indent = in
		}
	}
	return ""
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
