package lexical_test

import (
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/lexical"
)

// TestAControlIsChosenByWhatItMeans: "Order the results by date, newest
// first" picks the sort option "Date (newest first)", "Set the quantity box
// to 7" fills the quantity spinbutton, "Sign off" clicks the page's one
// Logout; two options or controls that fit go to the agent.
func TestAControlIsChosenByWhatItMeans(t *testing.T) {
	const did = `<script>function did(w) { document.title = w; }</script>`
	pages := map[string]string{
		"/results": `<!doctype html><title>Results</title>` + did + `
<label>Sort by <select onchange="did('sorted ' + this.value)"><option>Relevance</option><option>Price (low to high)</option>
<option>Date (newest first)</option><option>Date (oldest first)</option></select></label>
<label>Quantity <input type="number" value="1" min="1" oninput="did('qty ' + this.value)"></label>
<nav><a href="#top" onclick="did('signed out')">Logout</a></nav>`,
		"/two-qty": `<!doctype html><title>Cart</title><label>Quantity <input type="number" value="1"></label>
<label>Quantity <input type="number" value="2"></label>`,
		"/two-ways": `<!doctype html><title>Account</title><button>Log out</button> <a href="#">Sign out</a>`,
		"/none":     `<!doctype html><title>Account</title><button>Log in</button>`,
	}
	srv, s, ctx := onPages(t, pages)
	for _, c := range []struct {
		page, step string
		did        string // the page's title once the commands ran; "" the agent's
	}{
		{"/results", "Order the results by date, newest first", "sorted Date (newest first)"},
		{"/results", "Sort by price", "sorted Price (low to high)"},
		{"/results", "sort the list by date (oldest first)", "sorted Date (oldest first)"},
		{"/results", "Set the quantity box to 7", "qty 7"},
		{"/results", "Sign off", "signed out"},
		{"/results", "log out of the app", "signed out"},
		{"/results", "Order the results by date", ""}, // newest or oldest?
		{"/two-qty", "Set the quantity box to 7", ""},
		{"/two-ways", "Sign off", ""},
		{"/none", "Log out", ""},
	} {
		t.Run(c.step, func(t *testing.T) {
			if err := s.Navigate(ctx, srv.URL+c.page); err != nil {
				t.Fatal(err)
			}
			res, err := lexical.Resolve(ctx, s, c.step, lexical.Options{Wait: time.Millisecond})
			if c.did == "" {
				if err == nil {
					t.Fatalf("resolved to %v, want the agent's", res.Commands)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, cmd := range res.Commands {
				if out := s.Execute(ctx, cmd, browser.ExecOptions{}); out.Err != nil {
					t.Fatalf("%+v: %v", cmd, out.Err)
				}
			}
			if got := s.Title(); got != c.did {
				t.Fatalf("the page says %q, want %q (commands %v)", got, c.did, res.Commands)
			}
		})
	}
}
