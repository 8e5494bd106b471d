package browser_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

// testdata serves browser/testdata on 127.0.0.1.
func testdata(t *testing.T) string { return browsertest.Serve(t, "testdata") }

var lineRef = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)

func refOn(t *testing.T, text, contains string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, contains) {
			if m := lineRef.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no ref on a line with %q:\n%s", contains, text)
	return ""
}

func TestFramesetPagesAreReadLikeIframes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, testdata(t)+"/frameset.html"); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatalf("a page without a body cannot be read: %v", err)
	}
	for _, want := range []string{`[frame=f1] (http`, `frame-nav.html`, `frame-content.html`, `link "Introduction"`, `button "Rate this page"`} {
		if !strings.Contains(snap.Text, want) {
			t.Errorf("representation lacks %q:\n%s", want, snap.Text)
		}
	}
	rate := refOn(t, snap.Text, `button "Rate this page"`)
	if out := s.Execute(ctx, browser.Command{Action: browser.ActionClick, Target: browser.Target{Ref: rate}}, browser.ExecOptions{Fingerprint: true}); out.Err != nil {
		t.Fatalf("click in a frame of a frameset: %v", out.Err)
	} else if got := strings.Join(out.Element.Frames, " > "); got != `frame[name="content"]` {
		t.Errorf("the element's frame chain is %q", got)
	}
	if out := s.Execute(ctx, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Value: "Thanks!",
		Target: browser.Target{Role: "button", Name: "Thanks!", Frames: []string{`frame[name="content"]`}}}, browser.ExecOptions{}); out.Err != nil {
		t.Fatalf("the click had no effect: %v", out.Err)
	}
}

func TestRefsAreUniqueWithinASessionAndOldOnesAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	base := testdata(t)
	if err := s.Navigate(ctx, base+"/tall.html"); err != nil {
		t.Fatal(err)
	}
	first, err := s.Snapshot(ctx, browser.SnapshotOptions{FullPage: true})
	if err != nil {
		t.Fatal(err)
	}
	old := refOn(t, first.Text, `button "Save"`)
	// A new document: Playwright numbers its snapshots from 1 again.
	if err := s.Navigate(ctx, base+"/widgets.html"); err != nil {
		t.Fatal(err)
	}
	second, err := s.Snapshot(ctx, browser.SnapshotOptions{FullPage: true})
	if err != nil {
		t.Fatal(err)
	}
	for ref := range first.Refs {
		if second.Refs[ref] {
			t.Fatalf("ref %s names an element of two different pages", ref)
		}
	}
	out := s.Execute(ctx, browser.Command{Action: browser.ActionClick, Target: browser.Target{Ref: old}}, browser.ExecOptions{})
	if out.Err == nil || !strings.Contains(out.Err.Error(), "earlier page representation") {
		t.Fatalf("a ref of an earlier page was not refused: %v", out.Err)
	}
}

func TestViewportFilterAndItsHeaderAgree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, testdata(t)+"/tall.html"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Page().Evaluate(`() => { document.querySelector('h2').scrollIntoView(); }`); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"Top heading", "Intro paragraph", "Bottom heading", "Paragraph at the bottom"} {
		if strings.Contains(snap.Text, gone) {
			t.Errorf("%q is outside the viewport but listed:\n%s", gone, snap.Text)
		}
	}
	for _, kept := range []string{`heading "Middle heading"`, "Paragraph in the middle", `button "Save"`, `textbox "Footer email" [ref=`} {
		if !strings.Contains(snap.Text, kept) {
			t.Errorf("%q is missing:\n%s", kept, snap.Text)
		}
	}
	// The three "Details" links: the one in view unmarked, the others kept as controls with their side.
	if !regexp.MustCompile(`link "Details" \[ref=\w+\] \[above\]`).MatchString(snap.Text) ||
		!regexp.MustCompile(`link "Details" \[ref=\w+\] \[below\]`).MatchString(snap.Text) ||
		!regexp.MustCompile(`link "Details" \[ref=\w+\]:`).MatchString(snap.Text) {
		t.Errorf("repeated links are not placed one by one:\n%s", snap.Text)
	}
	m := regexp.MustCompile(`(\d+) elements above, (\d+) below, (\d+) beside`).FindStringSubmatch(snap.Text)
	if m == nil {
		t.Fatalf("the header does not count what was left out:\n%s", snap.Text)
	}
	shown := len(lineRef.FindAllString(snap.Text, -1))
	if left := len(lineRef.FindAllString(snap.Full, -1)) - shown; m[1] != "2" || m[2] != "2" || atoi(m[1])+atoi(m[2])+atoi(m[3]) != left {
		t.Errorf("header says %s above, %s below, %s beside; %d refs were left out:\n%s", m[1], m[2], m[3], left, snap.Text)
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestClickablesWithoutARoleGetRefsAndControlsOutrankLongText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, testdata(t)+"/widgets.html"); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`[data-test="cart-count"]`, `#cart.badge.cart-badge`, `.icon.icon-search`, `.menu-toggle`,
		`slider "Volume"`, `combobox "Size"`, `[selected="Medium"]`, `chars; inspect_page with search shows them)`} {
		if !strings.Contains(snap.Text, want) {
			t.Errorf("representation lacks %q:\n%s", want, snap.Text)
		}
	}
	if strings.Contains(snap.Text, "theta") {
		t.Errorf("a long code block is shown whole:\n%s", snap.Text)
	}
	for _, c := range []struct{ line, effect string }{{`cart-count`, "cart opened"}, {`.menu-toggle`, "menu opened"}, {`icon-search`, "search opened"}} {
		ref := refOn(t, snap.Text, c.line)
		out := s.Execute(ctx, browser.Command{Action: browser.ActionClick, Target: browser.Target{Ref: ref}}, browser.ExecOptions{Fingerprint: true})
		if out.Err != nil {
			t.Fatalf("click %s: %v", c.line, out.Err)
		}
		if out.Element == nil || out.Element.Locator.IsZero() || out.Element.Locator.Text == "3" {
			t.Errorf("no stable locator (or a counter's text) for %s: %+v", c.line, out.Element)
		}
		if v := s.Execute(ctx, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Value: c.effect, Target: browser.Target{Role: "status"}}, browser.ExecOptions{}); v.Err != nil {
			t.Fatalf("clicking %s had no effect: %v", c.line, v.Err)
		}
		if snap, err = s.Snapshot(ctx, browser.SnapshotOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The budget keeps controls when text must go.
	small, _ := s.Snapshot(ctx, browser.SnapshotOptions{Budget: 500})
	for _, want := range []string{`slider "Volume"`, `combobox "Size"`, `cart-count`} {
		if !strings.Contains(small.Text, want) {
			t.Errorf("a control was dropped for the budget: %q\n%s", want, small.Text)
		}
	}
}

func TestFramesAreFoundAfterLeavingAPageOfFrames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	base := testdata(t)
	if err := s.Navigate(ctx, base+"/frameset.html"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snapshot(ctx, browser.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	// Leaving detaches the frameset's frames; the next page's iframe must still be read.
	if err := s.Navigate(ctx, base+"/editor.html"); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(snap.Text, "Draft text") || strings.Contains(snap.Text, "frame-nav.html") {
		t.Fatalf("the representation does not show the current page's frames only:\n%s", snap.Text)
	}
}
