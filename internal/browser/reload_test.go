package browser_test

import (
	"context"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

// TestALocatorMustFindItsElementOnTheNextLoad: icon buttons with no name
// whose ids are words drawn afresh on every load look like ids a person
// wrote, so no rule refuses them; loaded again, the page shows the id is
// not the button's, and the locator written names the button by its place
// instead, which finds it after a reload. Where the ids stay the same from
// load to load, the id is what the locator uses.
func TestALocatorMustFindItsElementOnTheNextLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := browsertest.Serve(t, "testdata") + "/word-ids.html"
	for _, tc := range []struct {
		name, query string
		byID        bool
	}{
		{"ids drawn per load", "", false},
		{"ids that stay", "?ids=fixed", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := base + tc.query
			s := browsertest.Session(t)
			if err := s.Navigate(ctx, url); err != nil {
				t.Fatal(err)
			}
			out := s.Execute(ctx, browser.Command{Action: browser.ActionClick, Target: browser.Target{CSS: ".toolbar > button:nth-of-type(2)"}},
				browser.ExecOptions{Fingerprint: true, RequireLocator: true})
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			loc := out.Element.Locator
			t.Logf("written as %s", loc)
			if usesID := strings.Contains(loc.CSS, "#"); usesID != tc.byID {
				t.Fatalf("the locator %s: by id %v, want %v", loc, usesID, tc.byID)
			}
			if err := s.Navigate(ctx, url); err != nil {
				t.Fatal(err)
			}
			if out := s.Execute(ctx, browser.Command{Action: browser.ActionClick, Target: loc}, browser.ExecOptions{}); out.Err != nil {
				t.Fatalf("after a reload %s: %v", loc, out.Err)
			}
			if out := s.Execute(ctx, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals,
				Target: browser.Target{CSS: "#said"}, Value: "italic pressed"}, browser.ExecOptions{}); out.Err != nil {
				t.Fatalf("after a reload %s is not the italic button: %v", loc, out.Err)
			}
		})
	}
}
