package lexical

import (
	"regexp"
	"strconv"
	"strings"
)

// Container kinds (see browser.Container) a scope noun may mean.
var (
	itemKinds    = []string{"row", "item", "group"}
	sectionKinds = []string{"section", "group", "form", "aside", "main", "dialog"}
	scopeNouns   = []struct {
		words []string
		kinds []string
	}{
		{[]string{"table", "grid"}, []string{"table"}},
		{[]string{"row", "line"}, []string{"row", "item"}},
		{[]string{"item", "card", "product", "tile", "entry", "todo", "task"}, itemKinds},
		{[]string{"list"}, []string{"list"}},
		{[]string{"form"}, []string{"form"}},
		{[]string{"fieldset"}, []string{"group"}},
		{[]string{"section", "panel", "area", "box", "block", "pane"}, sectionKinds},
		{[]string{"header", "top bar", "topbar", "masthead"}, []string{"header"}},
		{[]string{"footer", "bottom bar"}, []string{"footer"}},
		{[]string{"sidebar", "side bar", "side panel", "aside"}, []string{"aside"}},
		{[]string{"dialog", "modal", "popup", "pop-up", "overlay", "window"}, []string{"dialog"}},
		{[]string{"navigation", "nav", "navbar", "nav bar", "menu bar", "menubar", "menu"}, []string{"nav", "list"}},
	}
	// roleNouns are the words that say what kind of element a phrase
	// means, longest first.
	roleNouns = []struct {
		noun, role string
	}{
		{"radio button", "radio"}, {"check box", "checkbox"}, {"tick box", "checkbox"}, {"text box", "field"}, {"input box", "field"},
		{"input field", "field"}, {"text field", "field"}, {"text area", "field"}, {"drop-down list", "dropdown"},
		{"dropdown list", "dropdown"}, {"drop down", "dropdown"}, {"select box", "dropdown"}, {"combo box", "dropdown"},
		{"list box", "dropdown"}, {"column header", "header"}, {"column heading", "header"}, {"menu item", "menuitem"},
		{"checkbox", "checkbox"}, {"tickbox", "checkbox"}, {"textbox", "field"}, {"textarea", "field"}, {"field", "field"},
		{"input", "field"}, {"box", "field"}, {"dropdown", "dropdown"}, {"drop-down", "dropdown"}, {"select", "dropdown"},
		{"combobox", "dropdown"}, {"picker", "dropdown"}, {"radio", "radio"}, {"toggle", "switch"}, {"switch", "switch"},
		{"button", "button"}, {"btn", "button"}, {"filter", "button"}, {"link", "link"}, {"hyperlink", "link"}, {"tab", "tab"}, {"header", "header"},
		{"column", "header"}, {"heading", "heading"}, {"cell", "cell"}, {"image", "image"}, {"picture", "image"},
		{"photo", "image"}, {"icon", "image"}, {"logo", "image"}, {"slider", "slider"}, {"message", "message"},
		{"notice", "message"}, {"notification", "message"}, {"alert", "message"}, {"toast", "message"}, {"option", "option"},
		{"label", "text"}, {"text", "text"},
	}
	ordinals = map[string]int{"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
		"fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8, "ninth": 9, "9th": 9,
		"tenth": 10, "10th": 10, "last": -1, "top": 1, "bottom": -1}
)

var (
	// A scope starts at "of the", "in the", "for "X"", "next to "X"" …
	// ("Sign in" is a name: a bare "in" starts a scope only before a quote.)
	scopeStart = regexp.MustCompile(`(?i)\s+(?:(?:of|in|inside|within|under|on|from|at)\s+(?:the|a|an|this|that|my|your)\s+|(?:for|next to|beside|belonging to)\s+(?:the\s+(?:row|item|entry|card|line)\s+(?:for|of|with)\s+)?|(?:of|in|on|inside|within)\s+(⟦))`)
	articles   = regexp.MustCompile(`(?i)^(?:the|a|an|this|that|my|your)\s+`)
	calledRe   = regexp.MustCompile(`(?i)^(.*?)\s*(?:labell?ed|called|named|titled|saying|that says|which says|with (?:the )?(?:text|label|name|title))\s+(.+)$`)
	numbered   = regexp.MustCompile(`(?i)^(?:number|no\.?|#)\s*(\d+)$`)
)

// parsePhrase reads an element phrase: "the "Price" header of the first
// table", "the second fruit dropdown", "the Delete button for "Milk"".
func parsePhrase(s string, quotes []string) *Phrase {
	s = strings.TrimSpace(s)
	head, rest := s, ""
	if at, from, ok := findScope(s); ok {
		head, rest = s[:at], s[from:]
	}
	p := &Phrase{}
	readHead(p, head, quotes)
	for rest != "" {
		part, next := rest, ""
		if at, from, ok := findScope(rest); ok {
			part, next = rest[:at], rest[from:]
		}
		p.Scopes = append(p.Scopes, readScope(part, quotes))
		rest = next
	}
	// "on the page" narrows nothing.
	kept := p.Scopes[:0]
	for _, sc := range p.Scopes {
		if !(len(sc.Kinds) == 0 && sc.Text == "" && len(sc.Words) == 1 && (sc.Words[0] == "page" || sc.Words[0] == "screen")) {
			kept = append(kept, sc)
		}
	}
	p.Scopes = kept
	return p
}

// findScope finds where a phrase's first scope starts: at is where its
// connecting words begin, from where the scope itself does.
func findScope(s string) (at, from int, ok bool) {
	for _, m := range scopeStart.FindAllStringSubmatchIndex(s, -1) {
		if m[0] == 0 || m[1] >= len(s) && m[2] < 0 {
			continue // a scope needs something before and after it
		}
		if m[2] >= 0 {
			return m[0], m[2], true // the quote is the scope's
		}
		return m[0], m[1], true
	}
	return 0, 0, false
}

// readHead fills the phrase's own name, role and ordinal.
func readHead(p *Phrase, head string, quotes []string) {
	head = strings.TrimSpace(articles.ReplaceAllString(strings.TrimSpace(head), ""))
	if m := calledRe.FindStringSubmatch(head); m != nil {
		if q, ok := onlyQuote(m[2], quotes); ok {
			p.Quoted = q
		} else {
			p.Words = words(m[2])
		}
		head = m[1]
		head = strings.TrimSpace(articles.ReplaceAllString(head, ""))
		p.Role = roleOf(words(head))
		return
	}
	var ws []string
	for _, f := range strings.Fields(head) {
		if m := marker.FindStringSubmatch(f); m != nil && m[0] == f {
			i, _ := strconv.Atoi(m[1])
			if p.Quoted == "" {
				p.Quoted = quotes[i]
				continue
			}
		}
		if m := marker.FindStringSubmatch(f); m != nil {
			f = unmask(f, quotes)
		}
		ws = append(ws, f)
	}
	ws = words(strings.Join(ws, " "))
	if len(ws) > 0 {
		if n, ok := ordinals[ws[0]]; ok && (len(ws) > 1 || p.Quoted != "") {
			p.Ordinal, ws = n, ws[1:]
		}
	}
	// "the button number 2", "item #3"
	if len(ws) >= 2 {
		if m := numbered.FindStringSubmatch(strings.Join(ws[len(ws)-2:], " ")); m != nil {
			p.Ordinal, _ = strconv.Atoi(m[1])
			ws = ws[:len(ws)-2]
		}
	}
	// A phrase of only a role noun ("the logo", "the alert") names the
	// page's one element of that role.
	if role, n := trailingRole(ws); role != "" {
		p.Role, p.RoleWords, ws = role, ws[len(ws)-n:], ws[:len(ws)-n]
	}
	p.Words = ws
}

// readScope reads a container phrase: "first table", "cart row",
// ""Apple" card", "header", or a bare "Milk" (the row or item holding it).
func readScope(s string, quotes []string) Scope {
	s = strings.TrimSpace(articles.ReplaceAllString(strings.TrimSpace(s), ""))
	var sc Scope
	var ws []string
	for _, f := range strings.Fields(s) {
		if m := marker.FindStringSubmatch(f); m != nil && m[0] == f && sc.Text == "" {
			i, _ := strconv.Atoi(m[1])
			sc.Text = quotes[i]
			continue
		}
		ws = append(ws, unmask(f, quotes))
	}
	ws = words(strings.Join(ws, " "))
	if len(ws) > 0 {
		if n, ok := ordinals[ws[0]]; ok && len(ws) > 1 {
			sc.Ordinal, ws = n, ws[1:]
		}
	}
	joined := strings.Join(ws, " ")
	for _, sn := range scopeNouns {
		for _, w := range sn.words {
			if joined == w || strings.HasSuffix(joined, " "+w) {
				sc.Kinds = sn.kinds
				ws = words(strings.TrimSuffix(joined, w))
				break
			}
		}
		if sc.Kinds != nil {
			break
		}
	}
	switch {
	case sc.Kinds == nil && sc.Text != "" && len(ws) == 0:
		// for "Milk": the row or item that says it
		sc.Kinds = itemKinds
	case sc.Kinds == nil && sc.Text == "" && sc.Ordinal == 0 && len(ws) > 0 && len(ws) <= 4:
		// for Buy milk, next to Buy milk: unquoted text of a row, or a
		// named container ("in the cart"): either may match.
		sc.Text = strings.Join(ws, " ")
		sc.Words = ws
		return sc
	}
	sc.Words = ws
	return sc
}

// trailingRole finds a role noun at the end of ws and how many words it is.
func trailingRole(ws []string) (string, int) {
	joined := strings.Join(ws, " ")
	for _, r := range roleNouns {
		if joined == r.noun || strings.HasSuffix(joined, " "+r.noun) {
			return r.role, len(strings.Fields(r.noun))
		}
	}
	return "", 0
}

// roleOf is the role a phrase of only role nouns names ("button").
func roleOf(ws []string) string {
	r, _ := trailingRole(ws)
	return r
}

// words lower-cases and splits text into words, dropping articles and
// punctuation (a hyphenated word stays one: "e-mail" is "email").
func words(s string) []string {
	s = strings.ToLower(s)
	s = strings.NewReplacer("-", "", "'s", "", "’s", "").Replace(s)
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 || r == '$' || r == '.' || r == '@' || r == '/')
	}) {
		f = strings.Trim(f, ".")
		if f == "" || f == "the" || f == "a" || f == "an" {
			continue
		}
		out = append(out, f)
	}
	return out
}
