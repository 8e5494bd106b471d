package browser

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/playwright-community/playwright-go"
)

// A command that reports ok must have had its effect: a fill leaves the
// text it set, a select the option it chose, an upload its files. The
// checks here run right after the action and fail it otherwise.

// fieldScript reads what a field holds: [value or text, kind].
// A whole document that is an editor (an iframe's body) is
// "editable-document": it is clicked into before text is entered.
const fieldScript = `(e) => ['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName) ? [String(e.value), (e.type || e.tagName).toLowerCase()] : [e.innerText, e.tagName === 'BODY' ? 'editable-document' : 'editable']`

// editingHostScript says where text typed at an element goes — into the
// element itself, or into the rich-text editor (contenteditable host, or a
// body in design mode) it is part of — and what that field holds now, in
// one round trip: [where, text, kind].
const editingHostScript = `(e) => {
  const read = ` + fieldScript + `;
  if (['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName) || !e.isContentEditable || e.hasAttribute('contenteditable')) return ['self', ...read(e)];
  const host = e.parentElement && e.parentElement.closest('[contenteditable]');
  return host ? ['ancestor', ...read(host)] : ['body', ...read(e.ownerDocument.body)];
}`

// editingHost returns the editor an element inside a rich-text editor
// belongs to, so fill and type change the editor's text (any other element
// is returned as it is), with the text and kind that field holds now, and
// what trackScript says of it when track asks.
func editingHost(loc playwright.Locator, track any) (playwright.Locator, string, string, any) {
	v, err := loc.Evaluate(`(e, track) => {
  const host = (`+editingHostScript+`)(e);
  return [host, track && host[0] === 'self' ? (`+trackScript+`)(e, track) : null];
}`, track, playwright.LocatorEvaluateOptions{Timeout: playwright.Float(2000)})
	arr, _ := v.([]any)
	if err != nil || len(arr) != 2 {
		return loc, "", "", nil
	}
	loc, text, kind := hostOf(loc, arr[0])
	return loc, text, kind, arr[1]
}

// hostOf reads what editingHostScript returned for loc's element.
func hostOf(loc playwright.Locator, v any) (playwright.Locator, string, string) {
	arr, _ := v.([]any)
	if len(arr) != 3 {
		return loc, "", ""
	}
	text, _ := arr[1].(string)
	kind, _ := arr[2].(string)
	switch arr[0] {
	case "ancestor":
		return loc.Locator("xpath=ancestor::*[@contenteditable][1]"), text, kind
	case "body":
		return loc.Locator("xpath=ancestor::body"), text, kind
	}
	return loc, text, kind
}

// fieldText reads a field's text and kind after an action. oneTrip says
// loc can be read in the page's own world in one round trip (matchOne: a
// locator of the main frame that is not a ref), which is what a type or
// fill costs the most besides the action itself (Locator.Evaluate takes
// three).
func fieldText(loc playwright.Locator, oneTrip bool) (string, string) {
	var v any
	n, err := 0, error(nil)
	if oneTrip {
		v, n, err = matchOne(loc, fieldScript, nil)
	}
	if !oneTrip || err != nil || n != 1 {
		if v, err = evaluate(loc, fieldScript); err != nil {
			return "", ""
		}
	}
	arr, _ := v.([]any)
	if len(arr) != 2 {
		return "", ""
	}
	text, _ := arr[0].(string)
	kind, _ := arr[1].(string)
	return text, kind
}

// rangeScript sets a range input's value as a person dragging it would,
// with the events a page listens for. Its only input is the value.
const rangeScript = `(e, v) => { e.value = v; e.dispatchEvent(new Event('input', { bubbles: true })); e.dispatchEvent(new Event('change', { bubbles: true })); return e.value; }`

// RangeSetter is rangeScript for a spec: generated tests set a slider the
// way the job did.
const RangeSetter = rangeScript

// fill sets a field's text; kind is what editingHost found the field to be.
func (s *Session) fill(loc playwright.Locator, kind, value string, ms *float64, oneTrip bool, out *Outcome) error {
	if kind == "range" {
		if _, err := loc.Evaluate(rangeScript, value, playwright.LocatorEvaluateOptions{Timeout: ms}); err != nil {
			return fmt.Errorf("set slider: %w", err)
		}
		out.Via = "range"
		return checkFilled(loc, value, oneTrip)
	}
	if kind == "editable-document" {
		// Focused first, as a person clicking into it does.
		out.Via = "editor-document"
		if err := loc.Click(playwright.LocatorClickOptions{Timeout: ms}); err != nil {
			return err
		}
	}
	if err := s.fillText(loc, value, ms, out.selected); err != nil {
		return err
	}
	return checkFilled(loc, value, oneTrip)
}

// selectScript does to a text field what the runner's fill does before it
// types, when the runner would find the field ready at once: visible,
// enabled and editable (any doubt, and the runner's own fill waits and
// decides). A text input's or textarea's text is selected and the field
// focused; the text then replaces the selection as typed text.
const selectScript = `(e) => {
  const type = (e.getAttribute('type') || '').toLowerCase();
  if (!(e.tagName === 'TEXTAREA' || e.tagName === 'INPUT' && ['', 'text', 'search', 'email', 'tel', 'url', 'password'].includes(type))) return false;
  if (!e.isConnected || e.disabled || e.readOnly || e.closest('fieldset[disabled]')) return false;
  if (e.getAttribute('aria-readonly') === 'true' || e.closest('[aria-disabled="true"]')) return false;
  const st = getComputedStyle(e);
  const r = e.getBoundingClientRect();
  if (st.visibility !== 'visible' || !r.width || !r.height || (e.checkVisibility && !e.checkVisibility())) return false;
  if (e.tagName === 'INPUT') {
    e.select();
  } else {
    e.selectionStart = 0;
    e.selectionEnd = e.value.length;
  }
  e.focus();
  return true;
}`

// fillText sets a field's text as the runner's fill does. When prepare
// has already focused the field and selected its text (selected), the text
// is inserted where the keyboard is, or the selection deleted for none;
// otherwise the runner's fill does it all, waiting for the field.
func (s *Session) fillText(loc playwright.Locator, value string, ms *float64, selected bool) error {
	switch {
	case !selected:
		return loc.Fill(value, playwright.LocatorFillOptions{Timeout: ms})
	case value == "":
		return s.page.Keyboard().Press("Delete")
	}
	return s.page.Keyboard().InsertText(value)
}

// checkFilled fails a fill whose field does not hold the text it set. A
// field that formats what is typed (a phone mask, a number) still counts
// as set when the letters and digits agree.
func checkFilled(loc playwright.Locator, want string, oneTrip bool) error {
	got, kind := fieldText(loc, oneTrip)
	return filledWith(got, kind, want)
}

// filledWith says whether a field of kind holding got holds the text want
// a fill set.
func filledWith(got, kind, want string) error {
	if kind == "" || kind == "file" {
		return nil
	}
	if strings.HasPrefix(kind, "editable") {
		got = strings.TrimSpace(got)
		want = strings.TrimSpace(want)
	}
	if got == want || alnum(got) == alnum(want) || sameNumber(got, want) {
		return nil
	}
	return noEffect("fill", kind, got)
}

// checkTyped fails a type command whose text did not arrive in the field.
func checkTyped(loc playwright.Locator, before, typed string, oneTrip bool) error {
	got, kind := fieldText(loc, oneTrip)
	if kind == "" || kind == "file" {
		return nil
	}
	if strings.Contains(got, typed) || strings.Contains(alnum(got), alnum(typed)) || (got != before && alnum(typed) == "") {
		return nil
	}
	return noEffect("type", kind, got)
}

func noEffect(action, kind, got string) error {
	if kind == "password" {
		return fmt.Errorf("%s had no effect: the field does not hold the text that was entered", action)
	}
	return fmt.Errorf("%s had no effect: the field holds %q afterwards", action, truncate(got, 80))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func alnum(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func sameNumber(a, b string) bool {
	x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	return err1 == nil && err2 == nil && x == y
}

const selectedScript = `(e) => e.tagName === 'SELECT' ? [...e.selectedOptions].flatMap(o => [o.label, o.value]) : null`

// checkSelected fails a select that did not leave the option chosen.
func checkSelected(loc playwright.Locator, want string) error {
	v, err := loc.Evaluate(selectedScript, nil, playwright.LocatorEvaluateOptions{Timeout: playwright.Float(2000)})
	if err != nil || v == nil {
		return nil
	}
	list, _ := v.([]any)
	for _, x := range list {
		if s, _ := x.(string); s == want {
			return nil
		}
	}
	return fmt.Errorf("select had no effect: %q is not the selected option", want)
}

// takeFingerprint describes the element a command acts on; with
// RequireLocator it refuses an element no spec locator could find again.
func (s *Session) takeFingerprint(loc playwright.Locator, t Target, o ExecOptions, out *Outcome) error {
	start := time.Now()
	fp, err := s.fingerprint(loc, s.framesOf(t), t.Ref)
	out.fpTime += time.Since(start)
	if err != nil {
		return nil
	}
	out.Element = fp
	if o.RequireLocator && fp.Locator.IsZero() {
		return errNoLocator(fp)
	}
	return nil
}

func errNoLocator(fp *Fingerprint) error {
	return fmt.Errorf("no locator the test runner would resolve to exactly this element could be written (%s); target it another way, or a parent that names it", fp.Path)
}

const fileNamesScript = `(e) => e.tagName === 'INPUT' && e.type === 'file' ? [...e.files].map(f => f.name) : null`

// upload sets the job's files named in value (comma-separated) on a file
// input, or, for a button or label that opens a file chooser, on the
// chooser its click opens.
func (s *Session) upload(loc playwright.Locator, value string, files []File, ms *float64, out *Outcome) error {
	var set []playwright.InputFile
	var names []string
	for _, n := range strings.Split(value, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		f, ok := findFile(files, n)
		if !ok {
			return fmt.Errorf("upload: the job carries no file named %q (it carries: %s)", n, fileNames(files))
		}
		set = append(set, playwright.InputFile{Name: f.Name, MimeType: f.MimeType, Buffer: f.Content})
		names = append(names, f.Name)
	}
	if len(set) == 0 {
		return fmt.Errorf("upload needs the names of the files to set (the job carries: %s)", fileNames(files))
	}
	input := loc
	if v, err := loc.Evaluate(fileNamesScript, nil, playwright.LocatorEvaluateOptions{Timeout: ms}); err == nil && v != nil {
		out.Via = "file-input"
		if err := loc.SetInputFiles(set, playwright.LocatorSetInputFilesOptions{Timeout: ms}); err != nil {
			return err
		}
	} else {
		out.Via = "file-chooser"
		fc, err := s.page.ExpectFileChooser(func() error {
			return loc.Click(playwright.LocatorClickOptions{Timeout: ms})
		}, playwright.PageExpectFileChooserOptions{Timeout: ms})
		if err != nil {
			return fmt.Errorf("upload: clicking the target opened no file chooser (target the file input, or the button that opens it): %w", err)
		}
		if err := fc.SetFiles(set); err != nil {
			return err
		}
		el := fc.Element()
		got, err := el.Evaluate(fileNamesScript, nil)
		if err != nil {
			return nil
		}
		return sameFiles(got, names)
	}
	got, err := input.Evaluate(fileNamesScript, nil, playwright.LocatorEvaluateOptions{Timeout: ms})
	if err != nil {
		return nil
	}
	return sameFiles(got, names)
}

func sameFiles(got any, want []string) error {
	list, _ := got.([]any)
	var have []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			have = append(have, s)
		}
	}
	if strings.Join(have, ",") != strings.Join(want, ",") {
		return fmt.Errorf("upload had no effect: the input holds [%s], not [%s]", strings.Join(have, ", "), strings.Join(want, ", "))
	}
	return nil
}

func findFile(files []File, name string) (File, bool) {
	for _, f := range files {
		if f.Name == name {
			return f, true
		}
	}
	return File{}, false
}

func fileNames(files []File) string {
	if len(files) == 0 {
		return "no files"
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// waitDialog waits for the latest dialog's message to contain want.
func (s *Session) waitDialog(want string, ms float64) error {
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	for {
		msg, ok := s.lastDialog()
		if ok && strings.Contains(msg, want) {
			return nil
		}
		if time.Now().After(deadline) {
			if !ok {
				return fmt.Errorf("no dialog has opened")
			}
			return fmt.Errorf("the last dialog said %q", truncate(msg, 200))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SortComparators are the comparisons of a sorted check, as TypeScript:
// the job evaluates the same functions its spec contains.
var SortComparators = map[string]string{
	"number": `(a, b) => parseFloat(a.replace(/[^0-9.-]/g, '')) - parseFloat(b.replace(/[^0-9.-]/g, ''))`,
	"date":   `(a, b) => Date.parse(a) - Date.parse(b)`,
	"text":   `(a, b) => a.localeCompare(b)`,
}

// sortKindScript infers how items compare: numbers, dates, else text.
const sortKindScript = `(els) => {
  const v = els.map(e => (e.textContent || '').trim());
  if (v.length && v.every(s => /\d/.test(s) && !isNaN(parseFloat(s.replace(/[^0-9.-]/g, ''))) && /^[^A-Za-z]*$/.test(s))) return 'number';
  if (v.length && v.every(s => !isNaN(Date.parse(s)))) return 'date';
  return 'text';
}`

// sortedScript builds the page check of a sorted assertion from the fixed
// comparators only (kind is one of SortKinds, checked before).
func sortedScript(kind string, desc bool) string {
	cmp := SortComparators[kind]
	if desc {
		cmp = "((c) => (a, b) => c(b, a))(" + cmp + ")"
	}
	return `(els) => { const v = els.map(e => (e.textContent || '').trim()); const s = [...v].sort(` + cmp + `); return [JSON.stringify(s) === JSON.stringify(v), v.length, v.slice(0, 8)]; }`
}

// sortItemRoles are the items of a container a sorted check may target.
var sortItemRoles = map[string]string{"list": "listitem", "listbox": "option", "table": "row", "grid": "row", "rowgroup": "row", "menu": "menuitem", "tablist": "tab"}

// verifySorted checks that the target's items read in order. The target
// names the items (a column's cells, a list's items), or is the ref of a
// list, listbox, table or menu whose items are meant.
func (s *Session) verifySorted(c Command, loc playwright.Locator, ms float64, out *Outcome, o ExecOptions) error {
	itemRole := ""
	if c.Target.Ref != "" {
		s.mu.Lock()
		role := s.refInfo[c.Target.Ref].role
		s.mu.Unlock()
		if itemRole = sortItemRoles[role]; itemRole == "" {
			return fmt.Errorf("%s checks a list's items: target the items (e.g. {\"css\": \"td:nth-child(2)\"}) or a list, listbox, table or menu, not a %s", c.Assert, role)
		}
		// Refs resolve in another world than page scripts run in: the
		// container is found again by its robust locator.
		start := time.Now()
		fp, err := s.fingerprint(loc, s.framesOf(c.Target), c.Target.Ref)
		out.fpTime += time.Since(start)
		if err != nil || fp.Locator.IsZero() {
			return fmt.Errorf("%s: no locator could be written for the %s", c.Assert, role)
		}
		out.Element = fp
		if loc, err = s.locator(fp.Locator); err != nil {
			return err
		}
		loc = loc.GetByRole(playwright.AriaRole(itemRole))
	}
	kind := c.Value
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	for {
		if c.Value == "" { // inferred again on each poll: the items may still be loading
			if v, err := loc.EvaluateAll(sortKindScript); err == nil {
				kind, _ = v.(string)
			}
		}
		res := fmt.Errorf("no items to compare")
		if kind != "" {
			v, err := loc.EvaluateAll(sortedScript(kind, c.Assert == AssertSortedDescending))
			arr, _ := v.([]any)
			switch {
			case err != nil:
				res = err
			case len(arr) == 3 && toFloat(arr[1]) < 2:
				res = fmt.Errorf("%s needs at least 2 items, found %.0f", c.Assert, toFloat(arr[1]))
			case len(arr) == 3 && arr[0] == true:
				out.Via = strings.TrimSpace(kind + " " + itemRole)
				return nil
			case len(arr) == 3:
				res = fmt.Errorf("the items are not in %s %s order: %v…", map[bool]string{true: "descending", false: "ascending"}[c.Assert == AssertSortedDescending], kind, arr[2])
			}
		}
		if time.Now().After(deadline) {
			return res
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// innermostScript finds, among elements that all lie on one branch of the
// composed tree (each contains the next, through slots and shadow roots),
// the innermost one: a text matched by a shadow host and the element
// slotted into it means the element. -1 when they are not nested.
const innermostScript = `(els) => {
  const up = (n) => n.assignedSlot || n.parentNode || n.host || null;
  const contains = (a, b) => { for (let n = b; n; n = up(n)) if (n === a) return true; return false; };
  for (let i = 0; i < els.length; i++) {
    if (els.every((o, j) => j === i || contains(o, els[i]))) return i;
  }
  return -1;
}`

// innermost returns the index of the innermost of nested matches.
func innermost(loc playwright.Locator) (int, bool) {
	v, err := loc.EvaluateAll(innermostScript)
	if err != nil {
		return 0, false
	}
	i := int(toFloat(v))
	return i, i >= 0
}
