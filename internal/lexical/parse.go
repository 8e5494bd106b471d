// Package lexical is webpilot's second tier for plain test steps, between
// the orchestrator's strict grammar and the agent: it reads a sentence the
// way people write test steps ("Fill the promo code field with SPRING10",
// "Pick bananas in the second fruit dropdown", "Verify the cart has 2
// items"), splits it into a verb, values and a target phrase, and matches
// the phrase against the page's elements (accessible names, labels,
// placeholders, test ids, nearby text, roles, ordinals and containers).
//
// It resolves a step only when exactly one element is a confident match
// (a score over a threshold, a margin over the runner-up, and a locator
// unique on the page); anything less is left to the agent. It never calls
// a model.
package lexical

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Intent is a parsed step before its targets are matched.
type Intent struct {
	// Verb is what to do: click, dblclick, rightclick, hover, fill, clear,
	// select, set, choose, check, uncheck, agree (tick the box that says
	// so), press, upload, drag, scroll, open, add, signout, submit (the
	// page's one submit button), submitform (Target's one word is its
	// purpose: signin, subscribe), or verify.
	Verb string
	// Check is a verification's kind: visible, hidden, checked,
	// unchecked, enabled, disabled, equals, contains, count, order; or a
	// wait's: appears, goes (the element shown now, hidden once it goes).
	Check  string
	Values []string
	Target *Phrase
	To     *Phrase // a drag's destination
	Count  int     // a count check's number
	// Repeat is how many times a click or key press is done ("Click Next
	// three times", "press the plus button twice"); 0 is once.
	Repeat int
	// Shown says a check's value was written unquoted over several words
	// ("Verify the status of Winter Orchard is Checked out"): it holds only
	// where the element meant shows that value now.
	Shown bool
}

// Phrase names an element the way a person does.
type Phrase struct {
	Quoted string   // a quoted name ("Price")
	Words  []string // unquoted name words, lower case
	Role   string   // a role noun's category (field, dropdown, button …)
	// RoleWords are the words the role noun was read from ("message" in
	// "Send message"), which may as well be the end of a name.
	RoleWords []string
	Ordinal   int     // 1 is the first, -1 the last, 0 none
	Scopes    []Scope // containers it is in, nearest first
}

// Scope is a container named in a phrase: "of the first table", "in the
// cart row for "Milk"", "in the header".
type Scope struct {
	Kinds   []string // container kinds it may be (any when empty)
	Words   []string // its name words
	Text    string   // text it contains
	Ordinal int
}

// empty reports whether the phrase names nothing at all.
func (p *Phrase) empty() bool {
	return p == nil || (p.Quoted == "" && len(p.Words) == 0 && p.Role == "" && p.Ordinal == 0 && len(p.Scopes) == 0)
}

// mask replaces the sentence's quoted strings by markers ⟦i⟧ and returns
// them: no pattern ever looks inside a quoted value.
func mask(s string) (string, []string) {
	var quotes []string
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		var closing rune
		switch {
		case c == '"':
			closing = '"'
		case c == '“':
			closing = '”'
		case c == '\'' && (i == 0 || rs[i-1] == ' ' || rs[i-1] == '('):
			closing = '\''
		}
		if closing != 0 {
			end := -1
			for j := i + 1; j < len(rs); j++ {
				if rs[j] == closing && (closing != '\'' || j+1 == len(rs) || strings.ContainsRune(" ,.;:!?)", rs[j+1])) {
					end = j
					break
				}
			}
			if end > i {
				b.WriteString("⟦" + strconv.Itoa(len(quotes)) + "⟧")
				quotes = append(quotes, string(rs[i+1:end]))
				i = end
				continue
			}
		}
		b.WriteRune(c)
	}
	return b.String(), quotes
}

var marker = regexp.MustCompile(`⟦(\d+)⟧`)

// unmask restores the quoted strings of s, without their quotes.
func unmask(s string, quotes []string) string { return restore(s, quotes, "") }

// restore puts the quoted strings of s back, each between mark.
func restore(s string, quotes []string, mark string) string {
	return marker.ReplaceAllStringFunc(s, func(m string) string {
		i, _ := strconv.Atoi(m[len("⟦") : len(m)-len("⟧")])
		return mark + quotes[i] + mark
	})
}

// onlyQuote returns the quoted string s is made of, if it is one.
func onlyQuote(s string, quotes []string) (string, bool) {
	s = strings.TrimSpace(s)
	if m := marker.FindStringSubmatchIndex(s); m != nil && m[0] == 0 && m[1] == len(s) {
		i, _ := strconv.Atoi(s[m[2]:m[3]])
		return quotes[i], true
	}
	return "", false
}

// valueOf reads a value: a quoted string, or the words as written.
func valueOf(s string, quotes []string) string {
	if q, ok := onlyQuote(s, quotes); ok {
		return q
	}
	return strings.TrimSpace(unmask(s, quotes))
}

// leftover matches an unquoted value that holds more of the sentence than a
// value: another element named ("Ada and the last name with Lovelace"), or
// a place ("hello in the search box").
var leftover = regexp.MustCompile(`(?i)(?:\band|\bor|\bthen|,)\s+(?:the|a|an|my|your|its|their|this|that|it)\b|\s(?:with|into|in|inside|from|on|onto|to)\s+(?:the|a|an|my|your|this|that|⟦\d+⟧)\b|⟦\d+⟧`)

// plainValue reports whether an unquoted value is only a value.
func plainValue(s string) bool { return !leftover.MatchString(" " + s) }

// valuesOf reads a list of values: "a", "b" and "c".
func valuesOf(s string, quotes []string) []string {
	parts := listSep.Split(strings.TrimSpace(s), -1)
	var out []string
	for _, p := range parts {
		if p == "" {
			continue
		}
		q, ok := onlyQuote(p, quotes)
		if !ok {
			return nil
		}
		out = append(out, q)
	}
	return out
}

type rule struct {
	re    *regexp.Regexp
	build func(m []string, q []string) (Intent, bool)
}

var byWhat = regexp.MustCompile(`(?i)^search (?:by|on|in|under|within) `)

func rx(s string) *regexp.Regexp { return regexp.MustCompile(`(?i)^(?:` + s + `)$`) }

const (
	keys        = `(enter|return|tab|escape|esc|space|backspace|delete|arrow ?(?:up|down|left|right)|up|down|left|right|home|end|page ?up|page ?down|f\d{1,2}|(?:(?:control|ctrl|shift|alt|meta|cmd)\+)+[a-z0-9]+)`
	numberWords = `(\d+|no|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)`
	itemNouns   = `(items?|products?|rows?|entries|entry|todos?|tasks?|results?|elements?|things?|messages?|lines?|cards?|options?|notes?|comments?|records?|users?|orders?|files?)`
)

var rules = []rule{
	// Lists of values typed into a page's new-item field.
	{rx(`add (?:the )?(?:items?|todos?|tasks?|entries|entry|notes?) (.+?)(?: to (?:the |my )?(?:[\w ]+ )?list)?`), func(m, q []string) (Intent, bool) {
		v := valuesOf(m[1], q)
		return Intent{Verb: "add", Values: v}, len(v) > 0
	}},
	{rx(`add (⟦\d+⟧(?:\s*(?:,|and|&)\s*(?:and\s+)?⟦\d+⟧)*) to (?:the |my )?(?:[\w ]+ )?list`), func(m, q []string) (Intent, bool) {
		v := valuesOf(m[1], q)
		return Intent{Verb: "add", Values: v}, len(v) > 0
	}},
	// "Add "Apple" to the cart": the add button of the Apple item.
	{rx(`add (⟦\d+⟧) to (?:the |my )?(cart|basket|bag|wishlist|favorites|favourites)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "click", Target: &Phrase{Words: []string{"add", "to", strings.ToLower(m[2])},
			Scopes: []Scope{{Kinds: itemKinds, Text: valueOf(m[1], q)}}}}, true
	}},
	// "Create a task named Pay rent", "Add a todo called "Call mum"": one
	// value typed into the page's one new-item field.
	{rx(`(?:create|add|make|enter) (?:a |an |the )?(?:new )?(?:item|todo|to-do|task|entry|note|reminder) (?:named|called|titled|saying|that says|with the (?:name|title|text)) (.+)`), oneValue},
	// "Put Call mum on the list", "Add Buy milk to my to-do list".
	{rx(`(?:put|add|write|jot down|place) (.+?) (?:on|onto|to|in|into) (?:the |my )?(?:[\w-]+ )?(?:list|to-do list|todo list|todos)`), oneValue},
	// "Put the Red Mug in the basket", "Add Red Mug to the cart": that
	// item's add button (a card or row of its own).
	{rx(`(?:put|add|place|drop) (?:the |a |an )?(.+?) (?:in|into|to|in to) (?:the |my |your )?(cart|basket|bag|trolley)`), func(m, q []string) (Intent, bool) {
		name, ok := itemName(m[1], q)
		return Intent{Verb: "click", Target: &Phrase{Words: []string{"add", "to", strings.ToLower(m[2])},
			Scopes: []Scope{{Kinds: itemKinds, Text: name}}}}, ok
	}},
	// "Take Apple out of the cart": that item's remove button.
	{rx(`(?:take|get) (?:the |a |an )?(.+?) out of (?:the |my |your )?(?:cart|basket|bag|trolley|list)`), func(m, q []string) (Intent, bool) {
		name, ok := itemName(m[1], q)
		return Intent{Verb: "click", Target: &Phrase{Words: []string{"remove"}, Scopes: []Scope{{Kinds: itemKinds, Text: name}}}}, ok
	}},
	// "Delete "Leek"", "Remove "Apple" from the cart": that row's button.
	{rx(`(delete|remove) (?:the )?(?:(?:todo|task|item|entry|row|product|line) )?(⟦\d+⟧)(?: (?:todo|task|item|entry|row|product|line))?(?: from (?:the |my )?[\w ]+)?`), rowButton},
	{rx(`(delete|remove) ([\w ]+?) from (?:the |my )?[\w ]+`), rowButton},
	{rx(`search (?:in |through |within )?(?:the |my )?(.+?) for (.+)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "search", Target: parsePhrase(m[1], q), Values: []string{valueOf(m[2], q)}}, true
	}},
	{rx(`search (?:for )?(.+?)(?: (?:in|using) (?:the )?(.+))?`), func(m, q []string) (Intent, bool) {
		if byWhat.MatchString(m[0]) {
			// "Search by title" says how to search, not what for.
			return Intent{}, false
		}
		p := &Phrase{Words: []string{"search"}}
		if m[2] != "" {
			p = parsePhrase(m[2], q)
		}
		return Intent{Verb: "search", Target: p, Values: []string{valueOf(m[1], q)}}, true
	}},
	// "Sort by price", "Order the results by date, newest first": the
	// page's sort dropdown, its option by meaning ("Date (newest first)").
	{rx(`(?:sort|order|arrange) (?:the [\w ]+ )?by (.+)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "select", Target: &Phrase{Words: []string{"sort"}}, Values: []string{valueOf(m[1], q)}}, true
	}},
	// "Sign in as ada with password X", "Subscribe with a@b.c": a whole
	// form, when its fields and its one submit button account for every
	// value and nothing else (resolve's submitForm).
	{rx(`(?:sign|log)[ -]?in as (.+?) (?:with|using) (?:the |a |my )?password (.+)`), formValues("signin")},
	{rx(`(?:sign|log)[ -]?in with (?:the )?(?:user ?name|username|user|email|login) (.+?) and (?:the |a |my )?password (.+)`), formValues("signin")},
	{rx(`(?:subscribe|sign[ -]?up|register)(?: (?:to|for) (?:the |our )?(?:newsletter|mailing list|updates))? (?:with|using) (?:the (?:email|address) |email |my email )?(.+)`), formValues("subscribe")},
	// "Sign off", "log out of the app": the page's one control for it,
	// whichever way it says it (Logout, Log out, Sign out).
	{rx(`(?:sign|log)[ -]?(?:off|out)(?: of (?:the |my |your )?(?:app|application|site|account|system|portal))?`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "signout"}, true
	}},
	{rx(`(?:double[- ]?click|dblclick)(?: on)? (.+)`), target("dblclick")},
	{rx(`(?:right[- ]?click|context[- ]click)(?: on)? (.+)`), target("rightclick")},
	{rx(`(?:hover|mouse ?over|move the mouse over|hover the mouse over)(?: over| on)? (.+)`), target("hover")},
	{rx(`(?:press|hit) (?:the )?` + keys + `(?: key)?(?: (?:in|on|inside) (.+))?`), func(m, q []string) (Intent, bool) {
		it := Intent{Verb: "press", Values: []string{keyName(m[1])}}
		if m[2] != "" {
			it.Target = parsePhrase(m[2], q)
		}
		return it, true
	}},
	{rx(`(?:hit|type) (?:the )?` + keys + ` key(?: (?:in|on|inside) (.+))?`), func(m, q []string) (Intent, bool) {
		it := Intent{Verb: "press", Values: []string{keyName(m[1])}}
		if m[2] != "" {
			it.Target = parsePhrase(m[2], q)
		}
		return it, true
	}},
	{rx(`(?:click|tap|hit|press|push)(?: on)? (.+)`), target("click")},
	{rx(`(?:fill(?: in| out)?|populate|complete) (.+?) with (.+)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "fill", Target: parsePhrase(m[1], q), Values: []string{valueOf(m[2], q)}}, true
	}},
	{rx(`(?:type|enter|input|write|put|key in|insert|fill in|fill|paste) (.+?) (?:into|in|inside|in to|on|to) (.+)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "fill", Target: parsePhrase(m[2], q), Values: []string{valueOf(m[1], q)}}, true
	}},
	{rx(`(?:type|enter|input|use|give) (.+?) (?:as|for) (?:the |my |your )?(.+)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "fill", Target: parsePhrase(m[2], q), Values: []string{valueOf(m[1], q)}}, true
	}},
	{rx(`(?:set|change|update) (.+?) to (.+)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "set", Target: parsePhrase(m[1], q), Values: []string{valueOf(m[2], q)}}, true
	}},
	{rx(`(?:clear|empty|erase|wipe)(?: out)? (.+)`), target("clear")},
	{rx(`(?:select|choose|pick) (.+?) (?:from|in|on|within|inside|using) (.+)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "select", Target: parsePhrase(m[2], q), Values: []string{valueOf(m[1], q)}}, true
	}},
	{rx(`(?:select|choose|pick) (.+?) as (?:the |my |your )?(.+)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "select", Target: parsePhrase(m[2], q), Values: []string{valueOf(m[1], q)}}, true
	}},
	{rx(`(?:mark|set) (.+?) as (?:complete|completed|done|finished)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "check", Target: rowCheckbox(m[1], q)}, true
	}},
	{rx(`(?:mark|set) (.+?) as (?:not done|incomplete|not completed|uncompleted|active|open)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "uncheck", Target: rowCheckbox(m[1], q)}, true
	}},
	{rx(`(?:complete|finish|check off|tick off) (?:the )?(?:todo|task|item|entry) (.+)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "check", Target: rowCheckbox(m[1], q)}, true
	}},
	{rx(`(?:check|tick|enable|turn on|switch on|toggle on)(?: the box)?(?: for)? (.+)`), target("check")},
	{rx(`(?:uncheck|untick|un-check|un-tick|disable|turn off|switch off|toggle off|deselect|clear the box for) (.+)`), target("uncheck")},
	{rx(`(?:agree to|accept|consent to|acknowledge) (.+)`), target("agree")},
	{rx(`filter (?:the [\w ]+ )?by (.+)`), target("check")},
	{rx(`submit(?: (?:the |this |my |your )?[\w -]+)?`), verbOnly("submit")},
	{rx(`(?:select|choose|pick|opt for) (.+)`), target("choose")},
	{rx(`(?:upload|attach) (.+?) (?:to|into|in|using|with|via|through|as) (.+)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "upload", Target: parsePhrase(m[2], q), Values: []string{valueOf(m[1], q)}}, true
	}},
	{rx(`(?:drag|move) (.+?) (?:onto|on to|to|into|over|on|in) (.+)`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "drag", Target: parsePhrase(m[1], q), To: parsePhrase(m[2], q)}, true
	}},
	{rx(`scroll (?:down |up )?(?:to|until you see) (.+)`), target("scroll")},
	{rx(`(?:go|navigate) back(?: to the previous page)?|(?:click|press|use) the (?:browser'?s? )?back button`), verbOnly("back")},
	{rx(`(?:go|navigate) forward`), verbOnly("forward")},
	{rx(`(?:reload|refresh)(?: the page| the browser)?`), verbOnly("reload")},
	{rx(`(?:go to|open|navigate to|visit|follow|switch to) (.+?)(?: (?:page|tab|section|screen|link))?`), func(m, q []string) (Intent, bool) {
		return Intent{Verb: "open", Target: parsePhrase(m[1], q)}, true
	}},
}

// verifications are checked, after their lead ("Verify that"), before the actions.
var verifications = []rule{
	{rx(`(?:the )?(.+?) (?:has|have|contains|shows|lists|displays|should (?:have|contain|show|list|display)|must (?:have|contain)) (?:exactly )?` + numberWords + ` ` + itemNouns + `(?: in it| left| listed)?`), count(1, 2, 3)},
	{rx(`there (?:is|are|should be|must be) (?:exactly )?` + numberWords + ` ` + itemNouns + ` (?:in|on|inside|under) (?:the |my )?(.+)`), count(3, 1, 2)},
	{rx(numberWords + ` ` + itemNouns + ` (?:are|is|should be) (?:shown|listed|displayed|visible) (?:in|on) (?:the |my )?(.+)`), count(3, 1, 2)},
	{rx(`(?:the )?(.+?) (?:are|is|should be|appear|show|shows|list|lists|read|reads)(?: in (?:this|the following) order)?:? (⟦\d+⟧(?:\s*(?:,|and|then|&)\s*(?:and\s+|then\s+)?⟦\d+⟧)+)(?:,? in (?:this|that) order)`), order},
	{rx(`(?:the )?(.+?) (?:are|is|should be|appear|show|shows|list|lists|read|reads) in (?:this|the following) order:? (⟦\d+⟧(?:\s*(?:,|and|then|&)\s*(?:and\s+|then\s+)?⟦\d+⟧)+)`), order},
	{rx(`(?:the )?order (?:of (?:the )?(.+?) )?(?:is|should be):? (⟦\d+⟧(?:\s*(?:,|and|then|&)\s*(?:and\s+|then\s+)?⟦\d+⟧)+)`), order},
	{rx(`(.+?) (?:is|are|should be|must be|becomes|remains) (?:not visible|hidden|gone|not shown|not displayed|absent|no longer (?:visible|shown|displayed|there))`), check("hidden")},
	{rx(`(.+?) (?:disappears|disappeared|vanishes|is removed|was removed|is no longer on the page)`), check("hidden")},
	{rx(`(?:the page|page|the screen) (?:does not|doesn't|no longer|should not|shouldn't) (?:show|display|contain|list)s? (.+)`), check("hidden")},
	{rx(`(.+?) (?:is|are|should be|must be|becomes|remains) (?:visible|shown|displayed|present|on the page|on screen|there)`), check("visible")},
	{rx(`(.+?) (?:appears|is displayed|shows up|is shown)`), check("visible")},
	{rx(`(?:the page|page|the screen) (?:shows|displays|contains|says|lists|has|should (?:show|display|contain|say|list|have)) (.+)`), check("visible")},
	{rx(`(?:i|you|we|the user) (?:see|sees|can see|should see) (.+)`), check("visible")},
	{rx(`(.+?) (?:is|should be|must be|stays|remains) (?:empty|blank|cleared)`), check("empty")},
	{rx(`(.+?) (?:is|are|should be|must be|stays|remains) (?:checked|ticked|selected|on|switched on|enabled and checked)`), check("checked")},
	{rx(`(.+?) (?:is|are|should be|must be|stays|remains) (?:unchecked|not checked|unticked|not ticked|not selected|off|switched off)`), check("unchecked")},
	{rx(`(.+?) (?:is|are|should be|must be|stays|remains) (?:enabled|clickable|active|available)`), check("enabled")},
	{rx(`(.+?) (?:is|are|should be|must be|stays|remains) (?:disabled|greyed out|grayed out|not clickable|inactive|unavailable)`), check("disabled")},
	{rx(`(?:the )?(?:page )?title (?:is|should be|equals|reads) (.+)`), page("titleEquals")},
	{rx(`(?:the )?(?:page )?title (?:contains|includes|should contain|should include) (.+)`), page("titleContains")},
	{rx(`(?:the )?(?:current )?(?:url|address|location) (?:contains|includes|ends with|should contain|should include|should end with|has) (.+)`), page("urlContains")},
	{rx(`(?:the )?(?:current )?(?:url|address|location) (?:is|should be|equals) (.+)`), page("urlEquals")},
	{rx(`(?:the )?value of (.+?) (?:is|should be|equals|must be) (.+)`), compare("equals")},
	{rx(`(.+?) (?:has|have|should have|must have) (?:the )?value (.+)`), compare("equals")},
	{rx(`(.+?) (?:contains|includes|shows|displays|reads|says|mentions|should (?:contain|include|show|display|read|say|mention)|must (?:contain|show|mention)) (?:the text )?(.+)`), compare("contains")},
	{rx(`(.+?) (?:is|equals|should be|should equal|must be) (.+)`), compare("equals")},
}

var (
	listSep    = regexp.MustCompile(`(?i)\s*(?:,\s*and\s+|,\s*|\s+and\s+|\s*&\s*)\s*`)
	bareCheck  = regexp.MustCompile(`(?i)^check\s+$`)
	checkWords = regexp.MustCompile(`(?i)\b(?:should|must)\b|\bis (?:visible|shown|displayed|hidden|checked|unchecked|disabled|enabled)$|^(?:the )?[\w ]+ (?:has|have) (?:exactly )?` + numberWords + ` ` + itemNouns + `$`)
	rowNoun    = regexp.MustCompile(`(?i)^(?:the )?(?:todo|task|item|entry|row) `)
)

var verifyLeadRe = regexp.MustCompile(`(?i)^(?:expected(?: result)?:\s*|verify|check|assert|ensure|confirm|expect|validate|make sure|see|observe)(?: that)?\s+`)

// Parse reads a step sentence. ok is false when it is not a sentence the
// lexical tier understands.
func Parse(text string) (Intent, bool) {
	// A sentence of several clauses is never read whole: its leftover
	// words would become a value or a name.
	it, ok := parseOne(text)
	if !ok || it.refersBack() {
		return Intent{}, false
	}
	return it, true
}

// Reads reports whether the tier reads a clause, given what the clauses
// before it named: as Parse does, and also when it points back at them
// ("write hi in it", "Delete the row you just created").
func Reads(text string) bool {
	if hasRecency(text) {
		var err error
		if text, err = withRecent(text, &Referent{values: []string{"x"}}); err != nil {
			return false
		}
	}
	_, ok := parseOne(text)
	return ok
}

// parseOne reads a sentence of one clause, pronouns and all.
func parseOne(text string) (Intent, bool) {
	cs, err := Clauses(text)
	if err != nil || len(cs) != 1 {
		return Intent{}, false
	}
	return parseClause(cs[0].Text)
}

// refersBack reports whether a phrase of the intent names its element by a
// pronoun ("click it", "the first one"), which only the clause before says.
func (it Intent) refersBack() bool {
	for _, p := range []*Phrase{it.Target, it.To} {
		if p == nil {
			continue
		}
		if p.Quoted == "" && len(p.Scopes) == 0 && pronoun.MatchString(strings.Join(p.Words, " ")) {
			return true
		}
		for _, sc := range p.Scopes {
			if pronoun.MatchString(strings.ToLower(strings.Join(sc.Words, " "))) || pronoun.MatchString(strings.ToLower(sc.Text)) {
				return true
			}
		}
	}
	return false
}

var pronoun = regexp.MustCompile(`^(?:it|them|this|that|these|those|one|ones|this one|that one|the one|its|their|him|her)(?: again)?$`)

func parseClause(text string) (Intent, bool) {
	s := strings.TrimSpace(text)
	s = strings.TrimRight(s, ".!;")
	s = strings.Join(strings.Fields(s), " ")
	masked, quotes := mask(s)
	masked = strings.TrimSpace(masked)
	// "wait for the banner to go away", "wait until Done is shown": a
	// bounded wait for an element to be hidden or shown is the check that
	// it is, which waits as long as a check does.
	if m := waitRe.FindStringSubmatch(masked); m != nil {
		p := parsePhrase(m[1], quotes)
		if p.empty() || pronoun.MatchString(strings.ToLower(strings.TrimSpace(m[1]))) {
			return Intent{}, false
		}
		check := "appears"
		if goneRe.MatchString(m[2]) {
			check = "goes"
		}
		return Intent{Verb: "verify", Check: check, Target: p}, true
	}
	lead := verifyLeadRe.FindString(masked)
	body := strings.TrimSpace(masked[len(lead):])
	// "Check the newsletter box" is an action; "Check that …" and
	// sentences with "should" are checks.
	checking := lead != "" && !bareCheck.MatchString(lead)
	if !checking && checkWords.MatchString(body) {
		checking = true
	}
	if checking {
		for _, r := range verifications {
			if m := r.re.FindStringSubmatch(body); m != nil {
				if it, ok := r.build(m, quotes); ok {
					it.Verb = "verify"
					return it, onlyValues(it, quotes)
				}
			}
		}
		if lead != "" && !strings.EqualFold(strings.TrimSpace(lead), "check") {
			return Intent{}, false
		}
	}
	// "… three times", "… twice": the action is done that often, a click or
	// a key press only (typing a value twice is not a step people mean).
	repeat := 0
	if m := repeatRe.FindStringSubmatchIndex(masked); m != nil {
		word := strings.ToLower(masked[m[2]:m[3]])
		if repeat = repeatCount(word); repeat == 0 {
			return Intent{}, false
		}
		masked = strings.TrimSpace(masked[:m[0]])
	}
	for _, r := range rules {
		if m := r.re.FindStringSubmatch(masked); m != nil {
			if it, ok := r.build(m, quotes); ok && (it.Target == nil || !it.Target.empty() || it.Verb == "add" || it.Verb == "press") {
				if repeat > 0 {
					if it.Verb != "click" && it.Verb != "press" {
						return Intent{}, false
					}
					it.Repeat = repeat
				}
				return it, onlyValues(it, quotes)
			}
		}
	}
	return Intent{}, false
}

// waitRe is a wait for an element to go or to come, and goneRe the
// going.
var (
	waitRe = regexp.MustCompile(`(?i)^wait\s+(?:for|until|till)\s+(.+?)\s+(to\s+(?:go\s+away|disappear|vanish|close|be\s+(?:gone|hidden|closed|visible|shown|displayed)|appear|show(?:\s+up)?)|(?:goes\s+away|disappears|vanishes|closes|is\s+(?:gone|hidden|closed|visible|shown|displayed)|appears|shows\s+up))$`)
	goneRe = regexp.MustCompile(`(?i)away|disappear|vanish|close|gone|hidden`)
)

// repeatRe is a clause's trailing count of times.
var repeatRe = regexp.MustCompile(`(?i)\s+(once|twice|thrice|(?:\d+|two|three|four|five|six|seven|eight|nine|ten)\s+times)$`)

// maxRepeat bounds a repeated action: more is not a step people write.
const maxRepeat = 20

// repeatCount reads a count of times; 0 when it is none a step means.
func repeatCount(w string) int {
	words := map[string]int{"once": 1, "twice": 2, "thrice": 3, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
		"eight": 8, "nine": 9, "ten": 10}
	n, _ := strings.CutSuffix(w, " times")
	n = strings.TrimSpace(n)
	if v, ok := words[n]; ok {
		return v
	}
	v, err := strconv.Atoi(n)
	if err != nil || v < 1 || v > maxRepeat {
		return 0
	}
	return v
}

// onlyValues reports whether every value of the intent is a value: quoted,
// or unquoted words that hold nothing more of the sentence.
func onlyValues(it Intent, quotes []string) bool {
	for _, v := range it.Values {
		if slices.Contains(quotes, v) {
			continue
		}
		if !plainValue(v) || strings.ContainsAny(v, `"“”`) {
			return false
		}
	}
	return true
}

// rowButton is the delete or remove button of the row or item holding a
// text: "Delete "Leek"", "Remove Pear from the cart".
// formValues is a form's submission for purpose with the values m[1:],
// each quoted or written plainly.
func formValues(purpose string) func(m, q []string) (Intent, bool) {
	return func(m, q []string) (Intent, bool) {
		it := Intent{Verb: "submitform", Target: &Phrase{Words: []string{purpose}}}
		for _, s := range m[1:] {
			v, ok := itemName(s, q)
			if !ok {
				return Intent{}, false
			}
			it.Values = append(it.Values, v)
		}
		return it, true
	}
}

// oneValue is an add of the one value m[1]: quoted, or written plainly
// (no other element named in it).
func oneValue(m, q []string) (Intent, bool) {
	v, ok := itemName(m[1], q)
	return Intent{Verb: "add", Values: []string{v}}, ok
}

// itemName reads an item's name: quoted, or plain words that hold no
// other element or place.
func itemName(s string, q []string) (string, bool) {
	if v, ok := onlyQuote(s, q); ok {
		return v, v != ""
	}
	s = strings.TrimSpace(s)
	if s == "" || strings.Contains(s, "⟦") || !plainValue(s) {
		return "", false
	}
	return s, true
}

func rowButton(m, q []string) (Intent, bool) {
	return Intent{Verb: "click", Target: &Phrase{Words: []string{strings.ToLower(m[1])},
		Scopes: []Scope{{Kinds: itemKinds, Text: valueOf(m[2], q)}}}}, true
}

func target(verb string) func(m, q []string) (Intent, bool) {
	return func(m, q []string) (Intent, bool) {
		p := parsePhrase(m[1], q)
		return Intent{Verb: verb, Target: p}, !p.empty()
	}
}

func check(kind string) func(m, q []string) (Intent, bool) {
	return func(m, q []string) (Intent, bool) {
		p := parsePhrase(m[1], q)
		return Intent{Check: kind, Target: p}, !p.empty()
	}
}

func page(assert string) func(m, q []string) (Intent, bool) {
	return func(m, q []string) (Intent, bool) {
		return Intent{Check: assert, Values: []string{valueOf(m[1], q)}}, true
	}
}

// compare is a check of a value or text; the value must be quoted or a
// single token (a number, a price), so a sentence is never split wrongly.
func compare(kind string) func(m, q []string) (Intent, bool) {
	return func(m, q []string) (Intent, bool) {
		v, ok := onlyQuote(m[2], q)
		shown := false
		if !ok {
			w := strings.TrimSpace(m[2])
			if strings.Contains(w, "⟦") || w == "" {
				return Intent{}, false
			}
			// Several words unquoted: where the name ends and the value
			// begins is only sure when the page shows the value there.
			v, shown = w, strings.Contains(w, " ")
		}
		p := parsePhrase(m[1], q)
		return Intent{Check: kind, Target: p, Values: []string{v}, Shown: shown}, !p.empty()
	}
}

func count(where, n, noun int) func(m, q []string) (Intent, bool) {
	return func(m, q []string) (Intent, bool) {
		c, ok := number(m[n])
		if !ok {
			return Intent{}, false
		}
		p := parsePhrase(m[where], q)
		p.Role = nounRole(m[noun])
		return Intent{Check: "count", Target: p, Count: c}, len(p.Words) > 0 || p.Quoted != ""
	}
}

func order(m, q []string) (Intent, bool) {
	v := valuesOf(m[2], q)
	p := &Phrase{}
	if m[1] != "" {
		p = parsePhrase(m[1], q)
	}
	return Intent{Check: "order", Target: p, Values: v}, len(v) >= 2
}

// rowCheckbox is the checkbox of the row or item a phrase names ("the todo
// "Buy milk"", "Buy milk").
func rowCheckbox(s string, q []string) *Phrase {
	s = rowNoun.ReplaceAllString(strings.TrimSpace(s), "")
	text := valueOf(s, q)
	if text == "" {
		return &Phrase{}
	}
	return &Phrase{Role: "checkbox", Scopes: []Scope{{Kinds: itemKinds, Text: text}}}
}

var wordNumbers = map[string]int{"no": 0, "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}

func number(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	n, ok := wordNumbers[strings.ToLower(s)]
	return n, ok
}

// nounRole is the kind of element a counted noun is.
func nounRole(noun string) string {
	n := strings.ToLower(noun)
	switch {
	case strings.HasPrefix(n, "row"), strings.HasPrefix(n, "record"):
		return "row"
	case strings.HasPrefix(n, "option"):
		return "option"
	}
	return "item"
}

// keyName spells a key the way Playwright does.
func keyName(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	names := map[string]string{"enter": "Enter", "return": "Enter", "tab": "Tab", "escape": "Escape", "esc": "Escape", "space": "Space",
		"backspace": "Backspace", "delete": "Delete", "home": "Home", "end": "End", "up": "ArrowUp", "down": "ArrowDown",
		"left": "ArrowLeft", "right": "ArrowRight", "pageup": "PageUp", "page up": "PageUp", "pagedown": "PageDown", "page down": "PageDown"}
	if n, ok := names[k]; ok {
		return n
	}
	if strings.HasPrefix(k, "arrow") {
		d := strings.TrimSpace(strings.TrimPrefix(k, "arrow"))
		return "Arrow" + strings.ToUpper(d[:1]) + d[1:]
	}
	if strings.Contains(k, "+") {
		parts := strings.Split(k, "+")
		mods := map[string]string{"control": "Control", "ctrl": "Control", "shift": "Shift", "alt": "Alt", "meta": "Meta", "cmd": "Meta"}
		for i, p := range parts[:len(parts)-1] {
			parts[i] = mods[p]
		}
		last := parts[len(parts)-1]
		if len(last) == 1 {
			parts[len(parts)-1] = last
		}
		return strings.Join(parts, "+")
	}
	return strings.ToUpper(k[:1]) + k[1:]
}

func verbOnly(verb string) func(m, q []string) (Intent, bool) {
	return func([]string, []string) (Intent, bool) { return Intent{Verb: verb}, true }
}
