package browser_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

// exec runs one command and fails the test if it fails.
func exec(t *testing.T, s *browser.Session, c browser.Command, o browser.ExecOptions) browser.Outcome {
	t.Helper()
	out := s.Execute(context.Background(), c, o)
	if out.Err != nil {
		t.Fatalf("%s %s: %v", c.Describe(), c.Target, out.Err)
	}
	return out
}

func status(t *testing.T, s *browser.Session, want string) {
	t.Helper()
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Value: want, Target: browser.Target{Role: "status"}}, browser.ExecOptions{})
}

func open(t *testing.T, page string) *browser.Session {
	t.Helper()
	s := browsertest.Session(t)
	if err := s.Navigate(context.Background(), testdata(t)+"/"+page); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDialogsAreReportedAndAnsweredAsCommandsSay(t *testing.T) {
	t.Parallel()
	s := open(t, "dialogs.html")
	button := func(name string) browser.Target { return browser.Target{Role: "button", Name: name} }
	// Unanswered: dismissed, as the test runner does, and reported.
	exec(t, s, browser.Command{Action: browser.ActionClick, Target: button("Delete")}, browser.ExecOptions{})
	status(t, s, "kept")
	exec(t, s, browser.Command{Action: browser.ActionDialog, Value: "accept"}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionClick, Target: button("Delete")}, browser.ExecOptions{})
	status(t, s, "deleted")
	exec(t, s, browser.Command{Action: browser.ActionDialog, Value: "accept:Ada"}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionClick, Target: button("Greet")}, browser.ExecOptions{})
	status(t, s, "hello Ada")
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertDialogContains, Value: "Your name"}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionClick, Target: button("Save")}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertDialogContains, Value: "Saved!"}, browser.ExecOptions{})
	if out := s.Execute(context.Background(), browser.Command{Action: browser.ActionVerify, Assert: browser.AssertDialogContains, Value: "Deleted"}, browser.ExecOptions{Timeout: 300e6}); out.Err == nil {
		t.Fatal("a dialog check passed on another dialog's message")
	}
	got := s.Dialogs()
	want := []browser.Dialog{{Type: "confirm", Message: "Delete the item?", Answer: "dismiss", Page: 1}, {Type: "confirm", Message: "Delete the item?", Answer: "accept", Page: 1},
		{Type: "prompt", Message: "Your name?", Answer: "accept", PromptText: "Ada", Page: 1}, {Type: "alert", Message: "Saved!", Answer: "dismiss", Page: 1}}
	if len(got) != len(want) {
		t.Fatalf("dialogs %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("dialog %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if out := s.Execute(context.Background(), browser.Command{Action: browser.ActionDialog, Value: "maybe"}, browser.ExecOptions{}); out.Err == nil {
		t.Error("an unknown dialog answer was accepted")
	}
}

func TestPopupsOpenAsPagesTheSessionCanSwitchToAndClose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t, "popup.html")
	exec(t, s, browser.Command{Action: browser.ActionClick, Target: browser.Target{Role: "link", Name: "Open help"}}, browser.ExecOptions{})
	s.Settle(ctx, browser.SettleOptions{})
	pages := s.Pages()
	for start := time.Now(); (len(pages) < 2 || pages[1].URL == "") && time.Since(start) < 5*time.Second; pages = s.Pages() {
		// A loaded machine may see the popup after the page settled, or
		// list the tab before its URL commits.
		time.Sleep(20 * time.Millisecond)
	}
	if len(pages) != 2 || !strings.Contains(pages[1].URL, "popup-target.html") || !pages[0].Current {
		t.Fatalf("the new tab is not listed: %+v", pages)
	}
	exec(t, s, browser.Command{Action: browser.ActionSwitchPage, Value: "2"}, browser.ExecOptions{})
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil || !strings.Contains(snap.Text, `heading "Help centre"`) || !strings.Contains(snap.Text, "# pages:") {
		t.Fatalf("the representation is not of the new page: %v\n%s", err, snap.Text)
	}
	exec(t, s, browser.Command{Action: browser.ActionClick, Target: browser.Target{Ref: refOn(t, snap.Text, "Was this helpful?")}}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertIsVisible, Target: browser.Target{Role: "button", Name: "Helpful, thanks"}}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionClosePage}, browser.ExecOptions{})
	if s.CurrentPage() != 1 || !strings.HasSuffix(s.URL(), "popup.html") {
		t.Fatalf("closing the popup did not return to the opener: page %d %s", s.CurrentPage(), s.URL())
	}
	// A popup is under the same URL policy: one to a refused host is blocked.
	if _, err := s.Page().Evaluate(`() => window.open('http://169.254.169.254/latest/meta-data')`); err != nil {
		t.Fatal(err)
	}
	s.Settle(ctx, browser.SettleOptions{})
	blocked := false
	for _, d := range s.Denied() {
		blocked = blocked || strings.Contains(d, "169.254.169.254")
	}
	if !blocked {
		t.Fatal("a popup reached a refused address")
	}
}

func TestUploadSetsTheJobsFilesOnInputsAndChoosers(t *testing.T) {
	t.Parallel()
	s := open(t, "upload.html")
	files := []browser.File{{Name: "notes.txt", MimeType: "text/plain", Content: []byte("hello world")}, {Name: "me.png", MimeType: "image/png", Content: []byte("\x89PNG fake")}}
	out := exec(t, s, browser.Command{Action: browser.ActionUpload, Target: browser.Target{Label: "Attachment"}, Value: "notes.txt"}, browser.ExecOptions{Files: files})
	if out.Via != "file-input" {
		t.Errorf("via %q", out.Via)
	}
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Value: "notes.txt 11B text/plain", Target: browser.Target{TestID: "attached"}}, browser.ExecOptions{})
	// The input is hidden behind a styled button: the button's file chooser takes the file.
	out = exec(t, s, browser.Command{Action: browser.ActionUpload, Target: browser.Target{Role: "button", Name: "Choose avatar"}, Value: "me.png"}, browser.ExecOptions{Files: files})
	if out.Via != "file-chooser" {
		t.Errorf("via %q", out.Via)
	}
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Value: "avatar: me.png", Target: browser.Target{TestID: "avatar-status"}}, browser.ExecOptions{})
	if out := s.Execute(context.Background(), browser.Command{Action: browser.ActionUpload, Target: browser.Target{Label: "Attachment"}, Value: "/etc/passwd"}, browser.ExecOptions{Files: files}); out.Err == nil || !strings.Contains(out.Err.Error(), "no file named") {
		t.Fatalf("a file the job does not carry was uploaded: %v", out.Err)
	}
}

func TestTextEntryWorksInRichTextEditorsAndFailsWithoutEffect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t, "editor.html")
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The editor itself has a handle too (the aria snapshot gives a
	// role-less contenteditable no line of its own).
	if !strings.Contains(snap.Text, `- editable "Initial comment" [ref=`) {
		t.Fatalf("the editor has no handle:\n%s", snap.Text)
	}
	exec(t, s, browser.Command{Action: browser.ActionFill, Target: browser.Target{Ref: refOn(t, snap.Text, `editable "Initial comment"`)}, Value: "First"}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Value: "First", Target: browser.Target{CSS: ".editor"}}, browser.ExecOptions{})
	// The model sees paragraphs inside the editors; text goes into the editor they belong to.
	snap, err = s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exec(t, s, browser.Command{Action: browser.ActionFill, Target: browser.Target{Ref: refOn(t, snap.Text, "paragraph")}, Value: "Looks good to me"}, browser.ExecOptions{})
	out := exec(t, s, browser.Command{Action: browser.ActionFill, Target: browser.Target{Ref: refOn(t, snap.Text, "Draft text")}, Value: "Final text"}, browser.ExecOptions{Fingerprint: true})
	if out.Element == nil || out.Element.Tag != "body" || len(out.Element.Frames) != 1 {
		t.Errorf("the editor in the frame is not what was filled: %+v", out.Element)
	}
	exec(t, s, browser.Command{Action: browser.ActionType, Target: browser.Target{CSS: "body", Frames: []string{"#rte"}}, Value: " and more"}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Value: "Looks good to me", Target: browser.Target{CSS: ".editor"}}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Value: "Final text and more", Target: browser.Target{CSS: "body", Frames: []string{"#rte"}}}, browser.ExecOptions{})
	// A field that rejects what is typed: the command fails instead of reporting ok.
	if out := s.Execute(ctx, browser.Command{Action: browser.ActionFill, Target: browser.Target{Label: "Locked field"}, Value: "abc"}, browser.ExecOptions{}); out.Err == nil || !strings.Contains(out.Err.Error(), "no effect") {
		t.Fatalf("a fill without effect reported: %v", out.Err)
	}
}

func TestOrderSelectedLabelSliderAndClearing(t *testing.T) {
	t.Parallel()
	s := open(t, "sort.html")
	price := browser.Target{CSS: "#products tbody td:nth-child(2)"}
	if out := s.Execute(context.Background(), browser.Command{Action: browser.ActionVerify, Assert: browser.AssertSortedAscending, Target: price}, browser.ExecOptions{Timeout: 500e6}); out.Err == nil {
		t.Fatal("an unsorted column passed a sorted check")
	}
	exec(t, s, browser.Command{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: "Price"}}, browser.ExecOptions{})
	if out := exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertSortedAscending, Target: price}, browser.ExecOptions{}); out.Via != "number" {
		t.Errorf("prices compared as %q", out.Via)
	}
	// As text, "$100.00" sorts before "$12.50": numeric awareness matters.
	if out := s.Execute(context.Background(), browser.Command{Action: browser.ActionVerify, Assert: browser.AssertSortedAscending, Value: "text", Target: price}, browser.ExecOptions{Timeout: 500e6}); out.Err == nil {
		t.Fatal("prices in numeric order passed as text order")
	}
	exec(t, s, browser.Command{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: "Added"}}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertSortedAscending, Value: "date", Target: browser.Target{CSS: "#products tbody td:nth-child(3)"}}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: "Name"}}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertSortedAscending, Target: browser.Target{CSS: "#products tbody td:nth-child(1)"}}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: "Name"}}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertSortedDescending, Target: browser.Target{CSS: "#products tbody td:nth-child(1)"}}, browser.ExecOptions{})
	snap, _ := s.Snapshot(context.Background(), browser.SnapshotOptions{})
	if out := exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertSortedAscending, Target: browser.Target{Ref: refOn(t, snap.Text, `list "Tags"`)}}, browser.ExecOptions{}); out.Via != "text listitem" {
		t.Errorf("a list's items compared as %q", out.Via)
	}

	w := open(t, "widgets.html")
	exec(t, w, browser.Command{Action: browser.ActionSelect, Target: browser.Target{Label: "Size"}, Value: "Large"}, browser.ExecOptions{})
	exec(t, w, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertSelectedLabel, Value: "Large", Target: browser.Target{Label: "Size"}}, browser.ExecOptions{})
	if out := w.Execute(context.Background(), browser.Command{Action: browser.ActionVerify, Assert: browser.AssertSelectedLabel, Value: "Medium", Target: browser.Target{Label: "Size"}}, browser.ExecOptions{Timeout: 300e6}); out.Err == nil {
		t.Fatal("selectedLabel passed for an option that is not selected")
	}
	if out := exec(t, w, browser.Command{Action: browser.ActionFill, Target: browser.Target{Role: "slider", Name: "Volume"}, Value: "70"}, browser.ExecOptions{}); out.Via != "range" {
		t.Errorf("slider set via %q", out.Via)
	}
	exec(t, w, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertValueEquals, Value: "70", Target: browser.Target{Role: "slider", Name: "Volume"}}, browser.ExecOptions{})

	e := open(t, "editor.html")
	exec(t, e, browser.Command{Action: browser.ActionFill, Target: browser.Target{CSS: ".editor"}, Value: ""}, browser.ExecOptions{})
	exec(t, e, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Value: "", Target: browser.Target{CSS: ".editor"}}, browser.ExecOptions{})
}

func TestNestedMatchesThroughSlotsNameTheInnermost(t *testing.T) {
	t.Parallel()
	s := open(t, "shadow-slot.html")
	n, err := s.Count(context.Background(), browser.Target{Text: "Quarterly report"})
	if err != nil || n != 1 {
		t.Fatalf("slotted text counts %d matches: %v", n, err)
	}
	out := exec(t, s, browser.Command{Action: browser.ActionClick, Target: browser.Target{Text: "Quarterly report"}}, browser.ExecOptions{Fingerprint: true})
	if out.Element.Tag != "span" {
		t.Errorf("the outer match was used: %+v", out.Element)
	}
	// A checkbox repeated in each item of a shadow list: its locator is scoped by its item, and unique.
	out = exec(t, s, browser.Command{Action: browser.ActionCheck, Target: browser.Target{Role: "checkbox", Within: &browser.Target{Role: "listitem", HasText: "b"}}}, browser.ExecOptions{Fingerprint: true, RequireLocator: true})
	loc := out.Element.Locator
	if loc.CSS != "" || loc.Within == nil {
		t.Errorf("a structural or unscoped locator was chosen: %+v", loc)
	}
	if n, _ := s.Count(context.Background(), loc); n != 1 {
		t.Errorf("the locator matches %d elements", n)
	}
}

// TestSlottedTextIsCheckedOnTheElementThatOwnsIt: a card's heading shows
// its title through a slot and holds no text of its own; a text check on
// the heading's ref is made on the light-DOM element that owns the text,
// and the spec's locator is that element's.
func TestSlottedTextIsCheckedOnTheElementThatOwnsIt(t *testing.T) {
	t.Parallel()
	s := open(t, "shadow-slot.html")
	snap, err := s.Snapshot(context.Background(), browser.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := refOn(t, snap.Text, `heading "Quarterly report"`)
	out := exec(t, s, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTextEquals, Target: browser.Target{Ref: ref}, Value: "Quarterly report"},
		browser.ExecOptions{Fingerprint: true, RequireLocator: true})
	if out.Element.Tag != "span" || out.Element.Locator.CSS != "" {
		t.Fatalf("the check was written for %s %s, want the slotted span by a robust locator", out.Element.Tag, out.Element.Locator)
	}
}

// TestWhatChangedInARerenderedListIsWhatChanged: Playwright numbers a
// snapshot's refs by position, so a list that re-renders with an item
// added at its top shifts every ref after it; the delta still names only
// the new item and the count it changed, and a ticked box as one change,
// never the elements that merely moved as changed into one another.
func TestWhatChangedInARerenderedListIsWhatChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t, "rerender.html")
	snap := func() browser.Snapshot {
		t.Helper()
		sn, err := s.Snapshot(ctx, browser.SnapshotOptions{Budget: 12000})
		if err != nil {
			t.Fatal(err)
		}
		return sn
	}
	before := snap()
	exec(t, s, browser.Command{Action: browser.ActionFill, Target: browser.Target{Label: "New todo"}, Value: "Feed the cat"}, browser.ExecOptions{})
	exec(t, s, browser.Command{Action: browser.ActionPress, Value: "Enter"}, browser.ExecOptions{})
	after := snap()
	d := browser.DiffSnapshots(before, after, 10)
	text := d.String()
	if first := refOn(t, after.Text, "Toggle Feed the cat"); !strings.Contains(text, "+ listitem") || len(d.Appeared) != 2 {
		t.Errorf("the new item (its box %s) is not what appeared:\n%s", first, text)
	}
	for _, want := range []string{`+ listitem`, `+ checkbox "Toggle Feed the cat"`, `4 items left (was: paragraph: 3 items left)`} {
		if !strings.Contains(text, want) {
			t.Errorf("the delta does not say %q:\n%s", want, text)
		}
	}
	if len(d.Disappeared) != 0 || strings.Contains(text, "Toggle Buy milk") || strings.Contains(text, `link "All"`) || strings.Contains(text, "Clear completed") {
		t.Errorf("elements that only moved are reported:\n%s", text)
	}

	exec(t, s, browser.Command{Action: browser.ActionCheck, Target: browser.Target{Role: "checkbox", Name: "Toggle Walk the dog"}}, browser.ExecOptions{})
	d = browser.DiffSnapshots(after, snap(), 10)
	text = d.String()
	if len(d.Appeared) != 0 || len(d.Disappeared) != 0 || !strings.Contains(text, `~ checkbox "Toggle Walk the dog" [checked]`) || !strings.Contains(text, "3 items left") {
		t.Errorf("ticking one box:\n%s", text)
	}
}
