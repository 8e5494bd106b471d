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
	Resolved bool          // the tier took it
	Right    bool          // resolved to the element and action meant
	Got      string        // the mark of the element it resolved to
	Why      string        // why it went to the agent, or what was wrong
	Duration time.Duration // the resolution's time
}

// Wrong reports a resolution the agent should have had: another element
// or action than meant, or a guess where no single element is meant.
func (o Outcome) Wrong() bool { return o.Resolved && !o.Right }

// Measure resolves every corpus step on the pages served at base.
func Measure(ctx context.Context, s Session, base string) ([]Outcome, error) {
	var out []Outcome
	loaded := ""
	for _, c := range Corpus() {
		if c.Page != loaded {
			if err := s.Navigate(ctx, strings.TrimRight(base, "/")+"/"+c.Page); err != nil {
				return nil, err
			}
			loaded = c.Page
		}
		start := time.Now()
		res, err := lexical.Resolve(ctx, s, c.Step, lexical.Options{Wait: time.Millisecond})
		o := Outcome{Case: c, Duration: time.Since(start)}
		if err != nil {
			o.Why = err.Error()
			out = append(out, o)
			continue
		}
		o.Resolved = true
		o.Got, o.Why = judge(ctx, s, c, res.Commands)
		o.Right = o.Why == ""
		out = append(out, o)
	}
	return out, nil
}

// judge checks a resolution against the case: "" when it is right.
func judge(ctx context.Context, s Session, c Case, cmds []browser.Command) (string, string) {
	if c.Want == "" {
		return "", fmt.Sprintf("resolved to %s, but no single element is meant", describe(cmds))
	}
	var cmd *browser.Command
	for i := range cmds {
		if !cmds[i].Target.IsZero() {
			cmd = &cmds[i]
			break
		}
	}
	if cmd == nil {
		return "", "no command has a target"
	}
	if c.Action != "" && cmd.Action != c.Action {
		return "", fmt.Sprintf("action %s, want %s", cmd.Action, c.Action)
	}
	if c.Assert != "" && cmd.Assert != c.Assert {
		return "", fmt.Sprintf("check %s, want %s", cmd.Assert, c.Assert)
	}
	t := cmd.Target
	if c.Within {
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
	if !slices.Contains(strings.Split(c.Want, "|"), got) {
		return got, fmt.Sprintf("resolved to %q (%s), want %q", got, t, c.Want)
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
