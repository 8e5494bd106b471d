package browser

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// Fingerprint describes an element well enough to find it again: the
// locator chosen for the spec, and what repair needs if that locator breaks.
type Fingerprint struct {
	Role        string            `json:"role,omitempty"`
	Name        string            `json:"name,omitempty"`
	Label       string            `json:"label,omitempty"`
	Placeholder string            `json:"placeholder,omitempty"`
	TestID      string            `json:"test_id,omitempty"`
	Alt         string            `json:"alt,omitempty"`
	Title       string            `json:"title,omitempty"`
	Text        string            `json:"text,omitempty"`
	Tag         string            `json:"tag"`
	Attributes  map[string]string `json:"attributes,omitempty"`
	Path        string            `json:"path"`
	// Tags is the tag names from the document root to the element (through
	// shadow hosts), the structural signal re-location compares.
	Tags string `json:"tags,omitempty"`
	// Frames is the iframe chain the element lives in.
	Frames []string `json:"frames,omitempty"`
	// Index is the element's place (from 1) among the elements of its kind
	// (tag, and type for inputs) in its document or shadow root, and Of
	// their number: the only tell between look-alikes (two unlabelled
	// checkboxes).
	Index int `json:"index,omitempty"`
	Of    int `json:"of,omitempty"`
	// Locator is the most robust target that was unique on the page when
	// the fingerprint was taken.
	Locator   Target     `json:"locator"`
	ancestors []ancestor // nearest first, for scoping repeated names
}

type ancestor struct {
	role, testID, text string
}

// fingerprintScript describes an element. Its role and accessible name are
// approximated here (every locator built from them is checked by count);
// an aria snapshot would invalidate the refs the model was just shown.
const fingerprintScript = `(e) => {
  ` + roleNameScript + `
  const attr = (n) => e.getAttribute(n) || '';
  const clean = (s) => (s || '').trim().replace(/\s+/g, ' ');
  const tag = e.tagName.toLowerCase();
  const [role, name] = wpRoleName(e);
  let label = '';
  if (e.labels && e.labels.length) label = clean([...e.labels].map(labelText).join(' '));
  else if (attr('aria-labelledby')) label = clean(attr('aria-labelledby').split(' ').map(id => ((e.getRootNode().getElementById ? e.getRootNode().getElementById(id) : document.getElementById(id)) || {}).innerText || '').join(' '));
  // The structural path, one CSS path per shadow root (outermost first),
  // chained with >> so it never matches inside another copy of a component.
  const wpPath = ` + pathScript + `;
  const implicit = { li: 'listitem', tr: 'row', article: 'article', form: 'form', dialog: 'dialog', fieldset: 'group', section: 'region', nav: 'navigation', ul: 'list', ol: 'list', table: 'table' };
  const own = clean(e.innerText || e.textContent);
  const ancestors = [];
  for (let n = e.parentElement, i = 0; n && n !== document.body && i < 6; n = n.parentElement, i++) {
    let text = clean((n.innerText || '').replace(own, ' ')).slice(0, 60);
    ancestors.push({ role: n.getAttribute('role') || implicit[n.tagName.toLowerCase()] || '', testid: n.getAttribute('data-testid') || '', text });
  }
  const tags = [];
  for (let n = e; n; n = n.parentElement || (n.getRootNode && n.getRootNode().host) || null) tags.unshift(n.tagName.toLowerCase());
  const kind = tag + (attr('type') ? '[type="' + CSS.escape(attr('type')) + '"]' : '');
  const kin = [...e.getRootNode().querySelectorAll(kind)];
  const keep = {};
  for (const n of ['id', 'name', 'type', 'href', 'class', 'aria-label', 'data-testid', 'role', 'for']) if (attr(n)) keep[n] = attr(n).slice(0, 120);
  for (const n of e.getAttributeNames()) if (n.startsWith('data-test') && n !== 'data-testid') keep[n] = attr(n).slice(0, 120);
  return { role, name: name.slice(0, 200), tag, testid: attr('data-testid'), placeholder: attr('placeholder'), label,
    alt: attr('alt'), title: attr('title'), text: own.slice(0, 100), attrs: keep, path: wpPath(e), tags: tags.join(' '), ancestors,
    index: kin.indexOf(e) + 1, of: kin.length };
}`

// fingerprint describes the element loc resolves to. For a ref, the role
// and name come from the snapshot the ref belongs to.
func (s *Session) fingerprint(loc playwright.Locator, frames []string, ref string) (*Fingerprint, error) {
	v, err := evaluate(loc, fingerprintScript)
	if err != nil {
		return nil, fmt.Errorf("fingerprint element: %w", err)
	}
	return s.fingerprintOf(v, frames, ref), nil
}

// fingerprintOf completes what fingerprintScript returned for an element:
// the role and name of its ref, and the most robust locator.
func (s *Session) fingerprintOf(v any, frames []string, ref string) *Fingerprint {
	m, _ := v.(map[string]any)
	fp := parseFingerprint(m)
	fp.Frames = frames
	s.mu.Lock()
	info, ok := s.refInfo[ref]
	s.mu.Unlock()
	if ok {
		fp.Role, fp.Name = info.role, info.name
	}
	fp.Locator = s.robust(fp)
	return fp
}

// evaluate evaluates script, a function of an element, on the element loc
// resolves to, waiting at most 5 s, an action's own bound (resolving some role locators for
// evaluation can stall to the default timeout).
func evaluate(loc playwright.Locator, script string) (any, error) {
	return loc.Evaluate(script, nil, playwright.LocatorEvaluateOptions{Timeout: actionWait()})
}

// matchOne evaluates script on the one element loc matches in the page's
// world, in one round trip: Locator.Evaluate takes three (wait for the
// element, evaluate on its handle, release it), which on a large page made
// preparing a command cost more than the command. Nothing is waited for.
// Only for locators of the main frame that are not refs: a ref of the aria
// snapshot resolves in the driver's own world, and frames differ too.
func matchOne(loc playwright.Locator, script string, arg any) (v any, n int, err error) {
	res, err := loc.EvaluateAll(`(els, arg) => els.length === 1 ? [1, (`+script+`)(els[0], arg)] : [els.length, null]`, arg)
	if err != nil {
		return nil, 0, err
	}
	arr, _ := res.([]any)
	if len(arr) != 2 {
		return nil, 0, fmt.Errorf("unexpected evaluation result %T", res)
	}
	return arr[1], int(toFloat(arr[0])), nil
}

// parseFingerprint reads what fingerprintScript returned.
func parseFingerprint(m map[string]any) *Fingerprint {
	str := func(k string) string { s, _ := m[k].(string); return s }
	num := func(k string) int { return int(toFloat(m[k])) }
	fp := &Fingerprint{Role: str("role"), Name: str("name"), Tag: str("tag"), TestID: str("testid"), Placeholder: str("placeholder"), Label: str("label"),
		Alt: str("alt"), Title: str("title"), Text: str("text"), Path: str("path"), Tags: str("tags"), Attributes: map[string]string{},
		Index: num("index"), Of: num("of")}
	if a, ok := m["attrs"].(map[string]any); ok {
		for k, v := range a {
			fp.Attributes[k], _ = v.(string)
		}
	}
	if list, ok := m["ancestors"].([]any); ok {
		for _, x := range list {
			if a, ok := x.(map[string]any); ok {
				r, _ := a["role"].(string)
				id, _ := a["testid"].(string)
				tx, _ := a["text"].(string)
				fp.ancestors = append(fp.ancestors, ancestor{role: r, testID: id, text: tx})
			}
		}
	}
	return fp
}

// pathScript computes an element's structural path (see Fingerprint.Path).
const pathScript = `(e) => {
  const generated = ` + generatedJS + `;
  const pathIn = (e) => {
    const path = [];
    for (let n = e; n && n.nodeType === 1 && n !== document.documentElement; n = n.parentElement) {
      if (n.id && !generated(n.id) && n.getRootNode().querySelectorAll('#' + n.id).length === 1) { path.unshift('#' + n.id); break; }
      let i = 1; for (let s = n.previousElementSibling; s; s = s.previousElementSibling) if (s.tagName === n.tagName) i++;
      path.unshift(n.tagName.toLowerCase() + ':nth-of-type(' + i + ')');
    }
    return path.join(' > ');
  };
  const chain = [];
  for (let n = e; n; ) { chain.unshift(pathIn(n)); const root = n.getRootNode(); n = root && root.host ? root.host : null; }
  return chain.join(' >> ');
}`

// names reports whether t finds the fingerprinted element itself: a text
// locator finds the innermost element holding the text, which can be a
// child of the element meant (a paragraph of an editor).
func (s *Session) names(t Target, fp *Fingerprint) bool {
	loc, err := s.locator(t)
	if err != nil {
		return false
	}
	v, err := evaluate(loc, pathScript)
	return err == nil && v == fp.Path
}

// robust picks the most robust target for a fingerprinted element that is
// unique on the page now: test id, role+name, placeholder, label, alt text,
// text, title; when the element's own names repeat, the same scoped to a
// uniquely named ancestor (a row, a card); the CSS path last. No target
// mentions what the session must not write, nor the values in avoid, and a
// structural one must find the element on the page loaded again too
// (survivesReload).
func (s *Session) robust(fp *Fingerprint, avoid ...string) Target {
	s.mu.Lock()
	avoid = append(avoid, s.unspeakable...)
	s.mu.Unlock()
	var candidates []Target
	add := func(t Target) {
		t.Frames = fp.Frames
		if !t.mentions(avoid) {
			candidates = append(candidates, t)
		}
	}
	if fp.TestID != "" {
		add(Target{TestID: fp.TestID})
	}
	if fp.Role != "" && fp.Name != "" && fp.Role != "generic" && fp.Role != "text" {
		add(Target{Role: fp.Role, Name: fp.Name})
	}
	if fp.Placeholder != "" {
		add(Target{Placeholder: fp.Placeholder})
	}
	if fp.Label != "" {
		add(Target{Label: fp.Label})
	}
	if fp.Alt != "" {
		add(Target{Alt: fp.Alt})
	}
	// A bare number is a counter's value, not the element's identity.
	if fp.Text != "" && len(fp.Text) <= 60 && !counterText.MatchString(fp.Text) && fp.Tag != "input" && fp.Tag != "select" && fp.Tag != "textarea" {
		add(Target{Text: fp.Text})
	}
	if fp.Title != "" {
		add(Target{Title: fp.Title})
	}
	for _, k := range sortedKeys(fp.Attributes) {
		if strings.HasPrefix(k, "data-test") && k != "data-testid" {
			add(Target{CSS: fmt.Sprintf("[%s=%s]", k, strconv.Quote(fp.Attributes[k]))})
		}
	}
	if id := fp.Attributes["id"]; id != "" && !LooksGenerated(id) {
		add(Target{CSS: "#" + id})
	}
	for _, c := range strings.Fields(fp.Attributes["class"]) {
		if !LooksGenerated(c) {
			add(Target{CSS: fp.Tag + "." + c})
		}
	}
	if fp.Role != "" && fp.Role != "generic" && fp.Role != "text" {
		add(Target{Role: fp.Role}) // unique on its own, or scoped to a named ancestor below
	}
	if t, ok := s.firstUnique(candidates, fp); ok {
		return t
	}
	var scopes []*Target // uniquely named containers, nearest first
	for _, a := range fp.ancestors {
		var parent Target
		switch {
		case a.testID != "":
			parent = Target{TestID: a.testID}
		case a.role != "" && a.text != "":
			parent = Target{Role: a.role, HasText: a.text}
		default:
			continue
		}
		parent.Frames = fp.Frames
		if parent.mentions(avoid) || s.total(parent) != 1 {
			continue
		}
		scopes = append(scopes, &parent)
		scoped := make([]Target, len(candidates))
		for i, c := range candidates {
			p := parent
			c.Within = &p
			scoped[i] = c
		}
		if t, ok := s.firstUnique(scoped, fp); ok {
			return t
		}
	}
	// An element nothing names (an unlabelled checkbox): its role and its
	// position among the role's elements in a named container, else on the
	// page. A structural path breaks when any ancestor's id or nesting
	// changes; the role and order of a form's controls rarely do.
	if fp.Role != "" && fp.Role != "generic" && fp.Role != "text" {
		for _, scope := range append(scopes, nil) {
			if t, ok := s.byPosition(Target{Role: fp.Role, Frames: fp.Frames, Within: scope}, fp); ok && !t.mentions(avoid) {
				return t
			}
		}
	}
	// The structural path last, and only if the runner would find exactly
	// this element with it: Playwright's CSS pierces shadow roots, so a path
	// that was unique in one shadow tree can match in every copy of it.
	if path := (Target{CSS: fp.Path, Frames: fp.Frames}); fp.Path != "" && !path.mentions(avoid) && s.total(path) == 1 && s.survivesReload(path) {
		return path
	}
	return Target{}
}

// byPosition is base narrowed to the fingerprinted element by its index
// among base's matches, if base matches it at all.
func (s *Session) byPosition(base Target, fp *Fingerprint) (Target, bool) {
	loc, err := s.locator(base)
	if err != nil {
		return Target{}, false
	}
	v, err := loc.EvaluateAll(`(els) => els.map(` + pathScript + `)`)
	if err != nil {
		return Target{}, false
	}
	paths, _ := v.([]any)
	for i, p := range paths {
		if p == fp.Path {
			t := base
			t.Nth = &i
			if s.total(t) == 1 && s.names(t, fp) {
				return t, true
			}
			return Target{}, false
		}
	}
	return Target{}, false
}

// counterText is text that is only a number (a badge, a count, a price).
var counterText = regexp.MustCompile(`^\W*\d+([.,]\d+)*\W*$`)

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// firstUnique returns the first candidate matching exactly one element,
// trying each loosely first and then exactly.
func (s *Session) firstUnique(candidates []Target, fp *Fingerprint) (Target, bool) {
	// Only a text locator can find another element than the one described
	// (the innermost holding the text); the others name its own attributes.
	same := func(c Target) bool { return c.Text == "" || s.names(c, fp) }
	for _, c := range candidates {
		if s.total(c) == 1 && same(c) {
			if s.survivesReload(c) {
				return c, true
			}
			continue // found now, lost on the next load: exactness will not help
		}
		if c.TestID == "" {
			c.Exact = true
			if s.total(c) == 1 && same(c) && s.survivesReload(c) {
				return c, true
			}
		}
	}
	return Target{}, false
}

// total counts every element (visible or not) a target matches, as the
// Playwright runner's strict mode does.
func (s *Session) total(t Target) int {
	if n, ok := s.guessed(t); ok {
		return n
	}
	loc, err := s.locator(t)
	if err != nil {
		return 0
	}
	n, err := loc.Count()
	if err != nil {
		return 0
	}
	return n
}

// guessCount is the count of the locator a command's element will most
// likely be written with, taken while the element itself is read (see
// guessTarget): one round trip fewer when the guess is right.
type guessCount struct {
	t Target
	n chan int
}

// guessTarget is the first locator robust will most likely try for the
// element t names, when that can be told before reading it: a role and
// name stays itself, a label or placeholder names a textbox.
func guessTarget(t Target) (Target, bool) {
	if len(t.Frames) > 0 || t.Within != nil || t.HasText != "" || t.Nth != nil || t.Exact {
		return Target{}, false
	}
	switch {
	case t.Role != "" && t.Name != "" && t.Role != "generic" && t.Role != "text" && t.TestID == "":
		return Target{Role: t.Role, Name: t.Name}, true
	case t.Label != "" && t.Role == "" && t.TestID == "":
		return Target{Role: "textbox", Name: t.Label}, true
	case t.Placeholder != "" && t.Role == "" && t.TestID == "" && t.Label == "":
		return Target{Role: "textbox", Name: t.Placeholder}, true
	}
	return Target{}, false
}

// guess starts counting the guessed locator for t; done ends the guess.
func (s *Session) guess(t Target) (done func()) {
	g, ok := guessTarget(t)
	if !ok {
		return func() {}
	}
	loc, err := s.locator(g)
	if err != nil {
		return func() {}
	}
	gc := &guessCount{t: g, n: make(chan int, 1)}
	go func() {
		n, err := loc.Count()
		if err != nil {
			n = -1
		}
		gc.n <- n
	}()
	s.mu.Lock()
	s.guessing = gc
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.guessing == gc {
			s.guessing = nil
		}
		s.mu.Unlock()
	}
}

// guessed is the guessed count of t, when t is what was guessed.
func (s *Session) guessed(t Target) (int, bool) {
	s.mu.Lock()
	gc := s.guessing
	s.mu.Unlock()
	if gc == nil || !reflect.DeepEqual(gc.t, t) {
		return 0, false
	}
	n := <-gc.n
	gc.n <- n // for a second look
	return n, n >= 0
}
