package lexical

import (
	"fmt"
	"regexp"
	"strings"
)

// Clause is one part of a step sentence: what one command, or a few that
// belong together (a search is a fill and an Enter), carries out.
type Clause struct {
	// Text is the clause as written, quotes and all, with the Gherkin
	// keyword and the subject taken off ("When I click Login" is "click
	// Login").
	Text string
	// Joiner is the connective that joined it to the clause before ("and",
	// ", then", ";"); empty for the first.
	Joiner string
	// Trail is the punctuation the sentence ended with, taken off its
	// last clause ("!" of "… with SuperSecretPassword!"): a value written
	// unquoted at the end may own it (Options.Trail).
	Trail string
}

// clauseVerbs are the words a clause the tiers read starts with: the
// verbs of the action rules and the leads of checks. A sentence is split
// at "and", "then", a comma or a semicolon only before one of them (or
// before an expected result, see splitAt), so "Tom and Jerry" stays one
// value and "Save and Continue" one name.
var clauseVerbs = []string{
	"click", "tap", "hit", "press", "push", "double-click", "double click", "dblclick", "right-click", "right click",
	"context-click", "hover", "mouse over", "move", "fill", "populate", "type", "enter", "input", "write", "put", "key in",
	"insert", "set", "change", "update", "clear", "empty", "erase", "wipe", "select", "choose", "pick", "opt for",
	"mark", "tick", "untick", "uncheck", "un-check", "enable", "disable", "turn on", "turn off", "switch on",
	"switch off", "toggle", "deselect", "upload", "attach", "drag", "scroll", "go to", "go back", "go forward",
	"open", "navigate", "visit", "follow", "switch to", "add", "delete", "remove", "search", "sort", "reload",
	"refresh", "wait", "submit", "log in", "login", "sign in", "log out", "logout", "sign out", "find", "close",
	"dismiss", "accept", "confirm", "ok", "okay", "decline", "reject", "refuse", "approve", "answer", "save", "copy", "paste", "focus", "expand", "collapse", "zoom", "download",
	"verify", "check", "assert", "ensure", "expect", "validate", "make sure", "see", "observe", "look",
}

var (
	// A verb, with the subject a Gherkin step or a manual test case puts
	// before it ("I click", "the user clicks", "we see").
	clauseStart = regexp.MustCompile(`(?i)^(?:(?:i|we|you|they|he|she|the user|user|the customer|the visitor|the admin)\s+(?:then\s+)?)?(?:` +
		alternation(clauseVerbs) + `)(?:s|es|ed)?\b`)
	// Connectives a sentence is split at, outside quotes: strong ones
	// always join clauses, weak ones only before a clause start.
	connective = regexp.MustCompile(`(?i)\s*;\s*|\.\s+|\s+[—–-]+\s+|,?\s+and then\s+|,?\s+then\s+|,?\s+after that,?\s+|,?\s+afterwards,?\s+|,?\s+and also\s+|,\s*and\s+|\s+and\s+|,\s*`)
	// A Gherkin keyword opening a step.
	gherkinKeyword = regexp.MustCompile(`(?i)^(?:given|when|then|and|but|\*)\s+`)
	// The subject before a verb, which the rules do not read.
	subject = regexp.MustCompile(`(?i)^(?:i|we|you|they|the user|user|the customer|the visitor|the admin)\s+(?:then\s+)?`)
	// Modal or other verbs a subject brings that change the meaning ("I
	// can click", "the user tries to submit") are left for the agent.
	subjectOnly = regexp.MustCompile(`(?i)^(?:i|we|you|they|the user|user|the customer|the visitor|the admin)\s+(?:should|must|can|can't|cannot|could|will|may|might|am|are|is|have|has|try|tries|want|wants|need|needs|do|does|don't|doesn't)\b`)
	// A condition: what happens depends on what the page shows.
	conditional = regexp.MustCompile(`(?i)^(?:if|unless|in case|only if|whenever|once|while|until|as soon as)\b|,\s*(?:if|unless|otherwise|else|or else)\b|\s(?:if|unless|otherwise)\s`)
	// "When the page loads, click …": a when-clause that is a condition,
	// not a Gherkin keyword before the subject.
	whenCondition = regexp.MustCompile(`(?i)^(?:when|after|before)\s+(?:the|a|an|it|this|that|there|[a-z]+ing)\b.*,`)
	// An expected result, which a weak connective may also introduce:
	// "Click Login and the dashboard is shown".
	expectedResult = regexp.MustCompile(`(?i)\b(?:should|must)\b|\b(?:is|are)\s+(?:now\s+)?(?:visible|shown|displayed|hidden|gone|checked|unchecked|disabled|enabled|empty|selected|open|opened|closed|updated|removed|added)$|\b(?:appears|disappears|is displayed|shows up|opens|closes)$|\b(?:has|have|shows|lists|contains)\s+(?:exactly\s+)?(?:\d+|no|zero|one|two|three|four|five|six|seven|eight|nine|ten)\s+\w+$`)
)

func alternation(ws []string) string {
	qs := make([]string, len(ws))
	for i, w := range ws {
		qs[i] = regexp.QuoteMeta(w)
	}
	return strings.Join(qs, "|")
}

// Clauses splits a step sentence into the clauses it is made of: "Fill the
// search with hello and press Enter" is two, "Click Login, then verify
// the dashboard is shown" two, "Type Tom and Jerry into the title" one.
// Quoted text is never split. A sentence whose meaning depends on a
// condition ("If a cookie banner appears, accept it") is the agent's: the
// error wraps ErrNotUnderstood and says why.
func Clauses(text string) ([]Clause, error) {
	s := strings.Join(strings.Fields(strings.TrimSpace(text)), " ")
	trimmed := strings.TrimRight(s, ".!;")
	trail := s[len(trimmed):]
	s = trimmed
	masked, quotes := mask(s)
	if whenCondition.MatchString(masked) || conditional.MatchString(gherkinKeyword.ReplaceAllString(masked, "")) {
		return nil, fmt.Errorf("%w: %q depends on a condition, which is the agent's to judge", ErrNotUnderstood, text)
	}
	var out []Clause
	joiner, rest := "", masked
	for rest != "" {
		verb := gappable(rest)
		at, end, j, gapped := nextSplit(rest, verb)
		if at < 0 {
			out = append(out, clause(rest, joiner, quotes))
			break
		}
		out = append(out, clause(rest[:at], joiner, quotes))
		joiner, rest = j, rest[end:]
		if gapped {
			rest = verb + " " + rest
		}
	}
	for _, c := range out {
		if strings.TrimSpace(c.Text) == "" {
			return nil, fmt.Errorf("%w: %q has an empty part", ErrNotUnderstood, text)
		}
	}
	out[len(out)-1].Trail = trail
	return out, nil
}

// nextSplit finds where the first clause of s ends: at is where its
// connective starts, end where the next clause does; at is -1 when s is
// one clause.
//
// verb is the verb of the clause s starts with when a clause after it may
// leave it out ("Fill the first name with Ada and the last name with
// Lovelace"); gapped says the next clause does, and takes it.
func nextSplit(s, verb string) (at, end int, joiner string, gapped bool) {
	for _, m := range connective.FindAllStringIndex(s, -1) {
		if m[0] == 0 || m[1] >= len(s) {
			continue
		}
		j := strings.ToLower(strings.TrimSpace(s[m[0]:m[1]]))
		next := s[m[1]:]
		strong := j == ";" || strings.Contains(j, "then") || strings.Contains(j, "after") || strings.Contains(j, "also")
		switch {
		case clauseStart.MatchString(gherkinKeyword.ReplaceAllString(next, "")):
		case strong && next != "":
		case expectedResult.MatchString(untilNext(next)):
		case verb != "" && (j == "and" || j == ",and" || j == ", and") && gap(verb, s[:m[0]], untilNext(next)):
			gapped = true
		default:
			continue
		}
		if j == "" {
			j = ","
		}
		return m[0], m[1], j, gapped
	}
	return -1, -1, "", false
}

var (
	fillWith = regexp.MustCompile(`(?i)^(fill(?: in| out)?|populate)\s`)
	typeInto = regexp.MustCompile(`(?i)^(type|enter|input|write|put|key in|insert)\s`)
	setTo    = regexp.MustCompile(`(?i)^(set|change|update)\s`)
	withGap  = regexp.MustCompile(`(?i)^(?:the |my |your )?[\w ]+? with (?:⟦\d+⟧|\S+)$`)
	toGap    = regexp.MustCompile(`(?i)^(?:the |my |your )?[\w -]+? to (?:⟦\d+⟧|\S+)$`)
	intoGap  = regexp.MustCompile(`(?i)^(?:⟦\d+⟧|\S+) (?:in|into|as) (?:the |my |your )?[\w ]+$`)
)

// gappable is the verb a later clause may leave out after the clause s
// starts with, if any.
func gappable(s string) string {
	s = subject.ReplaceAllString(gherkinKeyword.ReplaceAllString(s, ""), "")
	if m := fillWith.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	if m := typeInto.FindStringSubmatch(s); m != nil {
		return deconjugate(m[1])
	}
	if m := setTo.FindStringSubmatch(s); m != nil {
		return deconjugate(m[1])
	}
	return ""
}

// gap reports whether next is a clause that left verb out: it has the
// shape of the clause before it (prev), which is whole ("Type Tom and
// Jerry into the name" is one clause, "Type Ada into the first name and
// Lovelace into the last name" two).
func gap(verb, prev, next string) bool {
	if fillWith.MatchString(verb + " ") {
		return withGap.MatchString(next) && withWord.MatchString(prev)
	}
	if setTo.MatchString(verb + " ") {
		// "Set adults to 1 and children to 2".
		return toGap.MatchString(next) && toWord.MatchString(prev)
	}
	return intoGap.MatchString(next) && intoWord.MatchString(prev)
}

var (
	withWord = regexp.MustCompile(`(?i)\swith\s`)
	toWord   = regexp.MustCompile(`(?i)\sto\s`)
	intoWord = regexp.MustCompile(`(?i)\s(?:in|into|as)\s`)
)

// untilNext is s up to its next connective.
func untilNext(s string) string {
	if m := connective.FindStringIndex(s); m != nil && m[0] > 0 {
		return s[:m[0]]
	}
	return s
}

// clause unmasks a part and takes off the Gherkin keyword and the subject.
func clause(masked, joiner string, quotes []string) Clause {
	p := strings.TrimSpace(gherkinKeyword.ReplaceAllString(strings.TrimSpace(masked), ""))
	if !subjectOnly.MatchString(p) {
		if m := subject.FindString(p); m != "" && clauseStart.MatchString(p) {
			p = deconjugate(p[len(m):])
		}
	}
	return Clause{Text: restore(p, quotes, `"`), Joiner: joiner}
}

// deconjugate turns a clause's third-person verb into the imperative the
// rules read: "clicks" is "click", "presses" "press".
func deconjugate(p string) string {
	verb, rest, _ := strings.Cut(p, " ")
	lower := strings.ToLower(verb)
	for _, v := range clauseVerbs {
		if lower == v || strings.Contains(v, " ") {
			continue
		}
		if lower == v+"s" || lower == v+"es" {
			return verb[:len(v)] + " " + rest
		}
	}
	return p
}
