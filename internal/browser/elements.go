package browser

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/playwright-community/playwright-go"
)

// Element is one visible element of the page as a person names it: what it
// is, what it is called (its accessible name, label, placeholder, test id,
// the text beside it) and where it sits (the tables, rows, lists, forms
// and landmarks around it). The lexical tier matches step phrases against
// these; nothing here is shown to a model.
type Element struct {
	Index       int    `json:"i"`
	Path        string `json:"path"` // structural CSS path, to pin the element down
	Tag         string `json:"tag"`
	Type        string `json:"type,omitempty"`
	Role        string `json:"role,omitempty"`
	Name        string `json:"name,omitempty"`
	Label       string `json:"label,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
	TestID      string `json:"testid,omitempty"`
	Title       string `json:"title,omitempty"`
	Alt         string `json:"alt,omitempty"`
	// Text is the element's own visible text.
	Text string `json:"text,omitempty"`
	// Near is the text just before it (an unlabeled field's caption) or,
	// in a table, its column's header.
	Near string `json:"near,omitempty"`
	// Hint is the id, name and class words of the element.
	Hint string `json:"hint,omitempty"`
	// Options are a select's option labels.
	Options []string `json:"options,omitempty"`
	// Editable is a text field (input, textarea, contenteditable).
	Editable bool `json:"editable,omitempty"`
	// Value is an editable field's current value (never a password's).
	Value string `json:"value,omitempty"`
	// Interactive is a control or anything the page made clickable.
	Interactive bool `json:"interactive,omitempty"`
	// Parent is the index of the nearest listed ancestor (-1 if none);
	// For, of a label, the index of the control it labels (-1 if none).
	Parent int `json:"parent"`
	For    int `json:"for"`
	// Containers are the element's containers, nearest first.
	Containers []Container `json:"containers,omitempty"`
}

// Container is an element's table, row, list, item, form, section,
// dialog or landmark.
type Container struct {
	Kind string `json:"kind"` // table, row, list, item, form, group, dialog, header, footer, nav, aside, main, section
	// Index is its position among the page's containers of its kind (1 is
	// the first); Of is how many there are.
	Index int `json:"index"`
	Of    int `json:"of"`
	// Pos is, for a row or an item, its position among its siblings of
	// the same kind (a table body's rows, a list's items); Sibs how many.
	Pos  int `json:"pos,omitempty"`
	Sibs int `json:"sibs,omitempty"`
	// Name is its caption, legend, aria label or heading; Hint its id,
	// test id and class words; Text the start of its text.
	Name string `json:"name,omitempty"`
	Hint string `json:"hint,omitempty"`
	Text string `json:"text,omitempty"`
	Path string `json:"path"`
}

// maxElements bounds the inventory of a very large page.
const maxElements = 3000

// elementsScript lists the page's visible elements with their names and
// containers (see Element). Text fields' values are read, passwords' never.
const elementsScript = `(max) => {
  ` + roleNameScript + `
  const wpPath = ` + pathScript + `;
  const clean = (s) => (s || '').trim().replace(/\s+/g, ' ');
  const words = (s) => clean((s || '').replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[-_.:#\/]+/g, ' '));
  const visible = (e) => { const r = e.getBoundingClientRect(); if (!(r.width > 0 && r.height > 0)) return false; const st = getComputedStyle(e); return st.visibility !== 'hidden' && st.display !== 'none'; };
  const interactiveSel = 'a[href],button,input,select,textarea,summary,[role=button],[role=link],[role=tab],[role=menuitem],[role=checkbox],[role=radio],[role=switch],[role=option],[role=combobox],[role=textbox],[role=searchbox],[role=slider],[role=spinbutton],[role=treeitem],[onclick],[contenteditable=""],[contenteditable=true],[tabindex]:not([tabindex="-1"])';
  const kindOf = (n) => {
    const tag = n.tagName.toLowerCase(), role = n.getAttribute('role') || '';
    if (tag === 'table' || role === 'table' || role === 'grid' || role === 'treegrid') return 'table';
    if (tag === 'tr' || role === 'row') return 'row';
    if (tag === 'ul' || tag === 'ol' || role === 'list' || role === 'listbox' || role === 'menu' || role === 'menubar' || role === 'tablist') return 'list';
    if (tag === 'li' || role === 'listitem' || tag === 'article' || role === 'article') return 'item';
    if (tag === 'form' || role === 'form' || role === 'search') return 'form';
    if (tag === 'fieldset' || role === 'group' || role === 'radiogroup') return 'group';
    if (tag === 'dialog' || role === 'dialog' || role === 'alertdialog') return 'dialog';
    if (tag === 'header' || role === 'banner') return 'header';
    if (tag === 'footer' || role === 'contentinfo') return 'footer';
    if (tag === 'nav' || role === 'navigation') return 'nav';
    if (tag === 'aside' || role === 'complementary') return 'aside';
    if (tag === 'main' || role === 'main') return 'main';
    if (tag === 'section' || role === 'region') return 'section';
    if (tag === 'div' && (n.id || n.getAttribute('data-testid'))) return 'group';
    return '';
  };
  const heading = (n) => { const h = n.querySelector('h1,h2,h3,h4,h5,h6,[role=heading]'); return h ? clean(h.innerText).slice(0, 80) : ''; };
  const before = (n) => { for (let s = n.previousElementSibling, i = 0; s && i < 2; s = s.previousElementSibling, i++) if (/^H[1-6]$/.test(s.tagName)) return clean(s.innerText).slice(0, 80); return ''; };
  const byId = (n, id) => (n.getRootNode().getElementById ? n.getRootNode().getElementById(id) : document.getElementById(id));
  const containerName = (n, kind) => {
    const a = n.getAttribute('aria-label'); if (a) return clean(a);
    const lb = n.getAttribute('aria-labelledby'); if (lb) return clean(lb.split(' ').map(id => (byId(n, id) || {}).innerText || '').join(' '));
    if (kind === 'table' && n.caption) return clean(n.caption.innerText);
    if (kind === 'group') { const l = n.querySelector(':scope > legend'); if (l) return clean(l.innerText); }
    if (kind === 'row' || kind === 'item') return '';
    return heading(n) || before(n);
  };
  const hint = (n) => [...new Set(words([n.id, n.getAttribute('name'), n.getAttribute('data-testid'), typeof n.className === 'string' ? n.className : ''].filter(Boolean).join(' ')).toLowerCase().split(' '))].join(' ');
  // Every container of the page, numbered per kind in document order.
  const cinfo = new Map(), counts = {};
  const all = [];
  const collect = (root) => { for (const e of root.querySelectorAll('*')) { all.push(e); if (e.shadowRoot) collect(e.shadowRoot); } };
  collect(document);
  for (const n of all) {
    const kind = kindOf(n);
    if (!kind || !visible(n)) continue;
    counts[kind] = (counts[kind] || 0) + 1;
    cinfo.set(n, { kind, index: counts[kind] });
  }
  const up = (n) => n.parentElement || (n.getRootNode && n.getRootNode().host) || null;
  const containersOf = (e) => {
    const out = [];
    for (let n = up(e), i = 0; n && n !== document.body && i < 14; n = up(n), i++) {
      const c = cinfo.get(n);
      if (!c) continue;
      let pos = 0, sibs = 0;
      if ((c.kind === 'row' || c.kind === 'item') && n.parentElement) for (const s of n.parentElement.children) { const k = cinfo.get(s); if (k && k.kind === c.kind) { sibs++; if (s === n) pos = sibs; } }
      out.push({ kind: c.kind, index: c.index, of: counts[c.kind], pos, sibs, name: containerName(n, c.kind), hint: hint(n), text: clean(n.innerText).slice(0, 200), path: wpPath(n) });
    }
    return out;
  };
  const ownText = (e) => { let t = ''; for (const c of e.childNodes) if (c.nodeType === 3) t += c.textContent; return clean(t); };
  const near = (e) => {
    // An unlabeled checkbox's caption is usually after it.
    if (e.type === 'checkbox' || e.type === 'radio') for (let s = e.nextSibling, i = 0; s && i < 2; s = s.nextSibling, i++) {
      const t = s.nodeType === 3 ? clean(s.textContent) : s.nodeType === 1 && !s.matches('input,select,textarea,button') ? clean(s.innerText) : '';
      if (t) return t.slice(0, 80);
    }
    // An unlabeled control's caption: the text just before it, or a
    // short caption element (a label-like span, not a paragraph or cell).
    for (let s = e.previousSibling, i = 0; s && i < 3; s = s.previousSibling, i++) {
      if (s.nodeType === 1 && !/^(LABEL|SPAN|B|STRONG|EM|DT|SMALL)$/.test(s.tagName)) break;
      const t = s.nodeType === 3 ? clean(s.textContent) : clean(s.innerText);
      if (t && t.length <= 40) return t;
      if (t) break;
    }
    // A cell's column header.
    const cell = e.closest('td,th');
    const table = cell && cell.closest('table');
    if (cell && table && table.tHead) {
      const hr = table.tHead.rows[table.tHead.rows.length - 1];
      const h = hr && hr.cells[cell.cellIndex];
      if (h && h !== cell) return clean(h.innerText).slice(0, 80);
    }
    const p = e.parentElement;
    if (p && p.children.length <= 3) { const t = ownText(p); if (t) return t.slice(0, 80); }
    return '';
  };
  const listed = new Map(), out = [];
  for (const e of all) {
    if (out.length >= max) break;
    const tag = e.tagName.toLowerCase();
    if (['script', 'style', 'head', 'html', 'body', 'option', 'br', 'svg', 'path', 'template', 'noscript'].includes(tag)) continue;
    const interactive = e.matches(interactiveSel) && !(tag === 'input' && e.type === 'hidden');
    const own = ownText(e);
    const texty = own && own.length <= 200;
    const named = /^(h[1-6]|img|th|td|label|li|legend|caption)$/.test(tag) || e.hasAttribute('role') || e.hasAttribute('data-testid');
    if (!interactive && !texty && !named) continue;
    if (!visible(e)) continue;
    const [role, name] = wpRoleName(e);
    const attr = (n) => e.getAttribute(n) || '';
    const type = tag === 'input' ? (attr('type') || 'text').toLowerCase() : tag === 'button' ? (e.type || 'submit') : '';
    const editable = (tag === 'input' && !['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'range', 'color', 'hidden'].includes(type)) || tag === 'textarea' || e.isContentEditable && !(e.parentElement && e.parentElement.isContentEditable);
    let label = '';
    if (e.labels && e.labels.length) label = clean([...e.labels].map(labelText).join(' '));
    let parent = -1;
    for (let n = up(e); n; n = up(n)) if (listed.has(n)) { parent = listed.get(n); break; }
    const idx = out.length;
    listed.set(e, idx);
    out.push({ i: idx, path: wpPath(e), tag, type, role, name, label, placeholder: attr('placeholder'), testid: attr('data-testid'), title: attr('title'), alt: attr('alt'),
      text: tag === 'select' ? '' : clean(e.innerText || e.textContent).slice(0, 120), near: label ? '' : near(e), hint: hint(e),
      options: tag === 'select' ? [...e.options].slice(0, 60).map(o => clean(o.label)) : undefined,
      editable: !!editable, value: editable && type !== 'password' && tag !== 'div' ? String(e.value || '').slice(0, 120) : '',
      interactive, parent, for: -1, containers: containersOf(e), _for: tag === 'label' ? e.control : null });
  }
  for (const x of out) { if (x._for && listed.has(x._for)) x.for = listed.get(x._for); delete x._for; }
  return JSON.stringify(out);
}`

// Elements lists the visible elements of the main frame (and its open
// shadow roots), at most a few thousand, in document order.
func (s *Session) Elements(ctx context.Context) ([]Element, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := s.page.Locator(":root").Evaluate(elementsScript, maxElements, playwright.LocatorEvaluateOptions{Timeout: actionWait()})
	if err != nil {
		return nil, fmt.Errorf("list the page's elements: %w", err)
	}
	raw, _ := v.(string)
	var out []Element
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("read the page's elements: %w", err)
	}
	return out, nil
}

// Pin describes the element at a structural path (see Element.Path) with
// the most robust locator that is unique on the page now. The locator is
// checked to find that very element; an element no such locator can be
// written for is an error.
func (s *Session) Pin(ctx context.Context, path string) (*Fingerprint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	loc := s.root(nil).Locator(path)
	if n, err := loc.Count(); err != nil || n != 1 {
		return nil, fmt.Errorf("the element at %s is no longer unique on the page", path)
	}
	fp, err := s.fingerprint(loc, nil, "")
	if err != nil {
		return nil, err
	}
	if fp.Locator.IsZero() || fp.Path != path {
		return nil, fmt.Errorf("no locator unique on the page can be written for %s", fp.Describe())
	}
	if !s.names(fp.Locator, fp) {
		return nil, fmt.Errorf("the locator %s finds another element than %s", fp.Locator, fp.Describe())
	}
	return fp, nil
}

// Describe fingerprints the one element a target names now, without
// reading its value (a password field can be described).
func (s *Session) Describe(ctx context.Context, t Target) (*Fingerprint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	loc, err := s.unique(t)
	if err != nil {
		return nil, err
	}
	return s.fingerprint(loc, s.framesOf(t), t.Ref)
}
