package explore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// Type is a kind of finding.
type Type string

// Finding types. All but functional come from detectors that never ask
// the model.
const (
	TypePageError     Type = "page_error"     // an uncaught exception
	TypeConsoleError  Type = "console_error"  // console.error
	TypeFailedRequest Type = "failed_request" // a request of the app answered >= 400 or failed
	TypeErrorPage     Type = "error_page"     // a page load answered >= 400
	TypeBrokenLink    Type = "broken_link"    // a same-host link whose target answers >= 400
	TypeDeadClick     Type = "dead_click"     // a click with no effect at all
	TypeSlowResponse  Type = "slow_response"  // a request slower than the threshold
	TypeAccessibility Type = "accessibility"  // an axe-core WCAG 2 violation
	TypeFunctional    Type = "functional"     // the model's claim, borne out by a failing check
)

// Types lists every finding type.
var Types = []Type{TypePageError, TypeConsoleError, TypeFailedRequest, TypeErrorPage, TypeBrokenLink, TypeDeadClick,
	TypeSlowResponse, TypeAccessibility, TypeFunctional}

// Severity ranks a finding.
type Severity string

// Severities.
const (
	SeverityCritical Severity = "critical"
	SeverityMajor    Severity = "major"
	SeverityMinor    Severity = "minor"
)

// Confidence says how sure a finding is.
type Confidence string

// Confidences.
const (
	// ConfidenceConfirmed: its reproduction fails at its check under
	// @playwright/test.
	ConfidenceConfirmed Confidence = "confirmed"
	// ConfidenceObserved: a detector saw it; no reproduction has run.
	ConfidenceObserved Confidence = "observed"
	// ConfidenceUnconfirmed: its reproduction did not show it, or could
	// not run; the reproduction's detail says why.
	ConfidenceUnconfirmed Confidence = "unconfirmed"
	// ConfidenceIntermittent: its reproduction shows it some of the
	// times it is replayed (Reproduction.Rate).
	ConfidenceIntermittent Confidence = "intermittent"
)

// Finding is one distinct bug.
type Finding struct {
	Seq        int        `json:"seq"`
	Type       Type       `json:"type"`
	Severity   Severity   `json:"severity"`
	Confidence Confidence `json:"confidence"`
	// Status is how it compares with the previous exploration of the app
	// (StatusNew, StatusStillOpen; empty when there was none).
	Status    string   `json:"status,omitempty"`
	Title     string   `json:"title"`
	URL       string   `json:"url"`
	State     string   `json:"state"`
	Signature string   `json:"signature"`
	Evidence  Evidence `json:"evidence"`
	// Path is the shortest action path from the start URL to the finding
	// (its last entry is the action that showed it, for action findings).
	Path []orchestrator.ManifestEntry `json:"path"`
	// Trace is how many entries of the exploration's trace led here: the
	// reproduction falls back on them when the short path does not show
	// the bug.
	Trace int `json:"trace"`
	// Tail is how many last entries of Path follow the trace (a link
	// checked but not clicked by the exploration).
	Tail int `json:"tail,omitempty"`
	// Base is how many first entries of Path are the shortest path to its
	// state, and Trigger how many last ones show the bug (the action, the
	// link's click): together, the shortest reproduction tried first.
	Base    int `json:"base"`
	Trigger int `json:"trigger,omitempty"`
	// Check is what the reproduction asserts.
	Check        Check         `json:"check"`
	Reproduction *Reproduction `json:"reproduction,omitempty"`
}

// Evidence is what a finding was seen with.
type Evidence struct {
	Message    string   `json:"message,omitempty"`
	Request    *Request `json:"request,omitempty"`
	Screenshot string   `json:"screenshot,omitempty"` // artifact name
	// NoScreenshot says why no picture was taken (one could have shown a
	// secret where it cannot be masked).
	NoScreenshot string            `json:"no_screenshot,omitempty"`
	Delta        string            `json:"delta,omitempty"`
	Expected     string            `json:"expected,omitempty"`
	Observed     string            `json:"observed,omitempty"`
	Element      string            `json:"element,omitempty"`
	Rule         string            `json:"rule,omitempty"`
	HelpURL      string            `json:"help_url,omitempty"`
	Nodes        []browser.AxeNode `json:"nodes,omitempty"`
	Action       string            `json:"action,omitempty"`
	// Places are the pages a site-wide finding (an accessibility rule)
	// was seen on, with how many elements broke it there.
	Places []Place `json:"places,omitempty"`
}

// Place is one page a site-wide finding was seen on.
type Place struct {
	URL      string `json:"url"`
	Elements int    `json:"elements"`
}

// Request is a request's part of the evidence.
type Request struct {
	Method     string `json:"method"`
	URL        string `json:"url"`
	Status     int    `json:"status,omitempty"`
	Failure    string `json:"failure,omitempty"`
	Resource   string `json:"resource,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
}

// CheckKind is the assertion a reproduction ends with.
type CheckKind string

// Check kinds.
const (
	CheckNoPageError    CheckKind = "no_page_error"
	CheckNoConsoleError CheckKind = "no_console_error"
	CheckNoBadResponse  CheckKind = "no_failed_response"
	CheckNoSlowResponse CheckKind = "no_slow_response"
	CheckEffect         CheckKind = "click_has_effect"
	CheckAxeRule        CheckKind = "no_axe_violation"
	CheckVerify         CheckKind = "verify"
)

// Check is the assertion of a reproduction: it holds on a correct app and
// fails while the bug is present.
type Check struct {
	Kind CheckKind `json:"kind"`
	// Text is the exact message of an exception or console error.
	Text string `json:"text,omitempty"`
	// Method and Path (a regular expression over the URL's path) pick the
	// requests a response check looks at; Document limits it to page loads.
	Method   string `json:"method,omitempty"`
	Path     string `json:"path,omitempty"`
	Document bool   `json:"document,omitempty"`
	MaxMS    int64  `json:"max_ms,omitempty"`
	Rule     string `json:"rule,omitempty"`
	// Verify is the functional check, a verify command with its element.
	Verify *orchestrator.ManifestEntry `json:"verify,omitempty"`
}

// Reproduction is a finding's spec and how it fared under the runner.
type Reproduction struct {
	Spec string `json:"spec"`
	// Verified means the spec failed under @playwright/test at its final
	// check, i.e. for the finding's reason.
	Verified bool `json:"verified"`
	// Outcome: fails_as_expected, passes (the bug did not show), fails_elsewhere
	// (a step of the path failed), not_run.
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
	// Path says which path it replays: "shortest" (the state's shortest
	// path and the action), "visit" (everything done on the state since
	// arriving) or "trace" (the exploration's whole trace up to it).
	Path string `json:"path"`
	// Actions is how many actions the reproduction takes.
	Actions int `json:"actions"`
	// CheckLine is the line of the spec's check (1-based), where a
	// verified reproduction fails.
	CheckLine int `json:"check_line,omitempty"`
	// Rate is how often the bug showed when replayed, for an intermittent
	// finding ("2/5").
	Rate string `json:"rate,omitempty"`
}

// Reproduction outcomes.
const (
	ReproFails          = "fails_as_expected"
	ReproPasses         = "passes"
	ReproFailsElsewhere = "fails_elsewhere"
	ReproNotRun         = "not_run"
)

// Claim is a functional bug the model reported: what it expected, what it
// observed, and the check that shows it (a verify command on the element).
type Claim struct {
	Title    string          `json:"title"`
	Expected string          `json:"expected"`
	Observed string          `json:"observed"`
	Check    browser.Command `json:"check"`
	// Why it was rejected (rejected claims only).
	Reason string `json:"reason,omitempty"`
}

var (
	hexRun   = regexp.MustCompile(`\b[0-9a-f]{8,}\b`)
	urlInMsg = regexp.MustCompile(`https?://[^\s'")]+`)
)

// normal folds what varies between occurrences of one bug: numbers, ids,
// URLs (to their path template) and spacing.
func normal(s string) string {
	s = urlInMsg.ReplaceAllStringFunc(s, func(u string) string { return orchestrator.PathTemplate(u) })
	s = hexRun.ReplaceAllString(s, "#")
	return fold(s)
}

// signature is a finding's de-duplication key: the same console error on
// five pages is one finding with five occurrences.
func signature(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return parts[0] + ":" + hex.EncodeToString(sum[:8])
}

// pathPattern is a regular expression matching a URL's path template.
func pathPattern(raw string) string {
	t := orchestrator.PathTemplate(raw)
	var b strings.Builder
	b.WriteString("^")
	for i, seg := range strings.Split(t, "/") {
		if i > 0 {
			b.WriteString("/")
		}
		if seg == ":id" {
			b.WriteString("[^/]+")
		} else {
			b.WriteString(regexp.QuoteMeta(seg))
		}
	}
	b.WriteString("$")
	return b.String()
}

func shortURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.RequestURI()
}

// fromProblem turns what a browser detector saw into a finding (nil: not
// one, such as a console echo of a failed request the request check has).
func fromProblem(p browser.Problem, app scope, slow time.Duration) *Finding {
	firstLine, _, _ := strings.Cut(p.Text, "\n")
	switch p.Kind {
	case browser.ProblemPageError:
		return &Finding{Type: TypePageError, Severity: SeverityMajor, Title: "Uncaught exception: " + clip(firstLine, 120),
			Signature: signature(string(TypePageError), normal(firstLine)),
			Evidence:  Evidence{Message: p.Text}, Check: Check{Kind: CheckNoPageError, Text: firstLine}}
	case browser.ProblemConsoleError:
		// Chromium echoes every failed load to the console; the request
		// detector reports those with their method and status.
		if strings.HasPrefix(p.Text, "Failed to load resource") {
			return nil
		}
		return &Finding{Type: TypeConsoleError, Severity: SeverityMinor, Title: "Console error: " + clip(firstLine, 120),
			Signature: signature(string(TypeConsoleError), normal(firstLine)),
			Evidence:  Evidence{Message: p.Text}, Check: Check{Kind: CheckNoConsoleError, Text: p.Text}}
	}
	// Request problems count only for the app's own host.
	if !sameHost(p.URL, app.host) {
		return nil
	}
	req := &Request{Method: p.Method, URL: p.URL, Status: p.Status, Resource: p.Resource, DurationMS: p.Duration.Milliseconds()}
	doc := p.Resource == "document"
	switch p.Kind {
	case browser.ProblemServerError, browser.ProblemClientError:
		sev := SeverityMajor
		if !doc && p.Resource != "fetch" && p.Resource != "xhr" {
			sev = SeverityMinor // an image or a stylesheet
		}
		f := &Finding{Type: TypeFailedRequest, Severity: sev,
			Title:     fmt.Sprintf("%s %s answered %d", p.Method, shortURL(p.URL), p.Status),
			Signature: signature("request", docKey(doc), p.Method, orchestrator.PathTemplate(p.URL), fmt.Sprint(p.Status/100)),
			Evidence:  Evidence{Message: p.Text, Request: req},
			Check:     Check{Kind: CheckNoBadResponse, Method: p.Method, Path: pathPattern(p.URL), Document: doc}}
		if doc {
			f.Type, f.Title = TypeErrorPage, fmt.Sprintf("Page %s answered %d", shortURL(p.URL), p.Status)
		}
		return f
	case browser.ProblemRequestFailed:
		req.Failure = p.Text
		return &Finding{Type: TypeFailedRequest, Severity: SeverityMajor,
			Title:     fmt.Sprintf("%s %s failed: %s", p.Method, shortURL(p.URL), clip(p.Text, 80)),
			Signature: signature("request", docKey(doc), p.Method, orchestrator.PathTemplate(p.URL), "failed"),
			Evidence:  Evidence{Message: p.Text, Request: req},
			Check:     Check{Kind: CheckNoBadResponse, Method: p.Method, Path: pathPattern(p.URL), Document: doc}}
	case browser.ProblemSlowResponse:
		return &Finding{Type: TypeSlowResponse, Severity: SeverityMinor,
			Title:     fmt.Sprintf("%s %s took %d ms", p.Method, shortURL(p.URL), p.Duration.Milliseconds()),
			Signature: signature(string(TypeSlowResponse), p.Method, orchestrator.PathTemplate(p.URL)),
			Evidence:  Evidence{Message: p.Text, Request: req},
			Check:     Check{Kind: CheckNoSlowResponse, Method: p.Method, Path: pathPattern(p.URL), MaxMS: slow.Milliseconds()}}
	}
	return nil
}

func docKey(doc bool) string {
	if doc {
		return "document"
	}
	return "subresource"
}

func sameHost(raw, host string) bool {
	u, err := url.Parse(raw)
	return err == nil && strings.EqualFold(u.Host, host)
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// axeFinding turns one axe-core violation on the page at address at into
// a finding: one per rule across the whole site, each page a place.
func axeFinding(v browser.AxeViolation, at string) *Finding {
	sev := SeverityMinor
	switch v.Impact {
	case "critical":
		sev = SeverityCritical
	case "serious":
		sev = SeverityMajor
	}
	f := &Finding{Type: TypeAccessibility, Severity: sev,
		Signature: signature(string(TypeAccessibility), v.Rule),
		Evidence: Evidence{Message: v.Help, Rule: v.Rule, HelpURL: v.HelpURL, Nodes: v.Nodes,
			Places: []Place{{URL: at, Elements: len(v.Nodes)}}},
		Check: Check{Kind: CheckAxeRule, Rule: v.Rule}}
	f.Title = axeTitle(v.Help, v.Rule, f.Evidence.Places)
	return f
}

// axeTitle names an accessibility finding with how far it reaches.
func axeTitle(help, rule string, places []Place) string {
	n := 0
	for _, p := range places {
		n += p.Elements
	}
	s := fmt.Sprintf("Accessibility: %s (%s, %d element(s)", strings.TrimSuffix(help, "."), rule, n)
	if len(places) > 1 {
		s += fmt.Sprintf(" on %d pages", len(places))
	}
	return s + ")"
}

// addPlace adds a page to a site-wide finding, once.
func (f *Finding) addPlace(p Place, nodes []browser.AxeNode) {
	for _, q := range f.Evidence.Places {
		if q.URL == p.URL {
			return
		}
	}
	f.Evidence.Places = append(f.Evidence.Places, p)
	if len(f.Evidence.Nodes) < 20 {
		f.Evidence.Nodes = append(f.Evidence.Nodes, nodes...)
	}
	f.Title = axeTitle(f.Evidence.Message, f.Evidence.Rule, f.Evidence.Places)
}
