// Diagnosis of a failing call: the drift of a locator, re-located on the
// page and rewritten in the file's own spelling, or the app regression it
// shows, with the reason a customer reads.

package suite

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// hasText is a selector's text filter (filter({ hasText: 'Honey' })).
var hasText = regexp.MustCompile(`internal:has-text="((?:[^"\\]|\\.)*)"`)

// filterText is the text a selector filters its elements by, if any.
func filterText(selector string) (string, bool) {
	m := hasText.FindStringSubmatch(selector)
	if m == nil {
		return "", false
	}
	return strings.ReplaceAll(m[1], `\"`, `"`), true
}

// received is an assertion's report of what it found.
var received = regexp.MustCompile(`(?m)^\s*Received(?: string| value| array| number)?:\s*(.+)$`)

// holdsOther reports whether an assertion's error says it found its
// elements holding something else (a count of 2, another text) rather
// than finding nothing.
func holdsOther(msg string) bool {
	m := received.FindStringSubmatch(msg)
	return m != nil && !strings.Contains(m[1], "element(s) not found") && !strings.Contains(m[1], "<element")
}

// notFound reports whether a runner error says the locator found nothing
// (as opposed to an element that is there with another value).
var notFound = regexp.MustCompile(`(?i)waiting for (?:get|locator|internal)|element\(s\) not found|to be visible|resolved to 0 elements|strict mode violation: .* resolved to 0`)

// diagnose says how a failing test's failure is healed (a change and its
// edit) or why it is not (a verdict and a reason). A regression found on
// another page than the call ran on when the test passed says so: it is
// the evidence a person reads first (a sign-in refused leaves the test on
// the login page).
func diagnose(t TestOutcome, passing []TraceAction, dom []SnapshotElement, sites []LocatorSite) (Change, edit, orchestrator.Verdict, string) {
	ch, e, verdict, why := diagnoseCall(t, passing, dom, sites)
	if f := t.Failure; verdict == orchestrator.VerdictRegression && f != nil {
		if was := urlAt(passing, f); was != "" && f.URL != "" && !samePage(f.URL, was) && !strings.Contains(why, f.URL) {
			why += fmt.Sprintf(" (the page was at %s; when the test passed, this call ran at %s)", f.URL, was)
		}
	}
	return ch, e, verdict, why
}

// diagnoseCall is diagnose, but for where the page was.
func diagnoseCall(t TestOutcome, passing []TraceAction, dom []SnapshotElement, sites []LocatorSite) (Change, edit, orchestrator.Verdict, string) {
	f := t.Failure
	if f != nil && f.Selector == "" && f.checksPage() {
		// Where the page is, or what it is called, is what the call
		// checks: the app went elsewhere (a longer wait is tried).
		return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the page is not where the test checks it is (%s at %s:%d; the page was at %s): %s",
			cmpOr(f.API, f.Method), f.File, f.Line, cmpOr(f.URL, "an unknown address"), firstLine(f.Error))
	}
	if f == nil || f.Selector == "" {
		return Change{}, edit{}, orchestrator.VerdictUnrepairable, "the failure is not on an element the trace names"
	}
	if f.Read {
		return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the test read the element (%s at %s:%d) and the value it got is not what it checks: %s",
			f.Method, f.File, f.Line, valueGot(t.Error))
	}
	if f.Target != nil {
		// The element was found and said something else: the app changed
		// what the test checks.
		return Change{}, edit{}, orchestrator.VerdictRegression, "the element is there but does not hold what the test checks: " + checked(t.Error, f.Error)
	}
	assertion := f.Method == "expect" || strings.HasPrefix(f.API, "expect")
	if assertion && holdsOther(t.Error+"\n"+f.Error) {
		// The elements are there (a count, a text, a value was received):
		// the app changed what the test checks, or was slower than it waits.
		return Change{}, edit{}, orchestrator.VerdictRegression, "the elements are there but do not hold what the test checks: " + checked(t.Error, f.Error)
	}
	// A call that never ended waited for its element until the test ran
	// out of time (a suite without an action timeout waits that way): it
	// is read as a locator that found nothing, as its own timeout would
	// have said.
	if !f.Pending && !notFound.MatchString(t.Error+" "+f.Error) {
		return Change{}, edit{}, orchestrator.VerdictUnrepairable, "the failure is not a missing element: " + firstLine(f.Error)
	}
	var old *SnapshotElement
	for i := range passing {
		a := passing[i]
		if a.File == f.File && a.Line == f.Line && a.Column == f.Column && a.Target != nil {
			old = a.Target
		}
	}
	if old == nil {
		for i := range passing {
			if a := passing[i]; a.Selector == f.Selector && a.Target != nil {
				old = a.Target
			}
		}
	}
	if old == nil {
		// A heal earlier on the line moved the call's column (a literal
		// rewritten longer or shorter): the one call of its method there.
		var on []*SnapshotElement
		for i := range passing {
			if a := passing[i]; a.File == f.File && a.Line == f.Line && a.Method == f.Method && a.Target != nil {
				on = append(on, a.Target)
			}
		}
		if len(on) == 1 {
			old = on[0]
		}
	}
	if old == nil {
		// No record of the element, but its locator's own words may name
		// what the test entered (a button "Delete Apples" after a fill of
		// "Apples"): shown nowhere, the app lost it, whatever the element.
		if v, at, ok := lostEntry(namedBy(f.Selector), t.Actions, f, dom); ok && len(dom) > 0 {
			return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the element the test needs is named for %q, which the test entered (%s:%d), and the page shows it nowhere: the app did not keep it",
				clip(v, 80), at.File, at.Line)
		}
		return Change{}, edit{}, orchestrator.VerdictUnrepairable, reasonNoRecord
	}
	if len(dom) == 0 {
		return Change{}, edit{}, orchestrator.VerdictUnrepairable, "the trace holds no picture of the page at the failure"
	}
	if v, at, ok := lostEntry(old.Text+"\n"+old.Attributes["aria-label"], t.Actions, f, dom); ok {
		// The element held what the test entered, and the page shows that
		// nowhere: the app did not keep the entry (or has not yet: a
		// longer wait is tried), and no other element is the one.
		return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the element the test needs held %q, which the test entered (%s:%d), and the page shows it nowhere: the app did not keep it",
			clip(v, 80), at.File, at.Line)
	}
	if ch, e, ok := ancestorIDHeal(f, *old, dom, sites); ok {
		return ch, e, "", ""
	}
	cand, top, why, ok := relocateIn(*old, dom)
	if !ok && top >= 0.95 {
		// The element is there as it was, more than once: which one the
		// locator meant is what changed, and nothing the app does.
		return Change{}, edit{}, orchestrator.VerdictUnrepairable, "the element is on the page as it was, but not alone: " + why
	}
	if !ok {
		return Change{}, edit{}, orchestrator.VerdictRegression, reasonGone + why
	}
	if !strings.Contains(f.Selector, "internal:") && !control(old) && old.Text != "" && !sameWords(old.Text, cand.Text) {
		// A CSS selector found content (a flash message, a status) and the
		// element most like it holds other words: the page is in another
		// state (an error where a success was), which no selector changes.
		return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the element the test waits for held %q; the one most like it on the page holds %q",
			clip(old.Text, 80), clip(cand.Text, 80))
	}
	return healAt(f, declaredAt(t, f), func(LocatorSite) SnapshotElement { return *old }, cand, sites, assertion)
}

// reasonNoRecord is why a failing call is not healed without a record of
// its element (a passing run, a baseline, the customer's traces) or the
// agent.
const reasonNoRecord = "no passing run recorded the element this call acted on"

// healAt rewrites, where the failing call's locator is defined, the
// literal that found old (as each site knew it) so that it finds cand:
// the change and its edit, or the verdict and why not.
//
// from is the line the failing test is declared at, when in the call's
// file (else 0): a literal between it and the call is the test's own.
func healAt(f *TraceAction, from int, old func(LocatorSite) SnapshotElement, cand SnapshotElement, sites []LocatorSite, assertion bool) (Change, edit, orchestrator.Verdict, string) {
	if text, ok := filterText(f.Selector); ok && !strings.Contains(strings.ToLower(cand.Text), strings.ToLower(text)) {
		// The test looks for an element holding a text (filter({ hasText }))
		// and the element most like the one it found before holds another:
		// the text is what the app no longer shows.
		return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("no element holds %q, which the test looks for", text)
	}
	// The last part of a chain with a call site of its own names the
	// element (getByRole('form').getByRole('button', …): the button); the
	// parts before it name its containers, which never take the element's
	// name, and parts no call writes (nth=, a filter) are passed over.
	parts := selectorParts(f.Selector)
	for i := len(parts) - 1; i >= 0; i-- {
		part := parts[i]
		// The literal written on the call's own line is the one it used
		// (two tests may each write page.fill('#password', …)); else the
		// first that makes the selector (a page object's, a helper's).
		var matching []LocatorSite
		for _, s := range sites {
			if s.Selector == part {
				matching = append(matching, s)
			}
		}
		if len(matching) == 0 {
			continue
		}
		// Else the nearest before it in the test's own body (const add =
		// page.getByRole(…) above a loop of add.click()): five tests may
		// each write the same literal, and the first is another test's.
		own := slices.IndexFunc(matching, func(s LocatorSite) bool { return s.File == f.File && s.Line == f.Line })
		if own < 0 && from > 0 {
			for i, s := range matching {
				if s.File == f.File && s.Line >= from && s.Line < f.Line && (own < 0 || s.Line > matching[own].Line) {
					own = i
				}
			}
		}
		if own > 0 {
			matching[0], matching[own] = matching[own], matching[0]
		}
		for _, s := range matching {
			lit, text, why := rewrite(s, old(s), cand, assertion)
			if lit == nil && why == errAsserted {
				// The element is there and its text is not what the test
				// checks: the app changed, not the test.
				checked := s.Arg
				if s.Name != nil {
					checked = *s.Name
				}
				return Change{}, edit{}, orchestrator.VerdictRegression, fmt.Sprintf("the element is there but reads %q, not what the test checks (%s)",
					clip(cmpOr(cand.Attributes["aria-label"], cand.Text), 80), stringOf(s, checked))
			}
			if lit == nil {
				return Change{}, edit{}, orchestrator.VerdictUnrepairable, why
			}
			if text == stringOf(s, *lit) || !lit.Regex && text == quoteLike(*lit, lit.Value) {
				// The locator still names the element: it was there and
				// the call waited for something else (it was covered or
				// disabled until the test ran out of time).
				return Change{}, edit{}, orchestrator.VerdictUnrepairable, "the element is there as the locator names it; the call waited on it for something else: " + firstLine(f.Error)
			}
			ch := Change{File: s.File, Line: s.Line, Method: s.Method, Selector: part, Old: stringOf(s, *lit), New: text}
			return ch, edit{file: s.File, start: lit.Start, end: lit.End, text: text}, "", ""
		}
	}
	return Change{}, edit{}, orchestrator.VerdictUnrepairable, errNoSite.Error() + ": " + f.Selector
}

// declaredAt is the line test t is declared at when the call is in its
// file, else 0.
func declaredAt(t TestOutcome, f *TraceAction) int {
	if t.File != f.File || t.Line > f.Line {
		return 0
	}
	return t.Line
}

// namedWords is a selector's accessible name, text or label filter.
var namedWords = regexp.MustCompile(`(?:\[name|internal:has-text|internal:text|internal:label)="((?:[^"\\]|\\.)*)"`)

// namedBy is the words a selector finds its element by (a role's name, a
// text, a label), one per line.
func namedBy(selector string) string {
	var words []string
	for _, m := range namedWords.FindAllStringSubmatch(selector, -1) {
		words = append(words, strings.ReplaceAll(m[1], `\"`, `"`))
	}
	return strings.Join(words, "\n")
}

// lostEntry finds what the test entered before its failure (a fill, a
// type) that the element it needed held (its text and label, or the words
// its locator names it by), and the failure's page shows in no element:
// the entry and the call that made it.
func lostEntry(held string, actions []TraceAction, failure *TraceAction, dom []SnapshotElement) (string, TraceAction, bool) {
	held = strings.ToLower(held)
	for _, a := range actions {
		if a.Error != "" && a.File == failure.File && a.Line == failure.Line && a.Column == failure.Column {
			break // only what was entered before the failure
		}
		v := strings.ToLower(strings.TrimSpace(a.Typed))
		if len([]rune(v)) < 2 || !strings.Contains(held, v) || (a.Target != nil && a.Target.Attributes["type"] == "password") {
			continue
		}
		shown := slices.ContainsFunc(dom, func(e SnapshotElement) bool {
			return e.Tag != "input" && e.Tag != "textarea" &&
				(strings.Contains(strings.ToLower(e.Text), v) || strings.Contains(strings.ToLower(e.Attributes["aria-label"]), v))
		})
		if !shown {
			return strings.TrimSpace(a.Typed), a, true
		}
	}
	return "", TraceAction{}, false
}

// expected is a value check's report of what it wanted.
var expected = regexp.MustCompile(`(?m)^\s*Expected(?: string| substring| pattern| value| array| number)?:\s*(.+)$`)

// valueGot is a failed value check's expected and received values, else
// its first line.
func valueGot(msg string) string {
	exp := expected.FindStringSubmatch(msg)
	got := received.FindStringSubmatch(msg)
	if exp == nil || got == nil {
		return firstLine(msg)
	}
	return fmt.Sprintf("expected %s, received %s", clip(exp[1], 80), clip(got[1], 80))
}

// checked is what a failed check expected and received, from the test's
// error (the runner's words) or the call's, else the call's first line.
func checked(testErr, callErr string) string {
	for _, m := range []string{testErr, callErr} {
		if expected.MatchString(m) && received.MatchString(m) {
			return valueGot(m)
		}
	}
	return firstLine(cmpOr(callErr, testErr))
}

func stringOf(s LocatorSite, l Literal) string {
	if l.Regex {
		return "/" + l.Value + "/" + l.Flags
	}
	return l.Value
}

// relocateIn finds the element of dom most like old, by the same weighted
// similarity and thresholds as a live re-location, with the best score
// (0 when nothing is like it).
func relocateIn(old SnapshotElement, dom []SnapshotElement) (el SnapshotElement, top float64, why string, ok bool) {
	of := asFingerprint(old)
	type scored struct {
		el    SnapshotElement
		score float64
	}
	var all []scored
	for _, e := range dom {
		all = append(all, scored{e, browser.Similarity(of, asFingerprint(e))})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	if len(all) == 0 || all[0].score < browser.RelocateMinScore {
		return SnapshotElement{}, 0, "nothing on the page is like it", false
	}
	if len(all) > 1 && all[0].score-all[1].score < browser.RelocateMinMargin {
		return SnapshotElement{}, all[0].score, fmt.Sprintf("two elements are about as like it (%.2f, %.2f)", all[0].score, all[1].score), false
	}
	return all[0].el, all[0].score, "", true
}

// asFingerprint describes a snapshot element the way re-location compares.
func asFingerprint(e SnapshotElement) browser.Fingerprint {
	a := e.Attributes
	attrs := map[string]string{}
	for _, k := range []string{"id", "name", "type", "class", "href"} {
		if a[k] != "" {
			attrs[k] = a[k]
		}
	}
	name := cmpOr(a["aria-label"], a["label"])
	if name == "" && len(e.Text) <= 80 {
		name = e.Text
	}
	return browser.Fingerprint{Tag: e.Tag, Role: a["role"], Name: name, Label: a["label"], Placeholder: a["placeholder"],
		TestID: a["data-testid"], Alt: a["alt"], Title: a["title"], Text: e.Text, Tags: e.Path, Attributes: attrs}
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// rewrite writes a site's literal anew for the relocated element, in the
// site's idiom: a test id stays a test id, a role stays a role and name, a
// regular expression stays one (with its flags), a CSS id stays an id. In
// an assertion, a text that is the content the test checks (a getByText,
// a heading's or an alert's name) is never changed; a control's name or
// label is how the assertion finds it, and drifts as any locator does.
func rewrite(s LocatorSite, old, cand SnapshotElement, assertion bool) (*Literal, string, string) {
	name := cmpOr(cand.Attributes["aria-label"], cand.Attributes["label"], cand.Text)
	was := cmpOr(old.Attributes["aria-label"], old.Attributes["label"], old.Text)
	textual := func(l Literal, now string) (*Literal, string, string) {
		if assertion && checksContent(s) {
			return nil, "", errAsserted
		}
		if now == "" {
			return nil, "", "the element found has no text to name it by"
		}
		if l.Regex {
			re, err := regexp.Compile(jsRegex(l.Value, l.Flags))
			if err == nil && re.MatchString(now) {
				return nil, "", "the regular expression still matches the element; the drift is elsewhere"
			}
			return &l, regexLike(l, now), ""
		}
		return &l, quoteLike(l, keepAround(l.Value, was, now)), ""
	}
	switch s.Method {
	case "getByTestId":
		id := cand.Attributes["data-testid"]
		if id == "" || s.Arg.Regex {
			return nil, "", "the element found has no test id"
		}
		return &s.Arg, quoteLike(s.Arg, id), ""
	case "locator", "click", "dblclick", "fill", "type", "check", "uncheck", "selectOption", "hover", "press", "focus", "tap",
		"textContent", "innerText", "inputValue", "isVisible", "isHidden", "isChecked", "isEnabled", "getAttribute",
		"waitForSelector", "setInputFiles", "dispatchEvent", "$", "$$", "$eval", "$$eval":
		css := s.Arg.Value
		switch oldID, newID := old.Attributes["id"], cand.Attributes["id"]; {
		case oldID != "" && newID != "" && strings.Contains(css, "#"+oldID):
			return &s.Arg, quoteLike(s.Arg, replaceToken(css, "#"+oldID, "#"+newID)), ""
		case old.Attributes["data-testid"] != "" && cand.Attributes["data-testid"] != "" && strings.Contains(css, old.Attributes["data-testid"]):
			return &s.Arg, quoteLike(s.Arg, strings.ReplaceAll(css, old.Attributes["data-testid"], cand.Attributes["data-testid"])), ""
		}
		return nil, "", "the CSS names no id or test id that moved"
	case "getByRole":
		if s.Name == nil {
			return nil, "", "the role alone names the element; nothing to rewrite"
		}
		return textual(*s.Name, name)
	case "getByLabel":
		return textual(s.Arg, cmpOr(cand.Attributes["label"], cand.Attributes["aria-label"]))
	case "getByPlaceholder":
		return textual(s.Arg, cand.Attributes["placeholder"])
	case "getByText":
		return textual(s.Arg, cand.Text)
	case "getByAltText":
		return textual(s.Arg, cand.Attributes["alt"])
	case "getByTitle":
		return textual(s.Arg, cand.Attributes["title"])
	}
	return nil, "", "a locator of this kind is not rewritten"
}

// keepAround writes now as lit wrote was: what lit holds around the
// element's text as the page's markup holds it stays around the new text.
// A name copied from the accessibility tree holds what no snapshot of the
// markup shows, such as an icon font's glyph drawn by CSS (' Login',
// the button's markup reading "Login"); the new name keeps it (' Log
// in'), or the button is found by no name at all.
func keepAround(lit, was, now string) string {
	was = strings.Join(strings.Fields(was), " ")
	if was == "" {
		return now
	}
	i := strings.Index(strings.ToLower(lit), strings.ToLower(was))
	if i < 0 || len(strings.ToLower(lit)) != len(lit) {
		return now
	}
	return lit[:i] + now + lit[i+len(was):]
}

// controlTags are the elements a user acts on: their text names them.
var controlTags = map[string]bool{"a": true, "button": true, "input": true, "select": true, "textarea": true,
	"option": true, "label": true, "summary": true}

// control says el is something a user acts on rather than content shown.
func control(el *SnapshotElement) bool {
	_, role := el.Attributes["role"]
	return controlTags[el.Tag] || role && !contentRoles[el.Attributes["role"]]
}

// sameWords says the text now holds at least half the words was held
// (letters and digits; marks like × aside): the same content, reworded.
func sameWords(was, now string) bool {
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	old, cur := words(was), words(now)
	if len(old) == 0 {
		return true
	}
	shared := 0
	for _, w := range old {
		if slices.Contains(cur, w) {
			shared++
		}
	}
	return 2*shared >= len(old)
}

// contentRoles are the roles whose accessible name is their content (a
// heading's text, an alert's message): in an assertion that name is what
// the test checks, not how it finds a control.
var contentRoles = map[string]bool{"heading": true, "alert": true, "status": true, "log": true, "marquee": true,
	"timer": true, "paragraph": true, "cell": true, "gridcell": true, "columnheader": true, "rowheader": true,
	"row": true, "listitem": true, "note": true, "tooltip": true, "caption": true, "term": true, "definition": true,
	"blockquote": true, "code": true, "emphasis": true, "strong": true, "mark": true, "text": true}

// checksContent says a locator's text is the content an assertion on it
// checks (expect(page.getByText('Saved')).toBeVisible() checks that Saved
// is shown), not the name a control is found by
// (expect(page.getByRole('button', { name: 'Add' })).toBeVisible() checks
// that the button is there). Only a text matcher's own expected value
// (toHaveText('…')) is asserted otherwise, and no locator holds that.
func checksContent(s LocatorSite) bool {
	return s.Method == "getByText" || (s.Method == "getByRole" && contentRoles[s.Arg.Value])
}

// errAsserted is why a text a test asserts is never rewritten.
const errAsserted = "the assertion checks this text; it is never rewritten"

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// replaceToken replaces a CSS #id token only where it ends (#count must not
// rewrite #counter).
func replaceToken(css, old, new string) string {
	re := regexp.MustCompile(regexp.QuoteMeta(old) + `($|[^\w-])`)
	return re.ReplaceAllString(css, strings.ReplaceAll(new, "$", "$$")+"${1}")
}

// staticSelector reads a selector that names an element by an attribute
// that does not change with the page's state (a test id, an id): the
// attribute and its value. Others (a role and its name, a text) may name
// an element only in some states, and are not read.
func staticSelector(sel string) (attr, value string, ok bool) {
	if m := testIDSelector.FindStringSubmatch(sel); m != nil {
		return m[1], strings.ReplaceAll(strings.ReplaceAll(m[2], `\"`, `"`), `\\`, `\`), true
	}
	if m := idSelector.FindStringSubmatch(sel); m != nil {
		return "id", m[1], true
	}
	return "", "", false
}

// aheadHeal is one of aheadHeals: the change and its edit.
type aheadHeal struct {
	ch Change
	e  edit
}

var (
	testIDSelector = regexp.MustCompile(`^internal:testid=\[([\w-]+)="((?:[^"\\]|\\.)*)"s\]$`)
	idSelector     = regexp.MustCompile(`^#([A-Za-z][\w-]*)$`)
)

// aheadHeals are the heals of the calls a failing test makes after its
// failing one (as a passing run recorded them, prints) whose element is
// on the failure's page already and no longer carries the test id or id
// the call's locator names, while the element most like it carries
// another: the same drift, a few calls on, healed in the same trial
// instead of a trial each (a renamed field, then the renamed button
// beside it). A call whose locator still names something on the page, or
// whose element is not there yet, is left to its own failure.
func aheadHeals(t TestOutcome, prints []TraceAction, dom []SnapshotElement, sites []LocatorSite) []aheadHeal {
	f := t.Failure
	if f == nil || len(dom) == 0 {
		return nil
	}
	at := slices.IndexFunc(prints, func(a TraceAction) bool { return a.File == f.File && a.Line == f.Line && a.Column == f.Column })
	if at < 0 {
		return nil
	}
	var out []aheadHeal
	seen := map[string]bool{f.Selector: true}
	for _, a := range prints[at+1:] {
		if a.Target == nil || seen[a.Selector] {
			continue
		}
		seen[a.Selector] = true
		cand, ok := renamedOn(a, dom)
		if !ok {
			continue
		}
		old := *a.Target
		ch, e, verdict, _ := healAt(&a, declaredAt(t, &a), func(LocatorSite) SnapshotElement { return old }, cand, sites,
			a.Method == "expect" || strings.HasPrefix(a.API, "expect"))
		if verdict == "" {
			out = append(out, aheadHeal{ch, e})
		}
	}
	return out
}
