package browser

import (
	"fmt"
	"strings"
)

// stateScript lists the visible elements that matter to a person reading the
// page, keyed by a DOM path, with their text, value, class and state.
const stateScript = `(limit) => {
  const out = [];
  // A cut text ends with a mark, so that a truncated copy of a secret is recognised and redacted.
  const cut = (s, n) => s.length > n ? s.slice(0, n) + '…' : s;
  const sel = 'a,button,input,select,textarea,[role],h1,h2,h3,h4,h5,h6,label,li,p,td,th,[aria-live],dialog,summary,img[alt]';
  const visible = (e) => { const r = e.getBoundingClientRect(); if (r.width === 0 && r.height === 0) return false;
    const st = getComputedStyle(e); return st.visibility !== 'hidden' && st.display !== 'none'; };
  const path = (e) => { if (e.id) return '#' + e.id; const parts = [];
    for (let n = e; n && n.nodeType === 1 && n !== document.body; n = n.parentElement) {
      if (n.id) { parts.unshift('#' + n.id); break; }
      let i = 1; for (let s = n.previousElementSibling; s; s = s.previousElementSibling) if (s.tagName === n.tagName) i++;
      parts.unshift(n.tagName.toLowerCase() + ':nth-of-type(' + i + ')'); }
    return parts.join('>'); };
  for (const e of document.querySelectorAll(sel)) {
    if (out.length >= limit) break;
    if (!visible(e)) continue;
    const tag = e.tagName.toLowerCase();
    let value = '';
    if ('value' in e && (tag === 'input' || tag === 'select' || tag === 'textarea')) value = e.type === 'password' ? (e.value ? '••••' : '') : cut(String(e.value), 60);
    out.push({ k: path(e), tag, role: e.getAttribute('role') || '', text: cut((e.innerText || e.alt || '').trim().replace(/\s+/g, ' '), 80),
      value, cls: cut(typeof e.className === 'string' ? e.className : '', 80),
      st: [e.disabled ? 'disabled' : '', e.checked ? 'checked' : '', e.getAttribute('aria-expanded') === 'true' ? 'expanded' : '',
           e.getAttribute('aria-selected') === 'true' ? 'selected' : ''].filter(Boolean).join(',') });
  }
  return out;
}`

// PageState is a lightweight record of the page used to compute deltas.
type PageState struct {
	URL      string
	Title    string
	elements map[string]elemState
	order    []string
}

type elemState struct {
	Tag, Role, Text, Value, Class, State string
}

func (e elemState) summary() string {
	s := e.Tag
	if e.Role != "" {
		s += "[" + e.Role + "]"
	}
	if e.Text != "" {
		s += " " + fmt.Sprintf("%q", e.Text)
	}
	return s
}

// CaptureState records the page's visible elements (at most limit).
func (s *Session) CaptureState(limit int) (PageState, error) {
	ps := PageState{URL: s.page.URL(), Title: s.Title(), elements: map[string]elemState{}}
	v, err := s.page.Evaluate(stateScript, limit)
	if err != nil {
		return ps, fmt.Errorf("capture page state: %w", err)
	}
	list, _ := v.([]any)
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		k := str("k")
		if _, dup := ps.elements[k]; dup {
			continue
		}
		ps.elements[k] = elemState{Tag: str("tag"), Role: str("role"), Text: str("text"), Value: str("value"), Class: str("cls"), State: str("st")}
		ps.order = append(ps.order, k)
	}
	return ps, nil
}

// Change is one field of an element that changed.
type Change struct {
	Element string `json:"element"`
	Field   string `json:"field"` // text, value, class, state
	From    string `json:"from"`
	To      string `json:"to"`
}

// Delta is what a batch changed on the page.
type Delta struct {
	URL         *[2]string `json:"url,omitempty"`
	Title       *[2]string `json:"title,omitempty"`
	Appeared    []string   `json:"appeared,omitempty"`
	Disappeared []string   `json:"disappeared,omitempty"`
	Changed     []Change   `json:"changed,omitempty"`
	More        int        `json:"more,omitempty"` // entries left out past the top N
}

// Empty reports whether nothing changed.
func (d Delta) Empty() bool {
	return d.URL == nil && d.Title == nil && len(d.Appeared) == 0 && len(d.Disappeared) == 0 && len(d.Changed) == 0
}

// String is a compact rendering for prompts.
func (d Delta) String() string {
	if d.Empty() {
		return "no visible change\n"
	}
	var b strings.Builder
	if d.URL != nil {
		fmt.Fprintf(&b, "url: %s -> %s\n", d.URL[0], d.URL[1])
	}
	if d.Title != nil {
		fmt.Fprintf(&b, "title: %q -> %q\n", d.Title[0], d.Title[1])
	}
	for _, a := range d.Appeared {
		fmt.Fprintf(&b, "+ %s\n", a)
	}
	for _, a := range d.Disappeared {
		fmt.Fprintf(&b, "- %s\n", a)
	}
	for _, c := range d.Changed {
		fmt.Fprintf(&b, "~ %s %s: %q -> %q\n", c.Element, c.Field, c.From, c.To)
	}
	if d.More > 0 {
		fmt.Fprintf(&b, "(%d more changes)\n", d.More)
	}
	return b.String()
}

// Diff computes what changed from before to after, keeping the top n
// entries of each kind.
func Diff(before, after PageState, n int) Delta {
	var d Delta
	if before.URL != after.URL {
		d.URL = &[2]string{before.URL, after.URL}
	}
	if before.Title != after.Title {
		d.Title = &[2]string{before.Title, after.Title}
	}
	for _, k := range after.order {
		a := after.elements[k]
		b, ok := before.elements[k]
		if !ok {
			if len(d.Appeared) < n {
				d.Appeared = append(d.Appeared, a.summary())
			} else {
				d.More++
			}
			continue
		}
		for _, f := range [][3]string{{"text", b.Text, a.Text}, {"value", b.Value, a.Value}, {"class", b.Class, a.Class}, {"state", b.State, a.State}} {
			if f[1] != f[2] {
				if len(d.Changed) < n {
					d.Changed = append(d.Changed, Change{Element: a.summary(), Field: f[0], From: f[1], To: f[2]})
				} else {
					d.More++
				}
			}
		}
	}
	for _, k := range before.order {
		if _, ok := after.elements[k]; !ok {
			if len(d.Disappeared) < n {
				d.Disappeared = append(d.Disappeared, before.elements[k].summary())
			} else {
				d.More++
			}
		}
	}
	return d
}
