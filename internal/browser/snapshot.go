package browser

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Snapshot is the page as the model sees it: Playwright's aria snapshot with
// refs, password values redacted.
type Snapshot struct {
	URL       string          `json:"url"`
	Title     string          `json:"title"`
	Text      string          `json:"text"`
	Full      string          `json:"-"` // untrimmed text, for inspecting parts the budget left out
	Refs      map[string]bool `json:"-"`
	RawChars  int             `json:"raw_chars"` // size before trimming
	Truncated bool            `json:"truncated"`
	// Document is the identity of the page's document (Document.ID): a
	// different one after a batch means a new page was loaded.
	Document string `json:"document,omitempty"`
}

var refPattern = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)

const passwordValuesScript = `() => [...document.querySelectorAll('input[type=password]')].map(e => e.value).filter(v => v)`

// Redacted replaces password field values.
const Redacted = "«redacted»"

// Snapshot captures the page and every iframe in it (same- or
// cross-origin; open shadow roots are part of the accessibility tree) and
// builds the representation the model sees: long lists elided, only the
// viewport unless o.FullPage, password values redacted, trimmed to o.Budget
// characters with interactive lines first. Refs inside frames are prefixed
// with their frame (f2s3e7). Full keeps the whole page for inspect_page.
func (s *Session) Snapshot(ctx context.Context, o SnapshotOptions) (Snapshot, error) {
	url := s.page.URL()
	if read, m, ok := s.reused(url, o); ok {
		snap := s.build(url, read, o)
		s.keep(url, o, read, m)
		s.mu.Lock()
		s.patched++
		s.mu.Unlock()
		return snap, nil
	}
	s.mu.Lock()
	m := s.mark
	s.mu.Unlock()
	read, err := s.readPage(ctx, o)
	if err != nil {
		return Snapshot{URL: url}, err
	}
	snap := s.build(url, read, o)
	// The probe read before the tree is what the page may later be
	// compared with: whatever changed in between makes them differ.
	s.keep(url, o, read, m)
	return snap, nil
}

// readPage reads the main frame's aria tree and, in one evaluation while
// the tree is built, the rest the representation needs: both only read
// the page, and on a small page the round trips cost more than the work.
func (s *Session) readPage(ctx context.Context, o SnapshotOptions) (pageRead, error) {
	type result struct {
		v   any
		err error
	}
	factsc := make(chan result, 1)
	go func() {
		v, err := s.page.Evaluate(pageFactsScript, []any{40, o.FullPage})
		factsc <- result{v, err}
	}()
	text, err := s.mainAriaSnapshot(ctx)
	facts := <-factsc
	if err != nil {
		return pageRead{}, fmt.Errorf("aria snapshot: %w", err)
	}
	read := pageRead{aria: text}
	if arr, ok := facts.v.([]any); facts.err == nil && ok && len(arr) == 5 {
		read.title, read.census, read.clickable = arr[0], arr[1], arr[3]
		read.passwords = stringsOf(arr[2])
		read.reusable, _ = arr[4].(bool)
	} else {
		// Read one by one: a password must never go out unredacted.
		read.title, read.passwords = s.Title(), passwordValues(s.page.MainFrame())
		read.census, _ = s.page.Evaluate(viewportScript)
		read.clickable, _ = s.page.Evaluate(clickableScript, []any{40, o.FullPage})
	}
	return read, nil
}

// build makes the representation of a read of the page, reading its frames.
func (s *Session) build(url string, read pageRead, o SnapshotOptions) Snapshot {
	snap := Snapshot{URL: url}
	text, title, census, clickable := read.aria, read.title, read.census, read.clickable
	passwords := append([]string(nil), read.passwords...)
	snap.Title, _ = title.(string)
	s.mu.Lock()
	seq := 1
	if s.refs != nil {
		seq = s.refs.seq + 1
	}
	s.mu.Unlock()
	m := &refMap{seq: seq, actual: map[string]string{}, frames: map[string][]string{}, handles: map[string]string{}, texts: map[string]string{}}
	text = nameGroups(m.renumber(text, ""))
	var vp *viewport
	if p, ok := parseViewport(census); ok {
		vp = &p
		snap.Document = p.doc
	}
	full := text
	header, shown := represent(text, vp, o)
	var b, fb strings.Builder
	b.WriteString(shown)
	b.WriteString(clickableLines(m, clickable))
	frameOpts := playwright.LocatorAriaSnapshotOptions{Ref: playwright.Bool(true), Timeout: playwright.Float(3000)}
	for i, f := range liveFrames(s.page)[1:] {
		if f.IsDetached() {
			continue
		}
		chain, err := frameChain(f)
		if err != nil {
			continue
		}
		sub, err := ariaSnapshot(f, frameOpts)
		if err != nil {
			continue
		}
		n := strconv.Itoa(i + 1)
		m.frames[n] = chain
		passwords = append(passwords, passwordValues(f)...)
		sub = collapseLong(nameGroups(m.renumber(sub, n)))
		if texts, err := f.Evaluate(frameTextScript, 40); err == nil {
			sub = strings.TrimRight(sub, "\n") + "\n" + frameTextLines(m, n, sub, texts)
		}
		fmt.Fprintf(&fb, "- frame %q [frame=f%s] (%s):\n", strings.Join(chain, " > "), n, f.URL())
		for _, line := range strings.Split(strings.TrimRight(sub, "\n"), "\n") {
			fb.WriteString("  " + line + "\n")
		}
	}
	text = header + s.pagesHeader() + b.String() + fb.String()
	full = full + "\n" + fb.String()
	for _, pw := range passwords {
		text = strings.ReplaceAll(text, pw, Redacted)
		full = strings.ReplaceAll(full, pw, Redacted)
	}
	snap.RawChars = len(full)
	snap.Refs = map[string]bool{}
	info := map[string]refEntry{}
	for _, line := range strings.Split(full, "\n") {
		if m := snapshotLine.FindStringSubmatch(line); m != nil {
			name, err := strconv.Unquote(`"` + m[2] + `"`)
			if err != nil {
				name = m[2]
			}
			info[m[3]] = refEntry{role: m[1], name: name}
		}
	}
	// Every ref of the page is valid, shown or not: inspect_page reveals the rest.
	for _, m := range refPattern.FindAllStringSubmatch(full, -1) {
		snap.Refs[m[1]] = true
	}
	for ref := range m.handles {
		snap.Refs[ref] = true
	}
	for ref := range m.texts {
		snap.Refs[ref] = true
	}
	s.mu.Lock()
	s.refs, s.refInfo = m, info
	s.mu.Unlock()
	snap.Full = full + b.String()[len(shown):]
	snap.Text, snap.Truncated = trim(text, o.Budget)
	return snap
}

// InteractiveRefs counts the controls of the page that carry a ref: lines
// of the full representation whose role is interactive, role-less
// clickables included.
func (s Snapshot) InteractiveRefs() int {
	n := 0
	for _, line := range strings.Split(s.Full, "\n") {
		if m := snapshotLine.FindStringSubmatch(line); m != nil && interactiveRoles[m[1]] {
			n++
		}
	}
	return n
}

// InteractiveCensusScript counts a document's visible elements a person
// could operate (native controls, ARIA widgets, editors, elements with
// click handlers or a pointer cursor), shadow roots included: what the
// share of interactive elements carrying a ref is measured against.
const InteractiveCensusScript = `() => {
  const sel = 'a[href],button,input:not([type=hidden]),select,textarea,summary,[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=option],[role=switch],[role=slider],[role=textbox],[role=combobox],[contenteditable=""],[contenteditable=true],[onclick],[tabindex]:not([tabindex="-1"])';
  let n = 0;
  const walk = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.shadowRoot) walk(e.shadowRoot);
      const r = e.getBoundingClientRect();
      if (!r.width && !r.height) continue;
      if (e.matches(sel)) { n++; continue; }
      if (e.closest('a,button,label,select,summary')) continue;
      const p = e.parentElement;
      if (getComputedStyle(e).cursor === 'pointer' && !(p && getComputedStyle(p).cursor === 'pointer')) n++;
    }
  };
  walk(document);
  return n;
}`

// liveFrames lists a page's attached frames, the main frame first, by
// walking the frame tree: playwright-go's Page.Frames list is left holding
// detached frames (and loses the main frame) once any frame detaches.
func liveFrames(p playwright.Page) []playwright.Frame {
	out := []playwright.Frame{p.MainFrame()}
	for i := 0; i < len(out) && len(out) < 200; i++ {
		for _, c := range out[i].ChildFrames() {
			if !c.IsDetached() {
				out = append(out, c)
			}
		}
	}
	return out
}

// LiveFrames lists the current page's attached frames, the main frame first.
func (s *Session) LiveFrames() []playwright.Frame { return liveFrames(s.page) }

// pagesHeader lists the open pages when there is more than one.
func (s *Session) pagesHeader() string {
	pages := s.Pages()
	if len(pages) < 2 {
		return ""
	}
	var parts []string
	for _, p := range pages {
		if p.Closed {
			continue
		}
		cur := ""
		if p.Current {
			cur = " (this one)"
		}
		parts = append(parts, fmt.Sprintf("%d%s %s", p.Number, cur, p.URL))
	}
	return "# pages: " + strings.Join(parts, ", ") + " (switch_page acts in another)\n"
}

// Aria snapshot timeouts: a page that took long before is given longer,
// and a timed-out snapshot is tried once more with twice the time before
// the step that needs it fails.
const (
	minAriaTimeout = 5 * time.Second
	maxAriaTimeout = 30 * time.Second
	ariaSlack      = 4 // times the slowest recent snapshot
	ariaRecent     = 8
)

// snapshotTimeout is the time the next aria snapshot of the page gets.
func (s *Session) snapshotTimeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := minAriaTimeout
	for _, d := range s.ariaTook {
		t = max(t, ariaSlack*d)
	}
	return min(t, maxAriaTimeout)
}

func (s *Session) ariaDone(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ariaTook = append(s.ariaTook, d)
	if len(s.ariaTook) > ariaRecent {
		s.ariaTook = s.ariaTook[1:]
	}
}

// mainAriaSnapshot snapshots the main frame with an adaptive timeout and
// one retry.
func (s *Session) mainAriaSnapshot(ctx context.Context) (string, error) {
	timeout := s.snapshotTimeout()
	for try := 1; ; try++ {
		start := time.Now()
		text, err := ariaSnapshot(s.page.MainFrame(), playwright.LocatorAriaSnapshotOptions{Ref: playwright.Bool(true),
			Timeout: playwright.Float(float64(timeout.Milliseconds()))})
		if err == nil {
			s.ariaDone(time.Since(start))
			return text, nil
		}
		if !errors.Is(err, playwright.ErrTimeout) || ctx.Err() != nil {
			return "", err
		}
		s.ariaDone(timeout) // the page is at least this slow now
		if try == 2 {
			return "", fmt.Errorf("%w (tried twice, the second time for %s)", err, timeout)
		}
		timeout = min(2*timeout, maxAriaTimeout)
	}
}

// ariaSnapshot snapshots a frame's body, or its frameset, so reading a
// page made of frames never waits for a body that will not come; a
// document with neither (an SVG or XML document) is snapshot whole.
func ariaSnapshot(f playwright.Frame, o playwright.LocatorAriaSnapshotOptions) (string, error) {
	text, err := f.Locator(":root > body, :root > frameset").First().AriaSnapshot(o)
	if err != nil {
		if n, cerr := f.Locator(":root > body, :root > frameset").Count(); cerr == nil && n == 0 {
			return f.Locator(":root").AriaSnapshot(o)
		}
	}
	return text, err
}

// pageFactsScript reads, in one evaluation, what a snapshot needs of the
// main frame besides its aria tree: the title, the viewport census,
// password values and role-less clickables ([limit, fullPage]).
const pageFactsScript = `(a) => [document.title, (` + viewportScript + `)(), (` + passwordValuesScript + `)(), (` + clickableScript + `)(a), (` + reuseScript + `)()]`

func passwordValues(f playwright.Frame) []string {
	v, err := f.Evaluate(passwordValuesScript)
	if err != nil {
		return nil
	}
	return stringsOf(v)
}

// stringsOf keeps the non-empty strings of an evaluated list.
func stringsOf(v any) []string {
	var out []string
	if list, ok := v.([]any); ok {
		for _, x := range list {
			if s, ok := x.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// frameSelectorScript names an iframe element by the most stable selector.
const frameSelectorScript = `(e) => {
  if (e.id && /^[A-Za-z][\w-]*$/.test(e.id)) return '#' + e.id;
  for (const a of ['name', 'title']) { const v = e.getAttribute(a); if (v) return e.tagName.toLowerCase() + '[' + a + '=' + JSON.stringify(v) + ']'; }
  const all = [...e.ownerDocument.querySelectorAll(e.tagName)];
  return e.tagName.toLowerCase() + ' >> nth=' + all.indexOf(e);
}`

// frameChain lists the iframe selectors from the main frame down to f.
func frameChain(f playwright.Frame) ([]string, error) {
	var chain []string
	for cur := f; cur.ParentFrame() != nil; cur = cur.ParentFrame() {
		el, err := cur.FrameElement()
		if err != nil {
			return nil, fmt.Errorf("frame element: %w", err)
		}
		v, err := el.Evaluate(frameSelectorScript)
		if err != nil {
			return nil, fmt.Errorf("frame selector: %w", err)
		}
		sel, _ := v.(string)
		chain = append([]string{sel}, chain...)
	}
	return chain, nil
}

// trim keeps whole lines up to budget characters: interactive elements
// first, then headings and lines with text, then structure, in page order.
func trim(text string, budget int) (string, bool) {
	if budget <= 0 || len(text) <= budget {
		return text, false
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	priority := func(l string) int {
		if strings.HasPrefix(l, "#") {
			return 0
		}
		if m := snapshotLine.FindStringSubmatch(l); m != nil && interactiveRoles[m[1]] {
			return 0
		}
		if strings.Contains(l, "- heading") || strings.Contains(l, "]: ") || strings.Contains(l, "- text: ") {
			return 1
		}
		return 2
	}
	keep := make([]bool, len(lines))
	used := 0
	for pass := 0; pass < 3; pass++ {
		for i, l := range lines {
			if keep[i] || priority(l) != pass || used+len(l)+1 > budget {
				continue
			}
			keep[i] = true
			used += len(l) + 1
		}
	}
	var b strings.Builder
	dropped := 0
	for i, l := range lines {
		if keep[i] {
			b.WriteString(l)
			b.WriteByte('\n')
		} else {
			dropped++
		}
	}
	fmt.Fprintf(&b, "# %d lines left out to fit the budget (inspect_page with search or a ref shows them)\n", dropped)
	return b.String(), true
}
