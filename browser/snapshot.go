package browser

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// Snapshot is the page as the model sees it: Playwright's aria snapshot with
// refs, password values redacted.
type Snapshot struct {
	URL       string          `json:"url"`
	Title     string          `json:"title"`
	Text      string          `json:"text"`
	Refs      map[string]bool `json:"-"`
	RawChars  int             `json:"raw_chars"` // size before trimming
	Truncated bool            `json:"truncated"`
}

var refPattern = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)

const passwordValuesScript = `() => [...document.querySelectorAll('input[type=password]')].map(e => e.value).filter(v => v)`

// Redacted replaces password field values.
const Redacted = "«redacted»"

// Snapshot captures the page, redacts password values and trims the text to
// budget characters (0 means no limit).
func (s *Session) Snapshot(ctx context.Context, budget int) (Snapshot, error) {
	snap := Snapshot{URL: s.page.URL(), Title: s.Title()}
	text, err := s.page.Locator("body").AriaSnapshot(playwright.LocatorAriaSnapshotOptions{Ref: playwright.Bool(true), Timeout: playwright.Float(5000)})
	if err != nil {
		return snap, fmt.Errorf("aria snapshot: %w", err)
	}
	if v, err := s.page.Evaluate(passwordValuesScript); err == nil {
		if list, ok := v.([]any); ok {
			for _, x := range list {
				if pw, ok := x.(string); ok && pw != "" {
					text = strings.ReplaceAll(text, pw, Redacted)
				}
			}
		}
	}
	snap.RawChars = len(text)
	snap.Refs = map[string]bool{}
	for _, m := range refPattern.FindAllStringSubmatch(text, -1) {
		snap.Refs[m[1]] = true
	}
	snap.Text, snap.Truncated = trim(text, budget)
	return snap, nil
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
