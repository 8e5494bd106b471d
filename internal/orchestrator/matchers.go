package orchestrator

import "github.com/webpilot/webpilot/internal/browser"

// Matcher is how an element assertion is written with @playwright/test's
// web-first expect: the spec emitter writes a command's assertion with the
// first Matcher of its Assert.
type Matcher struct {
	Assert browser.Assertion // the command's assertion (isVisible)
	Name   string            // the matcher (toBeVisible)
	Not    bool              // written expect(…).not.Name(…)
	Arg    MatcherArg        // what the matcher takes besides its options
}

// MatcherArg is what a matcher takes.
type MatcherArg int

const (
	// ArgNone: nothing (options only).
	ArgNone MatcherArg = iota
	// ArgText: the expected text or value, a string.
	ArgText
	// ArgCount: the expected number of elements.
	ArgCount
)

// Matchers are the element assertions written as expect(locator) matchers.
// An Assert's first row is how it is written; later rows are other
// spellings that read back to it.
var Matchers = []Matcher{
	{Assert: browser.AssertIsVisible, Name: "toBeVisible"},
	{Assert: browser.AssertIsHidden, Name: "toBeHidden"},
	{Assert: browser.AssertIsEnabled, Name: "toBeEnabled"},
	{Assert: browser.AssertIsDisabled, Name: "toBeDisabled"},
	{Assert: browser.AssertIsChecked, Name: "toBeChecked"},
	{Assert: browser.AssertIsUnchecked, Name: "toBeChecked", Not: true},
	{Assert: browser.AssertTextEquals, Name: "toHaveText", Arg: ArgText},
	{Assert: browser.AssertTextContains, Name: "toContainText", Arg: ArgText},
	{Assert: browser.AssertValueEquals, Name: "toHaveValue", Arg: ArgText},
	{Assert: browser.AssertCountEquals, Name: "toHaveCount", Arg: ArgCount},
	{Assert: browser.AssertIsHidden, Name: "toBeVisible", Not: true},
}

// MatcherOf is how the assertion assert is written, if it is a matcher.
func MatcherOf(assert browser.Assertion) (Matcher, bool) {
	for _, m := range Matchers {
		if m.Assert == assert {
			return m, true
		}
	}
	return Matcher{}, false
}

// LocatorMethod is a Playwright locator method and the target field it
// stands for. The emitter writes a target with the first method, in this
// order of preference, whose field is set.
type LocatorMethod struct {
	Name string
	// Field is the target's field the method's first argument fills.
	Field func(*browser.Target) *string
	// Exact says the method takes { exact: true } (getByRole takes it among
	// its own options).
	Exact bool
}

// LocatorMethods are the locator methods, most robust first.
var LocatorMethods = []LocatorMethod{
	{Name: "getByTestId", Field: func(t *browser.Target) *string { return &t.TestID }},
	{Name: "getByRole", Field: func(t *browser.Target) *string { return &t.Role }},
	{Name: "getByPlaceholder", Field: func(t *browser.Target) *string { return &t.Placeholder }, Exact: true},
	{Name: "getByLabel", Field: func(t *browser.Target) *string { return &t.Label }, Exact: true},
	{Name: "getByAltText", Field: func(t *browser.Target) *string { return &t.Alt }, Exact: true},
	{Name: "getByText", Field: func(t *browser.Target) *string { return &t.Text }, Exact: true},
	{Name: "getByTitle", Field: func(t *browser.Target) *string { return &t.Title }, Exact: true},
	{Name: "locator", Field: func(t *browser.Target) *string { return &t.CSS }},
}
