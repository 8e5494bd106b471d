package browser_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

func TestSetOfMarksLabelsInteractiveElementsInView(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, demo(t)+"/login"); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	img, marks, err := s.SetOfMarks(ctx, snap, 80)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range marks {
		if !snap.Refs[m.Ref] || m.W <= 0 || m.H <= 0 {
			t.Errorf("bad mark %+v", m)
		}
		names[m.Role+":"+m.Name] = true
	}
	for _, want := range []string{"textbox:Email", "textbox:Password", "button:Sign in", "checkbox:Remember me", "link:Back to start"} {
		if !names[want] {
			t.Errorf("no mark for %s (marks %+v)", want, marks)
		}
	}
	if p := os.Getenv("WEBPILOT_SAVE_MARKS"); p != "" {
		_ = os.WriteFile(p, img, 0o644)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil || cfg.Width != 1280 || cfg.Height != 800 {
		t.Fatalf("screenshot is not a 1280x800 PNG: %+v %v", cfg, err)
	}
	// The overlay is removed again: the page is as it was.
	if n, _ := s.Page().Locator("#__webpilot_marks").Count(); n != 0 {
		t.Fatal("the marks overlay was left in the page")
	}
}
