package suite

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// A flow heal inserts a step the app now asks for, or takes out one it no
// longer asks for. The insertions, made without a model, answer an overlay
// that now stops the test: a page that opens behind a cookie wall whose
// element takes the test's clicks, or an action that now opens a modal
// dialog (a confirmation) before it takes effect. The test gets a click on
// the overlay's button (its way on: Accept, Confirm, OK; never Cancel)
// right after the call that opened it: the last pointer or key action
// since the page opened, else the navigation that opened the page. It is
// written where that call is written (the test, a hook, a page object's
// method), through the page expression that call works on; when the trace
// holds neither (serial tests sharing a page opened in another's hook),
// right before the action the overlay stopped. Like every heal, it is kept
// only if the patched project then passes.

// intercepts is the runner's report of an element over the one an action
// targets: `<div id="wall" class="x">…</div> intercepts pointer events`.
var intercepts = regexp.MustCompile(`(<[a-zA-Z][^>\n]*>)[^\n]*? intercepts pointer events`)

// tagAttr is an attribute in an opening tag as the runner prints it.
var tagAttr = regexp.MustCompile(`\s([^\s="<>/]+)="([^"]*)"`)

// attrIn reads an attribute from an element's opening tag as the runner
// prints it.
func attrIn(tag, name string) string {
	for _, m := range tagAttr.FindAllStringSubmatch(tag, -1) {
		if m[1] == name {
			return m[2]
		}
	}
	return ""
}

// goWords name an overlay's way on, when it has several buttons: the
// answer that lets the test's own flow go on (a confirmation's Confirm,
// a cookie wall's Accept), never its Cancel.
var goWords = regexp.MustCompile(`(?i)\b(accept|agree|allow|ok|okay|got it|continue|confirm|yes|proceed|understand)\b`)

// closeWords name an overlay's plain way out, taken when no button names a
// way on.
var closeWords = regexp.MustCompile(`(?i)\b(close|dismiss)\b`)

// openers are the calls that may open a dialog the app now shows: the
// pointer and key actions that went through.
var openers = map[string]bool{"click": true, "dblclick": true, "tap": true, "press": true, "check": true, "uncheck": true,
	"setChecked": true, "selectOption": true, "keyboardPress": true, "mouseClick": true}

// pageUse is a test's page at work: page.goto(…), page.getBy….
var pageUse = regexp.MustCompile(`(?:^|[^.\w$])page\.\w+\(`)

// sourceName is the name a call is written with: the trace names the
// keyboard's and the mouse's calls keyboardPress, mouseClick.
func sourceName(method string) string {
	for _, dev := range []string{"keyboard", "mouse"} {
		if rest, ok := strings.CutPrefix(method, dev); ok && rest != "" {
			return strings.ToLower(rest[:1]) + rest[1:]
		}
	}
	return method
}

// openDialog is the index in dom of a modal dialog shown on the failure's
// page (an open <dialog>, or a dialog role marked modal), or -1.
func openDialog(dom []SnapshotElement) int {
	for i, el := range dom {
		_, open := el.Attributes["open"]
		role := el.Attributes["role"]
		if (el.Tag == "dialog" && open) || ((role == "dialog" || role == "alertdialog") && el.Attributes["aria-modal"] == "true") {
			return i
		}
	}
	return -1
}

// locatorStart is where a locator chain leaves its page.
var locatorStart = regexp.MustCompile(`\.(?:getBy[A-Za-z]+|locator)\(`)

// receiverExpr is a plain page expression: page, this.page, ctx.page.
var receiverExpr = regexp.MustCompile(`^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$`)

// overlayEdit is the flow heal of a test that an overlay now stops: an
// element over the one its action targets (a cookie wall), or a modal
// dialog a call of the test opened or the failure's page shows (a
// confirmation). A click on the overlay's button goes after the call that
// opened it: the call after which the dialog showed; for an element over
// the page, the navigation that opened the page; for a dialog only the
// failure's page shows, the last pointer or key action since the page
// opened, else that navigation. ok is false when the failure is not that; why says why no edit
// could be made when it is.
//
// A call that opens no dialog in a test that passes (quiet: a helper
// called there with an entry the app refuses) is not answered where it is
// written, where the answer would break that test, but where this test
// called it.
func overlayEdit(p Project, t TestOutcome, dom []SnapshotElement, quiet map[CallSite]bool) (ch Change, e edit, why string, ok bool) {
	f := t.Failure
	if f == nil {
		return Change{}, edit{}, "", false
	}
	root := -1
	if m := intercepts.FindStringSubmatch(f.Error + "\n" + t.Error); m != nil {
		tag := m[1]
		id, class := attrIn(tag, "id"), attrIn(tag, "class")
		for i, el := range dom {
			if (id != "" && el.Attributes["id"] == id) || (id == "" && class != "" && el.Attributes["class"] == class) {
				root = i
				break
			}
		}
		if root < 0 {
			return Change{}, edit{}, "an element covers the one the test acts on, and the failure's page does not show it", true
		}
	}
	nav, fail := -1, -1
	for i := range t.Actions {
		if a := t.Actions[i]; a.Error != "" && a.File == f.File && a.Line == f.Line && a.Column == f.Column {
			fail = i
			break
		}
	}
	if fail > 0 && f.URL != "" {
		for i := fail - 1; i >= 0; i-- {
			if a := &t.Actions[i]; a.URL != "" && a.URL != f.URL && a.File != "" {
				nav = i
				break
			}
		}
	}
	for i := range t.Actions[:max(fail, 0)] {
		if a := &t.Actions[i]; nav < 0 && a.Method == "goto" && a.File != "" {
			nav = i
		}
	}
	// The call since the page opened after which a modal dialog showed
	// opened it, even when a later step closed it again (a key press
	// taken by its focused Cancel); else, for a dialog only the failure's
	// page shows, the last pointer or key action since the page opened.
	opener, dialogAt := -1, -1
	for i := max(nav+1, 0); i < fail; i++ {
		if a := &t.Actions[i]; len(a.Dialog) > 0 && a.File != "" {
			dialogAt = i
			break
		}
	}
	for i := fail - 1; i > nav; i-- {
		if a := &t.Actions[i]; openers[a.Method] && a.Error == "" && a.File != "" {
			opener = i
			break
		}
	}
	switch {
	case dialogAt >= 0:
		opener = dialogAt
	case root >= 0:
		// An element over the page the trace saw open with no call: a
		// wall the page opened with (the calls since then that went
		// through, a fill, a key press, do not hit-test).
		opener = -1
	}
	var names []string
	switch {
	case root >= 0:
		names = buttonsUnder(dom, root)
	case dialogAt >= 0:
		names = t.Actions[dialogAt].Dialog
	default:
		if root = openDialog(dom); root < 0 {
			return Change{}, edit{}, "", false
		}
		names = buttonsUnder(dom, root)
	}
	var name string
	switch {
	case len(names) == 1:
		name = names[0]
	case len(names) > 1:
		for _, words := range []*regexp.Regexp{goWords, closeWords} {
			var match []string
			for _, n := range names {
				if words.MatchString(n) {
					match = append(match, n)
				}
			}
			if len(match) > 1 {
				return Change{}, edit{}, fmt.Sprintf("an overlay covers the page, and more than one of its buttons (%q) may be its way on", names), true
			}
			if len(match) == 1 {
				name = match[0]
				break
			}
		}
	}
	if name == "" {
		return Change{}, edit{}, "an overlay covers the page, and it has no button to close it", true
	}
	var at0 *TraceAction
	switch {
	case opener >= 0:
		at0 = &t.Actions[opener]
	case nav >= 0:
		at0 = &t.Actions[nav]
	}
	// Else (a page opened in a hook of another test, as serial tests
	// share one) the click goes right before the action it took.
	before := at0 == nil
	if before {
		at0 = f
	}
	caller := false
	if opener >= 0 && quiet[siteOf(at0)] {
		found := false
		for _, c := range at0.Callers {
			if !quiet[c] {
				at0, caller, found = &TraceAction{File: c.File, Line: c.Line, Column: c.Column}, true, true
				break
			}
		}
		if !found {
			return Change{}, edit{}, fmt.Sprintf("%s:%d: the call that opened the dialog opens none in a test that passes, and no call of this test leading to it is its own", at0.File, at0.Line), true
		}
	}
	return clickAfter(p, at0, name, before, caller)
}

// callOnLine is the column of the call a line's statement awaits: the
// last name before its first bracket.
func callOnLine(p Project, path string, line int) (int, bool) {
	src, start, err := sourceAt(p, path, line, 1)
	if err != nil {
		return 0, false
	}
	i := skipSpace(src, start)
	rest, ok := bytes.CutPrefix(src[i:], []byte("await "))
	if !ok {
		return 0, false
	}
	i = len(src) - len(rest)
	i = skipSpace(src, i)
	last := -1
	for i < len(src) && src[i] != '(' && src[i] != '\n' {
		if id := identAt(src, i); id != "" {
			last = i
			i += len(id)
			continue
		}
		if src[i] != '.' {
			return 0, false
		}
		i++
	}
	if last < 0 || i >= len(src) || src[i] != '(' {
		return 0, false
	}
	return last - start + 1, true
}

// siteOf is where a call is written.
func siteOf(a *TraceAction) CallSite { return CallSite{a.File, a.Line, a.Column} }

// quietSites are the calls that may open a dialog (and the calls leading
// to them) that went through without one in the tests that passed.
func quietSites(tests map[string]TestOutcome) map[CallSite]bool {
	quiet := map[CallSite]bool{}
	for _, t := range tests {
		if t.Status != StatusPassed {
			continue
		}
		for i := range t.Actions {
			if a := &t.Actions[i]; openers[a.Method] && len(a.Dialog) == 0 && a.File != "" {
				quiet[siteOf(a)] = true
				for _, c := range a.Callers {
					quiet[c] = true
				}
			}
		}
	}
	return quiet
}

// buttonsUnder names the buttons of dom's element root: the elements
// after it in document order that are under it.
func buttonsUnder(dom []SnapshotElement, root int) []string {
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
	return names
}

// clickAfter is the edit adding a click on the button named name after the
// statement of the call at (before it, with before), through the page
// that call works on.
func clickAfter(p Project, nav *TraceAction, name string, before, caller bool) (ch Change, e edit, why string, ok bool) {
	return stepAt(p, nav, "click", before, caller, func(q string) string {
		return ".getByRole(" + q + "button" + q + ", { name: " + quoteJS(name, q) + " }).click()"
	})
}

// quoteJS is s as a string literal in quote q.
func quoteJS(s, q string) string {
	r := strings.NewReplacer(`\`, `\\`, q, `\`+q, "\n", `\n`, "\r", `\r`, "\u2028", `\u2028`, "\u2029", `\u2029`)
	return q + r.Replace(s) + q
}

// stepAt is the edit adding a statement after the statement of the call
// at nav (before it, with before), through the page that call works on:
// await <page><call(q)>, call written with the file's quote q; method
// names the step in its Change.
func stepAt(p Project, nav *TraceAction, stepMethod string, before, caller bool, call func(q string) string) (ch Change, e edit, why string, ok bool) {
	if caller {
		// A caller's line: its statement's call (await addItem(…),
		// await list.add(…)) is the last name before the first bracket.
		col, found := callOnLine(p, nav.File, nav.Line)
		if !found {
			return Change{}, edit{}, fmt.Sprintf("%s:%d: the call leading to the dialog is not a statement of its own (await helper(…)) to follow", nav.File, nav.Line), true
		}
		nav = &TraceAction{File: nav.File, Line: nav.Line, Column: col}
	}
	src, at, err := sourceAt(p, nav.File, nav.Line, nav.Column)
	if err != nil {
		return Change{}, edit{}, "the call before the overlay: " + err.Error(), true
	}
	start := at - (nav.Column - 1)
	method := sourceName(nav.Method)
	member := at >= 1 && src[at-1] == '.'
	if caller {
		method = identAt(src, at) // a helper's or a page object's call: addItem(page, …), list.add(…)
	}
	if method == "" || identAt(src, at) != method || (!member && !caller) {
		return Change{}, edit{}, fmt.Sprintf("%s:%d: the call before the overlay is not where the trace says", nav.File, nav.Line), true
	}
	head := string(src[start:at])
	if member {
		head = head[:len(head)-1]
	}
	indent := head[:len(head)-len(strings.TrimLeft(head, " \t"))]
	recv, awaited := strings.CutPrefix(strings.TrimSpace(head)+" ", "await ")
	recv = strings.TrimSpace(recv)
	if caller {
		// The page the caller works on: a page object's own, else the
		// test's page.
		switch {
		case strings.HasPrefix(recv, "this.") && strings.Contains(string(src), "this.page."):
			recv = "this.page"
		case pageUse.Match(src):
			recv = "page"
		default:
			recv = ""
		}
	} else if page, ok := strings.CutSuffix(recv, ".keyboard"); ok {
		recv = page // page.keyboard.press(…)
	} else if page, ok := strings.CutSuffix(recv, ".mouse"); ok {
		recv = page
	} else if nav.Method != "goto" {
		// An action: the page is what the locator starts from
		// (page.getByRole(…).click()), else a page object's own
		// (this.page), else the locator's (addButton.page()).
		if i := locatorStart.FindStringIndex(recv); i != nil {
			recv = recv[:i[0]]
		} else if strings.HasPrefix(recv, "this.") && strings.Contains(string(src), "this.page.") {
			recv = "this.page"
		} else if receiverExpr.MatchString(recv) {
			recv += ".page()"
		} else {
			recv = ""
		}
	}
	if !awaited || !receiverExpr.MatchString(strings.TrimSuffix(recv, ".page()")) {
		return Change{}, edit{}, fmt.Sprintf("%s:%d: the call before the overlay is not a statement of its own (await page.goto(…)) to follow", nav.File, nav.Line), true
	}
	open := skipSpace(src, at+len(method))
	if open >= len(src) || src[open] != '(' {
		return Change{}, edit{}, fmt.Sprintf("%s:%d: the call's arguments are not where the trace says", nav.File, nav.Line), true
	}
	_, closing, scanned := scanArgs(src, open)
	if !scanned {
		return Change{}, edit{}, fmt.Sprintf("%s:%d: the call's arguments do not end", nav.File, nav.Line), true
	}
	end := closing + 1
	if end < len(src) && src[end] == ';' {
		end++
	}
	q := "'"
	if strings.Count(string(src), `"`) > strings.Count(string(src), "'") {
		q = `"`
	}
	semi := ";"
	if end > 0 && src[end-1] != ';' {
		semi = ""
	}
	line := "await " + recv + call(q) + semi
	// A test that already takes the step right there and still fails is
	// not healed by taking it twice (an earlier round's insertion, tried
	// again on a test still failing for another reason).
	next, prev := strings.TrimLeft(string(src[end:]), " \t\r\n"), strings.TrimRight(string(src[:start]), " \t\r\n")
	if !before && strings.HasPrefix(next, line) || before && strings.HasSuffix(prev, line) {
		return Change{}, edit{}, fmt.Sprintf("%s:%d: the test already takes the step the app asks for right there (%s), and still fails", nav.File, nav.Line, line), true
	}
	e = edit{file: nav.File, start: end, end: end, text: "\n" + indent + line}
	ch = Change{File: nav.File, Line: nav.Line + 1, Method: stepMethod, Old: "", New: line}
	if before {
		e = edit{file: nav.File, start: start, end: start, text: indent + line + "\n"}
		ch.Line = nav.Line
	}
	return ch, e, "", true
}

// reasonGone starts the reason of a test whose element is gone with
// nothing like it on the page.
const reasonGone = "the element the test needs is gone: "

// droppable are the actions a step removal may take out: a step the app
// no longer asks for (a banner to dismiss, a field no longer there).
var droppable = map[string]bool{"click": true, "dblclick": true, "check": true, "uncheck": true, "hover": true, "tap": true,
	"press": true, "fill": true, "selectOption": true, "setChecked": true}

// removeStepEdit is the edit taking out the statement of the action that
// failed at f: a statement of its own line (await x.click();), removed
// with its line.
func removeStepEdit(p Project, f *TraceAction) (edit, Change, error) {
	if !droppable[f.Method] {
		return edit{}, Change{}, fmt.Errorf("%s is not a step to take out", f.Method)
	}
	src, at, err := sourceAt(p, f.File, f.Line, f.Column)
	if err != nil {
		return edit{}, Change{}, fmt.Errorf("the step: %w", err)
	}
	start := at - (f.Column - 1)
	if identAt(src, at) != f.Method {
		return edit{}, Change{}, fmt.Errorf("%s:%d: the step is not where the trace says", f.File, f.Line)
	}
	open := skipSpace(src, at+len(f.Method))
	if open >= len(src) || src[open] != '(' {
		return edit{}, Change{}, fmt.Errorf("%s:%d: the step's arguments are not where the trace says", f.File, f.Line)
	}
	_, closing, ok := scanArgs(src, open)
	if !ok {
		return edit{}, Change{}, fmt.Errorf("%s:%d: the step's arguments do not end", f.File, f.Line)
	}
	end := closing + 1
	if end < len(src) && src[end] == ';' {
		end++
	}
	for end < len(src) && (src[end] == ' ' || src[end] == '\t' || src[end] == '\r') {
		end++
	}
	text := strings.TrimSpace(string(src[start:end]))
	if !strings.HasPrefix(text, "await ") || strings.Contains(text, "\n") || (end < len(src) && src[end] != '\n') {
		return edit{}, Change{}, fmt.Errorf("%s:%d: the step is not a statement of its own line", f.File, f.Line)
	}
	if end < len(src) {
		end++ // its line break
	}
	return edit{file: f.File, start: start, end: end}, Change{File: f.File, Line: f.Line, Method: f.Method, Selector: f.Selector, Old: text}, nil
}

// assertions counts a test's assertions that passed.
func assertions(actions []TraceAction) int {
	n := 0
	for _, a := range actions {
		if (a.Method == "expect" || strings.HasPrefix(a.API, "expect")) && a.Error == "" {
			n++
		}
	}
	return n
}

// stepTrial takes out the steps whose element is gone (a regression so
// far) and runs their tests again: a test that then passes making every
// assertion it made when it last passed had a step the app no longer asks
// for, and the removal is kept, verified by that same run; the others stay
// regressions. cur and last move on to the kept patch.
func (r ProjectRunner) stepTrial(ctx context.Context, cur *Project, last *trial, tests map[string]*RepairedTest, order []string,
	prints map[string][]TraceAction, o RunOptions) ([]Change, error) {
	type candidate struct {
		id string
		e  edit
		ch Change
	}
	var cands []candidate
	for _, id := range order {
		t, rt := last.tests[id], tests[id]
		if t.Status != StatusFailed || rt.Verdict != orchestrator.VerdictRegression || t.Failure == nil || !strings.HasPrefix(rt.Reason, reasonGone) ||
			prints[id] == nil {
			continue
		}
		if submitsAForm(recorded(prints[id], t.Failure)) {
			// A form's submit is how the app takes what the test enters:
			// its loss is the app's, however little the test checks.
			continue
		}
		if !onItsPage(prints[id], t.Failure) {
			continue
		}
		e, ch, err := removeStepEdit(*cur, t.Failure)
		if err != nil {
			continue
		}
		ch.Tests = []string{rt.Title}
		cands = append(cands, candidate{id, e, ch})
	}
	for tries := 0; len(cands) > 0 && tries < 2; tries++ {
		var edits []edit
		var ids []string
		for _, c := range cands {
			edits, ids = append(edits, c.e), append(ids, c.id)
		}
		p, next, broke, err := r.retry(ctx, *cur, last, edits, ids, false, o)
		if err != nil {
			return nil, err
		}
		var kept []candidate
		for _, c := range cands {
			t := next.tests[c.id]
			if t.Status == StatusPassed && assertions(t.Actions) >= assertions(prints[c.id]) {
				kept = append(kept, c)
			}
		}
		if broke {
			return nil, nil
		}
		if len(kept) == len(cands) {
			*cur = p
			last.adopt(next)
			var out []Change
			for _, c := range kept {
				rt := tests[c.id]
				rt.Verdict = orchestrator.VerdictHealed
				rt.Reason = fmt.Sprintf("the app no longer asks for a step, taken out: %s (its element is gone, and the test makes every check it made without it)", c.ch.Old)
				out = withTest(out, c.ch, rt.Title)
			}
			return out, nil
		}
		cands = kept
	}
	return nil, nil
}

// urlAt is the page's URL when a passing run made the call at f ("":
// not recorded).
func urlAt(passing []TraceAction, f *TraceAction) string {
	for _, a := range passing {
		if a.File == f.File && a.Line == f.Line && a.Column == f.Column {
			return a.URL
		}
	}
	return ""
}

// onItsPage says the failing call f ran on the page the same call ran on
// when its test passed. When the test is elsewhere (a sign-in the app
// refused left it on the login page), or where either was is not known,
// an earlier step may not have done what it did, and the test's next
// checks passing without the step would prove nothing of it.
func onItsPage(passing []TraceAction, f *TraceAction) bool {
	was, now := urlAt(passing, f), f.URL
	return was != "" && now != "" && samePage(now, was)
}

// samePage says two known URLs are the same page (path; query and
// fragment aside).
func samePage(a, b string) bool {
	ua, ea := url.Parse(a)
	ub, eb := url.Parse(b)
	if ea != nil || eb != nil {
		return false
	}
	return strings.TrimSuffix(ua.Path, "/") == strings.TrimSuffix(ub.Path, "/")
}

// recorded is the element a passing run recorded the call at f acting on
// (nil: none).
func recorded(passing []TraceAction, f *TraceAction) *SnapshotElement {
	for i := range passing {
		if a := &passing[i]; a.File == f.File && a.Line == f.Line && a.Column == f.Column && a.Target != nil {
			return a.Target
		}
	}
	return nil
}

// submitsAForm reports whether el is a form's submit control: a submit
// input, or a button of type submit (a button's default inside a form).
func submitsAForm(el *SnapshotElement) bool {
	if el == nil {
		return false
	}
	typ := strings.ToLower(el.Attributes["type"])
	inForm := slices.Contains(strings.Fields(el.Path), "form")
	switch el.Tag {
	case "input":
		return typ == "submit" || typ == "image"
	case "button":
		return typ == "submit" || (typ == "" && inForm)
	}
	return false
}
