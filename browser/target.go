package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// Target names an element. The first non-empty way wins, in the order of
// the fields; X/Y (percent of the viewport) are a last resort.
type Target struct {
	Ref         string   `json:"ref,omitempty"`
	TestID      string   `json:"test_id,omitempty"`
	Role        string   `json:"role,omitempty"`
	Name        string   `json:"name,omitempty"`
	Label       string   `json:"label,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Text        string   `json:"text,omitempty"`
	Alt         string   `json:"alt,omitempty"`
	Title       string   `json:"title,omitempty"`
	CSS         string   `json:"css,omitempty"`
	Exact       bool     `json:"exact,omitempty"`
	X           *float64 `json:"x,omitempty"`
	Y           *float64 `json:"y,omitempty"`
}

// IsZero reports whether the target names nothing.
func (t Target) IsZero() bool { return t == Target{} }

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
	if t.X != nil && t.Y != nil {
		parts = append(parts, fmt.Sprintf("at=(%.0f%%,%.0f%%)", *t.X, *t.Y))
	}
	return strings.Join(parts, " ")
}

// ErrNoTarget means a command needed a target and had none.
var ErrNoTarget = errors.New("command has no target")

// locator turns a target into a Playwright locator.
func (s *Session) locator(t Target) (playwright.Locator, error) {
	p := s.page
	exact := playwright.Bool(t.Exact)
	switch {
	case t.Ref != "":
		return p.Locator("aria-ref=" + t.Ref), nil
	case t.TestID != "":
		return p.GetByTestId(t.TestID), nil
	case t.Role != "":
		o := playwright.PageGetByRoleOptions{Exact: exact}
		if t.Name != "" {
			o.Name = t.Name
		}
		return p.GetByRole(playwright.AriaRole(t.Role), o), nil
	case t.Label != "":
		return p.GetByLabel(t.Label, playwright.PageGetByLabelOptions{Exact: exact}), nil
	case t.Placeholder != "":
		return p.GetByPlaceholder(t.Placeholder, playwright.PageGetByPlaceholderOptions{Exact: exact}), nil
	case t.Text != "":
		return p.GetByText(t.Text, playwright.PageGetByTextOptions{Exact: exact}), nil
	case t.Alt != "":
		return p.GetByAltText(t.Alt, playwright.PageGetByAltTextOptions{Exact: exact}), nil
	case t.Title != "":
		return p.GetByTitle(t.Title, playwright.PageGetByTitleOptions{Exact: exact}), nil
	case t.CSS != "":
		return p.Locator(t.CSS), nil
	}
	return nil, ErrNoTarget
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
		return nil, fmt.Errorf("no element matches %s", t)
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
	}
	return nil, fmt.Errorf("%d elements match %s; the target must be unique", n, t)
}
