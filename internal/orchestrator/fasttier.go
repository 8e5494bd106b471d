package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/lexical"
	"github.com/webpilot/webpilot/internal/scenario"
)

// autoStep takes a plain sentence through the tiers that need no model
// when they can account for all of it, and to the agent otherwise.
//
// The sentence is split into its clauses first ("Fill the search with
// hello and press Enter" is two): each clause must be one a fast tier
// reads before any runs, so a clause the tiers do not read is never
// swallowed into another's value or name. The clauses run in order, each
// resolved on the page the one before left; a later clause that cannot be
// resolved goes to the agent with what is left of the sentence.
func (r *run) autoStep(ctx context.Context, rep *StepReport, i int, st scenario.Step) error {
	clauses, err := lexical.Clauses(st.Text)
	if err != nil {
		return r.viaAgent(ctx, rep, i, st, r.secrets.redact(r.expand(err.Error())))
	}
	if len(clauses) > 1 {
		for _, c := range clauses {
			if !fastReads(c.Text) {
				return r.viaAgent(ctx, rep, i, st, fmt.Sprintf("the step has %d parts and no fast tier reads %q", len(clauses),
					r.secrets.redact(r.expand(c.Text))))
			}
		}
	}
	for k, c := range clauses {
		cmds, tier, why := r.fastClause(ctx, c.Text, c.Trail)
		if why != "" {
			if k == 0 {
				return r.viaAgent(ctx, rep, i, st, why)
			}
			rest := st
			rest.Text = joinClauses(clauses[k:])
			rep.Notes = append(rep.Notes, fmt.Sprintf("%q was done without a model; the agent took the rest", r.secrets.redact(r.expand(joinClauses(clauses[:k])))))
			return r.viaAgent(ctx, rep, i, rest, why)
		}
		if rep.Tier != TierLexical {
			rep.Tier = tier
		}
		from := len(rep.Commands)
		b := r.batch(ctx, rep, k, cmds, nil)
		for j := from; j < len(rep.Commands); j++ {
			rep.Commands[j].Words = r.secrets.redact(c.Text)
		}
		if b.failed >= 0 {
			rep.Status, rep.Error = StepFailed, b.err
			return nil
		}
	}
	return nil
}

// fastReads reports whether the strict grammar or the lexical tier reads a
// clause.
func fastReads(text string) bool {
	if Grammatical(text) {
		return true
	}
	_, ok := lexical.Parse(text)
	return ok
}

// fastClause resolves one clause by the strict grammar or, failing that,
// the lexical tier; a non-empty why says why neither could.
// trail is the punctuation the sentence ended with, which a value written
// unquoted at the clause's end may own (lexical.Options.Trail).
func (r *run) fastClause(ctx context.Context, text, trail string) ([]browser.Command, string, string) {
	cmds, why := r.resolveSentence(ctx, text)
	if why == "" {
		return cmds, TierDeterministic, ""
	}
	cmds, err := r.lexical(ctx, text, trail)
	if err == nil {
		return cmds, TierLexical, ""
	}
	if !errors.Is(err, lexical.ErrNotUnderstood) {
		why = r.secrets.redact(err.Error())
	}
	return nil, "", why
}

// joinClauses writes clauses back as one sentence.
func joinClauses(cs []lexical.Clause) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			j := c.Joiner
			if j != "," && j != ";" {
				j = " " + j
			}
			b.WriteString(j + " ")
		}
		b.WriteString(c.Text)
	}
	return b.String()
}
