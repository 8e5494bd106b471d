package browser_test

import (
	"fmt"

	"github.com/webpilot/webpilot/internal/browser"
)

// A command is data: its shape is checked before anything runs it, and a
// navigation may only go to an http(s) URL.
func ExampleCommand_Validate() {
	for _, c := range []browser.Command{
		{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: "Save"}},
		{Action: browser.ActionClick},
		{Action: browser.ActionNavigate, Value: "javascript:alert(1)"},
		{Action: browser.ActionVerify, Assert: browser.AssertTextContains, Target: browser.Target{Text: "Saved"}, Value: "Saved"},
		{Action: "teleport"},
	} {
		if err := c.Validate(); err != nil {
			fmt.Printf("%s: %v\n", c.Describe(), err)
			continue
		}
		fmt.Printf("%s: ok\n", c.Describe())
	}
	// Output:
	// click: ok
	// click: click needs a target
	// navigate: navigate: only http(s) URLs may be opened, not "javascript:"
	// verify textContains: ok
	// teleport: unknown action "teleport"
}
