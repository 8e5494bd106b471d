package suite

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// A timing heal changes one thing: how long an assertion waits. An
// assertion that timed out on an element that is there, reading something
// else, is either the app being slower than the test waits or the app
// being wrong; only a run that waits longer can tell. Repair tries that run
// and keeps the longer timeout only where the test then passes.

// matcherOptions is the argument index of each retrying matcher's options
// (expect(locator).toHaveText(expected, { timeout })).
var matcherOptions = map[string]int{
	"toBeAttached": 0, "toBeChecked": 0, "toBeDisabled": 0, "toBeEditable": 0, "toBeEmpty": 0, "toBeEnabled": 0,
	"toBeFocused": 0, "toBeHidden": 0, "toBeInViewport": 0, "toBeVisible": 0, "toBeOK": 0,
	"toContainText": 1, "toHaveAccessibleDescription": 1, "toHaveAccessibleName": 1, "toHaveClass": 1, "toContainClass": 1,
	"toHaveCount": 1, "toHaveId": 1, "toHaveRole": 1, "toHaveText": 1, "toHaveTitle": 1, "toHaveURL": 1,
	"toHaveValue": 1, "toHaveValues": 1, "toMatchAriaSnapshot": 1,
	"toHaveAttribute": 2, "toHaveCSS": 2, "toHaveJSProperty": 2,
}

// actionOptions is the argument index of each action's options
// (locator.click({ timeout })): an action waits for its element as an
// assertion does, up to its own timeout.
var actionOptions = map[string]int{
	"click": 0, "dblclick": 0, "check": 0, "uncheck": 0, "hover": 0, "tap": 0, "focus": 0, "clear": 0, "waitFor": 0,
	"fill": 1, "press": 1, "type": 1, "pressSequentially": 1, "selectOption": 1, "setChecked": 1, "setInputFiles": 1,
	"selectText": 0, "scrollIntoViewIfNeeded": 0, "innerText": 0, "textContent": 0, "inputValue": 0, "getAttribute": 1,
}

// timedOut reads the timeout an assertion or an action gave up after.
var timedOut = regexp.MustCompile(`Timed out (\d+)ms waiting for expect|\.\w+: Timeout (\d+)ms exceeded`)

// Timing bounds: a longer wait is at least minTimingWait and at most
// maxTimingWait, five times what the test waited.
const (
	minTimingWait = 10_000
	maxTimingWait = 30_000
)

// timingEdit is the edit giving the assertion that failed at f a longer
// timeout, in the file as written (found at the call site the trace gives,
// which is the matcher's name), and the timeouts before and after.
func timingEdit(p Project, f *TraceAction, errText string) (edit, Change, error) {
	m := timedOut.FindStringSubmatch(errText + "\n" + f.Error)
	if m == nil {
		return edit{}, Change{}, fmt.Errorf("the assertion did not time out")
	}
	waited, _ := strconv.Atoi(m[1] + m[2])
	longer := min(max(waited*5, minTimingWait), maxTimingWait)
	if longer <= waited {
		return edit{}, Change{}, fmt.Errorf("the assertion already waited %d ms", waited)
	}
	src, at, err := sourceAt(p, f.File, f.Line, f.Column)
	if err != nil {
		return edit{}, Change{}, fmt.Errorf("the call site: %w", err)
	}
	name := identAt(src, at)
	idx, ok := matcherOptions[name]
	if !ok {
		idx, ok = actionOptions[name]
	}
	if !ok {
		return edit{}, Change{}, fmt.Errorf("%s:%d is neither a retrying assertion nor an action (%q)", f.File, f.Line, name)
	}
	open := skipSpace(src, at+len(name))
	if open >= len(src) || src[open] != '(' {
		return edit{}, Change{}, fmt.Errorf("%s:%d: the assertion's arguments are not where the trace says", f.File, f.Line)
	}
	args, closing, ok := scanArgs(src, open)
	if !ok {
		return edit{}, Change{}, fmt.Errorf("%s:%d: the assertion's arguments do not end", f.File, f.Line)
	}
	num := msLiteral(src, longer)
	ch := Change{File: f.File, Line: f.Line, Method: name, Selector: f.Selector, Old: strconv.Itoa(waited) + " ms", New: strconv.Itoa(longer) + " ms"}
	e := edit{file: f.File}
	switch {
	case len(args) == idx:
		// No options: add them.
		e.start, e.end, e.text = closing, closing, "{ timeout: "+num+" }"
		if idx > 0 {
			e.text = ", " + e.text
		}
		// A trailing comma stays where it was.
		if t := strings.TrimRight(string(src[open+1:closing]), " \t\r\n"); strings.HasSuffix(t, ",") {
			e.start = open + 1 + len(t)
			e.end = e.start
			e.text = " { timeout: " + num + " },"
			if idx == 0 {
				e.text = "{ timeout: " + num + " },"
			}
		}
	case len(args) > idx:
		a := args[idx]
		obj := src[a[0]:a[1]]
		if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
			return edit{}, Change{}, fmt.Errorf("%s:%d: the assertion's options are not written where they can be changed", f.File, f.Line)
		}
		props, _, ok := scanArgs(src, a[0])
		if !ok {
			return edit{}, Change{}, fmt.Errorf("%s:%d: the assertion's options do not end", f.File, f.Line)
		}
		found := false
		for _, pr := range props {
			text := string(src[pr[0]:pr[1]])
			key, value, ok := strings.Cut(text, ":")
			if k := strings.Trim(strings.TrimSpace(key), `'"`); k != "timeout" {
				continue
			}
			if !ok {
				return edit{}, Change{}, fmt.Errorf("%s:%d: the assertion's timeout is a variable", f.File, f.Line)
			}
			vs := pr[0] + len(key) + 1 + (len(value) - len(strings.TrimLeft(value, " \t\r\n")))
			e.start, e.end, e.text = vs, pr[1], num
			found = true
		}
		if !found && len(props) == 0 {
			e.start, e.end, e.text = a[0]+1, a[1]-1, " timeout: "+num+" "
		} else if !found {
			// Last, so a spread before it cannot undo it.
			last := props[len(props)-1]
			e.start, e.end, e.text = last[1], last[1], ", timeout: "+num
		}
	default:
		return edit{}, Change{}, fmt.Errorf("%s:%d: the assertion has fewer arguments than its options' place", f.File, f.Line)
	}
	return e, ch, nil
}

// identAt is the JavaScript identifier starting at i.
func identAt(src []byte, i int) string {
	j := i
	for j < len(src) && (src[j] == '_' || src[j] == '$' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' ||
		j > i && src[j] >= '0' && src[j] <= '9') {
		j++
	}
	if i < 0 || i > len(src) {
		return ""
	}
	return string(src[i:j])
}

func skipSpace(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	return i
}

// scanArgs reads the comma-separated parts between the bracket at open
// ('(' or '{') and its match: each part's trimmed [start, end) (an empty
// last part after a trailing comma is left out) and the closing bracket's
// offset. Strings, templates, comments and regular expressions are read
// as such, so their brackets and commas do not count.
func scanArgs(src []byte, open int) (parts [][2]int, closing int, ok bool) {
	depth := 0
	start := open + 1
	prev := byte('(') // the last significant byte: decides whether '/' opens a regex
	add := func(end int) {
		s, e := start, end
		for s < e && strings.ContainsRune(" \t\r\n", rune(src[s])) {
			s++
		}
		for e > s && strings.ContainsRune(" \t\r\n", rune(src[e-1])) {
			e--
		}
		if e > s {
			parts = append(parts, [2]int{s, e})
		}
	}
	for i := open; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
			if depth == 0 {
				add(i)
				return parts, i, true
			}
		case c == ',' && depth == 1:
			add(i)
			start = i + 1
		case c == '\'' || c == '"':
			end, ok := scanString(src, i)
			if !ok {
				return nil, 0, false
			}
			i = end - 1
		case c == '`':
			end, ok := scanTemplate(src, i)
			if !ok {
				return nil, 0, false
			}
			i = end - 1
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(string(src[i+2:]), "*/")
			if end < 0 {
				return nil, 0, false
			}
			i += end + 3
			continue
		case c == '/' && strings.IndexByte("(,=:[!&|?{};+-*%<>~^", prev) >= 0:
			end, ok := scanRegex(src, i)
			if !ok {
				return nil, 0, false
			}
			i = end - 1
		}
		if !strings.ContainsRune(" \t\r\n", rune(c)) {
			prev = src[i]
		}
	}
	return nil, 0, false
}

// scanTemplate finds the end of the template literal starting at start,
// its substitutions included.
func scanTemplate(src []byte, start int) (int, bool) {
	for i := start + 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '`':
			return i + 1, true
		case '$':
			if i+1 < len(src) && src[i+1] == '{' {
				_, closing, ok := scanArgs(src, i+1)
				if !ok {
					return 0, false
				}
				i = closing
			}
		}
	}
	return 0, false
}

// scanRegex finds the end of the regular expression literal (flags
// included) starting at start.
func scanRegex(src []byte, start int) (int, bool) {
	class := false
	for i := start + 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '[':
			class = true
		case ']':
			class = false
		case '\n':
			return 0, false
		case '/':
			if !class {
				j := i + 1
				for j < len(src) && (src[j] >= 'a' && src[j] <= 'z') {
					j++
				}
				return j, true
			}
		}
	}
	return 0, false
}

// testTimedOut reads the timeout a whole test ran out of.
var testTimedOut = regexp.MustCompile(`Test timeout of (\d+)ms exceeded`)

// maxTestTimeout bounds a test's longer timeout.
const maxTestTimeout = 120_000

// testTimeoutEdit is the edit giving a test that ran out of its own
// timeout (its steps each within theirs: the app slower everywhere) three
// times as long, by a setTimeout call first in its body, through the
// test object it was declared with.
func testTimeoutEdit(p Project, t TestOutcome) (edit, Change, error) {
	m := testTimedOut.FindStringSubmatch(t.Error)
	if m == nil {
		return edit{}, Change{}, fmt.Errorf("the test did not run out of its timeout")
	}
	waited, _ := strconv.Atoi(m[1])
	return testTimeoutLonger(p, t, waited)
}

// outlasts says whether a call's longer wait (a timing edit's Change)
// cannot end within the test's own time: the test would run out of its
// timeout during the very wait it was given, and a second trial would be
// needed to find out. The test's time is its project's timeout; one the
// test sets itself is not known here.
func outlasts(ch Change, t TestOutcome) bool {
	wait, err := strconv.Atoi(strings.TrimSuffix(ch.New, " ms"))
	return err == nil && t.TimeoutMS > 0 && wait >= t.TimeoutMS
}

// testTimeoutLonger is testTimeoutEdit for a test whose time, waited ms,
// is known without it having run out.
func testTimeoutLonger(p Project, t TestOutcome, waited int) (edit, Change, error) {
	longer := min(waited*3, maxTestTimeout)
	if longer <= waited {
		return edit{}, Change{}, fmt.Errorf("the test already waited %d ms", waited)
	}
	src, at, err := sourceAt(p, t.File, t.Line, t.Column)
	if err != nil {
		return edit{}, Change{}, fmt.Errorf("the test's declaration: %w", err)
	}
	obj := identAt(src, at)
	if obj == "" {
		return edit{}, Change{}, fmt.Errorf("%s:%d: no test call where the runner says", t.File, t.Line)
	}
	i := at + len(obj)
	for i < len(src) && src[i] == '.' { // test.only, test.fixme…
		i += 1 + len(identAt(src, i+1))
	}
	i = skipSpace(src, i)
	if i >= len(src) || src[i] != '(' {
		return edit{}, Change{}, fmt.Errorf("%s:%d: the test's arguments are not where the runner says", t.File, t.Line)
	}
	args, _, ok := scanArgs(src, i)
	if !ok || len(args) < 2 {
		return edit{}, Change{}, fmt.Errorf("%s:%d: the test's function is not written out", t.File, t.Line)
	}
	body, ok := functionBody(src, args[len(args)-1])
	if !ok {
		return edit{}, Change{}, fmt.Errorf("%s:%d: the test's function has no block to set its timeout in", t.File, t.Line)
	}
	// The new line takes the indentation of the body's first line.
	indent := "  "
	if nl := strings.IndexByte(string(src[body+1:]), '\n'); nl >= 0 {
		rest := src[body+1+nl+1:]
		n := 0
		for n < len(rest) && (rest[n] == ' ' || rest[n] == '\t') {
			n++
		}
		if n > 0 {
			indent = string(rest[:n])
		}
	}
	num := msLiteral(src, longer)
	e := edit{file: t.File, start: body + 1, end: body + 1, text: "\n" + indent + obj + ".setTimeout(" + num + ");"}
	ch := Change{File: t.File, Line: t.Line, Method: "setTimeout", Old: strconv.Itoa(waited) + " ms", New: strconv.Itoa(longer) + " ms"}
	return e, ch, nil
}

// beforeEdit maps a call site read in a run of p with e applied (a
// test's longer timeout, a line inserted at the top of its body) back to
// p as it is: the lines after the insertion moved down. It reports false
// for a site inside the inserted text.
func beforeEdit(p Project, e edit, f TraceAction) (TraceAction, bool) {
	if f.File != e.file {
		return f, true
	}
	file, ok := p.File(e.file)
	if !ok || e.start > e.end || e.end > len(file.Content) {
		return f, false
	}
	at := lineOf(file.Content, e.start) // the line the edit begins on
	added := strings.Count(e.text, "\n") - bytes.Count(file.Content[e.start:e.end], []byte("\n"))
	switch {
	case f.Line <= at:
		return f, true
	case f.Line > at+added:
		f.Line -= added
		return f, true
	}
	return f, false
}

// msLiteral writes ms as the file writes its numbers: with digit
// separators (10_000) where it uses them.
func msLiteral(src []byte, ms int) string {
	num := strconv.Itoa(ms)
	if !bytes.Contains(src, []byte("_000")) {
		return num
	}
	var b strings.Builder
	for i, d := range num {
		if i > 0 && (len(num)-i)%3 == 0 {
			b.WriteByte('_')
		}
		b.WriteRune(d)
	}
	return b.String()
}

// functionBody is the offset of the opening brace of the function written
// at fn (an arrow function or a function expression, async or not).
func functionBody(src []byte, fn [2]int) (int, bool) {
	i := skipSpace(src, fn[0])
	if identAt(src, i) == "async" {
		i = skipSpace(src, i+len("async"))
	}
	if identAt(src, i) == "function" {
		i = skipSpace(src, i+len("function"))
		i = skipSpace(src, i+len(identAt(src, i))) // its name, if any
	}
	switch {
	case i < len(src) && src[i] == '(':
		_, closing, ok := scanArgs(src, i)
		if !ok {
			return 0, false
		}
		i = skipSpace(src, closing+1)
	case identAt(src, i) != "":
		i = skipSpace(src, i+len(identAt(src, i))) // a lone parameter
	default:
		return 0, false
	}
	if i+1 < len(src) && src[i] == '=' && src[i+1] == '>' {
		i = skipSpace(src, i+2)
	}
	if i >= fn[1] || src[i] != '{' {
		return 0, false
	}
	return i, true
}

// sourceAt is a file's content and the offset of a 1-based line and
// column in it, as a trace or the runner gives a place.
func sourceAt(p Project, path string, line, col int) ([]byte, int, error) {
	f, ok := p.File(path)
	if !ok || line < 1 || col < 1 {
		return nil, 0, fmt.Errorf("%s:%d is not in the project", path, line)
	}
	lines := lineStarts(string(f.Content))
	if line > len(lines) {
		return nil, 0, fmt.Errorf("%s:%d is not in the file", path, line)
	}
	return f.Content, lines[line-1] + col - 1, nil
}

// timingTrial gives each assertion or action that timed out on an
// element that is there, or on an entry not shown yet (a regression so
// far), a longer timeout, runs the tests again, and keeps the longer
// timeouts of the tests that then pass, verified by a run of exactly
// those; the others stay regressions. A test that then runs out of its
// own timeout gets a longer one too. cur and last move on to the kept
// patch.
func (r ProjectRunner) timingTrial(ctx context.Context, cur *Project, last *trial, tests map[string]*RepairedTest, order []string,
	o RunOptions) ([]Change, error) {
	type candidate struct {
		id     string
		e      edit // the call's longer timeout
		ch     Change
		test   *edit // the test's longer timeout, once it ran out of its own
		testCh Change
		whole  bool // e is the test's longer timeout (the call had none, or the test ran out during it)
		key    edit // e as the candidate began: what the first trials know it by
	}
	var cands []candidate
	for _, id := range order {
		t, rt := last.tests[id], tests[id]
		if t.Status != StatusFailed || rt.Verdict != orchestrator.VerdictRegression || t.Failure == nil {
			continue
		}
		e, ch, err := timingEdit(*cur, t.Failure, t.Error)
		if err != nil && t.Failure.Pending {
			// The call had no timeout of its own and waited out the
			// test's: the test's is the one made longer.
			if e, ch, err = testTimeoutEdit(*cur, t); err == nil {
				ch.Tests = []string{rt.Title}
				cands = append(cands, candidate{id: id, e: e, ch: ch, test: &e, testCh: ch, whole: true, key: e})
			}
			continue
		}
		if err != nil {
			continue
		}
		ch.Tests = []string{rt.Title}
		c := candidate{id: id, e: e, ch: ch, key: e}
		if outlasts(ch, t) {
			// The call's longer wait alone outlasts the test's time: the
			// test is given longer with it, not after a trial spent
			// running out (under a regression, every candidate's).
			if te, tch, err := testTimeoutLonger(*cur, t, t.TimeoutMS); err == nil {
				tch.Tests = []string{rt.Title}
				c.test, c.testCh = &te, tch
			}
		}
		cands = append(cands, c)
	}
	site := func(a, b candidate) bool { return a.e.file == b.e.file && a.e.start == b.e.start }
	// try runs the candidates' files, or only their own tests, with their
	// edits; it answers the patched project, the run, the tests that
	// passed, and whether any test that passed before broke.
	try := func(cs []candidate, only bool) (Project, trial, map[string]bool, bool, error) {
		var edits []edit
		var ids []string
		for _, c := range cs {
			edits = append(edits, c.e)
			if c.test != nil && !c.whole {
				edits = append(edits, *c.test)
			}
			ids = append(ids, c.id)
		}
		p, next, broke, err := r.retry(ctx, *cur, last, edits, ids, only, o)
		if err != nil {
			return Project{}, trial{}, nil, false, err
		}
		passed := map[string]bool{}
		for id, t := range next.tests {
			passed[id] = t.Status == StatusPassed
		}
		return p, next, passed, broke, nil
	}
	// longer gives a candidate that ran out of its test's timeout in the
	// run next a longer one; and one whose test, given longer, then ran
	// out of its call's own wait (the test's time had ended during the
	// call: a loaded machine, a slow start) a longer wait for the call
	// too. It reports whether it did.
	longer := func(c *candidate, next trial) bool {
		t, ok := next.tests[c.id]
		if !ok || t.Status != StatusFailed {
			return false
		}
		if c.test == nil {
			e, ch, err := testTimeoutEdit(*cur, t)
			if err != nil {
				return false
			}
			ch.Tests = []string{tests[c.id].Title}
			c.test, c.testCh = &e, ch
			return true
		}
		if !c.whole || t.Failure == nil {
			return false
		}
		f, ok := beforeEdit(*cur, *c.test, *t.Failure)
		if !ok {
			return false
		}
		e, ch, err := timingEdit(*cur, &f, t.Error)
		if err != nil {
			return false
		}
		ch.Tests = []string{tests[c.id].Title}
		c.e, c.ch, c.whole = e, ch, false
		return true
	}
	// First one test per call site: under a regression every candidate
	// waits its longer timeout in vain, and a call site shared by many
	// tests (a page object's assertion) answers for all of them. Only the
	// sites whose test then passes are tried on their whole files.
	if len(cands) > 1 {
		// Of one config project where it can: each project named runs
		// every test on the lines named.
		first := last.tests[cands[0].id].Project
		var reps []candidate
		for _, c := range cands {
			i := slices.IndexFunc(reps, func(x candidate) bool { return site(x, c) })
			switch {
			case i < 0:
				reps = append(reps, c)
			case last.tests[reps[i].id].Project != first && last.tests[c.id].Project == first:
				reps[i] = c
			}
		}
		good := map[edit]candidate{} // by call site, as it passed
		for tries, pending := 0, reps; tries < 2 && len(pending) > 0; tries++ {
			_, next, passed, _, err := try(pending, true)
			if err != nil {
				return nil, err
			}
			var again []candidate
			for _, c := range pending {
				switch {
				case passed[c.id]:
					good[c.key] = c
				case longer(&c, next):
					again = append(again, c)
				}
			}
			pending = again
		}
		var next []candidate
		for _, c := range cands {
			if rep, ok := good[c.key]; ok {
				if rep.id == c.id {
					c = rep // with the test's longer timeout, if it took one
				}
				next = append(next, c)
			}
		}
		cands = next
	}
	for tries := 0; len(cands) > 0 && tries < 4; tries++ {
		p, next, passed, broke, err := try(cands, false)
		if err != nil {
			return nil, err
		}
		var kept []candidate
		extended := false
		for _, c := range cands {
			switch {
			case passed[c.id]:
				kept = append(kept, c)
			case longer(&c, next):
				kept, extended = append(kept, c), true
			}
		}
		if len(kept) == len(cands) && !broke && !extended {
			*cur = p
			last.adopt(next)
			var out []Change
			for _, c := range kept {
				rt := tests[c.id]
				rt.Verdict = orchestrator.VerdictHealed
				rt.Reason = fmt.Sprintf("the app took longer than the test waited: %s now waits %s (it waited %s)", c.ch.Method, c.ch.New, c.ch.Old)
				if c.whole {
					rt.Reason = fmt.Sprintf("the app took longer than the test waited: the test may take %s (it had %s)", c.ch.New, c.ch.Old)
				}
				out = withTest(out, c.ch, rt.Title)
				if c.test != nil && !c.whole {
					rt.Reason += fmt.Sprintf(", and the test may take %s (it had %s)", c.testCh.New, c.testCh.Old)
					out = withTest(out, c.testCh, rt.Title)
				}
			}
			return out, nil
		}
		// Only the longer waits that healed (or ran out of the test's
		// time) are tried again.
		if broke || (len(kept) == len(cands) && !extended) {
			return nil, nil
		}
		cands = kept
	}
	return nil, nil
}
