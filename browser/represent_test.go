package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/browser"
	"github.com/webpilot/webpilot/browser/browsertest"
)

func longPage(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<!doctype html><html><body><h1>Catalogue</h1><input aria-label="Search products" data-testid="search" autofocus><button>Search</button><ul>`)
		for i := 1; i <= 120; i++ {
			fmt.Fprintf(&b, `<li><a href="/p/%d">Product %d</a></li>`, i, i)
		}
		b.WriteString(`</ul><div style="height:3000px"></div><button>Load more</button>
<label>Password <input type="password" value="hunter2-secret"></label></body></html>`)
		fmt.Fprint(w, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRepresentationElidesListsAndKeepsToTheViewport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, longPage(t)); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`link "Product 1"`, `link "Product 6"`, "(114 more listitem elided", "# viewport: y 0-800 of", `textbox "Search products"`, `[test_id="search"] [focused]`} {
		if !strings.Contains(snap.Text, want) {
			t.Errorf("representation lacks %q:\n%s", want, snap.Text)
		}
	}
	// Controls are never left out for being off screen; they say where they are.
	if !regexp.MustCompile(`button "Load more" \[ref=s\d+e\d+\] \[below\]`).MatchString(snap.Text) {
		t.Errorf("a button 3000px down is not kept with its side:\n%s", snap.Text)
	}
	if strings.Contains(snap.Text, "hunter2-secret") || strings.Contains(snap.Full, "hunter2-secret") {
		t.Fatal("a password value is shown")
	}
	// Refs of what is left out stay valid: inspect_page and scrolling reveal them.
	if !strings.Contains(snap.Full, `button "Load more"`) || len(snap.Refs) < 120 {
		t.Fatalf("the full text lost elements: %d refs", len(snap.Refs))
	}
	if len(snap.Text)*4 > snap.RawChars {
		t.Errorf("representation %d chars is not much smaller than the raw snapshot %d", len(snap.Text), snap.RawChars)
	}

	full, _ := s.Snapshot(ctx, browser.SnapshotOptions{FullPage: true})
	if !strings.Contains(full.Text, `button "Load more"`) {
		t.Error("the full-page option dropped an element")
	}
	small, _ := s.Snapshot(ctx, browser.SnapshotOptions{Budget: 200, FullPage: true})
	if !small.Truncated || len(small.Text) > 300 || !strings.Contains(small.Text, `textbox "Search products"`) {
		t.Errorf("budget trim should keep interactive lines first:\n%s", small.Text)
	}
}
