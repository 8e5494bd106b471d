package browser_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

// TestALocatorNeverUsesAnIdThePageMadeUp: on a page whose ids and classes
// are made up on every load (inside shadow roots, as frameworks do), the
// locator written for the second item's button names none of them, and it
// finds the same button after a reload, when every id has changed.
func TestALocatorNeverUsesAnIdThePageMadeUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := browsertest.Serve(t, "testdata") + "/generated-ids.html"
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, url); err != nil {
		t.Fatal(err)
	}
	out := s.Execute(ctx, browser.Command{Action: browser.ActionClick, Target: browser.Target{CSS: "todo-list >> li:nth-of-type(2) > button"}},
		browser.ExecOptions{Fingerprint: true, RequireLocator: true})
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	loc := out.Element.Locator
	if s := loc.String(); strings.Contains(s, "#") || strings.Contains(s, "todo-item") || strings.Contains(s, "css-") || strings.Contains(s, "sc-") {
		t.Fatalf("the locator %s uses a made-up id or class", s)
	}
	if err := s.Navigate(ctx, url); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx, loc); err != nil || n != 1 {
		t.Fatalf("after a reload %s matches %d elements (%v)", loc, n, err)
	}
	if out := s.Execute(ctx, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Target: loc, Value: "Done"}, browser.ExecOptions{}); out.Err != nil {
		t.Fatalf("after a reload %s is not an item's Done button: %v", loc, out.Err)
	}
	t.Logf("written as %s", loc)

	// An element with no name, role or text of its own: its locator is a
	// path, which must not go through made-up ids either.
	out = s.Execute(ctx, browser.Command{Action: browser.ActionClick, Target: browser.Target{CSS: "todo-list >> li:nth-of-type(2) > div"}},
		browser.ExecOptions{Fingerprint: true, RequireLocator: true})
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	grip := out.Element.Locator
	t.Logf("the grip is written as %s", grip)
	if strings.Contains(grip.String(), "grip-") || strings.Contains(grip.String(), "todo-item") || strings.Contains(grip.String(), "list-") {
		t.Fatalf("the locator %s uses a made-up id", grip)
	}
	if err := s.Navigate(ctx, url); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx, grip); err != nil || n != 1 {
		t.Fatalf("after a reload %s matches %d elements (%v)", grip, n, err)
	}
}

// TestTheDevicesAreThoseOfTheRunner: the device table a job emulates is the
// one the spec's devices['…'] reads under the installed @playwright/test.
func TestTheDevicesAreThoseOfTheRunner(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(browsertest.RunnerDir(), "node_modules", "playwright-core", "lib", "server", "deviceDescriptorsSource.json"))
	if err != nil {
		t.Fatalf("the runner's device table (run make setup): %v", err)
	}
	var theirs map[string]browser.Device
	if err := json.Unmarshal(raw, &theirs); err != nil {
		t.Fatal(err)
	}
	names := browser.DeviceNames()
	if len(names) != len(theirs) || len(names) < 100 {
		t.Fatalf("%d devices here, %d in the runner", len(names), len(theirs))
	}
	for _, n := range names {
		ours, _ := browser.DeviceNamed(n)
		if !reflect.DeepEqual(ours, theirs[n]) {
			t.Errorf("%s: %+v here, %+v in the runner", n, ours, theirs[n])
		}
	}
}

// TestARoleLessElementThatOnlyListensGetsARef: a div whose only sign of life
// is a contextmenu listener is listed with a ref and what it listens for,
// and a right-click on that ref reaches it.
func TestARoleLessElementThatOnlyListensGetsARef(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, browsertest.Serve(t, "testdata")+"/handlers.html"); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(snap.Text, "\n") {
		if strings.Contains(l, `"Project Beta"`) && strings.Contains(l, "[ref=") {
			line = l
		}
	}
	if !strings.Contains(line, "listens for contextmenu") {
		t.Fatalf("the right-click-only row is not listed as such:\n%s", snap.Text)
	}
	ref := line[strings.Index(line, "[ref=")+5 : strings.Index(line, "]")]
	out := s.Execute(ctx, browser.Command{Action: browser.ActionRightClick, Target: browser.Target{Ref: ref}}, browser.ExecOptions{Fingerprint: true, RequireLocator: true})
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	if out := s.Execute(ctx, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Target: browser.Target{CSS: "#picked"}, Value: "Menu for Project Beta"}, browser.ExecOptions{}); out.Err != nil {
		t.Fatalf("the right-click did not reach the row: %v", out.Err)
	}
}
