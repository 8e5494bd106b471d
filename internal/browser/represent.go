package browser

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// SnapshotOptions shape the page representation.
type SnapshotOptions struct {
	Budget   int  // characters; 0 means no limit
	FullPage bool // keep elements outside the viewport
	ListKeep int  // items kept of a long repeated list (default 6)
}

// roleNameScript approximates an element's role and accessible name, the
// way fingerprints and the viewport filter see elements.
const roleNameScript = `// A label's own text, without the text of the controls inside it (a select's options).
const labelText = (l) => { const c = l.cloneNode(true); c.querySelectorAll('select,input,textarea,button').forEach(x => x.remove()); return c.textContent; };
const wpRoleName = (e) => {
  const attr = (n) => e.getAttribute(n) || '';
  const clean = (s) => (s || '').trim().replace(/\s+/g, ' ');
  const tag = e.tagName.toLowerCase();
  const type = attr('type').toLowerCase();
  const implicit = { button: 'button', textarea: 'textbox', h1: 'heading', h2: 'heading', h3: 'heading', h4: 'heading', h5: 'heading', h6: 'heading',
    img: 'img', li: 'listitem', option: 'option', summary: 'button', p: 'paragraph', ul: 'list', ol: 'list', table: 'table',
    tr: 'row', td: 'cell', nav: 'navigation', main: 'main', dialog: 'dialog', blockquote: 'blockquote', code: 'code' };
  let role = attr('role') || implicit[tag] || '';
  if (tag === 'a' && e.hasAttribute('href')) role = role || 'link';
  if (tag === 'select') role = role || (e.multiple || e.size > 1 ? 'listbox' : 'combobox');
  if (tag === 'input') role = role || ({ checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button', reset: 'button', image: 'button',
    range: 'slider', number: 'spinbutton', search: 'searchbox', email: 'textbox', tel: 'textbox', text: 'textbox', url: 'textbox', password: 'textbox', '': 'textbox' })[type] || '';
  let label = '';
  if (e.labels && e.labels.length) label = clean([...e.labels].map(labelText).join(' '));
  const fromContent = ['button', 'link', 'heading', 'option', 'tab', 'menuitem', 'checkbox', 'radio', 'treeitem', 'switch'].includes(role);
  let labelledBy = '';
  if (attr('aria-labelledby')) labelledBy = clean(attr('aria-labelledby').split(' ').map(id => ((e.getRootNode().getElementById ? e.getRootNode().getElementById(id) : document.getElementById(id)) || {}).innerText || '').join(' '));
  const name = attr('aria-label') || labelledBy || label || (tag === 'img' ? attr('alt') : '') ||
    (tag === 'input' && ['submit', 'button', 'reset'].includes(type) ? attr('value') : '') ||
    (fromContent ? clean(e.innerText || e.textContent) : '') || attr('title') || (role === 'textbox' || role === 'searchbox' ? attr('placeholder') : '');
  return [role, name.slice(0, 200)];
};`

// viewportScript reports the scroll position and, for every element with a
// role, its role, name and whether any part of it is in the viewport.
const viewportScript = `() => {
  ` + roleNameScript + `
  const vh = innerHeight, vw = innerWidth;
  const els = [];
  const sel = 'a[href],button,input,select,textarea,summary,[role],h1,h2,h3,h4,h5,h6,img[alt],li,option,p,ul,ol,table,tr,td,nav,main,dialog,blockquote,code';
  const walk = (root) => {
    for (const e of root.querySelectorAll(sel)) {
      const [role, name] = wpRoleName(e);
      if (!role) continue;
      const r = e.getBoundingClientRect();
      const shown = r.width > 0 || r.height > 0;
      const pos = !shown ? 'hidden' : r.bottom < 0 ? 'above' : r.top > vh ? 'below' : (r.right < 0 || r.left > vw) ? 'aside' : 'in';
      const sel = e.tagName === 'SELECT' ? [...e.selectedOptions].map(o => o.label).join(', ') : '';
      els.push([role, name, pos, e.getAttribute('data-testid') || '', e === document.activeElement || (root !== document && e === root.activeElement), sel]);
    }
    for (const h of root.querySelectorAll('*')) if (h.shadowRoot) walk(h.shadowRoot);
  };
  walk(document);
  // Where long runs of text sit, keyed by their first characters: a long
  // text off screen is what a representation can best do without.
  const txt = [];
  if (document.body) {
    const tw = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let t = tw.nextNode(); t && txt.length < 2000; t = tw.nextNode()) {
      const s = t.data.trim().replace(/\s+/g, ' ');
      if (s.length < ` + longTextJS + ` || !t.parentElement) continue;
      const r = t.parentElement.getBoundingClientRect();
      const pos = !(r.width > 0 || r.height > 0) ? 'hidden' : r.bottom < 0 ? 'above' : r.top > vh ? 'below' : (r.right < 0 || r.left > vw) ? 'aside' : 'in';
      txt.push([s.slice(0, ` + textKeyJS + `), pos]);
    }
  }
  // One string: the driver's typed serialization of thousands of small
  // arrays cost more than computing them.
  return JSON.stringify({ y: scrollY, vh, ph: document.documentElement.scrollHeight, els, txt, doc: String(performance.timeOrigin) });
}`

// A text line at least longTextChars long is placed by the census, by its
// first textKeyChars characters.
const (
	longTextChars = 80
	textKeyChars  = 40
	longTextJS    = "80"
	textKeyJS     = "40"
)

// viewport is where elements sit relative to the viewport.
type viewport struct {
	doc                         string // the document's identity (see Document)
	scrollY, height, pageHeight float64
	// pos lists, per role and name, each element's position in page order.
	pos map[[2]string][]string
	// notes are what the aria snapshot does not say (test id, focus) of
	// elements whose role and name are unique on the page.
	notes map[[2]string]string
	// text lists where long texts sit, by their first textKeyChars characters.
	text map[string][]string
}

func parseViewport(v any) (viewport, bool) {
	if s, ok := v.(string); ok {
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return viewport{}, false
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return viewport{}, false
	}
	doc, _ := m["doc"].(string)
	vp := viewport{doc: doc, scrollY: toFloat(m["y"]), height: toFloat(m["vh"]), pageHeight: toFloat(m["ph"]),
		pos: map[[2]string][]string{}, notes: map[[2]string]string{}, text: map[string][]string{}}
	txt, _ := m["txt"].([]any)
	for _, x := range txt {
		if e, ok := x.([]any); ok && len(e) == 2 {
			key, _ := e[0].(string)
			pos, _ := e[1].(string)
			vp.text[key] = append(vp.text[key], pos)
		}
	}
	seen := map[[2]string]int{}
	els, _ := m["els"].([]any)
	for _, x := range els {
		e, ok := x.([]any)
		if !ok || len(e) != 6 {
			continue
		}
		role, _ := e[0].(string)
		name, _ := e[1].(string)
		pos, _ := e[2].(string)
		k := [2]string{role, name}
		vp.pos[k] = append(vp.pos[k], pos)
		seen[k]++
		var note string
		if id, _ := e[3].(string); id != "" {
			note += fmt.Sprintf(" [test_id=%s]", strconv.Quote(id))
		}
		if f, _ := e[4].(bool); f {
			note += " [focused]"
		}
		if sel, _ := e[5].(string); sel != "" {
			note += fmt.Sprintf(" [selected=%s]", strconv.Quote(sel))
		}
		if note != "" {
			vp.notes[k] = note
		}
	}
	for k, n := range seen {
		if n > 1 {
			delete(vp.notes, k) // ambiguous: the note may belong to another element
		}
	}
	return vp, true
}

// where says where the idx-th element (in page order) of a role and name
// lies: in, hidden, above, below or aside. When the page and the snapshot
// disagree on how many such elements there are, an element counts as
// outside only if all of them are on the same side.
func (vp viewport) where(role, name string, idx, total int) string {
	list := vp.pos[[2]string{role, name}]
	if len(list) == 0 {
		return ""
	}
	if len(list) == total && idx < len(list) {
		return list[idx]
	}
	side := list[0]
	for _, p := range list[1:] {
		if p != side {
			return ""
		}
	}
	return side
}

type node struct {
	line     string
	indent   int
	role     string
	name     string
	ref      string
	occ      int // among the elements of its role and name, in page order
	children []*node
}

// parseTree turns aria snapshot YAML lines into a tree by indentation.
func parseTree(text string) []*node {
	root := &node{indent: -2}
	stack := []*node{root}
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := &node{line: l, indent: len(l) - len(strings.TrimLeft(l, " "))}
		if m := snapshotLine.FindStringSubmatch(l); m != nil {
			n.role, n.ref = m[1], m[3]
			if name, err := strconv.Unquote(`"` + m[2] + `"`); err == nil {
				n.name = name
			}
		} else if f := strings.Fields(strings.TrimSpace(l)); len(f) > 1 && f[0] == "-" {
			n.role = strings.TrimSuffix(strings.SplitN(f[1], ":", 2)[0], ":")
		}
		for len(stack) > 1 && stack[len(stack)-1].indent >= n.indent {
			stack = stack[:len(stack)-1]
		}
		p := stack[len(stack)-1]
		p.children = append(p.children, n)
		stack = append(stack, n)
	}
	return root.children
}

func render(b *strings.Builder, nodes []*node) {
	for _, n := range nodes {
		b.WriteString(n.line)
		b.WriteByte('\n')
		render(b, n.children)
	}
}

// elideLists shortens long runs of same-role siblings: the first keep items
// and every item in the viewport stay, and each stretch left out is one line
// saying how many items it held. What the page shows is never elided: a
// model that must scroll or inspect to see visible links pays a round trip.
func elideLists(nodes []*node, keep int, inView func(*node) bool) []*node {
	var out []*node
	keepAll := func(ns []*node) {
		for _, n := range ns {
			n.children = elideLists(n.children, keep, inView)
			out = append(out, n)
		}
	}
	for i := 0; i < len(nodes); {
		j := i
		for j < len(nodes) && nodes[j].role == nodes[i].role && nodes[i].role != "" {
			j++
		}
		if j == i {
			j = i + 1
		}
		if j-i <= keep+2 {
			keepAll(nodes[i:j])
			i = j
			continue
		}
		var gap []*node // items left out since the last one kept
		flush := func() {
			if len(gap) <= 2 {
				keepAll(gap) // a note would cost as much as the items
			} else {
				pad := strings.Repeat(" ", gap[0].indent)
				out = append(out, &node{line: fmt.Sprintf("%s- (%d more %s elided; inspect_page with the list's ref shows them)", pad, len(gap), gap[0].role), indent: gap[0].indent})
			}
			gap = nil
		}
		for k, n := range nodes[i:j] {
			if k < keep || inView(n) {
				flush()
				keepAll([]*node{n})
			} else {
				gap = append(gap, n)
			}
		}
		flush()
		i = j
	}
	return out
}

// annotate adds test ids and focus to the lines of the elements they belong to.
func annotate(nodes []*node, vp viewport) {
	for _, n := range nodes {
		if note := vp.notes[[2]string{n.role, n.name}]; note != "" && n.ref != "" {
			n.line = strings.Replace(n.line, "[ref="+n.ref+"]", "[ref="+n.ref+"]"+note, 1)
		}
		annotate(n.children, vp)
	}
}

// dropOutside removes the content wholly outside the viewport, counting
// exactly what it removes. Controls are kept wherever they are, marked with
// their side, so the model can always reach an input, button or select.
func dropOutside(nodes []*node, vp viewport, counts map[string]int, total map[[2]string]int) []*node {
	var out []*node
	for _, n := range nodes {
		where := ""
		if n.role != "" && n.ref != "" {
			where = vp.where(n.role, n.name, n.occ, total[[2]string{n.role, n.name}])
		}
		if where == "" && len(n.children) == 0 && !interactiveRoles[n.role] {
			// Long text is placed by the census of texts.
			switch side := vp.textWhere(n.line); side {
			case "above", "below", "aside":
				counts[side]++
				continue
			}
		}
		if n.role != "" && n.ref != "" {
			switch where {
			case "above", "below", "aside":
				if interactiveRoles[n.role] {
					n.line = strings.Replace(n.line, "[ref="+n.ref+"]", "[ref="+n.ref+"] ["+sideWord(where)+"]", 1)
				} else if n.name != "" || len(n.children) == 0 {
					counts[where] += 1 + countRefs(n.children)
					continue
				}
			}
		}
		had := len(n.children)
		n.children = dropOutside(n.children, vp, counts, total)
		if had > 0 && len(n.children) == 0 && n.name == "" && !strings.Contains(n.line, "]: ") {
			// A container whose content is all off screen goes too, counted
			// when it has a ref (on the side of its content when its own is unknown).
			if n.ref == "" {
				continue
			}
			switch where {
			case "above", "below", "aside":
				counts[where]++
				continue
			}
		}
		out = append(out, n)
	}
	return out
}

// textWhere says where the long text a line carries lies (see where), ""
// when the line carries no long text or its place is not known.
func (vp viewport) textWhere(line string) string {
	v := lineText(line)
	if len(v) < longTextChars {
		return ""
	}
	u := utf16.Encode([]rune(v))
	list := vp.text[string(utf16.Decode(u[:min(len(u), textKeyChars)]))]
	if len(list) == 0 {
		return ""
	}
	for _, p := range list[1:] {
		if p != list[0] {
			return ""
		}
	}
	return list[0]
}

// lineText is the text value of an aria snapshot line ("- text: …",
// "- paragraph [ref=e3]: …"), unquoted.
func lineText(line string) string {
	l := strings.TrimSpace(line)
	v := ""
	if i := strings.Index(l, "]: "); i >= 0 {
		v = l[i+3:]
	} else if m := plainValueLine.FindStringSubmatch(l); m != nil {
		v = m[1]
	}
	if strings.HasPrefix(v, `"`) {
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
	}
	return v
}

var plainValueLine = regexp.MustCompile(`^- [a-z]+: (.+)$`)

// plainer drops what repeats without telling the model anything: a label's
// text beside the control it names (the control's line carries the name),
// and the refs of a native select's options (select takes the option's
// label, so an option is never a target of its own).
func plainer(nodes []*node) []*node {
	out := nodes[:0]
	for i, n := range nodes {
		if t, ok := strings.CutPrefix(strings.TrimSpace(n.line), "- text: "); ok && len(n.children) == 0 {
			if u, err := strconv.Unquote(t); err == nil {
				t = u
			}
			names := func(m *node) bool { return interactiveRoles[m.role] && m.name == t }
			if (i > 0 && names(nodes[i-1])) || (i+1 < len(nodes) && names(nodes[i+1])) {
				continue
			}
		}
		if n.role == "combobox" {
			for _, c := range n.children {
				if c.role == "option" && c.ref != "" {
					c.line = strings.Replace(c.line, " [ref="+c.ref+"]", "", 1)
				}
			}
		}
		n.children = plainer(n.children)
		out = append(out, n)
	}
	return out
}

func sideWord(where string) string {
	if where == "aside" {
		return "beside"
	}
	return where
}

// tally counts the role-and-name occurrences of a subtree, numbering each
// node among those of its role and name in page order.
func tally(nodes []*node, seen map[[2]string]int) {
	for _, n := range nodes {
		if n.role != "" && n.ref != "" {
			k := [2]string{n.role, n.name}
			n.occ = seen[k]
			seen[k]++
		}
		tally(n.children, seen)
	}
}

// collapseLong shortens the text of lines carrying long text (code, long
// paragraphs), saying how much was left out: the budget is for controls.
func collapseLong(text string) string {
	if !strings.Contains(text, "\n") && len(text) <= maxLineText {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = collapseLine(l)
	}
	return strings.Join(lines, "\n")
}

const maxLineText = 240

func collapseLine(l string) string {
	if len(l) <= maxLineText {
		return l
	}
	at := strings.Index(l, "]: ")
	if at < 0 {
		if at = strings.Index(l, "- text: "); at >= 0 {
			at += len("- text")
		} else if at = strings.Index(l, "- /url: "); at >= 0 {
			at += len("- /url")
		}
	} else {
		at++
	}
	if at < 0 || len(l)-at < maxLineText/2 {
		return l
	}
	head := l[:at+2]
	value := l[at+2:]
	cut := 160
	for cut > 0 && !utf8.RuneStart(value[cut]) {
		cut--
	}
	return fmt.Sprintf("%s%s… (+%d chars; inspect_page with search shows them)", head, value[:cut], len(value)-cut)
}

func countRefs(nodes []*node) int {
	n := 0
	for _, c := range nodes {
		if c.ref != "" {
			n++
		}
		n += countRefs(c.children)
	}
	return n
}

// represent builds the page representation from the main frame's snapshot:
// long lists elided, the viewport only unless FullPage, with a header saying
// where the viewport is and what lies outside it.
func represent(text string, vp *viewport, o SnapshotOptions) (string, string) {
	keep := o.ListKeep
	if keep <= 0 {
		keep = 6
	}
	tree := parseTree(text)
	total := map[[2]string]int{}
	tally(tree, total) // numbers each element among those of its role and name
	inView := func(*node) bool { return false }
	if vp != nil {
		inView = func(n *node) bool {
			return n.ref != "" && vp.where(n.role, n.name, n.occ, total[[2]string{n.role, n.name}]) == "in"
		}
	}
	nodes := elideLists(tree, keep, inView)
	header := ""
	if vp != nil {
		counts := map[string]int{}
		annotate(nodes, *vp)
		if !o.FullPage {
			nodes = dropOutside(nodes, *vp, counts, total)
		}
		left := counts["above"] + counts["below"] + counts["aside"]
		// A page that fits in the viewport, with nothing left out, needs no
		// word about the viewport.
		if left > 0 || vp.scrollY > 0 || vp.pageHeight > vp.height+1 {
			header = fmt.Sprintf("# viewport: y %.0f-%.0f of %.0f px; controls outside it are kept, marked [above], [below] or [beside]", vp.scrollY, vp.scrollY+vp.height, vp.pageHeight)
			if left > 0 {
				header += fmt.Sprintf("; other content left out as outside the viewport: %d elements above, %d below, %d beside (scroll, or inspect_page with search)",
					counts["above"], counts["below"], counts["aside"])
			}
			header += "\n"
		}
	}
	nodes = plainer(nodes)
	var b strings.Builder
	render(&b, nodes)
	return header, collapseLong(b.String())
}
