package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// Target names an element. The first non-empty way wins, in the order of
// the fields; X/Y (percent of the viewport) are a last resort.
type Target struct {
	Ref         string   `json:"ref,omitempty" jsonschema:"the ref of a line of the page view (s1e12)"`
	TestID      string   `json:"test_id,omitempty" jsonschema:"the data-testid"`
	Role        string   `json:"role,omitempty" jsonschema:"ARIA role (button, link, textbox …), with name"`
	Name        string   `json:"name,omitempty" jsonschema:"accessible name, with role"`
	Label       string   `json:"label,omitempty" jsonschema:"the label of a form field"`
	Placeholder string   `json:"placeholder,omitempty" jsonschema:"a field's placeholder"`
	Text        string   `json:"text,omitempty" jsonschema:"visible text"`
	Alt         string   `json:"alt,omitempty" jsonschema:"an image's alt text"`
	Title       string   `json:"title,omitempty" jsonschema:"the title attribute"`
	CSS         string   `json:"css,omitempty" jsonschema:"a CSS selector, as a last resort"`
	Exact       bool     `json:"exact,omitempty" jsonschema:"match names and texts exactly rather than as substrings"`
	X           *float64 `json:"x,omitempty" jsonschema:"percent of the viewport from the left, when no element can be named"`
	Y           *float64 `json:"y,omitempty" jsonschema:"percent of the viewport from the top"`
	// Frames is the chain of iframe selectors (outermost first) the element
	// lives in; empty for the main frame.
	Frames []string `json:"frames,omitempty" jsonschema:"the iframe selectors the element lives in, outermost first"`
	// HasText keeps only matches containing this text (a row, a card).
	HasText string `json:"has_text,omitempty" jsonschema:"keep only matches containing this text (a row, a card)"`
	// Within scopes the target to the unique element a parent target names
	// (a list item, a card) when the target's own name repeats.
	Within *Target `json:"within,omitempty" jsonschema:"the unique element the target lies in, when its own name repeats"`
	// Nth picks one of several matches by position (0 is the first, -1 the
	// last), as a spec's .first(), .last() or .nth(i) does.
	Nth *int `json:"nth,omitempty" jsonschema:"which of several matches: 0 the first, -1 the last"`
}

// mentions reports whether any of the target's texts (its own or its
// scope's) contains one of values.
func (t Target) mentions(values []string) bool {
	for _, v := range values {
		for _, f := range []string{t.TestID, t.Name, t.Label, t.Placeholder, t.Text, t.Alt, t.Title, t.CSS, t.HasText} {
			if f != "" && strings.Contains(f, v) {
				return true
			}
		}
	}
	return t.Within != nil && t.Within.mentions(values)
}

// IsZero reports whether the target names nothing.
func (t Target) IsZero() bool {
	return t.Ref == "" && t.TestID == "" && t.Role == "" && t.Name == "" && t.Label == "" && t.Placeholder == "" &&
		t.Text == "" && t.Alt == "" && t.Title == "" && t.CSS == "" && t.HasText == "" && t.X == nil && t.Y == nil
}

// IsCoordinate reports whether the target is a viewport position.
func (t Target) IsCoordinate() bool {
	return t.X != nil && t.Y != nil && t.Ref == "" && t.CSS == "" && t.Role == "" && t.TestID == "" &&
		t.Label == "" && t.Placeholder == "" && t.Text == "" && t.Alt == "" && t.Title == ""
}

// String is a compact description for history and errors.
func (t Target) String() string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", k, v))
		}
	}
	add("ref", t.Ref)
	add("testid", t.TestID)
	add("role", t.Role)
	add("name", t.Name)
	add("label", t.Label)
	add("placeholder", t.Placeholder)
	add("text", t.Text)
	add("alt", t.Alt)
	add("title", t.Title)
	add("css", t.CSS)
	add("has_text", t.HasText)
	if t.X != nil && t.Y != nil {
		parts = append(parts, fmt.Sprintf("at=(%.0f%%,%.0f%%)", *t.X, *t.Y))
	}
	if len(t.Frames) > 0 {
		parts = append(parts, "in frame "+strings.Join(t.Frames, " > "))
	}
	if t.Nth != nil {
		parts = append(parts, fmt.Sprintf("nth=%d", *t.Nth))
	}
	if t.Within != nil {
		parts = append(parts, "within ("+t.Within.String()+")")
	}
	return strings.Join(parts, " ")
}

// ErrNoTarget means a command needed a target and had none.
var ErrNoTarget = errors.New("command has no target")

// ErrNoMatch is a target that no element on the page matches (yet).
var ErrNoMatch = errors.New("no element matches")

// root is the locator every target resolves under: the document element of
// the main frame or of the iframe chain.
func (s *Session) root(frames []string) playwright.Locator {
	if len(frames) == 0 {
		return s.page.Locator(":root")
	}
	fl := s.page.Locator(frames[0]).ContentFrame()
	for _, f := range frames[1:] {
		fl = fl.Locator(f).ContentFrame()
	}
	return fl.Locator(":root")
}

// locator turns a target into a Playwright locator.
func (s *Session) locator(t Target) (playwright.Locator, error) {
	if t.Ref != "" {
		return s.resolveRef(t.Ref)
	}
	root := s.root(t.Frames)
	if t.Within != nil {
		parent := *t.Within
		parent.Frames = t.Frames
		p, err := s.unique(parent)
		if err != nil {
			return nil, fmt.Errorf("scope: %w", err)
		}
		root = p
	}
	return under(root, t)
}

// under is t under root, narrowed by its text filter and position (its
// scope is the caller's: root already is it).
func under(root playwright.Locator, t Target) (playwright.Locator, error) {
	loc, err := byTarget(root, t)
	if err != nil {
		return nil, err
	}
	if t.HasText != "" {
		loc = loc.Filter(playwright.LocatorFilterOptions{HasText: t.HasText})
	}
	switch {
	case t.Nth == nil:
	case *t.Nth < 0:
		loc = loc.Last()
	default:
		loc = loc.Nth(*t.Nth)
	}
	return loc, nil
}

// byTarget applies the target's first way of naming an element under root.
func byTarget(root playwright.Locator, t Target) (playwright.Locator, error) {
	exact := playwright.Bool(t.Exact)
	switch {
	case t.TestID != "":
		return root.GetByTestId(t.TestID), nil
	case t.Role != "":
		o := playwright.LocatorGetByRoleOptions{Exact: exact}
		if t.Name != "" {
			o.Name = t.Name
		}
		return root.GetByRole(playwright.AriaRole(t.Role), o), nil
	case t.Label != "":
		return root.GetByLabel(t.Label, playwright.LocatorGetByLabelOptions{Exact: exact}), nil
	case t.Placeholder != "":
		return root.GetByPlaceholder(t.Placeholder, playwright.LocatorGetByPlaceholderOptions{Exact: exact}), nil
	case t.Text != "":
		return root.GetByText(t.Text, playwright.LocatorGetByTextOptions{Exact: exact}), nil
	case t.Alt != "":
		return root.GetByAltText(t.Alt, playwright.LocatorGetByAltTextOptions{Exact: exact}), nil
	case t.Title != "":
		return root.GetByTitle(t.Title, playwright.LocatorGetByTitleOptions{Exact: exact}), nil
	case t.CSS != "":
		return root.Locator(t.CSS), nil
	}
	return nil, ErrNoTarget
}

// framesOf is the iframe chain a target lives in.
func (s *Session) framesOf(t Target) []string {
	if t.Ref != "" {
		return s.frameOfRef(t.Ref)
	}
	return t.Frames
}

// Count returns how many visible elements match a target.
func (s *Session) Count(ctx context.Context, t Target) (int, error) {
	loc, err := s.locator(t)
	if err != nil {
		return 0, err
	}
	n, err := loc.Count()
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", t, err)
	}
	if n == 0 || t.Ref != "" {
		return n, nil
	}
	// Hidden duplicates (closed menus, templates) do not make a target ambiguous.
	visible := 0
	for i := range n {
		if ok, _ := loc.Nth(i).IsVisible(); ok {
			visible++
		}
	}
	if visible == 0 {
		return n, nil
	}
	if _, ok := innermost(loc); ok && visible > 1 {
		return 1, nil // nested matches name their innermost element
	}
	return visible, nil
}

// unique resolves a target to exactly one element.
func (s *Session) unique(t Target) (playwright.Locator, error) {
	loc, err := s.locator(t)
	if err != nil {
		return nil, err
	}
	n, err := loc.Count()
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", t, err)
	}
	switch {
	case n == 1:
		return loc, nil
	case n == 0:
		return nil, fmt.Errorf("%w %s", ErrNoMatch, t)
	}
	if t.Ref == "" {
		var visible []int
		for i := range n {
			if ok, _ := loc.Nth(i).IsVisible(); ok {
				visible = append(visible, i)
			}
		}
		if len(visible) == 1 {
			return loc.Nth(visible[0]), nil
		}
		if i, ok := innermost(loc); ok {
			return loc.Nth(i), nil
		}
	}
	return nil, fmt.Errorf("%d elements match %s; the target must be unique", n, t)
}

// InFrame finds where a target that names no frames and matches nothing in
// the page's own document is: the one same-origin frame (nested ones
// included) where it matches exactly one visible element. It returns the
// target with that frame's chain, so its locator and the spec's enter the
// frame; false when no frame, or more than one, holds it.
func (s *Session) InFrame(ctx context.Context, t Target) (Target, bool) {
	if len(t.Frames) > 0 || t.Ref != "" || t.IsCoordinate() {
		return Target{}, false
	}
	origin := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil {
			return ""
		}
		return u.Scheme + "://" + u.Host
	}
	home := origin(s.page.URL())
	var found []Target
	for _, f := range liveFrames(s.page)[1:] {
		if ctx.Err() != nil || f.IsDetached() || origin(f.URL()) != home {
			continue
		}
		chain, err := frameChain(f)
		if err != nil {
			continue
		}
		in := t
		in.Frames = chain
		switch n, err := s.Count(ctx, in); {
		case err != nil || n == 0:
		case n == 1:
			found = append(found, in)
		default:
			return Target{}, false
		}
	}
	if len(found) != 1 {
		return Target{}, false
	}
	return found[0], true
}
