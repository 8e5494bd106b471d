package lexical

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/webpilot/webpilot/internal/browser"
)

// The readings here take a sentence the rules do not read, or read to
// nothing on the page, by the page's structure alone: the sentence is a
// control's whole name ("Clear all filters"), or its verb is the name of
// the control each item of a list has and the rest names one item ("Renew
// Atlas of Stars"). Each holds only when exactly one control answers.

// fillers are words a sentence adds to a control's name without changing
// which control it is ("Save Garden Suites to my favourites").
var fillers = map[string]bool{"the": true, "a": true, "an": true, "my": true, "your": true, "our": true, "this": true}

// nameWords is a name or sentence as lower-case words, fillers and
// punctuation aside.
func nameWords(s string) string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '…')
	}) {
		if !fillers[w] {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// controlName is what a control is called: its accessible name, else its
// own text.
func controlName(e *browser.Element) string {
	if n := strings.TrimSpace(e.Name); n != "" {
		return n
	}
	return strings.TrimSpace(e.Text)
}

// clickable is a control a click is the way to use: not a field, a
// select or a box to tick.
func clickable(e *browser.Element) bool {
	if !e.Interactive || e.Editable || e.Tag == "select" {
		return false
	}
	switch e.Role {
	case "checkbox", "radio", "switch", "combobox", "listbox", "textbox", "slider", "spinbutton":
		return false
	}
	return true
}

// byWholeName is the click on the page's one control whose name is the
// whole sentence.
func (b *builder) byWholeName(text string) ([]browser.Command, error) {
	want := nameWords(strings.TrimRight(strings.TrimSpace(text), ".!"))
	if want == "" {
		return nil, errAbsent
	}
	var hits []*browser.Element
	for i := range b.els {
		if e := &b.els[i]; clickable(e) && nameWords(controlName(e)) == want {
			hits = append(hits, e)
		}
	}
	return b.clickOne(hits, fmt.Sprintf("named %q", text))
}

// itemVerb reads "Renew Atlas of Stars", "Pay City Water", "Reply to Tom
// B.": a verb and the item it is done to.
var itemVerb = regexp.MustCompile(`(?i)^([a-z]+)(?: (?:to|for|on))? (?:the )?(.+)$`)

// byItemControl is the click on the control named by the sentence's verb
// inside the one item (a row, a list item, a card) whose text has the
// rest of the sentence, when several items each have such a control.
func (b *builder) byItemControl(text string) ([]browser.Command, error) {
	masked, quotes := mask(strings.TrimSpace(text))
	m := itemVerb.FindStringSubmatch(masked)
	if m == nil {
		return nil, errAbsent
	}
	verb := strings.ToLower(m[1])
	name := strings.TrimSpace(restore(m[2], quotes, ""))
	if q, ok := onlyQuote(m[2], quotes); ok {
		name = q
	}
	if name == "" || len(name) > 80 {
		return nil, errAbsent
	}
	var controls, hits []*browser.Element
	for i := range b.els {
		e := &b.els[i]
		if clickable(e) && nameWords(controlName(e)) == verb {
			controls = append(controls, e)
		}
	}
	if len(controls) < 2 {
		// One control of the name is the whole-name reading's; "Pay City
		// Water" on a page with one Pay button names no item by it.
		return nil, errAbsent
	}
	for _, e := range controls {
		if it, ok := itemOf(e); ok && strings.Contains(strings.ToLower(it.Text), strings.ToLower(name)) {
			hits = append(hits, e)
		}
	}
	return b.clickOne(hits, fmt.Sprintf("%q in an item with %q", m[1], name))
}

// itemOf is the nearest row, list item or card an element is in.
func itemOf(e *browser.Element) (browser.Container, bool) {
	for _, c := range e.Containers {
		switch c.Kind {
		case "row", "item":
			return c, true
		case "table", "list", "form", "dialog", "main", "section", "aside", "nav", "header", "footer":
			return browser.Container{}, false
		}
	}
	return browser.Container{}, false
}

// submitOne is the click on the page's one submit button, of its one form
// that has one ("Submit the application").
func (b *builder) submitOne() ([]browser.Command, error) {
	var hits []*browser.Element
	for i := range b.els {
		e := &b.els[i]
		if _, inForm := formOf(e); inForm && e.Interactive && e.Type == "submit" && (e.Tag == "button" || e.Tag == "input") {
			hits = append(hits, e)
		}
	}
	return b.clickOne(hits, "that submits a form")
}

// clickOne is the click on the one element found, pinned down.
func (b *builder) clickOne(hits []*browser.Element, what string) ([]browser.Command, error) {
	switch len(hits) {
	case 0:
		return nil, fmt.Errorf("no control %s: %w", what, errAbsent)
	case 1:
	default:
		return nil, fmt.Errorf("%d controls %s: %s and %s", len(hits), what, describe(hits[0]), describe(hits[1]))
	}
	fp, err := b.page.Pin(b.ctx, hits[0].Path)
	if err != nil {
		return nil, fmt.Errorf("%s, but %v", describe(hits[0]), err)
	}
	return []browser.Command{{Action: browser.ActionClick, Target: fp.Locator}}, nil
}

// byOption is the selection of the option named by the whole phrase in
// the one select that offers it ("Select 2 rooms").
func (b *builder) byOption(p *Phrase) ([]browser.Command, error) {
	if p == nil || p.Ordinal != 0 || len(p.Scopes) > 0 {
		return nil, errAbsent
	}
	want := p.Quoted
	if want == "" {
		want = strings.Join(append(append([]string{}, p.Words...), p.RoleWords...), " ")
	}
	want = nameWords(want)
	var hits []*browser.Element
	option := ""
	for i := range b.els {
		e := &b.els[i]
		for _, o := range e.Options {
			if want != "" && nameWords(o) == want {
				hits, option = append(hits, e), o
				break
			}
		}
	}
	switch len(hits) {
	case 0:
		return nil, fmt.Errorf("no dropdown offers %q: %w", want, errAbsent)
	case 1:
	default:
		return nil, fmt.Errorf("%d dropdowns offer %q", len(hits), want)
	}
	fp, err := b.page.Pin(b.ctx, hits[0].Path)
	if err != nil {
		return nil, fmt.Errorf("%s, but %v", describe(hits[0]), err)
	}
	return []browser.Command{{Action: browser.ActionSelect, Target: fp.Locator, Value: option}}, nil
}

// byStructure reads a sentence no rule reads by the page's structure: a
// control's whole name, then a verb that names each item's control. named
// is what it named, for a pronoun after it.
func (b *builder) byStructure(text string) ([]browser.Command, Intent, error) {
	cmds, err := b.byWholeName(text)
	if err == nil || !errors.Is(err, errAbsent) {
		return cmds, Intent{Verb: "click", Target: &Phrase{Quoted: strings.TrimSpace(text)}}, err
	}
	cmds, err = b.byItemControl(text)
	// Named inside an item: a pronoun after it may mean either.
	return cmds, Intent{Verb: "click", Target: &Phrase{Words: strings.Fields(strings.ToLower(text)), Scopes: []Scope{{Kinds: itemKinds}}}}, err
}

// showsNow reports whether the element shows value now (case aside), and
// the value as the element writes it: one of a select's options, a
// field's value, or the element's text (contained in it, for contains).
func showsNow(e *browser.Element, value string, contains bool) (string, bool) {
	switch {
	case e.Tag == "select":
		for _, o := range e.Options {
			if strings.EqualFold(strings.TrimSpace(o), value) {
				return o, true
			}
		}
		return "", false
	case e.Editable:
		return e.Value, strings.EqualFold(strings.TrimSpace(e.Value), value)
	}
	text := strings.TrimSpace(e.Text)
	if contains {
		if i := strings.Index(strings.ToLower(text), strings.ToLower(value)); i >= 0 {
			return text[i : i+len(value)], true
		}
		return "", false
	}
	return text, strings.EqualFold(text, value)
}

// columnOf reads "the status of Winter Orchard": a column and an item.
var columnOf = regexp.MustCompile(`^(.+?) of (.+)$`)

// cellOf is the one table cell under the phrase's column, in the one row
// whose text has the phrase's item.
func (b *builder) cellOf(p *Phrase) (*browser.Element, browser.Target, error) {
	if p == nil || p.Quoted != "" || p.Ordinal != 0 || len(p.Scopes) > 0 {
		return nil, browser.Target{}, errAbsent
	}
	m := columnOf.FindStringSubmatch(strings.Join(append(append([]string{}, p.Words...), p.RoleWords...), " "))
	if m == nil {
		return nil, browser.Target{}, errAbsent
	}
	column, item := nameWords(m[1]), strings.ToLower(strings.TrimSpace(m[2]))
	var hits []*browser.Element
	for i := range b.els {
		e := &b.els[i]
		if e.Tag != "td" || nameWords(e.Near) != column {
			continue
		}
		for _, c := range e.Containers {
			if c.Kind == "row" {
				if strings.Contains(strings.ToLower(c.Text), item) {
					hits = append(hits, e)
				}
				break
			}
		}
	}
	switch len(hits) {
	case 0:
		return nil, browser.Target{}, fmt.Errorf("no %q cell in a row with %q: %w", m[1], m[2], errAbsent)
	case 1:
	default:
		return nil, browser.Target{}, fmt.Errorf("%d %q cells in rows with %q", len(hits), m[1], m[2])
	}
	fp, err := b.page.Pin(b.ctx, hits[0].Path)
	if err != nil {
		return nil, browser.Target{}, fmt.Errorf("%s, but %v", describe(hits[0]), err)
	}
	return hits[0], fp.Locator, nil
}
