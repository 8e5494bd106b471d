package lexical

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Referent is what the clauses before a clause named, for the words that
// point back at it: a pronoun ("Open the comment box and write hi in it",
// "untick the third one" after a step about checkboxes) or a recency
// phrase ("Delete the row you just created").
//
// Only the step being read, or while it has named nothing, the step
// before, is looked at; a pronoun with more than one candidate there (two
// elements named, a drag's two ends, an element named inside another) is
// never guessed: the clause goes to the agent. The zero value names
// nothing.
type Referent struct {
	targets []Phrase
	values  []string
	// valuesSpoilt means a clause gave several values: which one "just
	// created" means cannot be told.
	valuesSpoilt bool
	// lost means a clause named something the tier did not read: what a
	// pointer after it means cannot be told.
	lost bool
	// elementsLost means a clause acted on an element its words did not
	// name (the form's submit button, the page's new-item field): which
	// one "it" means cannot be told, though the values still can.
	elementsLost bool
	prior        *Referent
}

// NextStep is the referent the step after starts with: what this step
// named, and nothing from the steps before it.
func (r Referent) NextStep() Referent {
	own := Referent{targets: r.targets, values: r.values, valuesSpoilt: r.valuesSpoilt, lost: r.lost, elementsLost: r.elementsLost}
	return Referent{prior: &own}
}

// AfterText is the referent once a clause read by another tier (the
// strict grammar) has run: what the sentence names when this tier reads
// it too, and otherwise a referent no pointer can use.
func (r Referent) AfterText(text string) Referent {
	if it, ok := parseOne(text); ok && !it.refersBack() && !hasRecency(text) {
		return r.After(it)
	}
	next := r
	next.lost = true
	return next
}

// After is the referent once a clause resolved to it has run.
func (r Referent) After(it Intent) Referent {
	next := r
	next.targets = slices.Clone(r.targets)
	next.values = slices.Clone(r.values)
	for _, p := range []*Phrase{it.Target, it.To} {
		if p == nil || p.empty() || slices.ContainsFunc(next.targets, func(q Phrase) bool { return q.String() == p.String() }) {
			continue
		}
		next.targets = append(next.targets, clonePhrase(*p))
	}
	switch it.Verb {
	case "submit", "signout", "submitform", "add":
		next.elementsLost = true
	}
	switch it.Verb {
	case "fill", "add", "select", "set", "choose":
		switch len(it.Values) {
		case 0:
		case 1:
			if !slices.Contains(next.values, it.Values[0]) {
				next.values = append(next.values, it.Values[0])
			}
		default:
			next.valuesSpoilt = true
		}
	}
	return next
}

// named is the element and the value the referent holds for a pointer:
// the step's own when it named any, else the step before's.
func (r *Referent) named() (targets []Phrase, values []string, spoilt bool) {
	if r.lost {
		return nil, nil, true
	}
	targets, values, spoilt = r.targets, r.values, r.valuesSpoilt
	if r.elementsLost {
		targets = nil
	}
	if r.prior != nil && !r.prior.lost {
		if len(targets) == 0 && !r.elementsLost && !r.prior.elementsLost {
			targets = r.prior.targets
		}
		if len(values) == 0 && !spoilt {
			values, spoilt = r.prior.values, r.prior.valuesSpoilt
		}
	}
	return targets, values, spoilt
}

// errNoReferent says a pointer has no single candidate.
var errNoReferent = errors.New("what it points back at is not one thing the step or the one before names")

// recency finds "the row you just created", "the task I've just added",
// "the one we just added", "the newly added item".
var recency = regexp.MustCompile(`(?i)\bthe (?:(\w+) (?:that |which )?(?:you|i|we)(?:'ve| have)? just (?:created|added|made|entered|typed|saved)|newly (?:created|added) (\w+))\b`)

// hasRecency reports whether a clause names an element by what was just
// created.
func hasRecency(text string) bool {
	masked, _ := mask(text)
	return recency.MatchString(masked)
}

// withRecent writes a recency phrase as the value it points back at
// (`the "Pay rent" row`), which the phrase then matches like any name.
func withRecent(text string, ref *Referent) (string, error) {
	if !hasRecency(text) {
		return text, nil
	}
	_, values, spoilt := ref.named()
	if spoilt || len(values) != 1 {
		return "", fmt.Errorf("%w: the step or the one before gave %d values", errNoReferent, len(values))
	}
	v := values[0]
	if strings.ContainsAny(v, "\"“”") {
		return "", fmt.Errorf("%w: the value has quotes in it", errNoReferent)
	}
	masked, quotes := mask(text)
	out := recency.ReplaceAllStringFunc(masked, func(m string) string {
		sm := recency.FindStringSubmatch(m)
		noun := strings.ToLower(sm[1] + sm[2])
		if noun == "one" {
			return `"` + v + `"`
		}
		return `the "` + v + `" ` + noun
	})
	return restore(out, quotes, `"`), nil
}

// singular are the pronouns that stand for one element named before.
var singular = regexp.MustCompile(`^(?:it|this|that|this one|that one)(?: again)?$`)

// pointBack replaces the intent's pronoun phrases with what the referent
// names: "it" is the one element named, "the third one" the third of its
// kind. Anything else pointing back (them, its, a pronoun inside a
// container, two candidates) is errNoReferent.
func pointBack(it *Intent, ref *Referent) error {
	targets, _, _ := ref.named()
	for _, pp := range []**Phrase{&it.Target, &it.To} {
		p := *pp
		if p == nil {
			continue
		}
		for _, sc := range p.Scopes {
			if pronoun.MatchString(strings.ToLower(strings.Join(sc.Words, " "))) || pronoun.MatchString(strings.ToLower(sc.Text)) {
				return fmt.Errorf("%w: a pronoun names a container", errNoReferent)
			}
		}
		words := strings.Join(p.Words, " ")
		if p.Quoted != "" || len(p.Scopes) > 0 || !pronoun.MatchString(words) {
			continue
		}
		if len(targets) != 1 {
			return fmt.Errorf("%w: %d candidates", errNoReferent, len(targets))
		}
		was := targets[0]
		if len(was.Scopes) > 0 {
			// "Click Edit in the Apple row and delete it": the button or the row.
			return fmt.Errorf("%w: %s is named inside a container, which it may mean as well", errNoReferent, was.String())
		}
		switch {
		case p.Ordinal == 0 && p.Role == "" && singular.MatchString(words):
			np := clonePhrase(was)
			*pp = &np
		case p.Ordinal != 0 && strings.TrimSuffix(words, " again") == "one" && was.Role != "":
			np := clonePhrase(was)
			np.Ordinal = p.Ordinal
			*pp = &np
		default:
			return fmt.Errorf("%w: %q", errNoReferent, words)
		}
	}
	return nil
}

func clonePhrase(p Phrase) Phrase {
	p.Words = slices.Clone(p.Words)
	p.RoleWords = slices.Clone(p.RoleWords)
	p.Scopes = slices.Clone(p.Scopes)
	for i := range p.Scopes {
		p.Scopes[i].Kinds = slices.Clone(p.Scopes[i].Kinds)
		p.Scopes[i].Words = slices.Clone(p.Scopes[i].Words)
	}
	return p
}
