package browser

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/playwright-community/playwright-go"
)

// A representation after typing is built from the previous one when
// nothing but the typed values can have changed: the aria tree read before
// is patched with each field's value and the focus, and the rest of the
// pipeline runs on it as on a fresh read. On a 2,000-element page the aria
// tree costs about a hundred milliseconds; typing into one field changes a
// single line of it.
//
// "Nothing else changed" is proved in the page, not guessed:
//   - the init script counts DOM mutations, and counts as one every form
//     state a script sets (a value, a checked box, a chosen option, a form
//     reset), which no mutation observer sees;
//   - the settle probe read after the batch reports that count, the
//     scroll position, the document, each typed field's value and which of
//     them has the focus;
//   - the page had, when the representation was read, no frames, no open
//     shadow roots (whose mutations the observer does not see) and no style
//     rule through which focus, validity or a placeholder being shown
//     changes other elements (":focus-within", "input:invalid ~ .error").
//
// Anything else (another command, a navigation, a page switch, a field the
// aria tree does not name uniquely) reads the page afresh.

// reuseScript reports whether a page's representation may be patched after
// typing instead of read again (see above). The style verdict is kept per
// document until its style sheets change in number or size.
const reuseScript = `() => {
  const wp = window.__wp;
  if (!wp) return false;
  for (const e of document.querySelectorAll('*')) if (e.shadowRoot) return false;
  const sheets = [...document.styleSheets, ...(document.adoptedStyleSheets || [])];
  let key = sheets.length + ':';
  try { for (const s of sheets) key += s.cssRules.length + ','; } catch (e) { return false; }
  if (wp.styleKey === key) return wp.styleSafe;
  const state = /:(focus|focus-visible|placeholder-shown|valid|invalid|user-valid|user-invalid|in-range|out-of-range|required|optional|checked|indeterminate|autofill|blank)(?![\w-])/;
  const others = (sel) => sel.split(',').some((s) => {
    if (/:has\(|:focus-within/.test(s)) return true;
    const m = state.exec(s);
    return !!m && /[\s>+~]/.test(s.slice(m.index).trim());
  });
  let safe = true;
  const scan = (rules) => {
    for (const r of rules) {
      if (!safe) return;
      if (r.selectorText && others(r.selectorText)) safe = false;
      else if (r.cssRules) scan(r.cssRules);
    }
  };
  try { for (const s of sheets) scan(s.cssRules); } catch (e) { safe = false; }
  wp.styleKey = key;
  wp.styleSafe = safe;
  return safe;
}`

// trackScript follows the field a fill goes to until the next
// representation ("reset" starts the list anew) and describes it for
// typedInto: its place in the list, tag, type, role, name and value.
const trackScript = `(e, track) => {
  const wp = window.__wp;
  if (!wp) return null;
  if (track === 'reset' || !wp.typed) wp.typed = [];
  let i = wp.typed.indexOf(e);
  if (i < 0) i = wp.typed.push(e) - 1;
  ` + roleNameScript + `
  const [role, name] = wpRoleName(e);
  return [i, e.tagName.toLowerCase(), e.getAttribute('type') || '', role, name, 'value' in e ? String(e.value) : null];
}`

// pageRead is what a representation is built from: the main frame's aria
// tree as the driver wrote it and the facts read beside it.
type pageRead struct {
	aria      string
	title     any
	census    any
	passwords []string
	clickable any
	reusable  bool // see reuseScript
}

// pageMark is the page's state as the settle probe last read it.
type pageMark struct {
	cmds    int // Session.cmds when it was read
	n       float64
	doc     string
	x, y    float64
	typed   []*string // the values of the fields typed into since the last representation
	active  int       // which of them has the focus; -1: none
	present bool
}

// typedField is a field typed into since the representation was read.
type typedField struct {
	role, name string
	before     string // its value when it was first typed into
}

// reuseBase is the last representation's read, kept for patching.
type reuseBase struct {
	page     playwright.Page
	url      string
	fullPage bool
	read     pageRead
	mark     pageMark
	typed    []typedField
}

// textFieldTypes are the input types whose aria line shows their value as
// text (a password's is never patched: it is redacted).
var textFieldTypes = map[string]bool{"": true, "text": true, "search": true, "email": true, "tel": true, "url": true, "number": true}

// tracking says whether prepareScript should follow the field c fills,
// and whether it starts a new list: only while a representation may be
// patched.
func (s *Session) tracking(c Command) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case c.Action != ActionFill || s.reuse == nil:
		return false
	case len(s.reuse.typed) == 0:
		return "reset"
	}
	return "add"
}

// typedInto records, from what prepareScript returned, the field a fill
// goes to, and says whether it could.
func (s *Session) typedInto(v any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	arr, _ := v.([]any)
	if s.reuse == nil || len(arr) != 6 {
		return false
	}
	str := func(i int) string { x, _ := arr[i].(string); return x }
	idx := int(toFloat(arr[0]))
	tag, typ := str(1), strings.ToLower(str(2))
	if _, ok := arr[5].(string); !ok || !(tag == "textarea" || tag == "input" && textFieldTypes[typ]) {
		return false
	}
	switch {
	case idx < len(s.reuse.typed):
		s.lastTyped = idx
		return true // typed into again: its first value is the one the tree shows
	case idx == len(s.reuse.typed):
		s.reuse.typed = append(s.reuse.typed, typedField{role: str(3), name: str(4), before: str(5)})
		s.lastTyped = idx
		return true
	}
	return false
}

// acted counts a command that may have changed the page; unless it is a
// fill followed by typedInto, the representation is read afresh next.
func (s *Session) acted(followed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cmds++
	if !followed {
		s.reuse = nil
	}
}

// fillCheck is a fill whose effect the next settle's first probe checks
// (ExecOptions.SettleChecksFill).
type fillCheck struct {
	idx        int // the field's place in the typed list
	kind, want string
	loc        playwright.Locator
	oneTrip    bool
	err        error
	done       bool
}

// fillChecked fills a followed field and leaves the check of its effect
// to the settle that follows.
func (s *Session) fillChecked(loc playwright.Locator, kind, value string, ms *float64, oneTrip, selected bool) error {
	if err := s.fillText(loc, value, ms, selected); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reuse == nil || len(s.reuse.typed) == 0 {
		return checkFilled(loc, value, oneTrip)
	}
	s.unchecked = &fillCheck{idx: s.lastTyped, kind: kind, want: value, loc: loc, oneTrip: oneTrip}
	return nil
}

// checkPending checks the pending fill on the page's first read after it.
func (s *Session) checkPending(m pageMark) {
	c := s.unchecked
	if c == nil || c.done || m.cmds != s.cmds || c.idx >= len(m.typed) || m.typed[c.idx] == nil {
		return
	}
	c.err, c.done = filledWith(*m.typed[c.idx], c.kind, c.want), true
}

// FillChecked is the verdict on a fill whose check was left to the settle
// (ExecOptions.SettleChecksFill): nil when there was none. A settle that
// could not read the field leaves it to be read now.
func (s *Session) FillChecked() error {
	s.mu.Lock()
	c := s.unchecked
	s.unchecked = nil
	s.mu.Unlock()
	switch {
	case c == nil:
		return nil
	case c.done:
		return c.err
	}
	return checkFilled(c.loc, c.want, c.oneTrip)
}

// reused patches the last representation's read for the typing since, when
// the page proves nothing else changed.
func (s *Session) reused(url string, o SnapshotOptions) (pageRead, pageMark, bool) {
	s.mu.Lock()
	b, m, cmds := s.reuse, s.mark, s.cmds
	s.mu.Unlock()
	if b == nil || len(b.typed) == 0 || !b.read.reusable || b.page != s.page || b.url != url || b.fullPage != o.FullPage {
		return pageRead{}, pageMark{}, false
	}
	if !m.present || m.cmds != cmds || m.n != b.mark.n || m.doc != b.mark.doc || m.x != b.mark.x || m.y != b.mark.y ||
		len(m.typed) != len(b.typed) || m.active < 0 || m.active >= len(b.typed) || len(liveFrames(s.page)) != 1 {
		return pageRead{}, pageMark{}, false
	}
	read := b.read
	for i, f := range b.typed {
		if m.typed[i] == nil {
			return pageRead{}, pageMark{}, false
		}
		aria, ok := setFieldValue(read.aria, f, *m.typed[i])
		if !ok {
			return pageRead{}, pageMark{}, false
		}
		read.aria = aria
	}
	census, ok := focusIn(read.census, b.typed[m.active])
	if !ok {
		return pageRead{}, pageMark{}, false
	}
	read.census = census
	return read, m, true
}

// keep makes read the base the next representation may be patched from.
func (s *Session) keep(url string, o SnapshotOptions, read pageRead, m pageMark) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !read.reusable || !m.present || m.cmds != s.cmds {
		s.reuse = nil
		return
	}
	m.typed, m.active = nil, -1
	s.reuse = &reuseBase{page: s.page, url: url, fullPage: o.FullPage, read: read, mark: m}
}

// ariaLine splits a line of the driver's aria tree: what precedes its
// inline text, and that text.
var ariaLine = regexp.MustCompile(`^(\s*- [a-z]+ "(?:[^"\\]|\\.)*"(?: \[[^\]]*\])*)(?:: (.*))?$`)

// setFieldValue rewrites the one line of aria naming f so it shows value,
// as the driver would have written it. It refuses when no line or several
// name the field, or the line does not show the value f had.
func setFieldValue(aria string, f typedField, value string) (string, bool) {
	lines := strings.Split(aria, "\n")
	at := -1
	for i, l := range lines {
		m := snapshotLine.FindStringSubmatch(l)
		if m == nil || m[1] != f.role {
			continue
		}
		name, err := strconv.Unquote(`"` + m[2] + `"`)
		if err != nil || name != f.name {
			continue
		}
		if at >= 0 {
			return "", false
		}
		at = i
	}
	if at < 0 {
		return "", false
	}
	parts := ariaLine.FindStringSubmatch(lines[at])
	was, ok1 := ariaText(f.before, f.name)
	now, ok2 := ariaText(value, f.name)
	if parts == nil || !ok1 || !ok2 || parts[2] != was {
		return "", false
	}
	lines[at] = parts[1]
	if now != "" {
		lines[at] += ": " + now
	}
	return strings.Join(lines, "\n"), true
}

// ariaText is a field's value as the driver's aria tree shows it inline:
// white space collapsed, nothing when empty or equal to the name, quoted
// as YAML needs. A value holding a control character or a space other than
// U+0020 is refused: the page's idea of white space differs from Go's there.
func ariaText(value, name string) (string, bool) {
	for _, r := range value {
		if r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0xfeff || r != ' ' && unicode.IsSpace(r) {
			return "", false
		}
	}
	v := strings.NewReplacer("\u200b", "", "\u00ad", "").Replace(value)
	v = strings.Join(strings.Fields(v), " ")
	if v == "" || v == name {
		return "", true
	}
	return yamlValue(v), true
}

var (
	yamlQuoteTests = []*regexp.Regexp{
		regexp.MustCompile(`^-`),
		regexp.MustCompile(`:( |$)`),
		regexp.MustCompile(` #`),
		regexp.MustCompile(`^[&*\],?!>|@"'#%]`),
		regexp.MustCompile("[{}`]"),
		regexp.MustCompile(`^\[`),
	}
	yamlWords = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "true": true, "false": true, "on": true, "off": true, "null": true}
)

// yamlValue quotes a collapsed, control-free text value exactly as the
// driver's aria snapshot does.
func yamlValue(s string) string {
	needs := jsNumber(s) || yamlWords[strings.ToLower(s)]
	for _, re := range yamlQuoteTests {
		needs = needs || re.MatchString(s)
	}
	if !needs {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// jsNumber says whether JavaScript's Number(s) is a number (not NaN), as
// the driver tests; s has no surrounding space here.
func jsNumber(s string) bool {
	t := strings.ToLower(s)
	for p, base := range map[string]int{"0x": 16, "0o": 8, "0b": 2} {
		if strings.HasPrefix(t, p) {
			_, err := strconv.ParseUint(t[2:], base, 64)
			return err == nil || errors.Is(err, strconv.ErrRange)
		}
	}
	switch s {
	case "Infinity", "+Infinity", "-Infinity":
		return true
	}
	// Go also reads these, JavaScript does not.
	if strings.ContainsAny(t, "_pxn") || strings.Contains(t, "inf") {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// focusIn moves the census's focus to the typed field f.
func focusIn(census any, f typedField) (any, bool) {
	s, ok := census.(string)
	if !ok {
		return nil, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, false
	}
	var els [][]any
	if err := json.Unmarshal(m["els"], &els); err != nil {
		return nil, false
	}
	found := false
	for _, e := range els {
		if len(e) != 6 {
			return nil, false
		}
		role, _ := e[0].(string)
		name, _ := e[1].(string)
		here := !found && role == f.role && name == f.name
		e[4] = here
		found = found || here
	}
	if !found {
		return nil, false
	}
	b, err := json.Marshal(els)
	if err != nil {
		return nil, false
	}
	m["els"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	return string(out), true
}
