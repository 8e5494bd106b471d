package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Actions a command may perform.
var Actions = []string{"click", "dblclick", "rightclick", "hover", "drag", "fill", "type", "press", "select",
	"check", "uncheck", "focus", "blur", "scroll", "upload", "navigate", "back", "forward", "reload", "wait",
	"dialog", "switch_page", "close_page"}

// Assertions a verify command may check.
var Assertions = []string{"textContains", "textEquals", "valueEquals", "valueEmpty", "isVisible", "isHidden",
	"isEnabled", "isDisabled", "isChecked", "isUnchecked", "countEquals", "countGreaterThan", "countLessThan",
	"hasClass", "hasAttribute", "urlContains", "urlEquals", "titleContains", "titleEquals", "dialogContains", "selectedLabel",
	"sortedAscending", "sortedDescending"}

// SortKinds are how a sorted check compares its items; the value of a
// sortedAscending/sortedDescending check, or empty to infer it.
var SortKinds = []string{"number", "date", "text"}

// Command is one structured browser operation. It is data: nothing in it is
// ever evaluated as code.
type Command struct {
	Action string `json:"action"`           // one of Actions, or "verify"
	Target Target `json:"target,omitempty"` // the element acted on or checked
	Value  string `json:"value,omitempty"`  // text, key, option, URL, milliseconds, direction, expected value
	Assert string `json:"assert,omitempty"` // one of Assertions when Action is "verify"
	To     Target `json:"to,omitempty"`     // drag destination
}

// IsVerify reports whether the command checks rather than acts.
func (c Command) IsVerify() bool { return c.Action == "verify" }

// IsPageCheck reports whether the command checks the page (its URL, title
// or last dialog) rather than an element.
func (c Command) IsPageCheck() bool {
	switch c.Assert {
	case "urlContains", "urlEquals", "titleContains", "titleEquals", "dialogContains":
		return c.IsVerify()
	}
	return false
}

// NeedsTarget reports whether the command must name an element.
func (c Command) NeedsTarget() bool {
	switch c.Action {
	case "navigate", "back", "forward", "reload", "wait", "press", "scroll", "dialog", "switch_page", "close_page":
		return false
	case "verify":
		return !c.IsPageCheck()
	}
	return true
}

// Validate checks the command's shape (not whether its target exists).
func (c Command) Validate() error {
	if c.Action == "verify" {
		if !contains(Assertions, c.Assert) {
			return fmt.Errorf("unknown assertion %q", c.Assert)
		}
	} else if !contains(Actions, c.Action) {
		return fmt.Errorf("unknown action %q", c.Action)
	}
	if c.NeedsTarget() && c.Target.IsZero() {
		return fmt.Errorf("%s needs a target", c.Describe())
	}
	switch c.Action {
	case "type", "select", "navigate", "press", "upload", "switch_page": // an empty fill clears the field
		if c.Value == "" {
			return fmt.Errorf("%s needs a value", c.Action)
		}
	case "dialog":
		if _, err := ParseDialogAnswer(c.Value); err != nil {
			return err
		}
	case "drag":
		if c.To.IsZero() {
			return errors.New("drag needs a destination (to)")
		}
	}
	if c.Action == "navigate" {
		if err := NavigableURL(c.Value); err != nil {
			return err
		}
	}
	if (c.Assert == "sortedAscending" || c.Assert == "sortedDescending") && c.Value != "" && !contains(SortKinds, c.Value) {
		return fmt.Errorf("%s compares as %s (or, left empty, as the items suggest), not %q", c.Assert, strings.Join(SortKinds, ", "), c.Value)
	}
	return nil
}

// NavigableURL accepts what a navigate command may go to: an http(s) URL or
// a relative one. Every other scheme (javascript:, data:, file:, chrome:,
// view-source:, blob: …) would run code or reveal local content: commands are
// data, never code.
func NavigableURL(raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return fmt.Errorf("navigate: not a URL: %v", err)
	}
	if u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("navigate: only http(s) URLs may be opened, not %q", u.Scheme+":")
	}
	if u.Opaque != "" {
		return fmt.Errorf("navigate: %q is not a URL to open", raw)
	}
	return nil
}

// Describe names the command for history and errors.
func (c Command) Describe() string {
	if c.IsVerify() {
		return "verify " + c.Assert
	}
	return c.Action
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Outcome is the result of one command.
type Outcome struct {
	Err      error
	Duration time.Duration
	Element  *Fingerprint // the target as it was just before the action, when asked for
	// Via says how the command was carried out where a spec must do the
	// same: a value set on a range input ("range"), files set on a file
	// input ("file-input") or through the file chooser a click opened
	// ("file-chooser"); for a sorted check, how items were compared.
	Via string
	// Waited is Duration less the time spent describing the target: how
	// long the page took to let the command succeed.
	Waited time.Duration
	// Document is the document the command acted on (ExecOptions.Document).
	Document Document
	fpTime   time.Duration
}

// File is a file a job carries for uploads: its content travels with the
// job, never read from the worker's disk.
type File struct {
	Name     string
	MimeType string
	Content  []byte
}

// ExecOptions tune Execute.
type ExecOptions struct {
	Fingerprint bool          // capture the target's fingerprint before acting
	Timeout     time.Duration // per action; default 5s, 10s for verifications
	Files       []File        // what upload may set, by name
	// RequireLocator refuses to act on an element no stable locator can be
	// written for: the spec could not do what the job did.
	RequireLocator bool
	// Document reads the identity of the document the command acts on,
	// before it acts (Outcome.Document); for a command on one element of
	// the main frame it comes with the element, in the same evaluation.
	Document bool
}

// prepareScript resolves a command's element in one round trip: where text
// typed at it goes (see editingHostScript) and its fingerprint.
const prepareScript = `(e, o) => {
  const host = o.host ? (` + editingHostScript + `)(e) : null;
  const fp = o.fp && (!host || host[0] === 'self') ? (` + fingerprintScript + `)(e) : null;
  const doc = o.doc ? (` + documentScript + `)() : null;
  return { host, fp, doc };
}`

// prepare finds the one element c acts on, the editor text typed at it
// goes to (fill, type) with what that holds now, and, when asked, its
// fingerprint. The common case — one element matches, and it is what
// receives the text — takes a single round trip.
func (s *Session) prepare(c Command, o ExecOptions, out *Outcome) (loc playwright.Locator, text, kind string, err error) {
	typing := c.Action == "fill" || c.Action == "type"
	if loc, err = s.locator(c.Target); err != nil {
		return nil, "", "", err
	}
	start := time.Now()
	var v any
	n := 0
	if c.Target.Ref == "" && len(c.Target.Frames) == 0 && c.Target.Within == nil {
		v, n, err = matchOne(loc, prepareScript, map[string]any{"host": typing, "fp": o.Fingerprint, "doc": o.Document})
	}
	if err == nil && n == 1 {
		m, _ := v.(map[string]any)
		if d, ok := parseDocument(m["doc"]); ok && o.Document {
			out.Document = d
		}
		if typing {
			loc, text, kind = hostOf(loc, m["host"])
		}
		if fp, ok := m["fp"].(map[string]any); ok {
			out.Element = s.fingerprintOf(fp, s.framesOf(c.Target), c.Target.Ref)
			out.fpTime += time.Since(start)
			if o.RequireLocator && out.Element.Locator.IsZero() {
				return nil, "", "", errNoLocator(out.Element)
			}
			return loc, text, kind, nil
		}
		if !o.Fingerprint {
			return loc, text, kind, nil
		}
		// The text goes to an enclosing editor: that is what is described.
		return loc, text, kind, s.takeFingerprint(loc, c.Target, o, out)
	}
	// A ref, a frame, none or several matching, or a failed evaluation:
	// the full rules.
	if loc, err = s.unique(c.Target); err != nil {
		return nil, "", "", err
	}
	if typing {
		// Text goes into the editor, not a paragraph inside it.
		loc, text, kind = editingHost(loc)
	}
	if o.Fingerprint {
		if err := s.takeFingerprint(loc, c.Target, o, out); err != nil {
			return nil, "", "", err
		}
	}
	return loc, text, kind, nil
}

// Execute runs one command against the page.
func (s *Session) Execute(ctx context.Context, c Command, o ExecOptions) Outcome {
	start := time.Now()
	out := Outcome{}
	out.Err = s.execute(ctx, c, o, &out)
	out.Duration = time.Since(start)
	out.Waited = out.Duration - out.fpTime
	return out
}

func (s *Session) execute(ctx context.Context, c Command, o ExecOptions, out *Outcome) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 5 * time.Second
		if c.IsVerify() {
			timeout = 10 * time.Second
		}
	}
	ms := playwright.Float(float64(timeout.Milliseconds()))
	if c.IsVerify() {
		s.readDocument(ctx, o, out)
		return s.verify(c, ms, out, o)
	}
	if c.Target.IsCoordinate() {
		s.readDocument(ctx, o, out)
		return s.coordinate(c)
	}
	var loc playwright.Locator
	var text, kind string // a text field's content and kind before fill or type
	if c.NeedsTarget() || (!c.Target.IsZero() && (c.Action == "press" || c.Action == "scroll" || c.Action == "wait")) {
		var err error
		if loc, text, kind, err = s.prepare(c, o, out); err != nil {
			return err
		}
	}
	s.readDocument(ctx, o, out) // unless prepare read it with the element
	switch c.Action {
	case "click":
		return loc.Click(playwright.LocatorClickOptions{Timeout: ms})
	case "dblclick":
		return loc.Dblclick(playwright.LocatorDblclickOptions{Timeout: ms})
	case "rightclick":
		return loc.Click(playwright.LocatorClickOptions{Timeout: ms, Button: playwright.MouseButtonRight})
	case "hover":
		return loc.Hover(playwright.LocatorHoverOptions{Timeout: ms})
	case "drag":
		to, err := s.unique(c.To)
		if err != nil {
			return fmt.Errorf("drag destination: %w", err)
		}
		return loc.DragTo(to, playwright.LocatorDragToOptions{Timeout: ms})
	case "fill":
		return s.fill(loc, kind, c.Value, ms, out)
	case "type":
		before := text
		if err := loc.PressSequentially(c.Value, playwright.LocatorPressSequentiallyOptions{Timeout: ms}); err != nil {
			return err
		}
		return checkTyped(loc, before, c.Value)
	case "press":
		if loc != nil {
			return loc.Press(c.Value, playwright.LocatorPressOptions{Timeout: ms})
		}
		return s.page.Keyboard().Press(c.Value)
	case "select":
		_, err := loc.SelectOption(playwright.SelectOptionValues{Labels: &[]string{c.Value}}, playwright.LocatorSelectOptionOptions{Timeout: ms})
		if err != nil {
			_, err2 := loc.SelectOption(playwright.SelectOptionValues{Values: &[]string{c.Value}}, playwright.LocatorSelectOptionOptions{Timeout: ms})
			if err2 == nil {
				return nil
			}
		}
		if err != nil {
			return err
		}
		return checkSelected(loc, c.Value)
	case "check":
		return loc.Check(playwright.LocatorCheckOptions{Timeout: ms})
	case "uncheck":
		return loc.Uncheck(playwright.LocatorUncheckOptions{Timeout: ms})
	case "focus":
		return loc.Focus(playwright.LocatorFocusOptions{Timeout: ms})
	case "blur":
		return loc.Blur(playwright.LocatorBlurOptions{Timeout: ms})
	case "scroll":
		if loc != nil {
			return loc.ScrollIntoViewIfNeeded(playwright.LocatorScrollIntoViewIfNeededOptions{Timeout: ms})
		}
		dy := 600.0
		if strings.EqualFold(c.Value, "up") {
			dy = -600
		}
		return s.page.Mouse().Wheel(0, dy)
	case "upload":
		return s.upload(loc, c.Value, o.Files, ms, out)
	case "dialog":
		return s.setDialogAnswer(c.Value)
	case "switch_page":
		return s.switchPage(c.Value)
	case "close_page":
		return s.closePage(c.Value)
	case "navigate":
		dest, err := resolveURL(s.page.URL(), c.Value)
		if err != nil {
			return err
		}
		// Checked again where it runs, on the resolved URL.
		if err := NavigableURL(dest); err != nil {
			return err
		}
		if err := s.policy.CheckURL(dest); err != nil {
			s.deny(dest)
			return fmt.Errorf("navigate to %s: blocked by the URL policy: %v", dest, err)
		}
		return s.Navigate(ctx, dest)
	case "back":
		_, err := s.page.GoBack()
		return err
	case "forward":
		_, err := s.page.GoForward()
		return err
	case "reload":
		_, err := s.page.Reload()
		return err
	case "wait":
		if loc != nil {
			return loc.WaitFor(playwright.LocatorWaitForOptions{Timeout: ms})
		}
		n, err := strconv.Atoi(strings.TrimSuffix(c.Value, "ms"))
		if err != nil || n < 0 || n > 600_000 {
			return fmt.Errorf("wait needs 0 to 600000 milliseconds, got %q", c.Value)
		}
		select {
		case <-time.After(time.Duration(min(n, 10_000)) * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("unknown action %q", c.Action)
}

// readDocument fills out.Document when asked and not yet known. Its time,
// like describing the target, is not time the page took.
func (s *Session) readDocument(ctx context.Context, o ExecOptions, out *Outcome) {
	if !o.Document || out.Document.ID != "" {
		return
	}
	start := time.Now()
	out.Document, _ = s.Document(ctx)
	out.fpTime += time.Since(start)
}

func (s *Session) coordinate(c Command) error {
	vp := s.page.ViewportSize()
	if vp == nil {
		return errors.New("no viewport for a coordinate action")
	}
	x, y := *c.Target.X/100*float64(vp.Width), *c.Target.Y/100*float64(vp.Height)
	switch c.Action {
	case "click":
		return s.page.Mouse().Click(x, y)
	case "dblclick":
		return s.page.Mouse().Dblclick(x, y)
	case "hover":
		return s.page.Mouse().Move(x, y)
	}
	return fmt.Errorf("%s cannot target a coordinate", c.Action)
}

// resolveURL resolves a possibly relative URL against the current page.
func resolveURL(base, ref string) (string, error) {
	r, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("bad URL %q: %w", ref, err)
	}
	b, err := url.Parse(base)
	if err != nil || b.Scheme == "" || b.Scheme == "about" {
		return r.String(), nil
	}
	return b.ResolveReference(r).String(), nil
}

func (s *Session) verify(c Command, ms *float64, out *Outcome, o ExecOptions) error {
	a := playwright.NewPlaywrightAssertions(*ms)
	switch c.Assert {
	case "urlContains":
		return a.Page(s.page).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(c.Value)))
	case "urlEquals":
		return a.Page(s.page).ToHaveURL(c.Value)
	case "titleContains":
		return a.Page(s.page).ToHaveTitle(regexp.MustCompile(regexp.QuoteMeta(c.Value)))
	case "titleEquals":
		return a.Page(s.page).ToHaveTitle(c.Value)
	case "dialogContains":
		return s.waitDialog(c.Value, *ms)
	}
	loc, err := s.locator(c.Target)
	if err != nil {
		return err
	}
	if c.Assert == "sortedAscending" || c.Assert == "sortedDescending" {
		return s.verifySorted(c, loc, *ms, out, o)
	}
	if strings.HasPrefix(c.Assert, "count") {
		if c.Target.Ref != "" && o.Fingerprint {
			// A ref names one element: the spec counts what its locator finds.
			if u, err := s.unique(c.Target); err == nil {
				if err := s.takeFingerprint(u, c.Target, o, out); err != nil {
					return err
				}
			}
		}
		n, err := strconv.Atoi(c.Value)
		if err != nil {
			return fmt.Errorf("%s needs a whole number, got %q", c.Assert, c.Value)
		}
		switch c.Assert {
		case "countEquals":
			return a.Locator(loc).ToHaveCount(n)
		case "countGreaterThan":
			return pollCount(loc, *ms, func(got int) bool { return got > n }, "more than "+c.Value)
		default:
			return pollCount(loc, *ms, func(got int) bool { return got < n }, "fewer than "+c.Value)
		}
	}
	if c.Assert != "isHidden" || c.Target.Ref != "" {
		// Assertions about one element need it to be unique.
		if u, err := s.waitUnique(c.Target, *ms); err != nil {
			return err
		} else {
			loc = u
		}
		if o.Fingerprint {
			if err := s.takeFingerprint(loc, c.Target, o, out); err != nil {
				return err
			}
		}
	}
	la := a.Locator(loc)
	switch c.Assert {
	case "textContains":
		return la.ToContainText(c.Value)
	case "textEquals":
		return la.ToHaveText(c.Value)
	case "valueEquals":
		return la.ToHaveValue(c.Value)
	case "valueEmpty":
		return la.ToHaveValue("")
	case "selectedLabel":
		return a.Locator(loc.Locator("option:checked")).ToHaveText(c.Value)
	case "isVisible":
		return la.ToBeVisible()
	case "isHidden":
		return la.ToBeHidden()
	case "isEnabled":
		return la.ToBeEnabled()
	case "isDisabled":
		return la.ToBeDisabled()
	case "isChecked":
		return la.ToBeChecked()
	case "isUnchecked":
		return la.Not().ToBeChecked()
	case "hasClass":
		return la.ToHaveClass(regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(c.Value) + `(\s|$)`))
	case "hasAttribute":
		name, val, _ := strings.Cut(c.Value, "=")
		if val == "" {
			return la.ToHaveAttribute(name, regexp.MustCompile(".*"))
		}
		return la.ToHaveAttribute(name, val)
	}
	return fmt.Errorf("unknown assertion %q", c.Assert)
}

// waitUnique waits up to ms for the target to resolve to one element.
func (s *Session) waitUnique(t Target, ms float64) (playwright.Locator, error) {
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	for {
		loc, err := s.unique(t)
		if err == nil || time.Now().After(deadline) {
			return loc, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func pollCount(loc playwright.Locator, ms float64, ok func(int) bool, want string) error {
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	for {
		n, err := loc.Count()
		if err == nil && ok(n) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("expected %s elements, found %d", want, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
