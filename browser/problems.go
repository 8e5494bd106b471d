package browser

import (
	"fmt"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Problem is something the app did wrong that a person watching the page
// would call a bug: an uncaught exception, a console error, a server error
// answering a request. Repair reports them as evidence of an app
// regression; exploration turns them into findings.
type Problem struct {
	Kind ProblemKind `json:"kind"`
	Text string      `json:"text"`
	URL  string      `json:"url,omitempty"`
	At   time.Time   `json:"at"`
}

// ProblemKind names a class of Problem.
type ProblemKind string

// Problem kinds.
const (
	ProblemPageError    ProblemKind = "page_error"    // an uncaught exception
	ProblemConsoleError ProblemKind = "console_error" // console.error
	ProblemServerError  ProblemKind = "server_error"  // a response with status 500 or above
)

// maxProblems bounds what a page that logs in a loop can make a session keep.
const maxProblems = 200

// watchProblems records the context's problems, on every page it opens.
func (s *Session) watchProblems(bctx playwright.BrowserContext) {
	add := func(p Problem) {
		p.At = time.Now()
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.problems) < maxProblems {
			s.problems = append(s.problems, p)
		}
	}
	bctx.OnWebError(func(e playwright.WebError) {
		add(Problem{Kind: ProblemPageError, Text: truncate(fmt.Sprint(e.Error()), 300)})
	})
	bctx.OnConsole(func(m playwright.ConsoleMessage) {
		if m.Type() != "error" {
			return
		}
		p := Problem{Kind: ProblemConsoleError, Text: truncate(m.Text(), 300)}
		if loc := m.Location(); loc != nil {
			p.URL = loc.URL
		}
		add(p)
	})
	bctx.OnResponse(func(r playwright.Response) {
		if r.Status() >= 500 {
			add(Problem{Kind: ProblemServerError, Text: fmt.Sprintf("%d %s", r.Status(), r.StatusText()), URL: r.URL()})
		}
	})
}

// Problems lists the problems seen since t, oldest first.
func (s *Session) Problems(since time.Time) []Problem {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Problem
	for _, p := range s.problems {
		if !p.At.Before(since) {
			out = append(out, p)
		}
	}
	return out
}
