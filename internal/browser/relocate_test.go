package browser_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
)

// TestRelocateFindsDriftedElementsAndRefusesLookAlikes records elements of
// the demo app's list page, changes the app, and re-locates them: drift is
// found with a locator unique now; an element that is gone is not replaced
// by the most similar other one.
func TestRelocateFindsDriftedElementsAndRefusesLookAlikes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type want struct {
		found bool
		name  string // accessible name of the element found
	}
	add := browser.Target{Role: "button", Name: "Add", Exact: true}
	field := browser.Target{Role: "textbox", Name: "New item"}
	dismiss := browser.Target{Role: "button", Name: "Dismiss"}
	bread := browser.Target{Text: "Bread", Exact: true}
	cases := []struct {
		name    string
		changes []demoapp.Variation
		target  browser.Target
		opts    browser.RelocateOptions
		want    want
	}{
		{"renamed test id", []demoapp.Variation{demoapp.RenamedIDs}, add, browser.RelocateOptions{Visible: true}, want{true, "Add"}},
		{"reworded button", []demoapp.Variation{demoapp.Reworded}, add, browser.RelocateOptions{Visible: true}, want{true, "Add item"}},
		{"renamed and reworded field", []demoapp.Variation{demoapp.RenamedIDs, demoapp.Reworded}, field, browser.RelocateOptions{Visible: true}, want{true, "Item name"}},
		{"re-wrapped and reworded button", []demoapp.Variation{demoapp.Rewrapped, demoapp.Reworded, demoapp.RenamedIDs}, add, browser.RelocateOptions{Visible: true}, want{true, "Add item"}},
		{"button removed", []demoapp.Variation{demoapp.MissingAdd}, add, browser.RelocateOptions{Visible: true}, want{}},
		{"banner removed", []demoapp.Variation{demoapp.TipsGone}, dismiss, browser.RelocateOptions{Visible: true}, want{}},
		{"text of a presence check never changes", []demoapp.Variation{demoapp.RenamedIDs}, bread, browser.RelocateOptions{SameText: true}, want{true, ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			app := demoapp.New(demoapp.Options{})
			srv := httptest.NewServer(app)
			t.Cleanup(srv.Close)
			s := browsertest.Session(t)
			if err := s.Navigate(ctx, srv.URL+"/list"); err != nil {
				t.Fatal(err)
			}
			_, fp, err := s.Read(ctx, c.target, "")
			if err != nil {
				t.Fatalf("record %s: %v", c.target, err)
			}
			if err := app.SetVariant(c.changes...); err != nil {
				t.Fatal(err)
			}
			if err := s.Navigate(ctx, srv.URL+"/list"); err != nil {
				t.Fatal(err)
			}
			rel, err := s.Relocate(ctx, *fp, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("score %.2f runner-up %.2f of %d: %s", rel.Score, rel.RunnerUp, rel.Candidates, rel.Reason)
			if found := rel.Element != nil; found != c.want.found {
				t.Fatalf("found=%v, want %v (%s)", found, c.want.found, rel.Reason)
			}
			if rel.Element == nil {
				return
			}
			if c.want.name != "" && rel.Element.Name != c.want.name {
				t.Errorf("found %q, want %q", rel.Element.Name, c.want.name)
			}
			if n, err := s.Count(ctx, rel.Element.Locator); err != nil || n != 1 {
				t.Errorf("the new locator %s finds %d elements (%v)", rel.Element.Locator, n, err)
			}
		})
	}
}

// TestSimilarityPrefersTheSameElementRenamed is the scorer alone.
func TestSimilarityPrefersTheSameElementRenamed(t *testing.T) {
	t.Parallel()
	old := browser.Fingerprint{Role: "button", Name: "Add", Tag: "button", TestID: "add-button", Text: "Add",
		Attributes: map[string]string{"type": "submit"}, Tags: "html body main form button"}
	renamed := old
	renamed.TestID, renamed.Name, renamed.Text, renamed.Tags = "add-entry-btn", "Add item", "Add item", "html body main form fieldset div span button"
	other := browser.Fingerprint{Role: "button", Name: "Delete Bread", Tag: "button", Text: "Delete",
		Attributes: map[string]string{}, Tags: "html body main ul li button"}
	if a, b := browser.Similarity(old, renamed), browser.Similarity(old, other); a < browser.RelocateMinScore || a-b < browser.RelocateMinMargin {
		t.Fatalf("renamed %.2f, other %.2f", a, b)
	}
	if s := browser.Similarity(old, old); s != 1 {
		t.Fatalf("an element is not fully similar to itself: %.2f", s)
	}
}
