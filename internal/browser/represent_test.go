package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

func longPage(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<!doctype html><html><body><h1>Catalogue</h1><input aria-label="Search products" data-testid="search" autofocus><button>Search</button><div>` +
			strings.Repeat("In view, the shop's opening words are kept. ", 3) + `</div><ul>`)
		for i := 1; i <= 120; i++ {
			fmt.Fprintf(&b, `<li><a href="/p/%d">Product %d</a></li>`, i, i)
		}
		b.WriteString(`</ul><div style="height:3000px"></div><div>` + strings.Repeat("Far below, terms nobody reads on the first screen. ", 8) + `</div><button>Load more</button>
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
	// Every product the viewport shows is listed; the rest of the list is
	// one line saying how many were left out.
	v, err := s.Page().Evaluate(`() => [...document.querySelectorAll('li')].filter(e => e.getBoundingClientRect().top < innerHeight).length`)
	if err != nil {
		t.Fatal(err)
	}
	inView, _ := v.(int)
	if inView < 10 || inView > 100 {
		t.Fatalf("%v products in view: the page did not lay out as expected", v)
	}
	for i := 1; i <= 120; i++ {
		shown := strings.Contains(snap.Text, fmt.Sprintf(`link "Product %d"`, i))
		if shown != (i <= inView) {
			t.Errorf("product %d (in view: %v) shown: %v", i, i <= inView, shown)
		}
	}
	for _, want := range []string{fmt.Sprintf("(%d more listitem elided", 120-inView), "# viewport: y 0-800 of", `textbox "Search products"`, `[test_id="search"] [focused]`,
		"In view, the shop's opening words"} {
		if !strings.Contains(snap.Text, want) {
			t.Errorf("representation lacks %q:\n%s", want, snap.Text)
		}
	}
	// Long text below the viewport is left out (and counted); the full text keeps it.
	if strings.Contains(snap.Text, "Far below") || !strings.Contains(snap.Full, "Far below") {
		t.Errorf("long off-screen text: shown %v, in the full text %v", strings.Contains(snap.Text, "Far below"), strings.Contains(snap.Full, "Far below"))
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
	if len(snap.Text)*2 > snap.RawChars {
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

// TestASmallFormSaysEachThingOnce: a page that fits the viewport gets no
// viewport header, a label's text is not repeated beside the control it
// names, and a native select's options are listed without refs of their
// own (select takes the label) — while every control keeps its ref.
func TestASmallFormSaysEachThingOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><body><main><h1>Sign up</h1>
<label for="n">Full name</label> <input id="n">
<label for="p">Plan</label> <select id="p"><option>Free</option><option>Team</option></select>
<label><input type="checkbox"> I accept the terms</label>
<p>Full name</p><button>Create account</button></main></body></html>`)
	}))
	t.Cleanup(srv.Close)
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, unwanted := range []string{"# viewport", "- text: Full name", "- text: Plan", "- text: I accept the terms"} {
		if strings.Contains(snap.Text, unwanted) {
			t.Errorf("representation has %q:\n%s", unwanted, snap.Text)
		}
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`textbox "Full name" \[ref=s\d+e\d+\]`),
		regexp.MustCompile(`combobox "Plan" \[ref=s\d+e\d+\]`),
		regexp.MustCompile(`(?m)- option "Free" \[selected\]$`),
		regexp.MustCompile(`(?m)- option "Team"$`),
		regexp.MustCompile(`checkbox "I accept the terms" \[ref=s\d+e\d+\]`),
		regexp.MustCompile(`paragraph \[ref=s\d+e\d+\]: Full name`), // text of its own, not a label
	} {
		if !want.MatchString(snap.Text) {
			t.Errorf("representation lacks %s:\n%s", want, snap.Text)
		}
	}
}

// TestABusyPageStillGetsItsSnapshot: a page whose main thread is busy for
// longer than the first snapshot timeout is read on the retry, not failed.
func TestABusyPageStillGetsItsSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, longPage(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Page().Evaluate(`() => { setTimeout(() => { const end = Date.now() + 6500; while (Date.now() < end); }, 50); }`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the page is busy now
	start := time.Now()
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatalf("snapshot of a page busy for 6.5 s failed after %s: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if !strings.Contains(snap.Text, `textbox "Search products"`) {
		t.Fatalf("the snapshot taken after the busy spell lacks the page:\n%s", snap.Text)
	}
}
