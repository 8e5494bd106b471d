package suite

import (
	"fmt"
	"regexp"
	"strings"
)

// A flow heal inserts a step the app now asks for. The one made without a
// model: a page that now opens behind an overlay (a cookie wall, a
// consent dialog) whose element takes the test's clicks. The test gets a
// click on the overlay's button right after the navigation that opened
// the page, written where that navigation is written (the test, a hook,
// a page object's goto), through the same page expression. Like every
// heal, it is kept only if the patched project then passes.

// intercepts is the runner's report of an element over the one an action
// targets: `<div id="wall" class="x">…</div> intercepts pointer events`.
var intercepts = regexp.MustCompile(`(<[a-zA-Z][^>\n]*>)[^\n]*? intercepts pointer events`)

// attrIn reads an attribute from an element's opening tag as the runner
// prints it.
func attrIn(tag, name string) string {
	m := regexp.MustCompile(`\s` + name + `="([^"]*)"`).FindStringSubmatch(tag)
	if m == nil {
		return ""
	}
	return m[1]
}

// dismissWords name an overlay's way out, when it has several buttons.
var dismissWords = regexp.MustCompile(`(?i)\b(accept|agree|allow|ok|okay|got it|continue|close|dismiss|understand)\b`)

// receiverExpr is a plain page expression: page, this.page, ctx.page.
var receiverExpr = regexp.MustCompile(`^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$`)

// overlayEdit is the flow heal of a test whose action an overlay's
// element intercepted: a click on the overlay's button after the
// navigation before the failure. ok is false when the failure is not
// that; why says why no edit could be made when it is.
func overlayEdit(p Project, t TestOutcome, dom []SnapshotElement) (ch Change, e edit, why string, ok bool) {
	f := t.Failure
	if f == nil {
		return Change{}, edit{}, "", false
	}
	m := intercepts.FindStringSubmatch(f.Error + "\n" + t.Error)
	if m == nil {
		return Change{}, edit{}, "", false
	}
	tag := m[1]
	id, class := attrIn(tag, "id"), attrIn(tag, "class")
	root := -1
	for i, el := range dom {
		if (id != "" && el.Attributes["id"] == id) || (id == "" && class != "" && el.Attributes["class"] == class) {
			root = i
			break
		}
	}
	if root < 0 {
		return Change{}, edit{}, "an element covers the one the test acts on, and the failure's page does not show it", true
	}
	// Its buttons: the elements after it in document order that are
	// under it.
	var names []string
	for _, el := range dom[root+1:] {
		if !strings.HasPrefix(el.Path, dom[root].Path+" ") {
			break
		}
		if el.Tag == "button" || el.Attributes["role"] == "button" || (el.Tag == "input" && (el.Attributes["type"] == "button" || el.Attributes["type"] == "submit")) {
			if name := strings.TrimSpace(cmpOr(el.Attributes["aria-label"], el.Text, el.Attributes["value"])); name != "" {
				names = append(names, name)
			}
		}
	}
	var name string
	switch {
	case len(names) == 1:
		name = names[0]
	case len(names) > 1:
		for _, n := range names {
			if dismissWords.MatchString(n) {
				if name != "" {
					return Change{}, edit{}, fmt.Sprintf("an overlay covers the page, and more than one of its buttons (%q) may be its way out", names), true
				}
				name = n
			}
		}
	}
	if name == "" {
		return Change{}, edit{}, "an overlay covers the page, and it has no button to close it", true
	}
	// The navigation that opened the page: the last before the failure.
	var nav *TraceAction
	for i := range t.Actions {
		a := &t.Actions[i]
		if a.Error != "" && a.File == f.File && a.Line == f.Line && a.Column == f.Column {
			break
		}
		if a.Method == "goto" && a.File != "" {
			nav = a
		}
	}
	if nav == nil {
		return Change{}, edit{}, "an overlay covers the page, and the test opened it without a goto to follow", true
	}
	src, at, err := sourceAt(p, nav.File, nav.Line, nav.Column)
	if err != nil {
		return Change{}, edit{}, "the navigation before the overlay: " + err.Error(), true
	}
	start := at - (nav.Column - 1)
	if identAt(src, at) != "goto" || at < 1 || src[at-1] != '.' {
		return Change{}, edit{}, fmt.Sprintf("%s:%d: the navigation is not where the trace says", nav.File, nav.Line), true
	}
	head := string(src[start : at-1])
	indent := head[:len(head)-len(strings.TrimLeft(head, " \t"))]
	recv, awaited := strings.CutPrefix(strings.TrimSpace(head), "await ")
	recv = strings.TrimSpace(recv)
	if !awaited || !receiverExpr.MatchString(recv) {
		return Change{}, edit{}, fmt.Sprintf("%s:%d: the navigation is not a statement of its own (await page.goto(…)) to follow", nav.File, nav.Line), true
	}
	open := skipSpace(src, at+len("goto"))
	if open >= len(src) || src[open] != '(' {
		return Change{}, edit{}, fmt.Sprintf("%s:%d: the navigation's arguments are not where the trace says", nav.File, nav.Line), true
	}
	_, closing, scanned := scanArgs(src, open)
	if !scanned {
		return Change{}, edit{}, fmt.Sprintf("%s:%d: the navigation's arguments do not end", nav.File, nav.Line), true
	}
	end := closing + 1
	if end < len(src) && src[end] == ';' {
		end++
	}
	q := "'"
	if strings.Count(string(src), `"`) > strings.Count(string(src), "'") {
		q = `"`
	}
	quoted := q + strings.ReplaceAll(strings.ReplaceAll(name, `\`, `\\`), q, `\`+q) + q
	semi := ";"
	if end > 0 && src[end-1] != ';' {
		semi = ""
	}
	line := "await " + recv + ".getByRole(" + q + "button" + q + ", { name: " + quoted + " }).click()" + semi
	e = edit{file: nav.File, start: end, end: end, text: "\n" + indent + line}
	ch = Change{File: nav.File, Line: nav.Line + 1, Method: "click", Old: "", New: line}
	return ch, e, "", true
}
