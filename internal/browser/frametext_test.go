package browser_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

// TestAFramesTextWithoutARoleHasARef: text a frame shows in elements with
// no role (a div, a span) gets a ref in the representation, a check can
// name it by that ref, and the locator written for it enters the frame and
// finds that one element.
func TestAFramesTextWithoutARoleHasARef(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, browsertest.Serve(t, "testdata")+"/frame-text.html"); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{Budget: 8000})
	if err != nil {
		t.Fatal(err)
	}
	refOf := func(text string) string {
		m := regexp.MustCompile(`- text "` + regexp.QuoteMeta(text) + `" \[ref=(f\d+s\d+t\d+)\]`).FindStringSubmatch(snap.Text)
		if m == nil {
			t.Fatalf("no ref for %q in:\n%s", text, snap.Text)
		}
		return m[1]
	}
	for _, tc := range []struct{ text, want string }{
		{"Total due: $39.98", "Total due: $39.98"},
		{"$9.99", "$9.99"},
	} {
		ref := refOf(tc.text)
		out := s.Execute(ctx, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Target: browser.Target{Ref: ref}, Value: tc.want},
			browser.ExecOptions{Fingerprint: true, RequireLocator: true})
		if out.Err != nil {
			t.Fatalf("check on %s (%q): %v", ref, tc.text, out.Err)
		}
		loc := out.Element.Locator
		t.Logf("%q is written as %s", tc.text, loc)
		if len(loc.Frames) == 0 {
			t.Fatalf("the locator %s of %q does not enter the frame", loc, tc.text)
		}
		if n, err := s.Count(ctx, loc); err != nil || n != 1 {
			t.Fatalf("%s matches %d elements (%v)", loc, n, err)
		}
	}
}
