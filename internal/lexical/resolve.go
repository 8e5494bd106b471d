package lexical

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
)

// Page is the browser as the lexical tier reads it; *browser.Session
// implements it.
type Page interface {
	// Elements lists the page's visible elements.
	Elements(ctx context.Context) ([]browser.Element, error)
	// Pin describes the element at a structural path with a locator
	// unique on the page now.
	Pin(ctx context.Context, path string) (*browser.Fingerprint, error)
}

// ErrNotUnderstood means the sentence is not one the tier reads; ErrUnsure
// that it is, but no single element is a confident match. Either way the
// step goes to the agent.
var (
	ErrNotUnderstood = errors.New("not a sentence the lexical tier reads")
	ErrUnsure        = errors.New("no single confident match")
)

// Options tune a resolution; the zero value is usable.
type Options struct {
	// Expand substitutes test data into element names ({{NAME}}); values
	// are left as written for the caller to fill in.
	Expand func(string) string
	// Wait is how long to wait for a named element that is not on the
	// page yet (an ambiguous one is never waited for). Default 600 ms:
	// the step before has already let the page settle.
	Wait time.Duration
	// Trail is the punctuation the sentence ended with and that was taken
	// off the text (Clause.Trail). When the text ends with a value written
	// unquoted, the value may own it ("SuperSecretPassword!"): it is kept
	// where the page shows an option or text that has it, taken off where
	// the page shows one without it, and never guessed where the page cannot
	// tell (a field takes anything): the step goes to the agent, saying why.
	Trail string
	// Before is what the clauses before this one named, for a pronoun or a
	// recency phrase pointing back at it; nil reads neither.
	Before *Referent
}

// Resolution is a resolved step: the commands to run, every target a
// locator unique on the page when it was resolved.
type Resolution struct {
	Intent   Intent
	Commands []browser.Command
	// Score is the weakest of its matches (1 for steps without a target).
	Score float64
}

// Resolve reads a step sentence and resolves it against the page.
func Resolve(ctx context.Context, page Page, text string, o Options) (Resolution, error) {
	if o.Before != nil {
		var err error
		if text, err = withRecent(text, o.Before); err != nil {
			return Resolution{}, fmt.Errorf("%w: %v", ErrUnsure, err)
		}
	}
	it, ok := parseOne(text)
	if ok && it.refersBack() && o.Before == nil {
		return Resolution{}, ErrNotUnderstood
	}
	if it.refersBack() {
		if err := pointBack(&it, o.Before); err != nil {
			return Resolution{}, fmt.Errorf("%w: %v", ErrUnsure, err)
		}
	}
	if o.Expand != nil {
		expandIntent(&it, o.Expand)
	}
	if o.Wait == 0 {
		o.Wait = 600 * time.Millisecond
	}
	deadline := time.Now().Add(o.Wait)
	for {
		els, err := page.Elements(ctx)
		if err != nil {
			return Resolution{}, fmt.Errorf("%w: %v", ErrUnsure, err)
		}
		b := &builder{ctx: ctx, page: page, els: els, score: 1}
		if !ok {
			// No rule reads it: the page's structure may ("Renew Atlas of
			// Stars"); never waited for.
			cmds, named, err := b.byStructure(text)
			if errors.Is(err, errAbsent) {
				return Resolution{}, ErrNotUnderstood
			}
			if err != nil {
				return Resolution{}, fmt.Errorf("%w: %v", ErrUnsure, err)
			}
			return Resolution{Intent: named, Commands: cmds, Score: 1}, nil
		}
		if o.Trail != "" && endsWithValue(text, it) {
			b.trail = o.Trail
		}
		cmds, err := b.build(it)
		if errors.Is(err, errAbsent) && b.trail == "" {
			// "Clear all filters" is the button of that name.
			if named, nerr := b.byWholeName(text); nerr == nil {
				cmds, err = named, nil
				it = Intent{Verb: "click", Target: &Phrase{Quoted: strings.TrimSpace(text)}}
			}
		}
		if err == nil {
			for _, c := range cmds {
				if verr := c.Validate(); verr != nil {
					return Resolution{}, fmt.Errorf("%w: %v", ErrUnsure, verr)
				}
			}
			return Resolution{Intent: it, Commands: cmds, Score: b.score}, nil
		}
		if !errors.Is(err, errAbsent) || time.Now().After(deadline) {
			return Resolution{}, fmt.Errorf("%w: %v", ErrUnsure, err)
		}
		select {
		case <-ctx.Done():
			return Resolution{}, fmt.Errorf("%w: %v", ErrUnsure, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func expandIntent(it *Intent, expand func(string) string) {
	for _, p := range []*Phrase{it.Target, it.To} {
		if p == nil {
			continue
		}
		p.Quoted = expand(p.Quoted)
		for i := range p.Scopes {
			p.Scopes[i].Text = expand(p.Scopes[i].Text)
		}
	}
}

// errAbsent means nothing on the page matched: it may still appear.
var errAbsent = errors.New("absent")

type builder struct {
	ctx   context.Context
	page  Page
	els   []browser.Element
	score float64
	// trail is punctuation the step's last value, written unquoted at
	// its end, may own (Options.Trail).
	trail string
}

// endsWithValue reports whether text ends with the intent's last value
// written unquoted (so punctuation after it may be the value's).
func endsWithValue(text string, it Intent) bool {
	if len(it.Values) == 0 {
		return false
	}
	t := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), ".!;"))
	v := strings.TrimSpace(it.Values[len(it.Values)-1])
	if v == "" || strings.HasSuffix(t, `"`) || strings.HasSuffix(t, "”") || strings.HasSuffix(t, "'") {
		return false
	}
	return strings.HasSuffix(strings.ToLower(t), strings.ToLower(v))
}

// unsure is why a value that may end with the sentence's punctuation is
// not typed: the page cannot tell which it is.
func (b *builder) unsure(value string) error {
	return fmt.Errorf("the value %s is written unquoted and the sentence ends with %q: whether that belongs to the value cannot be told from the page (quote the value to say)",
		strconv.Quote(value), b.trail)
}

// ownedOption answers the option value+trail when the element offers it
// exactly (case aside), or "" when it offers none.
func (b *builder) ownedOption(e *browser.Element, value string) string {
	if b.trail == "" {
		return ""
	}
	for _, o := range e.Options {
		if strings.EqualFold(strings.TrimSpace(o), value+b.trail) {
			return o
		}
	}
	return ""
}

// pick matches a phrase and pins the element down.
func (b *builder) pick(p *Phrase, verb string) (*browser.Element, browser.Target, error) {
	if p == nil || p.empty() {
		return nil, browser.Target{}, errors.New("the step names no element")
	}
	e, score, why := match(b.els, p, verb)
	if e == nil {
		if strings.HasPrefix(why, "no element") {
			return nil, browser.Target{}, fmt.Errorf("%s: %w", why, errAbsent)
		}
		return nil, browser.Target{}, errors.New(why)
	}
	fp, err := b.page.Pin(b.ctx, e.Path)
	if err != nil {
		return nil, browser.Target{}, fmt.Errorf("%s matches %s, but %v", p, describe(e), err)
	}
	b.score = min(b.score, score)
	return e, fp.Locator, nil
}

func (b *builder) build(it Intent) ([]browser.Command, error) {
	one := func(c browser.Command) ([]browser.Command, error) {
		// A repeated click or key press is the same command, that often.
		return slices.Repeat([]browser.Command{c}, max(it.Repeat, 1)), nil
	}
	value := ""
	if len(it.Values) > 0 {
		value = it.Values[0]
	}
	switch it.Verb {
	case "click", "dblclick", "rightclick", "hover", "scroll":
		_, t, err := b.pick(it.Target, it.Verb)
		if err != nil {
			return nil, err
		}
		return one(browser.Command{Action: browser.Action(it.Verb), Target: t})
	case "open":
		if ws := it.Target.Words; it.Target.Quoted == "" && len(ws) == 1 && urlLike.MatchString(ws[0]) {
			return one(browser.Command{Action: browser.ActionNavigate, Value: ws[0]})
		}
		if urlLike.MatchString(it.Target.Quoted) {
			return one(browser.Command{Action: browser.ActionNavigate, Value: it.Target.Quoted})
		}
		_, t, err := b.pick(it.Target, "open")
		if errors.Is(err, errAbsent) && it.Target.Role == "field" && len(it.Target.Words) > 0 {
			// "Open the comment box": a box not shown yet opens from the
			// control named for what it holds ("Comment").
			bare := clonePhrase(*it.Target)
			bare.Role, bare.RoleWords = "", nil
			_, t, err = b.pick(&bare, "open")
		}
		if err != nil {
			return nil, err
		}
		return one(browser.Command{Action: browser.ActionClick, Target: t})
	case "fill", "clear":
		if it.Verb == "clear" {
			value = ""
		} else if b.trail != "" {
			return nil, b.unsure(value)
		}
		_, t, err := b.pick(it.Target, "fill")
		if err != nil {
			return nil, err
		}
		return one(browser.Command{Action: browser.ActionFill, Target: t, Value: value})
	case "select":
		e, t, err := b.pick(it.Target, "select")
		if err != nil {
			return nil, err
		}
		if opt := b.ownedOption(e, value); opt != "" {
			return one(browser.Command{Action: browser.ActionSelect, Target: t, Value: opt})
		}
		opt, err := option(e, value)
		if err != nil {
			return nil, err
		}
		return one(browser.Command{Action: browser.ActionSelect, Target: t, Value: opt})
	case "set":
		e, t, err := b.pick(it.Target, "set")
		if err != nil {
			return nil, err
		}
		switch {
		case e.Tag == "select":
			if opt := b.ownedOption(e, value); opt != "" {
				return one(browser.Command{Action: browser.ActionSelect, Target: t, Value: opt})
			}
			opt, err := option(e, value)
			if err != nil {
				return nil, err
			}
			return one(browser.Command{Action: browser.ActionSelect, Target: t, Value: opt})
		case e.Editable && b.trail != "":
			return nil, b.unsure(value)
		case e.Editable:
			return one(browser.Command{Action: browser.ActionFill, Target: t, Value: value})
		case on.MatchString(value):
			return one(browser.Command{Action: browser.ActionCheck, Target: t})
		case off.MatchString(value):
			return one(browser.Command{Action: browser.ActionUncheck, Target: t})
		}
		return nil, fmt.Errorf("%s cannot be set to %q", describe(e), value)
	case "choose":
		e, t, err := b.pick(it.Target, "choose")
		if errors.Is(err, errAbsent) {
			// "Select 2 rooms": the option of that name, in the one
			// dropdown that offers it.
			if cmds, oerr := b.byOption(it.Target); oerr == nil || !errors.Is(oerr, errAbsent) {
				return cmds, oerr
			}
		}
		if err != nil {
			return nil, err
		}
		if e.Role == "radio" || e.Role == "checkbox" || e.Role == "switch" {
			return one(browser.Command{Action: browser.ActionCheck, Target: t})
		}
		if e.Tag == "select" || e.Role == "combobox" || e.Role == "listbox" {
			// "Pick the first country": an option is chosen from a
			// dropdown, and the step does not say which.
			return nil, fmt.Errorf("%s is a dropdown: the step does not say which option to choose", describe(e))
		}
		return one(browser.Command{Action: browser.ActionClick, Target: t})
	case "agree":
		// "Agree to the privacy notice": the box that says so, whatever
		// its last word names elsewhere ("notice", "terms").
		e, t, err := b.pick(it.Target, "check")
		if errors.Is(err, errAbsent) && it.Target.Role != "" {
			bare := clonePhrase(*it.Target)
			bare.Words, bare.Role, bare.RoleWords = append(bare.Words, bare.RoleWords...), "", nil
			e, t, err = b.pick(&bare, "check")
		}
		if err != nil {
			return nil, err
		}
		if e.Role != "checkbox" && e.Role != "switch" {
			return nil, fmt.Errorf("%s is not a box to tick", describe(e))
		}
		return one(browser.Command{Action: browser.ActionCheck, Target: t})
	case "submit":
		return b.submitOne()
	case "check", "uncheck":
		_, t, err := b.pick(it.Target, it.Verb)
		if err != nil {
			return nil, err
		}
		return one(browser.Command{Action: browser.Action(it.Verb), Target: t})
	case "press":
		c := browser.Command{Action: browser.ActionPress, Value: value}
		if it.Target != nil {
			_, t, err := b.pick(it.Target, "press")
			if err != nil {
				return nil, err
			}
			c.Target = t
		}
		return one(c)
	case "upload":
		if b.trail != "" {
			return nil, b.unsure(value)
		}
		_, t, err := b.pick(it.Target, "upload")
		if err != nil {
			return nil, err
		}
		return one(browser.Command{Action: browser.ActionUpload, Target: t, Value: value})
	case "drag":
		_, t, err := b.pick(it.Target, "drag")
		if err != nil {
			return nil, err
		}
		_, to, err := b.pick(it.To, "drag")
		if err != nil {
			return nil, err
		}
		return one(browser.Command{Action: browser.ActionDrag, Target: t, To: to})
	case "back":
		return one(browser.Command{Action: browser.ActionBack})
	case "forward":
		return one(browser.Command{Action: browser.ActionForward})
	case "reload":
		return one(browser.Command{Action: browser.ActionReload})
	case "add":
		if b.trail != "" {
			return nil, b.unsure(it.Values[len(it.Values)-1])
		}
		return b.addItems(it.Values)
	case "search":
		if b.trail != "" {
			return nil, b.unsure(value)
		}
		_, t, err := b.pick(it.Target, "fill")
		if err != nil {
			return nil, err
		}
		return []browser.Command{{Action: browser.ActionFill, Target: t, Value: value}, {Action: browser.ActionPress, Target: t, Value: "Enter"}}, nil
	case "verify":
		return b.verify(it)
	case "signout":
		return b.signOut()
	case "submitform":
		return b.submitForm(it)
	}
	return nil, fmt.Errorf("the verb %q is not resolved here", it.Verb)
}

var (
	urlLike = regexp.MustCompile(`^(?:https?://\S+|/\S*)$`)
	on      = regexp.MustCompile(`(?i)^(?:on|checked|ticked|true|yes|enabled|selected)$`)
	off     = regexp.MustCompile(`(?i)^(?:off|unchecked|unticked|false|no|disabled)$`)
	newItem = regexp.MustCompile(`(?i)\b(?:new|add|todo|item|task|what|entry|note)\b`)
)

// option finds the select option a value names: the same label (case
// aside), or the one option whose label holds the value's words.
func option(e *browser.Element, value string) (string, error) {
	var partial []string
	for _, o := range e.Options {
		if normText(o) == normText(value) {
			return o, nil
		}
		if quality(words(value), o) >= 0.7 {
			partial = append(partial, o)
		}
	}
	if len(partial) == 1 {
		return partial[0], nil
	}
	return "", fmt.Errorf("%s has no single option %q", describe(e), value)
}

// addItems types each value into the page's one new-item field and
// presses Enter after each, as a person adds to a list.
func (b *builder) addItems(values []string) ([]browser.Command, error) {
	var fields []*browser.Element
	for i := range b.els {
		if e := &b.els[i]; e.Editable && e.Type != "password" && e.Type != "email" && e.Type != "number" {
			fields = append(fields, e)
		}
	}
	if len(fields) > 1 {
		var named []*browser.Element
		for _, e := range fields {
			if newItem.MatchString(strings.Join([]string{e.Placeholder, e.Label, e.Name, e.Hint, e.TestID}, " ")) {
				named = append(named, e)
			}
		}
		fields = named
	}
	switch len(fields) {
	case 0:
		return nil, fmt.Errorf("no field to add items with: %w", errAbsent)
	case 1:
	default:
		return nil, fmt.Errorf("%d fields could add items: %s and %s", len(fields), describe(fields[0]), describe(fields[1]))
	}
	fp, err := b.page.Pin(b.ctx, fields[0].Path)
	if err != nil {
		return nil, err
	}
	var cmds []browser.Command
	for _, v := range values {
		cmds = append(cmds, browser.Command{Action: browser.ActionFill, Target: fp.Locator, Value: v},
			browser.Command{Action: browser.ActionPress, Target: fp.Locator, Value: "Enter"})
	}
	return cmds, nil
}

func (b *builder) verify(it Intent) ([]browser.Command, error) {
	value := ""
	if len(it.Values) > 0 {
		value = it.Values[0]
	}
	check := func(assert browser.Assertion, verb string) ([]browser.Command, error) {
		_, t, err := b.pick(it.Target, verb)
		if err != nil {
			return nil, err
		}
		return []browser.Command{{Action: browser.ActionVerify, Assert: assert, Target: t, Value: value}}, nil
	}
	p := it.Target
	switch it.Check {
	case "titleEquals", "titleContains", "urlContains", "urlEquals":
		return []browser.Command{{Action: browser.ActionVerify, Assert: browser.Assertion(it.Check), Value: value}}, nil
	case "visible":
		return check(browser.AssertIsVisible, "visible")
	case "appears", "goes":
		// A wait: the element the page shows now (one, confidently), or,
		// while it is not there, only what the step quotes.
		assert := browser.AssertIsVisible
		if it.Check == "goes" {
			assert = browser.AssertIsHidden
		}
		cmds, err := check(assert, "visible")
		if errors.Is(err, errAbsent) && p.Quoted != "" && len(p.Words) == 0 && p.Role == "" && len(p.Scopes) == 0 && p.Ordinal == 0 {
			return []browser.Command{{Action: browser.ActionVerify, Assert: assert, Target: browser.Target{Text: p.Quoted}}}, nil
		}
		return cmds, err
	case "hidden":
		// Only what the step quotes can be looked for once it is gone.
		if p.Quoted == "" || len(p.Words) > 0 || p.Role != "" || len(p.Scopes) > 0 || p.Ordinal != 0 {
			return nil, errors.New("an element that is gone can only be named by its quoted text")
		}
		return []browser.Command{{Action: browser.ActionVerify, Assert: browser.AssertIsHidden, Target: browser.Target{Text: p.Quoted}}}, nil
	case "empty":
		e, t, err := b.pick(p, "fill")
		if err != nil {
			return nil, err
		}
		if !e.Editable {
			return nil, fmt.Errorf("%s is not a field", describe(e))
		}
		return []browser.Command{{Action: browser.ActionVerify, Assert: browser.AssertValueEmpty, Target: t}}, nil
	case "checked":
		return check(browser.AssertIsChecked, "checked")
	case "unchecked":
		return check(browser.AssertIsUnchecked, "unchecked")
	case "enabled":
		return check(browser.AssertIsEnabled, "enabled")
	case "disabled":
		return check(browser.AssertIsDisabled, "disabled")
	case "equals", "contains":
		e, t, err := b.pick(p, it.Check)
		if errors.Is(err, errAbsent) {
			// "the status of Winter Orchard": a table's cell, by its
			// column and the row that names the item.
			if ce, ct, cerr := b.cellOf(p); !errors.Is(cerr, errAbsent) {
				e, t, err = ce, ct, cerr
			}
		}
		if err != nil {
			return nil, err
		}
		if it.Shown {
			shownValue, ok := showsNow(e, value, it.Check == "contains")
			if !ok {
				return nil, fmt.Errorf("%q is written unquoted over several words and %s does not show it now: quote it to say where it begins", value, describe(e))
			}
			value = shownValue
		}
		if b.trail != "" {
			// The text the element shows tells: "Welcome back!" keeps it,
			// "Welcome back" does not; a field's value is not shown.
			shown := e.Text + " " + e.Name
			switch {
			case e.Tag == "select":
				if opt := b.ownedOption(e, value); opt != "" {
					value = opt
				}
			case e.Editable:
				return nil, b.unsure(value)
			case strings.Contains(strings.ToLower(shown), strings.ToLower(value+b.trail)):
				value += b.trail
			case !strings.Contains(strings.ToLower(shown), strings.ToLower(value)):
				return nil, b.unsure(value)
			}
		}
		assert := browser.AssertTextEquals
		switch {
		case e.Tag == "select":
			assert = browser.AssertSelectedLabel
		case e.Editable && it.Check == "equals":
			assert = browser.AssertValueEquals
		case e.Editable:
			return nil, fmt.Errorf("%s is a field: whether it must hold exactly %q or only contain it is not clear", describe(e), value)
		case it.Check == "contains":
			assert = browser.AssertTextContains
		}
		return []browser.Command{{Action: browser.ActionVerify, Assert: assert, Target: t, Value: value}}, nil
	case "count":
		return b.count(it)
	case "order":
		return b.order(it)
	}
	return nil, fmt.Errorf("the check %q is not resolved here", it.Check)
}

// genericNouns name what any list holds, not which list it is.
var genericNouns = map[string]bool{"list": true, "table": true, "items": true, "item": true, "todos": true, "entries": true,
	"rows": true, "products": true, "results": true, "elements": true, "things": true, "tasks": true}

// holder is a container an item count or an order is about.
type holder struct {
	c     browser.Container
	score float64
	first int // the first element inside it
}

// holders lists the page's containers of the given kinds, each once.
func (b *builder) holders(kinds ...string) []holder {
	seen := map[string]bool{}
	var out []holder
	for i := range b.els {
		for _, c := range b.els[i].Containers {
			if seen[c.Path] || !slices.Contains(kinds, c.Kind) {
				continue
			}
			seen[c.Path] = true
			out = append(out, holder{c: c, first: i})
		}
	}
	return out
}

// inside reports whether element e sits in container path.
func inside(e *browser.Element, path string) bool {
	for _, c := range e.Containers {
		if c.Path == path {
			return true
		}
	}
	return false
}

// pickHolder chooses the one container a phrase names, among those keep
// accepts.
func (b *builder) pickHolder(p *Phrase, keep func(holder) bool, kinds ...string) (holder, error) {
	// "the first table", "the second list": that kind, by position.
	for _, w := range p.Words {
		switch w {
		case "table", "grid":
			kinds = []string{"table"}
		case "list":
			kinds = []string{"list"}
		}
	}
	var cands []holder
	for _, h := range b.holders(kinds...) {
		if keep != nil && !keep(h) {
			continue
		}
		if p.Ordinal != 0 && !ordinalOf(p.Ordinal, h.c) {
			continue
		}
		s := 1.0
		if p.Quoted != "" || len(p.Words) > 0 {
			ws := p.Words
			if p.Quoted != "" {
				ws = words(p.Quoted)
			}
			ws = slices.DeleteFunc(slices.Clone(ws), func(w string) bool { return genericNouns[w] })
			if len(ws) == 0 {
				s = 1
			} else {
				s = max(quality(ws, h.c.Name), 0.9*quality(ws, h.c.Hint))
			}
		}
		if s >= MinScore {
			h.score = s
			cands = append(cands, h)
		}
	}
	if len(cands) == 0 {
		return holder{}, fmt.Errorf("no list or table on the page matches %s: %w", p, errAbsent)
	}
	slices.SortStableFunc(cands, func(a, b holder) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	best := cands[0]
	// Of a section and the list inside it that both match, the list
	// holds the items.
	for _, c := range cands[1:] {
		if within(c.c.Path, best.c.Path) && holdsItems(c.c.Kind) && !holdsItems(best.c.Kind) {
			best = c
		}
	}
	for _, c := range cands {
		if c.c.Path == best.c.Path {
			continue
		}
		nested := within(c.c.Path, best.c.Path) || within(best.c.Path, c.c.Path)
		if !nested && best.score-c.score < MinMargin {
			return holder{}, fmt.Errorf("%s is ambiguous: two lists or tables match", p)
		}
	}
	b.score = min(b.score, best.score)
	return best, nil
}

func within(path, outer string) bool { return strings.HasPrefix(path, outer+" > ") }

func holdsItems(kind string) bool { return kind == "list" || kind == "table" }

// itemsOf is the target of a container's items: a table's body rows, a
// list's items. A section's items are those of the one list or table in it.
func (b *builder) itemsOf(h holder, role string) (browser.Target, error) {
	if !holdsItems(h.c.Kind) {
		var inner []holder
		all := b.holders("list", "table")
		slices.SortStableFunc(all, func(a, b holder) int { return len(a.c.Path) - len(b.c.Path) }) // outermost first
		for _, x := range all {
			if within(x.c.Path, h.c.Path) && !slices.ContainsFunc(inner, func(o holder) bool { return within(x.c.Path, o.c.Path) }) {
				inner = append(inner, x)
			}
		}
		if len(inner) != 1 {
			return browser.Target{}, fmt.Errorf("%d lists or tables are in the %s %q: which one is meant is not clear", len(inner), h.c.Kind, h.c.Name)
		}
		h = inner[0]
	}
	fp, err := b.page.Pin(b.ctx, h.c.Path)
	if err != nil {
		return browser.Target{}, err
	}
	within := fp.Locator
	rows := role == "row" || h.c.Kind == "table"
	if !rows {
		rows = true
		for i := range b.els {
			if inside(&b.els[i], h.c.Path) && slices.ContainsFunc(b.els[i].Containers, func(c browser.Container) bool { return c.Kind == "item" }) {
				rows = false
				break
			}
		}
	}
	if rows {
		return browser.Target{CSS: "tbody tr", Within: &within}, nil
	}
	return browser.Target{Role: "listitem", Within: &within}, nil
}

// count checks how many items a list or table holds.
func (b *builder) count(it Intent) ([]browser.Command, error) {
	p := it.Target
	if p.Role == "option" {
		_, t, err := b.pick(&Phrase{Quoted: p.Quoted, Words: p.Words, Scopes: p.Scopes, Ordinal: p.Ordinal, Role: "dropdown"}, "select")
		if err != nil {
			return nil, err
		}
		return []browser.Command{{Action: browser.ActionVerify, Assert: browser.AssertCountEquals, Target: browser.Target{CSS: "option", Within: &t}, Value: fmt.Sprint(it.Count)}}, nil
	}
	h, err := b.pickHolder(p, nil, "list", "table", "section", "group", "form", "aside", "main", "dialog", "nav")
	if err != nil {
		return nil, err
	}
	t, err := b.itemsOf(h, p.Role)
	if err != nil {
		return nil, err
	}
	return []browser.Command{{Action: browser.ActionVerify, Assert: browser.AssertCountEquals, Target: t, Value: fmt.Sprint(it.Count)}}, nil
}

// order checks that a list's or table's items hold the values in order.
func (b *builder) order(it Intent) ([]browser.Command, error) {
	holds := func(h holder) bool {
		text := normText(h.c.Text)
		at := 0
		for _, v := range it.Values {
			i := strings.Index(text[at:], normText(v))
			if i < 0 {
				return false
			}
			at += i + len(normText(v))
		}
		return true
	}
	h, err := b.pickHolder(it.Target, holds, "list", "table")
	if err != nil {
		return nil, err
	}
	items, err := b.itemsOf(h, "")
	if err != nil {
		return nil, err
	}
	var cmds []browser.Command
	for i, v := range it.Values {
		t := items
		n := i
		t.Nth = &n
		cmds = append(cmds, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextContains, Target: t, Value: v})
	}
	return cmds, nil
}

// signOutName is a control's name that means signing out, however it is
// written: Logout, Log out, Sign-out, Log off, Sign off.
var signOutName = regexp.MustCompile(`(?i)^(?:log|sign)[\s-]*(?:out|off)$`)

// signOut is the click on the page's one control that signs out.
func (b *builder) signOut() ([]browser.Command, error) {
	var hits []*browser.Element
	for i := range b.els {
		if e := &b.els[i]; e.Interactive && signOutName.MatchString(controlName(e)) {
			hits = append(hits, e)
		}
	}
	return b.clickOne(hits, "that signs out (Logout, Log out, Sign out)")
}

// submitButtons name a form's submit button by the form's purpose.
var submitButtons = map[string]*regexp.Regexp{
	"signin":    regexp.MustCompile(`(?i)^(?:(?:sign|log)[\s-]*in|login|sign me in)$`),
	"subscribe": regexp.MustCompile(`(?i)^(?:subscribe|sign[\s-]*up|register|join)(?:\s+now)?$`),
}

// submitForm fills a whole form and submits it: the page's one submit
// button for the purpose, in a form whose text fields are exactly as many
// as the values (a sign-in: one of them a password field, which takes the
// password), then the click. Anything else is left to the agent.
func (b *builder) submitForm(it Intent) ([]browser.Command, error) {
	purpose := it.Target.Words[0]
	if b.trail != "" {
		return nil, b.unsure(it.Values[len(it.Values)-1])
	}
	var buttons []*browser.Element
	for i := range b.els {
		e := &b.els[i]
		if e.Interactive && !e.Editable && submitButtons[purpose].MatchString(controlName(e)) {
			buttons = append(buttons, e)
		}
	}
	if len(buttons) != 1 {
		return nil, fmt.Errorf("%d buttons on the page submit a %s form, want one", len(buttons), purpose)
	}
	form, ok := formOf(buttons[0])
	if !ok {
		return nil, fmt.Errorf("%s is in no form", describe(buttons[0]))
	}
	var fields []*browser.Element
	for i := range b.els {
		e := &b.els[i]
		if f, ok := formOf(e); ok && f == form && e.Editable {
			fields = append(fields, e)
		}
	}
	if len(fields) != len(it.Values) {
		return nil, fmt.Errorf("the %s form has %d fields for %d values", purpose, len(fields), len(it.Values))
	}
	order := fields
	if purpose == "signin" {
		// The user into the field that is not a password, the password
		// into the one that is.
		switch {
		case fields[0].Type != "password" && fields[1].Type == "password":
		case fields[0].Type == "password" && fields[1].Type != "password":
			order = []*browser.Element{fields[1], fields[0]}
		default:
			return nil, errors.New("the sign-in form's fields are not a user and a password")
		}
	}
	var cmds []browser.Command
	for i, e := range order {
		fp, err := b.page.Pin(b.ctx, e.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", describe(e), err)
		}
		cmds = append(cmds, browser.Command{Action: browser.ActionFill, Target: fp.Locator, Value: it.Values[i]})
	}
	fp, err := b.page.Pin(b.ctx, buttons[0].Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", describe(buttons[0]), err)
	}
	return append(cmds, browser.Command{Action: browser.ActionClick, Target: fp.Locator}), nil
}

// formOf is the form an element is in: its position among the page's
// forms.
func formOf(e *browser.Element) (int, bool) {
	for _, c := range e.Containers {
		if c.Kind == "form" {
			return c.Index, true
		}
	}
	return 0, false
}
