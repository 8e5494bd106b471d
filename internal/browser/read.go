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

// attributesScript lists what identifies an element to a person writing a
// locator; a password field's value is never read.
const attributesScript = `el => {
  const out = [["tag", el.tagName.toLowerCase()]];
  const keep = n => n === "id" || n === "class" || n === "name" || n === "type" || n === "href" ||
    n === "role" || n === "title" || n === "placeholder" || n === "alt" || n === "for" ||
    n.startsWith("data-test") || n.startsWith("aria-");
  for (const a of el.attributes) if (keep(a.name)) out.push([a.name, a.value.slice(0, 200)]);
  if ("value" in el && el.type !== "password" && typeof el.value === "string" && el.tagName !== "BUTTON" && el.tagName !== "LI")
    out.push(["value", el.value.slice(0, 200)]);
  if (el.type === "checkbox" || el.type === "radio") out.push(["checked", String(el.checked)]);
  if (el.isContentEditable) out.push(["contenteditable", "true"]);
  if (el.onclick || el.getAttribute("onclick") !== null) out.push(["onclick", "set"]);
  return out;
}`

// Attributes lists an element's key attributes (tag, id, class, name, type,
// href, data-test*, aria-*, its current value), in document order, for a
// model that must tell elements apart.
func (s *Session) Attributes(ctx context.Context, t Target) ([][2]string, error) {
	loc, err := s.unique(t)
	if err != nil {
		return nil, err
	}
	v, err := loc.Evaluate(attributesScript, nil, playwright.LocatorEvaluateOptions{Timeout: playwright.Float(2000)})
	if err != nil {
		return nil, fmt.Errorf("read attributes: %w", err)
	}
	rows, _ := v.([]any)
	out := make([][2]string, 0, len(rows))
	for _, r := range rows {
		kv, _ := r.([]any)
		if len(kv) != 2 {
			continue
		}
		k, _ := kv[0].(string)
		val, _ := kv[1].(string)
		out = append(out, [2]string{k, val})
	}
	return out, nil
}
