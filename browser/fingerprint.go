package browser

import (
	"fmt"
	"regexp"
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
	// Locator is the most robust target that was unique on the page when
	// the fingerprint was taken.
	Locator Target `json:"locator"`
}

const fingerprintScript = `(e) => {
  const attr = (n) => e.getAttribute(n) || '';
  const clean = (s) => (s || '').trim().replace(/\s+/g, ' ');
  let label = '';
  if (e.labels && e.labels.length) label = clean([...e.labels].map(l => l.innerText).join(' '));
  else if (attr('aria-labelledby')) label = clean(attr('aria-labelledby').split(' ').map(id => (document.getElementById(id) || {}).innerText || '').join(' '));
  const path = [];
  for (let n = e; n && n.nodeType === 1 && n !== document.documentElement; n = n.parentElement) {
    if (n.id && /^[A-Za-z][\w-]*$/.test(n.id)) { path.unshift('#' + n.id); break; }
    let i = 1; for (let s = n.previousElementSibling; s; s = s.previousElementSibling) if (s.tagName === n.tagName) i++;
    path.unshift(n.tagName.toLowerCase() + ':nth-of-type(' + i + ')');
  }
  const keep = {};
  for (const n of ['id', 'name', 'type', 'href', 'class', 'aria-label', 'data-testid', 'role', 'for']) if (attr(n)) keep[n] = attr(n).slice(0, 120);
  return { tag: e.tagName.toLowerCase(), testid: attr('data-testid'), placeholder: attr('placeholder'), label,
    alt: attr('alt'), title: attr('title'), text: clean(e.innerText || e.textContent).slice(0, 100), attrs: keep, path: path.join(' > ') };
}`

// ariaLine matches the first line of an element's aria snapshot: `- role "name"`.
var ariaLine = regexp.MustCompile(`^- ([a-z]+)(?: "((?:[^"\\]|\\.)*)")?`)

func (s *Session) fingerprint(loc playwright.Locator) (*Fingerprint, error) {
	v, err := loc.Evaluate(fingerprintScript, nil)
	if err != nil {
		return nil, fmt.Errorf("fingerprint element: %w", err)
	}
	m, _ := v.(map[string]any)
	str := func(k string) string { s, _ := m[k].(string); return s }
	fp := &Fingerprint{Tag: str("tag"), TestID: str("testid"), Placeholder: str("placeholder"), Label: str("label"),
		Alt: str("alt"), Title: str("title"), Text: str("text"), Path: str("path"), Attributes: map[string]string{}}
	if a, ok := m["attrs"].(map[string]any); ok {
		for k, v := range a {
			fp.Attributes[k], _ = v.(string)
		}
	}
	if snap, err := loc.AriaSnapshot(playwright.LocatorAriaSnapshotOptions{Timeout: playwright.Float(2000)}); err == nil {
		if mm := ariaLine.FindStringSubmatch(strings.SplitN(snap, "\n", 2)[0]); mm != nil {
			fp.Role = mm[1]
			if name, err := strconv.Unquote(`"` + mm[2] + `"`); err == nil {
				fp.Name = name
			}
		}
	}
	fp.Locator = s.robust(fp)
	return fp, nil
}

// robust picks the most robust target for a fingerprinted element that is
// unique on the page now: test id, role+name, placeholder, label, alt text,
// text, title, then the CSS path.
func (s *Session) robust(fp *Fingerprint) Target {
	var candidates []Target
	if fp.TestID != "" {
		candidates = append(candidates, Target{TestID: fp.TestID})
	}
	if fp.Role != "" && fp.Name != "" && fp.Role != "generic" && fp.Role != "text" {
		candidates = append(candidates, Target{Role: fp.Role, Name: fp.Name})
	}
	if fp.Placeholder != "" {
		candidates = append(candidates, Target{Placeholder: fp.Placeholder})
	}
	if fp.Label != "" {
		candidates = append(candidates, Target{Label: fp.Label})
	}
	if fp.Alt != "" {
		candidates = append(candidates, Target{Alt: fp.Alt})
	}
	if fp.Text != "" && len(fp.Text) <= 60 && fp.Tag != "input" && fp.Tag != "select" && fp.Tag != "textarea" {
		candidates = append(candidates, Target{Text: fp.Text})
	}
	if fp.Title != "" {
		candidates = append(candidates, Target{Title: fp.Title})
	}
	for _, c := range candidates {
		if s.total(c) == 1 {
			return c
		}
		if c.TestID == "" {
			c.Exact = true
			if s.total(c) == 1 {
				return c
			}
		}
	}
	return Target{CSS: fp.Path}
}

// total counts every element (visible or not) a target matches, as the
// Playwright runner's strict mode does.
func (s *Session) total(t Target) int {
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
