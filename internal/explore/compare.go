package explore

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// Prior is a finding of the app's previous exploration, as a new one is
// compared with it.
type Prior struct {
	Seq       int    `json:"seq"`
	Type      Type   `json:"type"`
	Title     string `json:"title"`
	URL       string `json:"url"`
	Signature string `json:"signature"`
	// Spec is its verified reproduction ("" when it had none), and
	// CheckLine the line of its check: what tells whether it was fixed.
	Spec      string `json:"-"`
	CheckLine int    `json:"-"`
	// Why says why it could not be rechecked.
	Why string `json:"why,omitempty"`
}

// Comparison is how an exploration's findings compare with the previous
// exploration of the same app: what is new and what is still open; of the
// previous findings this run did not report, which were fixed (their
// reproduction now passes), which are still there (it still fails at its
// check: missed by this run) and which could not be rechecked.
type Comparison struct {
	Previous     string  `json:"previous_job"`
	New          int     `json:"new"`
	StillOpen    int     `json:"still_open"`
	Fixed        []Prior `json:"fixed"`
	Missed       []Prior `json:"missed,omitempty"`
	NotRechecked []Prior `json:"not_rechecked,omitempty"`
	// gone are the previous findings not reported, before Recheck.
	gone []Prior
}

// Finding statuses against the previous exploration.
const (
	StatusNew       = "new"
	StatusStillOpen = "still_open"
)

// Compare marks each finding new or still open against the findings of
// the previous exploration (job previous; none when it is ""). Signatures
// fold what varies between runs (hosts, ports, ids), so the same bug
// matches. The previous findings not reported again wait for Recheck.
func Compare(res *Result, previous string, prior []Prior) {
	if previous == "" {
		return
	}
	c := &Comparison{Previous: previous, Fixed: []Prior{}}
	known := map[string]bool{}
	for _, p := range prior {
		known[p.Signature] = true
	}
	seen := map[string]bool{}
	for i := range res.Findings {
		f := &res.Findings[i]
		seen[f.Signature] = true
		if known[f.Signature] {
			f.Status = StatusStillOpen
			c.StillOpen++
		} else {
			f.Status = StatusNew
			c.New++
		}
	}
	for _, p := range prior {
		if !seen[p.Signature] {
			c.gone = append(c.gone, p)
		}
	}
	res.Comparison = c
	if len(c.gone) > 0 {
		c.NotRechecked = append(c.NotRechecked, c.gone...)
		for i := range c.NotRechecked {
			c.NotRechecked[i].Why = "not rechecked yet"
		}
	}
}

var describeTitle = regexp.MustCompile(`(?m)^test\.describe\('(?:[^'\\]|\\.)*'`)

// Recheck runs the verified reproductions of the previous findings this
// run did not report: one that passes now was fixed, one that still fails
// at its check is still there (this run missed it), and the others could
// not be told (a reproduction whose path no longer works says nothing of
// the bug). Only a cancelled context is an error.
func Recheck(ctx context.Context, run RunFunc, res *Result) error {
	c := res.Comparison
	if c == nil || len(c.gone) == 0 {
		return nil
	}
	c.NotRechecked = nil
	const header = "import { test, expect } from '@playwright/test';\n"
	var w strings.Builder
	w.WriteString(header)
	lines := 1
	check := map[int]int{} // the line of each check in the combined spec
	for _, p := range c.gone {
		if p.Spec == "" || p.CheckLine == 0 || !describeTitle.MatchString(p.Spec) || !strings.HasPrefix(p.Spec, header) {
			p.Why = "it had no verified reproduction"
			c.NotRechecked = append(c.NotRechecked, p)
			continue
		}
		body := strings.TrimPrefix(p.Spec, header)
		// Its own title, so its result is told apart whatever it was called.
		body = describeTitle.ReplaceAllLiteralString(body, fmt.Sprintf("test.describe('prior %d'", p.Seq))
		check[p.Seq] = lines + p.CheckLine - 1
		w.WriteString(body)
		lines += strings.Count(body, "\n")
	}
	if len(check) == 0 {
		return nil
	}
	results, err := run(ctx, w.String())
	if ctx.Err() != nil {
		return ctx.Err()
	}
	byTitle := resultsByTitle(results)
	for _, p := range c.gone {
		line, ok := check[p.Seq]
		if !ok {
			continue
		}
		t, ran := byTitle[fmt.Sprintf("prior %d reproduces", p.Seq)]
		switch {
		case !ran && err != nil:
			p.Why = "its reproduction could not run: " + clip(err.Error(), 200)
			c.NotRechecked = append(c.NotRechecked, p)
		case !ran:
			p.Why = "the runner did not report its reproduction"
			c.NotRechecked = append(c.NotRechecked, p)
		case t.Status == "passed":
			c.Fixed = append(c.Fixed, p)
		case t.Line == line:
			p.Why = "its reproduction still fails at its check"
			c.Missed = append(c.Missed, p)
		default:
			p.Why = fmt.Sprintf("its reproduction's path no longer works (line %d: %s)", t.Line-line+p.CheckLine, clip(t.Error, 160))
			c.NotRechecked = append(c.NotRechecked, p)
		}
	}
	c.gone = nil
	return nil
}
