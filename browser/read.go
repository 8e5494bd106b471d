package browser

import (
	"context"
	"fmt"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// Read returns an element's visible text, or its value for form fields, or
// an attribute when attr is set, with the element's fingerprint so the spec
// can read the same value at run time.
func (s *Session) Read(ctx context.Context, t Target, attr string) (string, *Fingerprint, error) {
	loc, err := s.unique(t)
	if err != nil {
		return "", nil, err
	}
	fp, err := s.fingerprint(loc, s.framesOf(t), t.Ref)
	if err != nil {
		return "", nil, err
	}
	if attr != "" {
		v, err := loc.GetAttribute(attr, playwright.LocatorGetAttributeOptions{Timeout: playwright.Float(3000)})
		if err != nil {
			return "", nil, fmt.Errorf("read attribute %s: %w", attr, err)
		}
		return v, fp, nil
	}
	if fp.Tag == "input" || fp.Tag == "textarea" || fp.Tag == "select" {
		if fp.Attributes["type"] == "password" {
			return "", nil, fmt.Errorf("password fields cannot be read")
		}
		v, err := loc.InputValue(playwright.LocatorInputValueOptions{Timeout: playwright.Float(3000)})
		return v, fp, err
	}
	v, err := loc.InnerText(playwright.LocatorInnerTextOptions{Timeout: playwright.Float(3000)})
	return strings.TrimSpace(v), fp, err
}
