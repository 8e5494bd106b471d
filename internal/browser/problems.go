package browser

import (
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// Request problems: the request's method, its status (0: none came
	// back), its resource type ("document" is a page load) and how long
	// the response took.
	Method   string        `json:"method,omitempty"`
	Status   int           `json:"status,omitempty"`
	Resource string        `json:"resource,omitempty"`
	Duration time.Duration `json:"duration_ns,omitempty"`
}

// ProblemKind names a class of Problem.
type ProblemKind string

// Problem kinds.
const (
	ProblemPageError    ProblemKind = "page_error"    // an uncaught exception
	ProblemConsoleError ProblemKind = "console_error" // console.error
	ProblemServerError  ProblemKind = "server_error"  // a response with status 500 or above
	// Seen only by Detected: not errors of the app's code as such, but
	// what an exploration reports.
	ProblemClientError   ProblemKind = "client_error"   // a response with status 400-499
	ProblemRequestFailed ProblemKind = "request_failed" // no response: refused, reset, unreachable
	ProblemSlowResponse  ProblemKind = "slow_response"  // a response slower than SessionOptions.SlowResponse
)

// appError reports whether the kind is an error of the app's code, which
// a replay takes as evidence of a regression.
func (k ProblemKind) appError() bool {
	return k == ProblemPageError || k == ProblemConsoleError || k == ProblemServerError
}

// maxProblems bounds what a page that logs in a loop can make a session keep.
const maxProblems = 500

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
		add(Problem{Kind: ProblemPageError, Text: truncate(exceptionText(e.Error()), 300)})
	})
	bctx.OnConsole(func(m playwright.ConsoleMessage) {
		if m.Type() != "error" || guardsOwn(m.Text()) {
			return
		}
		p := Problem{Kind: ProblemConsoleError, Text: truncate(m.Text(), 300)}
		if loc := m.Location(); loc != nil {
			p.URL = loc.URL
		}
		add(p)
	})
	started := func(r playwright.Request) (time.Time, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		t, ok := s.reqStart[r]
		delete(s.reqStart, r)
		return t, ok
	}
	bctx.OnRequest(func(r playwright.Request) {
		s.mu.Lock()
		if len(s.reqStart) < 10000 {
			s.reqStart[r] = time.Now()
		}
		s.mu.Unlock()
	})
	bctx.OnResponse(func(r playwright.Response) {
		req := r.Request()
		t0, ok := started(req)
		p := Problem{Text: fmt.Sprintf("%d %s", r.Status(), r.StatusText()), URL: r.URL(), Method: req.Method(),
			Status: r.Status(), Resource: req.ResourceType()}
		if ok {
			p.Duration = time.Since(t0)
		}
		switch {
		case r.Status() >= 500:
			p.Kind = ProblemServerError
		case r.Status() >= 400:
			p.Kind = ProblemClientError
		case s.slow > 0 && p.Duration > s.slow:
			p.Kind, p.Text = ProblemSlowResponse, fmt.Sprintf("answered in %d ms", p.Duration.Milliseconds())
		default:
			return
		}
		add(p)
	})
	bctx.OnRequestFailed(func(r playwright.Request) {
		started(r)
		reason := ""
		if err := r.Failure(); err != nil {
			reason = err.Error()
		}
		// A navigation that replaced a load, or a request the guard refused,
		// is not the app failing.
		if strings.Contains(reason, "ERR_ABORTED") || slices.ContainsFunc(guardRefusals, func(code string) bool {
			return strings.Contains(reason, strings.TrimPrefix(code, "net::"))
		}) {
			return
		}
		add(Problem{Kind: ProblemRequestFailed, Text: truncate(reason, 200), URL: r.URL(), Method: r.Method(), Resource: r.ResourceType()})
	})
}

// guardRefusals are the network errors the browser reports for what the
// egress guard refused: the request router's abort, the proxy's refused
// tunnel. They are listed as refusals (Denied), never as the app's errors.
var guardRefusals = []string{"net::ERR_BLOCKED_BY_CLIENT", "net::ERR_TUNNEL_CONNECTION_FAILED"}

// guardsOwn reports whether a console error is the browser telling of a
// resource the guard refused ("Failed to load resource: net::…").
func guardsOwn(text string) bool {
	if !strings.HasPrefix(text, "Failed to load resource") {
		return false
	}
	for _, code := range guardRefusals {
		if strings.Contains(text, code) {
			return true
		}
	}
	return false
}

// Problems lists the app's errors (exceptions, console errors, 5xx) seen
// since t, oldest first.
func (s *Session) Problems(since time.Time) []Problem {
	var out []Problem
	for _, p := range s.Detected(since) {
		if p.Kind.appError() {
			out = append(out, p)
		}
	}
	return out
}

// Detected lists everything the session's detectors saw since t, oldest
// first: Problems and also 4xx responses, failed requests and slow ones.
func (s *Session) Detected(since time.Time) []Problem {
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

// exceptionText is an uncaught exception as the page's console shows it:
// "TypeError: Cannot read properties of undefined".
func exceptionText(err error) string {
	var pe *playwright.Error
	if errors.As(err, &pe) {
		if pe.Name != "" {
			return pe.Name + ": " + pe.Message
		}
		return pe.Message
	}
	return strings.TrimPrefix(fmt.Sprint(err), "playwright: ")
}
