package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Action is what a command does: one of Actions, or ActionVerify for a check.
type Action string

// The actions a command may perform.
const (
	// ActionClick clicks the target.
	ActionClick Action = "click"
	// ActionDblClick double-clicks the target.
	ActionDblClick Action = "dblclick"
	// ActionRightClick opens the target's context menu.
	ActionRightClick Action = "rightclick"
	// ActionTap taps the target on a touch screen (a device with touch).
	ActionTap Action = "tap"
	// ActionHover moves the pointer over the target.
	ActionHover Action = "hover"
	// ActionDrag drags the target onto To.
	ActionDrag Action = "drag"
	// ActionFill replaces the field's text with Value (empty clears it).
	ActionFill Action = "fill"
	// ActionType types Value key by key into the target.
	ActionType Action = "type"
	// ActionPress presses the key (or chord) Value.
	ActionPress Action = "press"
	// ActionSelect chooses the option Value.
	ActionSelect Action = "select"
	// ActionCheck checks the checkbox or radio.
	ActionCheck Action = "check"
	// ActionUncheck unchecks the checkbox.
	ActionUncheck Action = "uncheck"
	// ActionFocus focuses the target.
	ActionFocus Action = "focus"
	// ActionBlur takes focus from the target.
	ActionBlur Action = "blur"
	// ActionScroll scrolls the page (or the target into view) in direction Value.
	ActionScroll Action = "scroll"
	// ActionUpload sets the file input to the named file Value.
	ActionUpload Action = "upload"
	// ActionNavigate opens the http(s) URL Value.
	ActionNavigate Action = "navigate"
	// ActionBack goes back in history.
	ActionBack Action = "back"
	// ActionForward goes forward in history.
	ActionForward Action = "forward"
	// ActionReload reloads the page.
	ActionReload Action = "reload"
	// ActionWait waits Value milliseconds.
	ActionWait Action = "wait"
	// ActionDialog answers the next dialog as Value says.
	ActionDialog Action = "dialog"
	// ActionSwitchPage makes the page Value names the active one.
	ActionSwitchPage Action = "switch_page"
	// ActionClosePage closes the active page.
	ActionClosePage Action = "close_page"
	// ActionVerify checks the page or an element as Assert says.
	ActionVerify Action = "verify"
)

// Actions are the actions that act on the page (every action but ActionVerify).
func Actions() []Action {
	return []Action{ActionClick, ActionDblClick, ActionRightClick, ActionTap, ActionHover, ActionDrag, ActionFill, ActionType, ActionPress, ActionSelect, ActionCheck, ActionUncheck, ActionFocus, ActionBlur, ActionScroll, ActionUpload, ActionNavigate, ActionBack, ActionForward, ActionReload, ActionWait, ActionDialog, ActionSwitchPage, ActionClosePage}
}

// Assertion is what a verify command checks: one of Assertions.
type Assertion string

// The checks a verify command may make.
const (
	// AssertTextContains checks that the target's text contains Value.
	AssertTextContains Assertion = "textContains"
	// AssertTextEquals checks that the target's text is Value.
	AssertTextEquals Assertion = "textEquals"
	// AssertValueEquals checks that the field's value is Value.
	AssertValueEquals Assertion = "valueEquals"
	// AssertValueEmpty checks that the field is empty.
	AssertValueEmpty Assertion = "valueEmpty"
	// AssertIsVisible checks that the target is visible.
	AssertIsVisible Assertion = "isVisible"
	// AssertIsHidden checks that the target is hidden or absent.
	AssertIsHidden Assertion = "isHidden"
	// AssertIsEnabled checks that the target is enabled.
	AssertIsEnabled Assertion = "isEnabled"
	// AssertIsDisabled checks that the target is disabled.
	AssertIsDisabled Assertion = "isDisabled"
	// AssertIsChecked checks that the target is checked.
	AssertIsChecked Assertion = "isChecked"
	// AssertIsUnchecked checks that the target is not checked.
	AssertIsUnchecked Assertion = "isUnchecked"
	// AssertCountEquals checks that Value elements match the target.
	AssertCountEquals Assertion = "countEquals"
	// AssertCountGreaterThan checks that more than Value elements match.
	AssertCountGreaterThan Assertion = "countGreaterThan"
	// AssertCountLessThan checks that fewer than Value elements match.
	AssertCountLessThan Assertion = "countLessThan"
	// AssertHasClass checks that the target has the class Value.
	AssertHasClass Assertion = "hasClass"
	// AssertHasAttribute checks that the target has the attribute Value (name or name=value).
	AssertHasAttribute Assertion = "hasAttribute"
	// AssertUrlContains checks that the page's URL contains Value.
	AssertUrlContains Assertion = "urlContains"
	// AssertUrlEquals checks that the page's URL is Value.
	AssertUrlEquals Assertion = "urlEquals"
	// AssertTitleContains checks that the page's title contains Value.
	AssertTitleContains Assertion = "titleContains"
	// AssertTitleEquals checks that the page's title is Value.
	AssertTitleEquals Assertion = "titleEquals"
	// AssertDialogContains checks that the last dialog's message contains Value.
	AssertDialogContains Assertion = "dialogContains"
	// AssertSelectedLabel checks that the select's chosen option reads Value.
	AssertSelectedLabel Assertion = "selectedLabel"
	// AssertSortedAscending checks that the target's items are in ascending order (compared as Value).
	AssertSortedAscending Assertion = "sortedAscending"
	// AssertSortedDescending checks that the target's items are in descending order (compared as Value).
	AssertSortedDescending Assertion = "sortedDescending"
)

// Counts reports whether the check is on how many elements match.
func (a Assertion) Counts() bool {
	return a == AssertCountEquals || a == AssertCountGreaterThan || a == AssertCountLessThan
}

// Assertions are every check a verify command may make.
func Assertions() []Assertion {
	return []Assertion{AssertTextContains, AssertTextEquals, AssertValueEquals, AssertValueEmpty, AssertIsVisible, AssertIsHidden, AssertIsEnabled, AssertIsDisabled, AssertIsChecked, AssertIsUnchecked, AssertCountEquals, AssertCountGreaterThan, AssertCountLessThan, AssertHasClass, AssertHasAttribute, AssertUrlContains, AssertUrlEquals, AssertTitleContains, AssertTitleEquals, AssertDialogContains, AssertSelectedLabel, AssertSortedAscending, AssertSortedDescending}
}

// SortKinds are how a sorted check compares its items; the value of a
// sortedAscending/sortedDescending check, or empty to infer it.
var SortKinds = []string{"number", "date", "text"}

// Command is one structured browser operation. It is data: nothing in it is
// ever evaluated as code.
type Command struct {
	Action Action    `json:"action" jsonschema:"what the command does; verify checks instead of acting"`
	Target Target    `json:"target,omitempty" jsonschema:"the element acted on or checked"`
	Value  string    `json:"value,omitempty" jsonschema:"text to fill or type, key (Enter, Control+A), option, URL, milliseconds to wait, scroll direction, dialog answer (accept, dismiss, accept:TEXT), page number, or a check's expected value"`
	Assert Assertion `json:"assert,omitempty" jsonschema:"the check a verify command makes"`
	To     Target    `json:"to,omitempty" jsonschema:"where a drag drops"`
}

// IsVerify reports whether the command checks rather than acts.
func (c Command) IsVerify() bool { return c.Action == ActionVerify }

// IsPageCheck reports whether the command checks the page (its URL, title
// or last dialog) rather than an element.
func (c Command) IsPageCheck() bool {
	switch c.Assert {
	case AssertUrlContains, AssertUrlEquals, AssertTitleContains, AssertTitleEquals, AssertDialogContains:
		return c.IsVerify()
	}
	return false
}

// NeedsTarget reports whether the command must name an element.
func (c Command) NeedsTarget() bool {
	switch c.Action {
	case ActionNavigate, ActionBack, ActionForward, ActionReload, ActionWait, ActionPress, ActionScroll, ActionDialog, ActionSwitchPage, ActionClosePage:
		return false
	case ActionVerify:
		return !c.IsPageCheck()
	}
	return true
}

// Validate checks the command's shape (not whether its target exists).
func (c Command) Validate() error {
	if c.Action == ActionVerify {
		if !slices.Contains(Assertions(), c.Assert) {
			return fmt.Errorf("unknown assertion %q", c.Assert)
		}
	} else if !slices.Contains(Actions(), c.Action) {
		return fmt.Errorf("unknown action %q", c.Action)
	}
	if c.NeedsTarget() && c.Target.IsZero() {
		return fmt.Errorf("%s needs a target", c.Describe())
	}
	switch c.Action {
	case ActionType, ActionSelect, ActionNavigate, ActionPress, ActionUpload, ActionSwitchPage: // an empty fill clears the field
		if c.Value == "" {
			return fmt.Errorf("%s needs a value", c.Action)
		}
	case ActionDialog:
		if _, err := ParseDialogAnswer(c.Value); err != nil {
			return err
		}
	case ActionDrag:
		if c.To.IsZero() {
			return errors.New("drag needs a destination (to)")
		}
	}
	if c.Action == ActionNavigate {
		if err := NavigableURL(c.Value); err != nil {
			return err
		}
	}
	if (c.Assert == AssertSortedAscending || c.Assert == AssertSortedDescending) && c.Value != "" && !contains(SortKinds, c.Value) {
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
		return "verify " + string(c.Assert)
	}
	return string(c.Action)
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
	tracked  bool // the field filled is followed for the next representation (see typedInto)
	selected bool // prepare focused the text field and selected its text (see selectScript)
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
	// OwnTextFree writes the element's locator without its text: a check
	// of what the element says must find it where the text is right too
	// (a typo's paragraph by its id, not by the typo).
	OwnTextFree bool
	// SettleChecksFill leaves a followed fill's effect check (see
	// typedInto) to the settle that follows, whose first read of the page
	// holds the field's value: one round trip fewer. The caller settles,
	// then takes the verdict from FillChecked.
	SettleChecksFill bool
}

// prepareScript resolves a command's element in one round trip: where text
// typed at it goes (see editingHostScript) and its fingerprint.
const prepareScript = `(e, o) => {
  const host = o.host ? (` + editingHostScript + `)(e) : null;
  const fp = o.fp && (!host || host[0] === 'self') ? (` + fingerprintScript + `)(e) : null;
  const doc = o.doc ? (` + documentScript + `)() : null;
  const typed = o.track && host && host[0] === 'self' ? (` + trackScript + `)(e, o.track) : null;
  // What the runner's fill does before it types, done here when a locator
  // will surely be written for the field (it is named): no round trip of
  // its own.
  const selected = !!(o.select && host && host[0] === 'self' && fp && (fp.testid || fp.name || fp.label || fp.placeholder) && (` + selectScript + `)(e));
  return { host, fp, doc, typed, selected };
}`

// prepare finds the one element c acts on, the editor text typed at it
// goes to (fill, type) with what that holds now, and, when asked, its
// fingerprint. The common case — one element matches, and it is what
// receives the text — takes a single round trip.
func (s *Session) prepare(c Command, o ExecOptions, out *Outcome) (loc playwright.Locator, text, kind string, err error) {
	typing := c.Action == ActionFill || c.Action == ActionType
	if loc, err = s.locator(c.Target); err != nil {
		return nil, "", "", err
	}
	start := time.Now()
	var v any
	n := 0
	if oneTrip(c.Target) {
		if o.Fingerprint {
			defer s.guess(c.Target)()
		}
		v, n, err = matchOne(loc, prepareScript, map[string]any{"host": typing, "fp": o.Fingerprint, "doc": o.Document, "track": s.tracking(c),
			"select": c.Action == ActionFill && o.Fingerprint})
	}
	if err == nil && n == 1 {
		m, _ := v.(map[string]any)
		if d, ok := parseDocument(m["doc"]); ok && o.Document {
			out.Document = d
		}
		if typing {
			loc, text, kind = hostOf(loc, m["host"])
		}
		if m["typed"] != nil {
			out.tracked = s.typedInto(m["typed"])
		}
		out.selected, _ = m["selected"].(bool)
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
		var typed any
		loc, text, kind, typed = editingHost(loc, s.tracking(c))
		if typed != nil {
			out.tracked = s.typedInto(typed)
		}
	}
	if o.Fingerprint {
		if err := s.takeFingerprint(loc, c.Target, o, out); err != nil {
			return nil, "", "", err
		}
	}
	return loc, text, kind, nil
}

// oneTrip says a target's element can be read with matchOne.
func oneTrip(t Target) bool {
	return t.Ref == "" && len(t.Frames) == 0 && t.Within == nil
}

// Execute runs one command against the page.
func (s *Session) Execute(ctx context.Context, c Command, o ExecOptions) Outcome {
	start := time.Now()
	out := Outcome{}
	out.Err = s.execute(ctx, c, o, &out)
	if !c.IsVerify() {
		s.acted(c.Action == ActionFill && out.Err == nil && out.tracked)
	}
	if fp := out.Element; o.OwnTextFree && fp != nil && strings.TrimSpace(fp.Text) != "" {
		fp.Locator = s.robust(fp, strings.TrimSpace(fp.Text))
	}
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
		timeout = ActionTimeout
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
	if c.NeedsTarget() || (!c.Target.IsZero() && (c.Action == ActionPress || c.Action == ActionScroll || c.Action == ActionWait)) {
		var err error
		if loc, text, kind, err = s.prepare(c, o, out); err != nil {
			return err
		}
	}
	s.readDocument(ctx, o, out) // unless prepare read it with the element
	switch c.Action {
	case ActionClick:
		return loc.Click(playwright.LocatorClickOptions{Timeout: ms})
	case ActionDblClick:
		return loc.Dblclick(playwright.LocatorDblclickOptions{Timeout: ms})
	case ActionRightClick:
		return loc.Click(playwright.LocatorClickOptions{Timeout: ms, Button: playwright.MouseButtonRight})
	case ActionTap:
		if !s.touch {
			return errors.New("tap needs a touch screen: the job's device has none (click instead)")
		}
		return loc.Tap(playwright.LocatorTapOptions{Timeout: ms})
	case ActionHover:
		return loc.Hover(playwright.LocatorHoverOptions{Timeout: ms})
	case ActionDrag:
		to, err := s.unique(c.To)
		if err != nil {
			return fmt.Errorf("drag destination: %w", err)
		}
		return loc.DragTo(to, playwright.LocatorDragToOptions{Timeout: ms})
	case ActionFill:
		if o.SettleChecksFill && out.tracked && kind != "range" && kind != "editable-document" {
			return s.fillChecked(loc, kind, c.Value, ms, oneTrip(c.Target), out.selected)
		}
		return s.fill(loc, kind, c.Value, ms, oneTrip(c.Target), out)
	case ActionType:
		before := text
		if err := loc.PressSequentially(c.Value, playwright.LocatorPressSequentiallyOptions{Timeout: ms}); err != nil {
			return err
		}
		return checkTyped(loc, before, c.Value, oneTrip(c.Target))
	case ActionPress:
		if loc != nil {
			return loc.Press(c.Value, playwright.LocatorPressOptions{Timeout: ms})
		}
		return s.page.Keyboard().Press(c.Value)
	case ActionSelect:
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
	case ActionCheck:
		return loc.Check(playwright.LocatorCheckOptions{Timeout: ms})
	case ActionUncheck:
		return loc.Uncheck(playwright.LocatorUncheckOptions{Timeout: ms})
	case ActionFocus:
		return loc.Focus(playwright.LocatorFocusOptions{Timeout: ms})
	case ActionBlur:
		return loc.Blur(playwright.LocatorBlurOptions{Timeout: ms})
	case ActionScroll:
		if loc != nil {
			return loc.ScrollIntoViewIfNeeded(playwright.LocatorScrollIntoViewIfNeededOptions{Timeout: ms})
		}
		dy := 600.0
		if strings.EqualFold(c.Value, "up") {
			dy = -600
		}
		return s.page.Mouse().Wheel(0, dy)
	case ActionUpload:
		return s.upload(loc, c.Value, o.Files, ms, out)
	case ActionDialog:
		return s.setDialogAnswer(c.Value)
	case ActionSwitchPage:
		return s.switchPage(c.Value)
	case ActionClosePage:
		return s.closePage(c.Value)
	case ActionNavigate:
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
	case ActionBack:
		_, err := s.page.GoBack()
		return err
	case ActionForward:
		_, err := s.page.GoForward()
		return err
	case ActionReload:
		_, err := s.page.Reload()
		return err
	case ActionWait:
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
	case ActionClick:
		return s.page.Mouse().Click(x, y)
	case ActionDblClick:
		return s.page.Mouse().Dblclick(x, y)
	case ActionHover:
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
	case AssertUrlContains:
		return a.Page(s.page).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(c.Value)))
	case AssertUrlEquals:
		return a.Page(s.page).ToHaveURL(c.Value)
	case AssertTitleContains:
		return a.Page(s.page).ToHaveTitle(regexp.MustCompile(regexp.QuoteMeta(c.Value)))
	case AssertTitleEquals:
		return a.Page(s.page).ToHaveTitle(c.Value)
	case AssertDialogContains:
		return s.waitDialog(c.Value, *ms)
	}
	loc, err := s.locator(c.Target)
	if err != nil {
		return err
	}
	if c.Assert == AssertSortedAscending || c.Assert == AssertSortedDescending {
		return s.verifySorted(c, loc, *ms, out, o)
	}
	if c.Assert.Counts() {
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
		case AssertCountEquals:
			return a.Locator(loc).ToHaveCount(n)
		case AssertCountGreaterThan:
			return pollCount(loc, *ms, func(got int) bool { return got > n }, "more than "+c.Value)
		default:
			return pollCount(loc, *ms, func(got int) bool { return got < n }, "fewer than "+c.Value)
		}
	}
	if c.Assert != AssertIsHidden || c.Target.Ref != "" {
		// Assertions about one element need it to be unique.
		if u, err := s.waitUnique(c.Target, *ms); err != nil {
			return err
		} else {
			loc = u
		}
		target := c.Target
		if (c.Assert == AssertTextEquals || c.Assert == AssertTextContains) && c.Target.Ref != "" {
			// A shadow element that only shows slotted text (a card's title
			// slot) has none of its own: the check is on the light-DOM
			// element that owns the text.
			if owner, t, ok := s.slottedOwner(loc, c.Target); ok {
				loc, target = owner, t
			}
		}
		if o.Fingerprint {
			if err := s.takeFingerprint(loc, target, o, out); err != nil {
				return err
			}
		}
	}
	la := a.Locator(loc)
	switch c.Assert {
	case AssertTextContains:
		return la.ToContainText(c.Value)
	case AssertTextEquals:
		return la.ToHaveText(c.Value)
	case AssertValueEquals:
		return la.ToHaveValue(c.Value)
	case AssertValueEmpty:
		return la.ToHaveValue("")
	case AssertSelectedLabel:
		return a.Locator(loc.Locator("option:checked")).ToHaveText(c.Value)
	case AssertIsVisible:
		return la.ToBeVisible()
	case AssertIsHidden:
		return la.ToBeHidden()
	case AssertIsEnabled:
		return la.ToBeEnabled()
	case AssertIsDisabled:
		return la.ToBeDisabled()
	case AssertIsChecked:
		return la.ToBeChecked()
	case AssertIsUnchecked:
		return la.Not().ToBeChecked()
	case AssertHasClass:
		return la.ToHaveClass(regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(c.Value) + `(\s|$)`))
	case AssertHasAttribute:
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

// slottedOwnerScript returns the path of the one light-DOM element whose
// text a shadow element shows through its slots, when it has no text of
// its own; "" otherwise.
const slottedOwnerScript = `(e) => {
  const wpPath = ` + pathScript + `;
  const slots = e.tagName === 'SLOT' ? [e] : [...e.querySelectorAll('slot')];
  if (!slots.length || (e.textContent || '').trim()) return '';
  const owners = [];
  for (const s of slots) for (const a of s.assignedElements({ flatten: true })) if ((a.textContent || '').trim()) owners.push(a);
  return owners.length === 1 ? wpPath(owners[0]) : '';
}`

// slottedOwner is the light-DOM element whose slotted text the element at
// loc shows, and a target for it.
func (s *Session) slottedOwner(loc playwright.Locator, t Target) (playwright.Locator, Target, bool) {
	v, err := loc.Evaluate(slottedOwnerScript, nil)
	path, _ := v.(string)
	if err != nil || path == "" {
		return nil, Target{}, false
	}
	owner := Target{CSS: path, Frames: s.framesOf(t)}
	l, err := s.locator(owner)
	if err != nil {
		return nil, Target{}, false
	}
	return l, owner, true
}
