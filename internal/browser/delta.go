package browser

import (
	"fmt"
	"regexp"
	"slices"
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

// FieldChange is one field of an element that changed.
type FieldChange struct {
	Element string `json:"element"`
	Field   string `json:"field,omitempty"` // text, value, class, state; empty when From/To are whole representation lines
	From    string `json:"from"`
	To      string `json:"to"`
}

// Delta is what a batch changed on the page.
type Delta struct {
	URL   *[2]string `json:"url,omitempty"`
	Title *[2]string `json:"title,omitempty"`
	// NewPage means another document was loaded: its representation is
	// all new, so no element differences are listed.
	NewPage     bool          `json:"new_page,omitempty"`
	Appeared    []string      `json:"appeared,omitempty"`
	Disappeared []string      `json:"disappeared,omitempty"`
	Changed     []FieldChange `json:"changed,omitempty"`
	Dialogs     []Dialog      `json:"dialogs,omitempty"`      // native dialogs the batch opened
	Opened      []PageInfo    `json:"opened_pages,omitempty"` // tabs and popups the batch opened
	More        int           `json:"more,omitempty"`         // entries left out past the top N
}

// Empty reports whether nothing changed.
func (d Delta) Empty() bool {
	return d.URL == nil && d.Title == nil && !d.NewPage && len(d.Appeared) == 0 && len(d.Disappeared) == 0 &&
		len(d.Changed) == 0 && len(d.Dialogs) == 0 && len(d.Opened) == 0
}

// String is a compact rendering for prompts.
func (d Delta) String() string {
	if d.Empty() {
		return "no visible change\n"
	}
	var b strings.Builder
	if d.NewPage {
		b.WriteString("new page: another document was loaded (its representation below is all new)\n")
	}
	if d.URL != nil {
		fmt.Fprintf(&b, "url: %s -> %s\n", d.URL[0], d.URL[1])
	}
	if d.Title != nil {
		fmt.Fprintf(&b, "title: %q -> %q\n", d.Title[0], d.Title[1])
	}
	for _, dl := range d.Dialogs {
		answer := dl.Answer + "ed"
		if dl.Answer == "dismiss" {
			answer = "dismissed"
		}
		if dl.PromptText != "" {
			answer += fmt.Sprintf(" with %q", dl.PromptText)
		}
		fmt.Fprintf(&b, "dialog on page %d: %s %q (%s)\n", dl.Page, dl.Type, dl.Message, answer)
	}
	for _, p := range d.Opened {
		fmt.Fprintf(&b, "page %d opened: %s (switch_page %d acts in it)\n", p.Number, p.URL, p.Number)
	}
	for _, a := range d.Appeared {
		fmt.Fprintf(&b, "+ %s\n", a)
	}
	for _, a := range d.Disappeared {
		fmt.Fprintf(&b, "- %s\n", a)
	}
	for _, c := range d.Changed {
		if c.Field == "" {
			fmt.Fprintf(&b, "~ %s (was: %s)\n", c.Element, c.From)
			continue
		}
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
					d.Changed = append(d.Changed, FieldChange{Element: a.summary(), Field: f[0], From: f[1], To: f[2]})
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

// snapLine is one element of a snapshot for diffing: its line without the
// ref, plus the text lines under it that belong to no other element.
type snapLine struct {
	shown, content string
	// id is what the element is, whatever it shows: its frame, role and
	// name ("f2 checkbox \"Toggle Buy milk\""), without values or states;
	// a nameless container's is told apart by its first element's.
	id     string
	indent int
}

// refFrame is the frame part of a ref (f2 in f2s3e7): elements of
// different frames are never the same element.
var refFrame = regexp.MustCompile(`^(f\d+)?s\d+e\d+$`)

// lineIdentity is a line's role and quoted name.
var lineIdentity = regexp.MustCompile(`^[a-z]+(?: "(?:[^"\\]|\\.)*")?`)

// snapLines lists a snapshot's elements in page order.
func snapLines(full string) []snapLine {
	var out []snapLine
	var cur *snapLine
	var curIndent int
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, l := range strings.Split(full, "\n") {
		trimmed := strings.TrimSpace(l)
		indent := len(l) - len(strings.TrimLeft(l, " "))
		m := refPattern.FindStringSubmatch(l)
		if m != nil {
			flush()
			fm := refFrame.FindStringSubmatch(m[1])
			if fm == nil {
				continue // clickable handles are numbered per snapshot
			}
			content := strings.TrimSpace(strings.TrimPrefix(strings.Replace(trimmed, " [ref="+m[1]+"]", "", 1), "- "))
			id := fm[1] + " " + lineIdentity.FindString(content)
			cur, curIndent = &snapLine{shown: strings.TrimPrefix(trimmed, "- "), content: content, id: id, indent: indent}, indent
			continue
		}
		if cur != nil && indent > curIndent && strings.HasPrefix(trimmed, "- text: ") {
			cur.content += " " + strings.TrimPrefix(trimmed, "- text: ")
			cur.shown += " " + strings.TrimPrefix(trimmed, "- text: ")
		} else if cur != nil && indent <= curIndent {
			flush()
		}
	}
	flush()
	// A list's items are all "listitem": what is in one tells repeated
	// nameless containers apart.
	seen := map[string]int{}
	for _, l := range out {
		seen[l.id]++
	}
	for i := len(out) - 2; i >= 0; i-- {
		if seen[out[i].id] > 1 && !strings.Contains(out[i].id, `"`) && out[i+1].indent > out[i].indent {
			out[i].id += " > " + out[i+1].id
		}
	}
	return out
}

// maxAlign bounds the elements compared pairwise when aligning the changed
// middle of two snapshots (a longer middle is aligned greedily).
const maxAlign = 1500

// alignLines pairs the elements of two snapshots that are the same
// element: Playwright numbers refs by position in each snapshot, so an
// element is recognised by what it is (frame, role, name), in page order:
// the common head and tail, then the longest common subsequence of the
// middle. match[i] is the index in a of b[i], or -1.
func alignLines(b, a []snapLine) []int {
	match := make([]int, len(b))
	for i := range match {
		match[i] = -1
	}
	head := 0
	for head < len(b) && head < len(a) && b[head].id == a[head].id {
		match[head] = head
		head++
	}
	tail := 0
	for tail < len(b)-head && tail < len(a)-head && b[len(b)-1-tail].id == a[len(a)-1-tail].id {
		match[len(b)-1-tail] = len(a) - 1 - tail
		tail++
	}
	bm, am := b[head:len(b)-tail], a[head:len(a)-tail]
	if len(bm) == 0 || len(am) == 0 {
		return match
	}
	if len(bm) > maxAlign || len(am) > maxAlign {
		// Greedy: each element takes the next one of the same identity.
		j := 0
		for i := range bm {
			for k := j; k < len(am) && k < j+50; k++ {
				if am[k].id == bm[i].id {
					match[head+i], j = head+k, k+1
					break
				}
			}
		}
		return match
	}
	// lcs[i][j] is the longest common subsequence of bm[i:] and am[j:].
	lcs := make([][]int32, len(bm)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(am)+1)
	}
	for i := len(bm) - 1; i >= 0; i-- {
		for j := len(am) - 1; j >= 0; j-- {
			if bm[i].id == am[j].id {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	for i, j := 0, 0; i < len(bm) && j < len(am); {
		switch {
		case bm[i].id == am[j].id:
			match[head+i] = head + j
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			j++
		}
	}
	return match
}

// DiffSnapshots says what a batch changed, in the page representation's
// own terms (role, name, ref of the new representation): elements that
// appeared, disappeared or changed (text, value, state), keeping the top n
// of each kind. A different document is reported as a new page, not as a
// list of differences.
func DiffSnapshots(before, after Snapshot, n int) Delta {
	var d Delta
	if before.URL != after.URL {
		d.URL = &[2]string{before.URL, after.URL}
	}
	if before.Title != after.Title {
		d.Title = &[2]string{before.Title, after.Title}
	}
	if before.Document != "" && after.Document != "" && before.Document != after.Document {
		d.NewPage = true
		return d
	}
	b := snapLines(before.Full)
	a := snapLines(after.Full)
	match := alignLines(b, a)
	matched := make([]bool, len(a))
	for _, j := range match {
		if j >= 0 {
			matched[j] = true
		}
	}
	// What opened (a menu, a dialog, a list of options, an alert) leads:
	// it is the change that matters, however far down the page it sits.
	var appeared []string
	for j, al := range a {
		if !matched[j] {
			appeared = append(appeared, al.shown)
		}
	}
	slices.SortStableFunc(appeared, func(x, y string) int { return salience(y) - salience(x) })
	for _, s := range appeared {
		if len(d.Appeared) < n {
			d.Appeared = append(d.Appeared, clip(s))
		} else {
			d.More++
		}
	}
	for i, j := range match {
		if j < 0 || b[i].content == a[j].content {
			continue
		}
		if len(d.Changed) < n {
			d.Changed = append(d.Changed, FieldChange{Element: clip(a[j].shown), From: clip(b[i].content), To: clip(a[j].content)})
		} else {
			d.More++
		}
	}
	for i, j := range match {
		if j >= 0 {
			continue
		}
		if len(d.Disappeared) < n {
			d.Disappeared = append(d.Disappeared, clip(b[i].content))
		} else {
			d.More++
		}
	}
	return d
}

func clip(s string) string { return truncate(s, 160) }

// salientRole matches the roles of what opens in answer to an action.
var salientRole = regexp.MustCompile(`^(?:dialog|alertdialog|menu|menubar|menuitem|menuitemcheckbox|menuitemradio|listbox|option|alert|status|tooltip|tabpanel|combobox)\b`)

// salience ranks an appeared element: 1 for what opened, 0 for the rest.
func salience(line string) int {
	if salientRole.MatchString(line) {
		return 1
	}
	return 0
}
