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
//
// prior is what the step before named, for a pronoun or a recency phrase
// pointing back at it; when every clause ran here, what this step named is
// kept for the next (r.named).
func (r *run) autoStep(ctx context.Context, rep *StepReport, i int, st scenario.Step, prior lexical.Referent) error {
	clauses, err := lexical.Clauses(st.Text)
	if err != nil {
		return r.viaAgent(ctx, rep, i, st, r.secrets.redact(r.expand(err.Error())))
	}
	if len(clauses) > 1 {
		for _, c := range clauses {
			if _, ok := lexical.DialogAnswer(c.Text, c.Trail); !ok && !fastReads(c.Text) {
				return r.viaAgent(ctx, rep, i, st, fmt.Sprintf("the step has %d parts and no fast tier reads %q", len(clauses),
					r.secrets.redact(r.expand(c.Text))))
			}
		}
	}
	// toAgent hands the clauses from k on to the agent, saying what was
	// done without it.
	toAgent := func(k int, why string) error {
		if k == 0 {
			return r.viaAgent(ctx, rep, i, st, why)
		}
		rest := st
		rest.Text = joinClauses(clauses[k:])
		rep.Notes = append(rep.Notes, fmt.Sprintf("%q was done without a model; the agent took the rest", r.secrets.redact(r.expand(joinClauses(clauses[:k])))))
		return r.viaAgent(ctx, rep, i, rest, why)
	}
	ref := prior
	for k := 0; k < len(clauses); k++ {
		c := clauses[k]
		if _, ok := lexical.DialogAnswer(c.Text, c.Trail); ok {
			// Reached only when no action before it in the step can have
			// opened the dialog: by now any dialog was answered as Playwright
			// answers it.
			return toAgent(k, fmt.Sprintf("%q answers a native dialog, which is answered as the action that opens it runs; no action before it in the step opens one",
				r.secrets.redact(r.expand(c.Text))))
		}
		cmds, tier, named, why := r.fastClause(ctx, c.Text, c.Trail, ref)
		if why != "" {
			return toAgent(k, why)
		}
		ref = named
		if rep.Tier != TierLexical {
			rep.Tier = tier
		}
		// "Click Delete and OK the popup": the answer is given before the
		// action that opens the dialog, and holds only if it opened one.
		var answer *lexical.Clause
		if k+1 < len(clauses) {
			if v, ok := lexical.DialogAnswer(clauses[k+1].Text, clauses[k+1].Trail); ok {
				answer = &clauses[k+1]
				cmds = append([]browser.Command{{Action: browser.ActionDialog, Value: v}}, cmds...)
			}
		}
		dialogs := len(r.Page.Dialogs())
		from := len(rep.Commands)
		b := r.batch(ctx, rep, k, cmds, nil)
		for j := from; j < len(rep.Commands); j++ {
			rep.Commands[j].Words = r.secrets.redact(c.Text)
		}
		if answer != nil && len(rep.Commands) > from {
			rep.Commands[from].Words = r.secrets.redact(answer.Text)
		}
		if b.failed >= 0 {
			if r.Model == nil || cmds[b.failed].IsVerify() {
				// A check that fails is the step's verdict: the agent is never
				// asked to find something else that passes.
				rep.Status, rep.Error = StepFailed, b.err
				return nil
			}
			// An action the page would not take (an overlay over it, a
			// control that moved) is the agent's to work around, as it
			// would have been had no fast tier read the clause.
			if answer != nil {
				if b := r.batch(ctx, rep, k, []browser.Command{{Action: browser.ActionDialog, Value: "default"}}, nil); b.failed >= 0 {
					rep.Status, rep.Error = StepFailed, b.err
					return nil
				}
			}
			return toAgent(k, fmt.Sprintf("%q was resolved without a model, but %s", r.secrets.redact(r.expand(c.Text)), b.err))
		}
		if answer == nil {
			continue
		}
		if len(r.Page.Dialogs()) == dialogs {
			// No native dialog: the answer is taken back, and what the step
			// calls a dialog (a modal of the page's own?) is the agent's.
			if b := r.batch(ctx, rep, k, []browser.Command{{Action: browser.ActionDialog, Value: "default"}}, nil); b.failed >= 0 {
				rep.Status, rep.Error = StepFailed, b.err
				return nil
			}
			return toAgent(k+1, fmt.Sprintf("%q opened no native dialog for %q to answer", r.secrets.redact(r.expand(c.Text)),
				r.secrets.redact(r.expand(answer.Text))))
		}
		k++ // the dialog clause is done
	}
	r.named = ref
	return nil
}

// fastReads reports whether the strict grammar or the lexical tier reads a
// clause.
func fastReads(text string) bool {
	if Grammatical(text) {
		return true
	}
	return lexical.Reads(text)
}

// fastClause resolves one clause by the strict grammar or, failing that,
// the lexical tier; a non-empty why says why neither could.
// trail is the punctuation the sentence ended with, which a value written
// unquoted at the clause's end may own (lexical.Options.Trail).
// before is what the clauses before it named, for a pronoun or recency
// phrase pointing back; named is that once the clause has run.
func (r *run) fastClause(ctx context.Context, text, trail string, before lexical.Referent) (cmds []browser.Command, tier string, named lexical.Referent, why string) {
	cmds, why = r.resolveSentence(ctx, text)
	if why == "" {
		return cmds, TierDeterministic, before.AfterText(text), ""
	}
	res, err := r.lexical(ctx, text, trail, &before)
	if err == nil {
		return res.Commands, TierLexical, before.After(res.Intent), ""
	}
	if !errors.Is(err, lexical.ErrNotUnderstood) {
		why = r.secrets.redact(err.Error())
	}
	return nil, "", before, why
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
