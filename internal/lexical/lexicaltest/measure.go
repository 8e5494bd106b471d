package lexicaltest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/lexical"
)

// Session is the browser the corpus is measured in; *browser.Session
// implements it.
type Session interface {
	lexical.Page
	Navigate(ctx context.Context, url string) error
	Count(ctx context.Context, t browser.Target) (int, error)
	Read(ctx context.Context, t browser.Target, attr string) (string, *browser.Fingerprint, error)
}

// Outcome is how the tier took one corpus step.
type Outcome struct {
	Case     Case
	Clauses  int           // how many clauses the step was read as
	Resolved bool          // the tier took every clause
	Right    bool          // every clause resolved to the element, action and value meant
	Got      string        // the mark of the element the first clause resolved to
	Why      string        // why it went to the agent, or what was wrong
	Duration time.Duration // the resolution's time
	wrong    bool
}

// Wrong reports a move the agent should have made: a clause resolved to
// another element, action or value than meant, a guess where no single
// element is meant, or a sentence read as other clauses than it has.
func (o Outcome) Wrong() bool { return o.wrong }

// Measure resolves every corpus step on the pages served at base the way
// the fast tiers take a step: split into clauses, every clause read before
// any is resolved, each resolved in turn.
func Measure(ctx context.Context, s Session, base string, corpus []Case) ([]Outcome, error) {
	var out []Outcome
	loaded := ""
	for _, c := range corpus {
		if c.Page != loaded {
			if err := s.Navigate(ctx, strings.TrimRight(base, "/")+"/"+c.Page); err != nil {
				return nil, err
			}
			loaded = c.Page
		}
		start := time.Now()
		o := measure(ctx, s, c)
		o.Duration = time.Since(start)
		out = append(out, o)
	}
	return out, nil
}

func measure(ctx context.Context, s Session, c Case) Outcome {
	o := Outcome{Case: c}
	clauses, err := lexical.Clauses(c.Step)
	if err != nil {
		o.Why = err.Error()
		return o
	}
	o.Clauses = len(clauses)
	if len(clauses) > 1 {
		for _, cl := range clauses {
			if _, ok := lexical.DialogAnswer(cl.Text, cl.Trail); !ok && !lexical.Reads(cl.Text) {
				o.Why = fmt.Sprintf("the clause %q is not one the tier reads", cl.Text)
				return o
			}
		}
	}
	parts := c.Parts()
	var ref lexical.Referent
	if c.After != "" {
		// What the step before named, as the orchestrator keeps it.
		before, err := lexical.Resolve(ctx, s, c.After, lexical.Options{Wait: time.Millisecond})
		if err != nil {
			o.Why = fmt.Sprintf("the step before: %v", err)
			return o
		}
		ref = ref.After(before.Intent).NextStep()
	}
	for k, cl := range clauses {
		if v, ok := lexical.DialogAnswer(cl.Text, cl.Trail); ok && k > 0 {
			// The answer to the dialog the clause before opens, as the
			// orchestrator gives it: a command with no element.
			if k >= len(parts) {
				o.wrong, o.Why = true, fmt.Sprintf("read %d clauses, the step has %d", len(clauses), len(parts))
				return o
			}
			if _, why := judge(ctx, s, parts[k], []browser.Command{{Action: browser.ActionDialog, Value: v}}); why != "" {
				o.wrong, o.Why = true, fmt.Sprintf("clause %q: %s", cl.Text, why)
				return o
			}
			continue
		}
		res, err := lexical.Resolve(ctx, s, cl.Text, lexical.Options{Wait: time.Millisecond, Trail: cl.Trail, Before: &ref})
		if err != nil {
			o.Why = err.Error()
			return o
		}
		ref = ref.After(res.Intent)
		if k >= len(parts) {
			o.wrong, o.Why = true, fmt.Sprintf("read %d clauses, the step has %d", len(clauses), len(parts))
			return o
		}
		got, why := judge(ctx, s, parts[k], res.Commands)
		if k == 0 {
			o.Got = got
		}
		if why != "" {
			o.wrong, o.Why = true, fmt.Sprintf("clause %q: %s", cl.Text, why)
			return o
		}
	}
	o.Resolved = true
	if len(clauses) < len(parts) {
		o.wrong, o.Why = true, fmt.Sprintf("read as %d clauses, the step has %d", len(clauses), len(parts))
		return o
	}
	o.Right = true
	return o
}

// judge checks a clause's resolution against its meaning: "" when it is right.
func judge(ctx context.Context, s Session, p Part, cmds []browser.Command) (string, string) {
	if p.ForAgent() {
		return "", fmt.Sprintf("resolved to %s, but no single element is meant", describe(cmds))
	}
	var cmd *browser.Command
	for i := range cmds {
		if p.Want == "" || !cmds[i].Target.IsZero() {
			cmd = &cmds[i]
			break
		}
	}
	if cmd == nil {
		return "", "no command has a target"
	}
	if p.Action != "" && cmd.Action != p.Action {
		return "", fmt.Sprintf("action %s, want %s", cmd.Action, p.Action)
	}
	if p.Assert != "" && cmd.Assert != p.Assert {
		return "", fmt.Sprintf("check %s, want %s", cmd.Assert, p.Assert)
	}
	if p.Value != nil && cmd.Value != *p.Value {
		return "", fmt.Sprintf("value %q, want %q", cmd.Value, *p.Value)
	}
	if p.Want == "" {
		if !cmd.Target.IsZero() {
			return "", fmt.Sprintf("%s has a target, none is meant", cmd.Target)
		}
		return "", ""
	}
	t := cmd.Target
	if p.Within {
		if t.Within == nil {
			return "", "the target is not scoped to a container"
		}
		t = *t.Within
	}
	n, err := s.Count(ctx, t)
	if err != nil || n != 1 {
		return "", fmt.Sprintf("the locator %s matches %d elements (%v)", t, n, err)
	}
	got, _, err := s.Read(ctx, t, "data-corpus")
	if err != nil {
		return "", err.Error()
	}
	if !slices.Contains(strings.Split(p.Want, "|"), got) {
		return got, fmt.Sprintf("resolved to %q (%s), want %q", got, t, p.Want)
	}
	return got, ""
}

func describe(cmds []browser.Command) string {
	var parts []string
	for _, c := range cmds {
		parts = append(parts, c.Describe()+" "+c.Target.String())
	}
	return strings.Join(parts, "; ")
}
