package lexical

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/webpilot/webpilot/internal/browser"
)

// Matching thresholds.
const (
	// MinScore is the least a match scores to be taken at all.
	MinScore = 0.6
	// MinMargin is how much better than the best other element it must
	// be: two elements about as good are a guess, which goes to the agent.
	MinMargin = 0.15
	// ordinalBand is how close to the best the elements an ordinal
	// counts among must score.
	ordinalBand = 0.1
)

// scored is an element and how well it matches a phrase.
type scored struct {
	el    *browser.Element
	score float64
	why   string // the source that matched
}

// quality scores, from 0 to 1, how well a source text matches a name: the
// same words score 1; the name's words all in the source score by how
// much of the source they cover; a partial overlap scores little.
func quality(name []string, source string) float64 {
	src := words(source)
	if len(name) == 0 || len(src) == 0 {
		return 0
	}
	n, s := stems(name), stems(src)
	if slices.Equal(n, s) {
		return 1
	}
	if strings.Join(n, "") == strings.Join(s, "") {
		return 0.95 // "sign in" and "signin"
	}
	common := 0
	for _, w := range n {
		if slices.Contains(s, w) {
			common++
		}
	}
	switch {
	case common == len(n):
		return 0.7 + 0.25*float64(len(n))/float64(len(s))
	case common == len(s):
		return 0.6 * float64(len(s)) / float64(len(n))
	}
	union := len(n) + len(s) - common
	return 0.5 * float64(common) / float64(union)
}

// quotedQuality scores a quoted name against a source: exactly it (case and
// spacing aside), or its words in the source.
func quotedQuality(q, source string) float64 {
	a, b := normText(q), normText(source)
	if a == "" || b == "" {
		return 0
	}
	if a == b {
		return 1
	}
	return quality(words(q), source)
}

func normText(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(strings.TrimSpace(strings.Trim(s, " :*")))), " ")
}

// stems folds plurals so "items" matches "item".
func stems(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		switch {
		case len(w) > 4 && strings.HasSuffix(w, "ies"):
			w = w[:len(w)-3] + "y"
		case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
			w = w[:len(w)-1]
		}
		out[i] = w
	}
	return out
}

// source is one of an element's names and how much it counts.
type source struct {
	text   string
	weight float64
	what   string
}

func sources(e *browser.Element) []source {
	near := e.Near
	switch e.Role {
	case "button", "link", "tab", "menuitem":
		near = "" // a control's own name says what it is
	}
	return []source{
		{e.Name, 1, "name"}, {e.Label, 1, "label"}, {e.Placeholder, 0.95, "placeholder"}, {e.Text, 0.95, "text"},
		{e.TestID, 0.9, "test id"}, {e.Alt, 0.9, "alt text"}, {e.Title, 0.85, "title"}, {near, 0.8, "nearby text"},
		{e.Hint, 0.7, "id"},
		// "the item count" for <p id=count>3 items</p>: its words across
		// what it is called and what it says.
		{strings.Join([]string{e.Hint, e.Label, near, shortText(e.Text)}, " "), 0.75, "id and text"},
	}
}

func shortText(s string) string {
	if len(s) > 60 {
		return ""
	}
	return s
}

// nameScore is how well the element's names match the phrase's name.
func nameScore(p *Phrase, e *browser.Element) (float64, string) {
	if p.Quoted == "" && len(p.Words) == 0 {
		return 1, "role"
	}
	best, why := 0.0, ""
	for _, s := range sources(e) {
		if s.text == "" {
			continue
		}
		var q float64
		if p.Quoted != "" {
			q = quotedQuality(p.Quoted, s.text)
			if len(p.Words) > 0 {
				// "the "Apple" price": the other words must fit too.
				q *= 0.5 + 0.5*quality(p.Words, e.Name+" "+e.Label+" "+e.Near+" "+e.Hint+" "+e.TestID)
			}
		} else {
			q = quality(p.Words, s.text)
			// "the Lunch drink dropdown": words naming its section.
			if rest := withoutContainerWords(p.Words, e); len(rest) > 0 && len(rest) < len(p.Words) {
				q = max(q, 0.95*quality(rest, s.text))
			}
		}
		// The element's text only says who it is when it is short
		// (a paragraph that mentions "email" is not the email field).
		if s.what == "text" && len(s.text) > 60 && q < 1 {
			q *= 0.6
		}
		if q*s.weight > best {
			best, why = q*s.weight, s.what
		}
	}
	return best, why
}

// withoutContainerWords drops the words that name one of the element's
// containers.
func withoutContainerWords(ws []string, e *browser.Element) []string {
	named := map[string]bool{}
	for _, c := range e.Containers {
		for _, w := range stems(words(c.Name)) {
			named[w] = true
		}
	}
	var rest []string
	for i, w := range stems(ws) {
		if !named[w] {
			rest = append(rest, ws[i])
		}
	}
	return rest
}

// roleFit says how well an element fits a role category: 1 for a match,
// less for a near one (a link styled as a button), 0 for none.
func roleFit(role string, e *browser.Element, roleOnly bool) float64 {
	r := e.Role
	switch role {
	case "":
		return 1
	case "field":
		if e.Editable || r == "textbox" || r == "searchbox" || r == "spinbutton" {
			return 1
		}
	case "dropdown":
		if e.Tag == "select" || r == "combobox" || r == "listbox" {
			return 1
		}
	case "checkbox", "switch":
		if r == "checkbox" || r == "switch" {
			return 1
		}
	case "radio":
		if r == "radio" {
			return 1
		}
	case "option":
		if r == "option" || r == "radio" || r == "tab" || r == "menuitemradio" {
			return 1
		}
	case "button":
		if r == "button" {
			return 1
		}
		if r == "link" || r == "menuitem" || r == "tab" {
			return 0.85
		}
	case "link":
		if r == "link" {
			return 1
		}
		if r == "button" || r == "menuitem" || r == "tab" {
			return 0.85
		}
	case "tab":
		if r == "tab" {
			return 1
		}
	case "menuitem":
		if strings.HasPrefix(r, "menuitem") {
			return 1
		}
	case "header":
		if r == "columnheader" || e.Tag == "th" {
			return 1
		}
	case "heading":
		if r == "heading" {
			return 1
		}
	case "cell":
		if e.Tag == "td" || r == "cell" || r == "gridcell" {
			return 1
		}
	case "row":
		if e.Tag == "tr" || r == "row" {
			return 1
		}
	case "item":
		if e.Tag == "li" || r == "listitem" {
			return 1
		}
	case "image":
		if e.Tag == "img" || e.Tag == "svg" || r == "img" {
			return 1
		}
	case "slider":
		if r == "slider" {
			return 1
		}
	case "message":
		if r == "status" || r == "alert" || r == "log" {
			return 1
		}
		if e.Text != "" && !e.Interactive && !roleOnly {
			return 0.85
		}
	case "text":
		if e.Text != "" {
			return 1
		}
	}
	return 0
}

// verbFit says how well an element suits what the step does to it.
func verbFit(verb string, e *browser.Element) float64 {
	switch verb {
	case "fill", "clear", "add", "type":
		if e.Editable {
			return 1
		}
	case "select":
		if e.Tag == "select" {
			return 1
		}
	case "check", "uncheck", "checked", "unchecked":
		if e.Role == "checkbox" || e.Role == "radio" || e.Role == "switch" {
			return 1
		}
	case "click", "dblclick", "rightclick", "open", "choose":
		if e.Interactive {
			return 1
		}
		if e.Tag == "img" {
			return 0.9
		}
		if e.Text != "" && e.Tag != "label" {
			return 0.8 // clicking text, as a person would
		}
	case "set":
		if e.Editable || e.Tag == "select" || e.Role == "checkbox" || e.Role == "switch" {
			return 1
		}
	case "press":
		if e.Editable || e.Interactive {
			return 1
		}
	case "upload":
		if e.Tag == "input" && e.Type == "file" {
			return 1
		}
	case "equals-field":
		if e.Editable || e.Tag == "select" {
			return 1
		}
	case "enabled", "disabled":
		if e.Interactive {
			return 1
		}
	default: // hover, drag, scroll, visible, contains, equals, press
		if e.Interactive || e.Text != "" || e.Tag == "img" {
			return 1
		}
		return 0.8
	}
	return 0
}

// inScope reports whether the element sits in a container the scope names.
func inScope(sc Scope, e *browser.Element) bool {
	for i, c := range e.Containers {
		if len(sc.Kinds) > 0 && !slices.Contains(sc.Kinds, c.Kind) {
			continue
		}
		if sc.Ordinal != 0 && !ordinalOf(sc.Ordinal, c) {
			continue
		}
		okText := sc.Text == "" || containsText(c.Text, sc.Text)
		okWords := len(sc.Words) == 0 || scopeWords(sc.Words, e.Containers[i:]) >= MinScore
		// "the Pear card": a row or card is named by what it says.
		if !okWords && sc.Text == "" && (c.Kind == "row" || c.Kind == "item") {
			okWords = containsText(c.Text, strings.Join(sc.Words, " "))
		}
		if sc.Text != "" && len(sc.Words) > 0 && len(sc.Kinds) == 0 {
			// An unquoted "for Buy milk" or "in the cart": either reading.
			if (okText && (c.Kind == "row" || c.Kind == "item" || c.Kind == "group")) || okWords {
				return true
			}
			continue
		}
		if okText && okWords {
			return true
		}
	}
	return false
}

// ordinalOf checks a container's position: a row or item among its
// siblings, anything else among the page's containers of its kind.
func ordinalOf(n int, c browser.Container) bool {
	pos, of := c.Index, c.Of
	if c.Kind == "row" || c.Kind == "item" {
		pos, of = c.Pos, c.Sibs
	}
	if n < 0 {
		return pos == of
	}
	return pos == n
}

// scopeWords scores scope words against a container and those around it
// (a "cart row" is a row in something called cart).
func scopeWords(ws []string, chain []browser.Container) float64 {
	best := 0.0
	for _, c := range chain {
		best = max(best, quality(ws, c.Name), 0.9*quality(ws, c.Hint))
	}
	return best
}

func containsText(hay, needle string) bool {
	return strings.Contains(normText(hay), normText(needle))
}

// related reports whether two elements are one thing to a person: one
// inside the other, or a label and its control.
func related(els []browser.Element, a, b int) bool {
	return a == b || els[a].For == b || els[b].For == a || isInside(els, a, b) || isInside(els, b, a)
}

// match picks the one element a phrase means for a verb. It returns the
// element, or why none was taken.
func match(els []browser.Element, p *Phrase, verb string) (*browser.Element, float64, string) {
	var cands []scored
	for i := range els {
		e := &els[i]
		fit := verbFit(verb, e)
		roleOnly := p.Quoted == "" && len(p.Words) == 0
		switch {
		case p.Role == "" || verb == "upload": // a file input has no role to speak of
		case p.Role == "text" || p.Role == "message":
			if acts[verb] {
				fit = min(fit, roleFit(p.Role, e, roleOnly))
			} else {
				fit = roleFit(p.Role, e, roleOnly)
			}
		case p.Role == "field" && (verb == "check" || verb == "uncheck") && slices.Equal(p.RoleWords, []string{"box"}):
			// "Check the newsletter box": a tick box.
			fit = min(fit, roleFit("checkbox", e, roleOnly))
		default:
			fit = min(fit, roleFit(p.Role, e, roleOnly))
		}
		if fit == 0 {
			continue
		}
		ok := true
		for _, sc := range p.Scopes {
			if !inScope(sc, e) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		ns, why := nameScore(p, e)
		if s := ns * fit; s >= MinScore {
			cands = append(cands, scored{e, s, why})
		}
	}
	// "Send message" is a button's whole name before it is "send" and a
	// message: an element named by every word, the role noun's included,
	// is a match whatever its role.
	if len(p.RoleWords) > 0 && (len(p.Words) > 0 || acts[verb]) && p.Quoted == "" {
		whole := &Phrase{Words: append(slices.Clone(p.Words), p.RoleWords...), Ordinal: p.Ordinal, Scopes: p.Scopes}
		for i := range els {
			e := &els[i]
			if slices.ContainsFunc(cands, func(c scored) bool { return c.el == e }) {
				continue
			}
			fit := verbFit(verb, e)
			if fit == 0 || !inScopes(p.Scopes, e) {
				continue
			}
			if ns, why := nameScore(whole, e); ns >= 0.95 {
				cands = append(cands, scored{e, ns * fit, why})
			}
		}
	}
	if len(cands) == 0 {
		return nil, 0, fmt.Sprintf("no element on the page matches %s", p)
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	best := cands[0]
	// Of an element and what is inside it (a button and its label's
	// span), the one that acts: the best scoring, the innermost on a tie.
	// A value inside its caption ("Total: <b>$5</b>") is the one meant
	// when it scores nearly as well.
	for _, c := range cands[1:] {
		if c.score >= best.score-ordinalBand && isInside(els, c.el.Index, best.el.Index) && c.el.Interactive == best.el.Interactive {
			best = c
		}
	}
	if p.Ordinal != 0 {
		var band []scored
		for _, c := range cands {
			if c.score < best.score-ordinalBand {
				continue
			}
			dup := false
			for _, b := range band {
				if related(els, b.el.Index, c.el.Index) {
					dup = true
				}
			}
			if !dup {
				band = append(band, c)
			}
		}
		sort.SliceStable(band, func(i, j int) bool { return band[i].el.Index < band[j].el.Index })
		k := p.Ordinal - 1
		if p.Ordinal < 0 {
			k = len(band) - 1
		}
		if k >= len(band) {
			return nil, 0, fmt.Sprintf("%s: only %d elements match", p, len(band))
		}
		return band[k].el, band[k].score, ""
	}
	for _, c := range cands {
		if related(els, c.el.Index, best.el.Index) {
			continue
		}
		if best.score-c.score < MinMargin {
			return nil, 0, fmt.Sprintf("%s is ambiguous: %s and %s match about as well", p, describe(best.el), describe(c.el))
		}
		break
	}
	return best.el, best.score, ""
}

// isInside reports whether element x is inside element y.
func isInside(els []browser.Element, x, y int) bool {
	for p := els[x].Parent; p >= 0; p = els[p].Parent {
		if p == y {
			return true
		}
	}
	return false
}

func describe(e *browser.Element) string {
	name := e.Name
	if name == "" {
		name = e.Text
	}
	what := e.Tag
	if e.Role != "" {
		what = e.Role
	}
	if len(name) > 40 {
		name = name[:40] + "…"
	}
	return fmt.Sprintf("%s %q", what, name)
}

// String is the phrase as the report shows it.
func (p *Phrase) String() string {
	var b strings.Builder
	if p.Ordinal > 0 {
		fmt.Fprintf(&b, "#%d ", p.Ordinal)
	} else if p.Ordinal < 0 {
		b.WriteString("last ")
	}
	if p.Quoted != "" {
		fmt.Fprintf(&b, "%q ", p.Quoted)
	}
	if len(p.Words) > 0 {
		b.WriteString(strings.Join(p.Words, " ") + " ")
	}
	if p.Role != "" {
		b.WriteString(p.Role + " ")
	}
	for _, s := range p.Scopes {
		b.WriteString("in ")
		if s.Ordinal != 0 {
			fmt.Fprintf(&b, "#%d ", s.Ordinal)
		}
		if len(s.Words) > 0 {
			b.WriteString(strings.Join(s.Words, " ") + " ")
		}
		if len(s.Kinds) > 0 {
			b.WriteString(s.Kinds[0] + " ")
		}
		if s.Text != "" {
			fmt.Fprintf(&b, "with %q ", s.Text)
		}
	}
	return "“" + strings.TrimSpace(b.String()) + "”"
}

// inScopes reports whether e is in every one of the scopes.
func inScopes(scs []Scope, e *browser.Element) bool {
	for _, sc := range scs {
		if !inScope(sc, e) {
			return false
		}
	}
	return true
}

// acts are the verbs that need a control, never bare text: "fill the
// message" is a field called Message, not a message shown.
var acts = map[string]bool{"fill": true, "clear": true, "select": true, "set": true, "check": true, "uncheck": true, "upload": true}
