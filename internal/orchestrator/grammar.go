package orchestrator

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/scenario"
)

// intent is a parsed imperative sentence before its target is resolved.
type intent struct {
	action browser.Action // or ActionVerify
	assert browser.Assertion
	what   string // the quoted name of the element
	value  string
	kind   targetKind
}

type targetKind int

const (
	noTarget targetKind = iota
	clickable
	field
	choice
	checkbox
	visibleText
)

var grammar = []struct {
	re    *regexp.Regexp
	build func(m []string) intent
}{
	{rx(`^(?:go to|open|navigate to|visit)\s+"?([^"\s]+)"?$`), func(m []string) intent { return intent{action: browser.ActionNavigate, value: m[1]} }},
	{rx(`^go back$`), func([]string) intent { return intent{action: browser.ActionBack} }},
	{rx(`^go forward$`), func([]string) intent { return intent{action: browser.ActionForward} }},
	{rx(`^(?:reload|refresh)(?: the page)?$`), func([]string) intent { return intent{action: browser.ActionReload} }},
	{rx(`^(?:verify|expect|assert|check that|see)\s+(?:the\s+)?url\s+contains\s+"?([^"]+?)"?$`), func(m []string) intent {
		return intent{action: browser.ActionVerify, assert: browser.AssertUrlContains, value: m[1]}
	}},
	{rx(`^(?:verify|expect|assert|check that|see)\s+(?:the\s+)?title\s+contains\s+"([^"]+)"$`), func(m []string) intent {
		return intent{action: browser.ActionVerify, assert: browser.AssertTitleContains, value: m[1]}
	}},
	{rx(`^(?:verify|expect|assert|check that)\s+"([^"]+)"\s+is\s+(?:visible|shown|displayed)$`), func(m []string) intent {
		return intent{action: browser.ActionVerify, assert: browser.AssertIsVisible, what: m[1], kind: visibleText}
	}},
	{rx(`^(?:verify|expect|assert|check that)\s+"([^"]+)"\s+is\s+(?:not visible|not shown|hidden|gone)$`), func(m []string) intent {
		return intent{action: browser.ActionVerify, assert: browser.AssertIsHidden, what: m[1], kind: visibleText}
	}},
	{rx(`^(?:verify|expect|assert|check that)\s+"([^"]+)"\s+(?:has value|contains)\s+"([^"]*)"$`), func(m []string) intent {
		return intent{action: browser.ActionVerify, assert: browser.AssertValueEquals, what: m[1], value: m[2], kind: field}
	}},
	{rx(`^(click|double-click|double click|right-click|right click|hover(?: over)?)\s+(?:on\s+)?(?:the\s+)?"([^"]+)"(?:\s+(?:button|link|tab|item|menu item))?$`), func(m []string) intent {
		a := map[string]browser.Action{"click": browser.ActionClick, "double-click": browser.ActionDblClick,
			"double click": browser.ActionDblClick, "right-click": browser.ActionRightClick, "right click": browser.ActionRightClick,
			"hover": browser.ActionHover, "hover over": browser.ActionHover}[strings.ToLower(m[1])]
		return intent{action: a, what: m[2], kind: clickable}
	}},
	{rx(`^fill\s+(?:in\s+)?(?:the\s+)?"([^"]+)"(?:\s+field)?\s+with\s+"([^"]*)"$`), func(m []string) intent {
		return intent{action: browser.ActionFill, what: m[1], value: m[2], kind: field}
	}},
	{rx(`^(?:type|enter)\s+"([^"]*)"\s+(?:into|in)\s+(?:the\s+)?"([^"]+)"(?:\s+field)?$`), func(m []string) intent {
		return intent{action: browser.ActionFill, what: m[2], value: m[1], kind: field}
	}},
	{rx(`^clear\s+(?:the\s+)?"([^"]+)"(?:\s+field)?$`), func(m []string) intent {
		return intent{action: browser.ActionFill, what: m[1], value: "", kind: field}
	}},
	{rx(`^(?:select|choose)\s+"([^"]+)"\s+(?:from|in)\s+(?:the\s+)?"([^"]+)"(?:\s+dropdown)?$`), func(m []string) intent {
		return intent{action: browser.ActionSelect, what: m[2], value: m[1], kind: choice}
	}},
	{rx(`^(check|uncheck|tick|untick)\s+(?:the\s+)?"([^"]+)"(?:\s+checkbox)?$`), func(m []string) intent {
		a := browser.ActionCheck
		if strings.HasPrefix(strings.ToLower(m[1]), "un") {
			a = browser.ActionUncheck
		}
		return intent{action: a, what: m[2], kind: checkbox}
	}},
	{rx(`^press\s+"?([A-Za-z0-9+]+)"?(?:\s+key)?$`), func(m []string) intent { return intent{action: browser.ActionPress, value: m[1]} }},
	{rx(`^wait\s+(\d+)\s*(ms|milliseconds?|s|seconds?)?$`), func(m []string) intent {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if strings.HasPrefix(strings.ToLower(m[2]), "s") && err == nil && n <= scenario.MaxWaitMS {
			n *= 1000
		}
		if err != nil || n > scenario.MaxWaitMS {
			n = -1 // refused when run: a wait is bounded
		}
		return intent{action: browser.ActionWait, value: strconv.FormatInt(n, 10)}
	}},
	{rx(`^wait for\s+"([^"]+)"(?:\s+to appear)?$`), func(m []string) intent {
		return intent{action: browser.ActionVerify, assert: browser.AssertIsVisible, what: m[1], kind: visibleText}
	}},
}

func rx(s string) *regexp.Regexp { return regexp.MustCompile(`(?i)` + s) }

// Grammatical reports whether the strict grammar reads a step's text (the
// deterministic tier's sentences).
func Grammatical(text string) bool {
	_, ok := parseSentence(text)
	return ok
}

// parseSentence matches a step's text against the grammar.
func parseSentence(text string) (intent, bool) {
	text = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), "."))
	for _, g := range grammar {
		if m := g.re.FindStringSubmatch(text); m != nil {
			it := g.build(m)
			return it, it.action != ""
		}
	}
	return intent{}, false
}

// candidates lists the ways to find an element a person named, most
// specific first.
func candidates(kind targetKind, name string) []browser.Target {
	exact := func(ts ...browser.Target) []browser.Target {
		var out []browser.Target
		for _, t := range ts {
			e := t
			e.Exact = true
			out = append(out, e)
		}
		return append(out, ts...)
	}
	switch kind {
	case clickable:
		return exact(browser.Target{Role: "button", Name: name}, browser.Target{Role: "link", Name: name},
			browser.Target{Role: "menuitem", Name: name}, browser.Target{Role: "tab", Name: name},
			browser.Target{Role: "checkbox", Name: name}, browser.Target{Role: "radio", Name: name},
			browser.Target{Text: name})
	case field:
		return exact(browser.Target{Label: name}, browser.Target{Placeholder: name}, browser.Target{Role: "textbox", Name: name})
	case choice:
		return exact(browser.Target{Role: "combobox", Name: name}, browser.Target{Label: name})
	case checkbox:
		return exact(browser.Target{Role: "checkbox", Name: name}, browser.Target{Role: "radio", Name: name}, browser.Target{Label: name})
	case visibleText:
		return exact(browser.Target{Text: name})
	}
	return nil
}

// resolveSentence turns a sentence into commands whose targets match exactly
// one element. A non-empty why says why it could not, for the agent or the
// failure message.
//
// Values keep their {{NAME}} placeholders so the spec can refer to the
// variable; element names and URLs are expanded.
func (r *run) resolveSentence(ctx context.Context, text string) ([]browser.Command, string) {
	it, ok := parseSentence(text)
	if !ok {
		return nil, fmt.Sprintf("%q is not a deterministic step", r.secrets.redact(r.expand(text)))
	}
	it.what = r.expand(it.what)
	if it.action == browser.ActionNavigate || it.action == browser.ActionVerify {
		it.value = r.expand(it.value)
	}
	cmd := browser.Command{Action: it.action, Assert: it.assert, Value: it.value}
	if it.kind == noTarget {
		if err := cmd.Validate(); err != nil {
			return nil, err.Error()
		}
		return []browser.Command{cmd}, ""
	}
	if it.assert == "isHidden" {
		cmd.Target = browser.Target{Text: it.what}
		return []browser.Command{cmd}, ""
	}
	t, why := r.resolveTarget(ctx, it.kind, it.what)
	if why != "" {
		return nil, why
	}
	cmd.Target = t
	return []browser.Command{cmd}, ""
}

// resolveTarget finds the unique element a name refers to, waiting briefly
// for it to appear. More than one match is ambiguous and never guessed.
func (r *run) resolveTarget(ctx context.Context, kind targetKind, name string) (browser.Target, string) {
	start := time.Now()
	defer func() { r.timing.Browser += time.Since(start) }()
	deadline := start.Add(5 * time.Second)
	cands := candidates(kind, name)
	if len(cands) == 0 {
		return browser.Target{}, fmt.Sprintf("%q names no kind of element", name)
	}
	for {
		// The first candidate is the usual match; the others are counted
		// together, so a miss costs one more round trip, not one each.
		counts := make([]int, len(cands))
		counts[0] = r.count(ctx, cands[0])
		if counts[0] == 0 && len(cands) > 1 {
			var wg sync.WaitGroup
			for i := 1; i < len(cands); i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					counts[i] = r.count(ctx, cands[i])
				}()
			}
			wg.Wait()
		}
		for i, n := range counts {
			if n == 1 {
				return cands[i], ""
			}
			if n > 1 {
				return browser.Target{}, fmt.Sprintf("%q is ambiguous: %d elements match %s", name, n, cands[i])
			}
		}
		// Text shown inside a same-origin frame is the page's text too.
		if kind == visibleText {
			if in, ok := r.inFrame(ctx, cands[0]); ok {
				return in, ""
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return browser.Target{}, fmt.Sprintf("no element on %s matches %q", r.Page.URL(), name)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// inFrame is t in the one same-origin frame that shows it (see
// browser.Session.InFrame), when the page can tell.
func (r *run) inFrame(ctx context.Context, t browser.Target) (browser.Target, bool) {
	f, ok := r.Page.(interface {
		InFrame(context.Context, browser.Target) (browser.Target, bool)
	})
	if !ok {
		return browser.Target{}, false
	}
	return f.InFrame(ctx, t)
}

// count is how many elements t matches, 0 when that cannot be told.
func (r *run) count(ctx context.Context, t browser.Target) int {
	n, err := r.Page.Count(ctx, t)
	if err != nil {
		return 0
	}
	return n
}

// explicitCommand builds the command of an action step object.
func explicitCommand(st scenario.Step) (browser.Command, error) {
	c := browser.Command{Action: st.Action, Target: targetFromStep(st.Target), Value: st.Value}
	return c, c.Validate()
}

func targetFromStep(t *scenario.Target) browser.Target {
	if t == nil {
		return browser.Target{}
	}
	return browser.Target{Role: t.Role, Name: t.Name, Label: t.Label, Placeholder: t.Placeholder, Text: t.Text, TestID: t.TestID, CSS: t.CSS}
}
