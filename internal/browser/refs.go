package browser

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// Refs the model sees are unique within a session: Playwright numbers its
// snapshots per document (a new page starts again at s1), so the snapshot
// number shown is the session's own sequence, and the latest snapshot's
// numbers are mapped back when a ref is used. A ref of any earlier
// representation is refused rather than resolved to whatever now has the
// same number.

// shownRef matches a ref as shown: optional frame, the session's snapshot
// sequence, then the element (e, from Playwright), a clickable handle (c)
// or a frame's text without a role (t).
var shownRef = regexp.MustCompile(`^(?:f(\d+))?s(\d+)([ect])(\d+)$`)

// playwrightRef matches the refs in Playwright's snapshot text.
var playwrightRef = regexp.MustCompile(`\[ref=s(\d+)e(\d+)\]`)

// refMap is how the latest snapshot's shown refs resolve.
type refMap struct {
	seq    int
	actual map[string]string // frame number ("" for the main frame) -> Playwright's snapshot number
	frames map[string][]string
	// handles are clickable elements without a role, and texts a frame's
	// text without a role: their structural path (in their frame).
	handles map[string]string
	texts   map[string]string
}

// renumber rewrites Playwright's refs in text (of frame n, "" for the main
// frame) to the session's sequence and remembers Playwright's number.
func (m *refMap) renumber(text, frame string) string {
	prefix := ""
	if frame != "" {
		prefix = "f" + frame
	}
	return playwrightRef.ReplaceAllStringFunc(text, func(s string) string {
		sub := playwrightRef.FindStringSubmatch(s)
		m.actual[frame] = sub[1]
		return fmt.Sprintf("[ref=%ss%de%s]", prefix, m.seq, sub[2])
	})
}

// resolveRef turns a shown ref into a locator, refusing refs of earlier
// representations.
func (s *Session) resolveRef(ref string) (playwright.Locator, error) {
	p := shownRef.FindStringSubmatch(ref)
	if p == nil {
		return nil, fmt.Errorf("%q is not a ref of the page representation", ref)
	}
	s.mu.Lock()
	m := s.refs
	s.mu.Unlock()
	if seq, _ := strconv.Atoi(p[2]); m == nil || seq != m.seq {
		return nil, fmt.Errorf("ref %s is from an earlier page representation; refs are only valid in the latest one", ref)
	}
	frame, kind, num := p[1], p[3], p[4]
	if kind == "t" {
		path, ok := m.texts[ref]
		chain, inFrame := m.frames[frame]
		if !ok || !inFrame {
			return nil, fmt.Errorf("ref %s is not on the page", ref)
		}
		return s.root(chain).Locator(path), nil
	}
	if kind == "c" {
		path, ok := m.handles[ref]
		if !ok {
			return nil, fmt.Errorf("ref %s is not on the page", ref)
		}
		return s.page.Locator(":root").Locator(path), nil
	}
	actual, ok := m.actual[frame]
	if !ok {
		return nil, fmt.Errorf("ref %s belongs to a frame that is no longer on the page", ref)
	}
	pw := "aria-ref=s" + actual + "e" + num
	if frame == "" {
		return s.page.Locator(pw), nil
	}
	chain, ok := m.frames[frame]
	if !ok {
		return nil, fmt.Errorf("ref %s belongs to a frame that is no longer on the page", ref)
	}
	return s.root(chain).Locator(pw), nil
}

// frameOfRef is the iframe chain a shown ref lives in.
func (s *Session) frameOfRef(ref string) []string {
	p := shownRef.FindStringSubmatch(ref)
	if p == nil || p[1] == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs == nil {
		return nil
	}
	return s.refs.frames[p[1]]
}

// clickableScript finds visible elements that respond to clicks but have no
// interactive role, so the accessibility tree gives them no handle: icons,
// badges, divs with click handlers. Each comes with its structural path
// (see Fingerprint.Path) and what identifies it.
const clickableScript = `([limit, fullPage]) => {
  const interactive = 'a[href],button,input,select,textarea,summary,option,label,[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=option],[role=switch],[role=slider],[role=textbox],[role=combobox],[contenteditable=""],[contenteditable=true]';
  const clean = (s) => (s || '').trim().replace(/\s+/g, ' ');
  const out = [];
  const vh = innerHeight, vw = innerWidth;
  const wpPath = ` + pathScript + `;
  const handlers = ['click', 'dblclick', 'contextmenu', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchstart', 'dragstart'];
  const listens = (e) => {
    const kinds = new Set((window.__wp && window.__wp.listened && window.__wp.listened.get(e)) || []);
    for (const h of handlers) if (e.hasAttribute('on' + h) || typeof e['on' + h] === 'function') kinds.add(h);
    if (e.getAttribute('draggable') === 'true') kinds.add('dragstart');
    return [...kinds];
  };
  const clickable = (e) => {
    // A listener on a container of controls is delegation, not a control.
    if (listens(e).length && !e.querySelector(interactive)) return true;
    const ti = e.getAttribute('tabindex');
    if (ti !== null && +ti >= 0 && !e.hasAttribute('role')) return true;
    const cur = getComputedStyle(e).cursor;
    if (cur !== 'pointer') return false;
    const p = e.parentElement || (e.getRootNode() && e.getRootNode().host);
    return !p || getComputedStyle(p).cursor !== 'pointer';
  };
  const walk = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (out.length >= limit) return;
      if (e.shadowRoot) walk(e.shadowRoot);
      // A rich-text editor without a role: the aria snapshot shows only its paragraphs.
      const editor = e.isContentEditable && e.hasAttribute('contenteditable') && !e.hasAttribute('role') &&
        !(e.parentElement && e.parentElement.isContentEditable);
      if (!editor && (e.matches(interactive) || (e.closest && e.closest(interactive)))) continue;
      const role = e.getAttribute('role');
      if (role && role !== 'presentation' && role !== 'none' && role !== 'generic' && role !== 'img') continue;
      if (['HTML', 'BODY'].includes(e.tagName) || !(editor || clickable(e))) continue;
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const st = getComputedStyle(e);
      if (st.visibility === 'hidden' || st.display === 'none') continue;
      const inView = !(r.bottom < 0 || r.top > vh || r.right < 0 || r.left > vw);
      if (!fullPage && !inView) continue;
      const attrs = {};
      for (const n of e.getAttributeNames()) if (n === 'id' || n === 'class' || n === 'title' || n === 'aria-label' || n.startsWith('data-test')) attrs[n] = e.getAttribute(n).slice(0, 60);
      out.push({ path: wpPath(e), tag: e.tagName.toLowerCase(), text: clean(e.innerText || e.textContent).slice(0, 60), attrs, kind: editor ? 'editable' : 'clickable', on: listens(e) });
    }
  };
  walk(document);
  return out;
}`

// clickableLines renders the page's role-less clickable elements (what
// clickableScript found) as lines of the representation, giving each a
// handle ref.
func clickableLines(m *refMap, v any) string {
	list, _ := v.([]any)
	var b strings.Builder
	for i, x := range list {
		e, _ := x.(map[string]any)
		path, _ := e["path"].(string)
		if path == "" {
			continue
		}
		ref := fmt.Sprintf("s%dc%d", m.seq, i+1)
		m.handles[ref] = path
		tag, _ := e["tag"].(string)
		text, _ := e["text"].(string)
		desc := tag
		if attrs, ok := e["attrs"].(map[string]any); ok {
			desc += describeAttrs(attrs)
		}
		if b.Len() == 0 {
			b.WriteString("# elements without a role, clickable or editable (by ref):\n")
		}
		kind, _ := e["kind"].(string)
		if on := stringsOf(e["on"]); len(on) > 0 && !(len(on) == 1 && on[0] == "click") {
			desc += "; listens for " + strings.Join(on, ", ")
		}
		fmt.Fprintf(&b, "- %s %s [ref=%s] (%s)\n", kind, strconv.Quote(text), ref, desc)
	}
	return b.String()
}

// describeAttrs renders the identifying attributes of an element compactly:
// #id.class1.class2 [data-test="x"] [title="y"].
func describeAttrs(attrs map[string]any) string {
	str := func(k string) string { v, _ := attrs[k].(string); return v }
	out := ""
	if id := str("id"); id != "" {
		out += "#" + id
	}
	for i, c := range strings.Fields(str("class")) {
		if i == 3 {
			break
		}
		out += "." + c
	}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		if k != "id" && k != "class" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out += fmt.Sprintf(" [%s=%s]", k, strconv.Quote(str(k)))
	}
	return out
}

// frameTextScript finds the text of a frame that the aria snapshot gives no
// ref (text in elements without a role: a div, a span, a b), so a check on
// it can name the element: each element holding text of its own, visible,
// outside any control, with its structural path (see Fingerprint.Path).
const frameTextScript = `(limit) => {
  const generic = new Set(['DIV', 'SPAN', 'B', 'I', 'STRONG', 'EM', 'SMALL', 'U', 'S', 'MARK', 'CODE', 'FONT', 'TIME', 'BDI', 'ABBR', 'SUB', 'SUP', 'CITE', 'Q', 'VAR', 'KBD', 'SAMP', 'DATA']);
  const control = 'a[href],button,input,select,textarea,summary,option,label,[role]';
  const clean = (s) => (s || '').trim().replace(/\s+/g, ' ');
  const wpPath = ` + pathScript + `;
  const out = [];
  const walk = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (out.length >= limit) return;
      if (e.shadowRoot) walk(e.shadowRoot);
      if (!generic.has(e.tagName) || e.closest(control)) continue;
      const own = clean([...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join(' '));
      if (!own) continue;
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const st = getComputedStyle(e);
      if (st.visibility === 'hidden' || st.display === 'none') continue;
      out.push({ path: wpPath(e), text: clean(e.innerText || e.textContent).slice(0, 80) });
    }
  };
  walk(document);
  return out;
}`

// frameTextLines renders a frame's role-less text (what frameTextScript
// found) as lines of its part of the representation, each with a text ref;
// text a line of the aria snapshot already gives a ref is left out.
func frameTextLines(m *refMap, frame, aria string, v any) string {
	list, _ := v.([]any)
	var b strings.Builder
	for i, x := range list {
		e, _ := x.(map[string]any)
		path, _ := e["path"].(string)
		text, _ := e["text"].(string)
		if path == "" || text == "" || strings.Contains(aria, "]: "+text) {
			continue
		}
		ref := fmt.Sprintf("f%ss%dt%d", frame, m.seq, i+1)
		m.texts[ref] = path
		if b.Len() == 0 {
			b.WriteString("# text of the frame without a role (by ref):\n")
		}
		fmt.Fprintf(&b, "- text %s [ref=%s]\n", strconv.Quote(text), ref)
	}
	return b.String()
}
