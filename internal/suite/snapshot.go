// A trace's page snapshots, decoded within a budget: the element a call
// marked, and every element of the page with its text.

package suite

import (
	"encoding/json"
	"strings"
)

// What is decoded of a trace's page snapshots: a snapshot's JSON decodes
// to many times its size, and a trace names which to read.
const (
	maxSnapshotBytes = 4 << 20
	maxDecodedBytes  = 12 << 20
)

// decode parses the snapshot's tree once, within its trace's budget; a
// snapshot past it has no tree, as though it had not been recorded.
func (s *frameSnapshot) decode() {
	if s.decoded {
		return
	}
	s.decoded = true
	if len(s.HTML) > maxSnapshotBytes {
		return
	}
	if s.budget != nil {
		if *s.budget < len(s.HTML) {
			return
		}
		*s.budget -= len(s.HTML)
	}
	_ = json.Unmarshal(s.HTML, &s.tree)
}

// The snapshot format: a node is a string (text), [name, attributes,
// ...children], or [[snapshotsAgo, index]]: the index-th node, in
// post-order, of a snapshot that many before this one of the same frame.

// postOrder lists a snapshot's own nodes (references are not nodes).
func (s *frameSnapshot) postOrder() []any {
	if s.nodes != nil {
		return s.nodes
	}
	s.decode()
	var visit func(n any)
	visit = func(n any) {
		switch v := n.(type) {
		case string:
			s.nodes = append(s.nodes, v)
		case []any:
			if len(v) > 0 {
				if _, ok := v[0].(string); ok {
					for _, c := range children(v) {
						visit(c)
					}
					s.nodes = append(s.nodes, v)
				}
			}
		}
	}
	visit(s.tree)
	if s.nodes == nil {
		s.nodes = []any{}
	}
	return s.nodes
}

// children are an element node's children ([name] and [name, attrs] have
// none). A trace is written inside the sandbox: it is untrusted, and no
// shape of it may panic the worker.
func children(v []any) []any {
	if len(v) <= 2 {
		return nil
	}
	return v[2:]
}

// target finds the element the call marked in this snapshot (the runner
// sets __playwright_target__ to the call's id on it).
func (s *frameSnapshot) target(frame []*frameSnapshot, callID string) *SnapshotElement {
	idx := -1
	for i, f := range frame {
		if f == s {
			idx = i
		}
	}
	if idx < 0 {
		return nil
	}
	s.decode()
	var found *SnapshotElement
	budget := maxVisits // references can point back up: bound the walk, not only its depth
	var visit func(n any, at int, path []string, depth int)
	visit = func(n any, at int, path []string, depth int) {
		if budget--; found != nil || depth > 200 || budget < 0 {
			return
		}
		v, ok := n.([]any)
		if !ok || len(v) == 0 {
			return
		}
		if ref, ok := v[0].([]any); ok && len(ref) == 2 {
			ago, _ := ref[0].(float64)
			i, _ := ref[1].(float64)
			from := at - int(ago)
			if from < 0 || from > at {
				return
			}
			nodes := frame[from].postOrder()
			if int(i) >= 0 && int(i) < len(nodes) {
				visit(nodes[int(i)], from, path, depth+1)
			}
			return
		}
		name, ok := v[0].(string)
		if !ok {
			return
		}
		attrs := map[string]string{}
		if len(v) > 1 {
			if m, ok := v[1].(map[string]any); ok {
				for k, x := range m {
					attrs[k], _ = x.(string)
				}
			}
		}
		path = append(path, strings.ToLower(name))
		if attrs["__playwright_target__"] == callID {
			el := &SnapshotElement{Tag: strings.ToLower(name), Attributes: map[string]string{}, Path: strings.Join(path, " ")}
			for k, x := range attrs {
				if !strings.HasPrefix(k, "__playwright") {
					el.Attributes[k] = x
				}
			}
			var text strings.Builder
			textBudget := maxVisits
			collectText(v, frame, at, &text, 0, &textBudget)
			el.Text = strings.Join(strings.Fields(text.String()), " ")
			if len(el.Text) > 200 {
				el.Text = el.Text[:200]
			}
			found = el
			return
		}
		for _, c := range children(v) {
			visit(c, at, path, depth+1)
		}
	}
	visit(s.tree, idx, nil, 0)
	return found
}

// collectText gathers an element's text, following references.
func collectText(n any, frame []*frameSnapshot, at int, out *strings.Builder, depth int, budget *int) {
	if *budget--; depth > 200 || out.Len() > 400 || *budget < 0 {
		return
	}
	switch v := n.(type) {
	case string:
		out.WriteString(v)
		out.WriteByte(' ')
	case []any:
		if len(v) == 0 {
			return
		}
		if ref, ok := v[0].([]any); ok && len(ref) == 2 {
			ago, _ := ref[0].(float64)
			i, _ := ref[1].(float64)
			from := at - int(ago)
			if from < 0 || from > at {
				return
			}
			nodes := frame[from].postOrder()
			if int(i) >= 0 && int(i) < len(nodes) {
				collectText(nodes[int(i)], frame, from, out, depth+1, budget)
			}
			return
		}
		if name, ok := v[0].(string); ok && (name == "SCRIPT" || name == "STYLE") {
			return
		}
		for _, c := range children(v) {
			collectText(c, frame, at, out, depth+1, budget)
		}
	}
}

// dialogOpenAttr is the attribute a trace snapshot writes for an open
// <dialog>'s open.
const dialogOpenAttr = "__playwright_dialog_open_"

// modalMark is how a snapshot writes a <dialog> open as a modal.
var modalMark = []byte(`"` + dialogOpenAttr + `":"modal"`)

// elements lists every element of the snapshot at index at of a frame's
// snapshots, references followed, within the visit budget: each with its
// tag, attributes, own text (children's included), root-to-element path,
// and its label's text for a form control.
func elementsOf(frame []*frameSnapshot, at int) []SnapshotElement {
	if at < 0 || at >= len(frame) {
		return nil
	}
	s := frame[at]
	s.decode()
	var out []SnapshotElement
	labels := map[string]string{} // for= id → text
	budget := maxVisits
	var visit func(n any, at int, path []string, depth int)
	visit = func(n any, at int, path []string, depth int) {
		if budget--; depth > 200 || budget < 0 || len(out) > 5000 {
			return
		}
		v, ok := n.([]any)
		if !ok || len(v) == 0 {
			return
		}
		if ref, ok := v[0].([]any); ok && len(ref) == 2 {
			ago, _ := ref[0].(float64)
			i, _ := ref[1].(float64)
			from := at - int(ago)
			if from < 0 || from > at {
				return
			}
			nodes := frame[from].postOrder()
			if int(i) >= 0 && int(i) < len(nodes) {
				visit(nodes[int(i)], from, path, depth+1)
			}
			return
		}
		name, ok := v[0].(string)
		if !ok {
			return
		}
		tag := strings.ToLower(name)
		if tag == "script" || tag == "style" || tag == "head" {
			return
		}
		el := SnapshotElement{Tag: tag, Attributes: map[string]string{}}
		value, checked := false, ""
		if len(v) > 1 {
			if m, ok := v[1].(map[string]any); ok {
				for k, x := range m {
					switch {
					case k == dialogOpenAttr:
						// The snapshot keeps an open dialog's open
						// attribute under its own name ("modal" or "true").
						el.Attributes["open"], _ = x.(string)
					case k == "__playwright_value_":
						v, _ := x.(string)
						value = v != ""
					case k == "__playwright_checked_":
						checked, _ = x.(string)
					case !strings.HasPrefix(k, "__playwright"):
						el.Attributes[k], _ = x.(string)
					}
				}
			}
		}
		// A checkbox's value is its constant "on": its check is what it holds.
		el.Filled = value
		if checked != "" {
			el.Filled = checked == "true"
		}
		path = append(path, tag)
		el.Path = strings.Join(path, " ")
		var text strings.Builder
		tb := 20_000
		collectText(v, frame, at, &text, 0, &tb)
		el.Text = strings.Join(strings.Fields(text.String()), " ")
		if len(el.Text) > 200 {
			el.Text = el.Text[:200]
		}
		if tag == "label" && el.Attributes["for"] != "" {
			labels[el.Attributes["for"]] = el.Text
		}
		out = append(out, el)
		for _, c := range children(v) {
			visit(c, at, path, depth+1)
		}
	}
	visit(s.tree, at, nil, 0)
	for i := range out {
		if id := out[i].Attributes["id"]; id != "" && labels[id] != "" {
			out[i].Attributes["label"] = labels[id]
		}
	}
	return out
}
