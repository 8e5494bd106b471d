package browser

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

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
}

var refPattern = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)

const passwordValuesScript = `() => [...document.querySelectorAll('input[type=password]')].map(e => e.value).filter(v => v)`

// Redacted replaces password field values.
const Redacted = "«redacted»"

// Snapshot captures the page and every iframe in it (same- or
// cross-origin; open shadow roots are part of the accessibility tree),
// redacts password values and trims the text to budget characters (0: no
// limit). Refs inside frames are prefixed with their frame (f2s3e7).
func (s *Session) Snapshot(ctx context.Context, budget int) (Snapshot, error) {
	snap := Snapshot{URL: s.page.URL(), Title: s.Title()}
	opts := playwright.LocatorAriaSnapshotOptions{Ref: playwright.Bool(true), Timeout: playwright.Float(5000)}
	text, err := s.page.Locator("body").AriaSnapshot(opts)
	if err != nil {
		return snap, fmt.Errorf("aria snapshot: %w", err)
	}
	passwords := passwordValues(s.page.MainFrame())
	frameRefs := map[string][]string{}
	var b strings.Builder
	b.WriteString(text)
	frameOpts := playwright.LocatorAriaSnapshotOptions{Ref: playwright.Bool(true), Timeout: playwright.Float(3000)}
	for i, f := range s.page.Frames()[1:] {
		if f.IsDetached() {
			continue
		}
		chain, err := frameChain(f)
		if err != nil {
			continue
		}
		sub, err := f.Locator("body").AriaSnapshot(frameOpts)
		if err != nil {
			continue
		}
		n := strconv.Itoa(i + 1)
		frameRefs[n] = chain
		passwords = append(passwords, passwordValues(f)...)
		sub = refPattern.ReplaceAllString(sub, "[ref=f"+n+"$1]")
		fmt.Fprintf(&b, "\n- frame %q [frame=f%s] (%s):\n", strings.Join(chain, " > "), n, f.URL())
		for _, line := range strings.Split(sub, "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	text = b.String()
	for _, pw := range passwords {
		text = strings.ReplaceAll(text, pw, Redacted)
	}
	snap.RawChars = len(text)
	snap.Refs = map[string]bool{}
	info := map[string]refEntry{}
	for _, line := range strings.Split(text, "\n") {
		if m := snapshotLine.FindStringSubmatch(line); m != nil {
			name, err := strconv.Unquote(`"` + m[2] + `"`)
			if err != nil {
				name = m[2]
			}
			info[m[3]] = refEntry{role: m[1], name: name}
		}
	}
	for _, m := range refPattern.FindAllStringSubmatch(text, -1) {
		snap.Refs[m[1]] = true
	}
	s.mu.Lock()
	s.frameRefs, s.refInfo = frameRefs, info
	s.mu.Unlock()
	snap.Full = text
	snap.Text, snap.Truncated = trim(text, budget)
	return snap, nil
}

func passwordValues(f playwright.Frame) []string {
	v, err := f.Evaluate(passwordValuesScript)
	if err != nil {
		return nil
	}
	var out []string
	if list, ok := v.([]any); ok {
		for _, x := range list {
			if pw, ok := x.(string); ok && pw != "" {
				out = append(out, pw)
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

// trim keeps whole lines up to budget characters, preferring lines that
// carry a ref (elements one can act on) over plain text.
func trim(text string, budget int) (string, bool) {
	if budget <= 0 || len(text) <= budget {
		return text, false
	}
	lines := strings.Split(text, "\n")
	keep := make([]bool, len(lines))
	used := 0
	for pass := 0; pass < 2; pass++ {
		for i, l := range lines {
			if keep[i] || (pass == 0) != strings.Contains(l, "[ref=") {
				continue
			}
			if used+len(l)+1 > budget {
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
	fmt.Fprintf(&b, "# %d lines left out to fit the budget\n", dropped)
	return b.String(), true
}
