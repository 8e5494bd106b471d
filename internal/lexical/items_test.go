package lexical_test

import (
	"context"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/lexical"
)

// itemsShop is a shop whose products are cards with their own buttons, a
// basket whose rows have theirs, and a to-do list with one new-item field;
// every button says in the title what it did.
const itemsShop = `<!doctype html><title>Shop</title>
<script>function did(w) { document.title = w; }</script>
<main><section aria-label="Products">
<article><h3>Red Mug</h3><p>$12</p><button onclick="did('added Red Mug')">Add to basket</button></article>
<article><h3>Blue Mug</h3><p>$11</p><button onclick="did('added Blue Mug')">Add to basket</button></article>
<article><h3>Teapot</h3><p>$30</p><button onclick="did('added Teapot')">Add to basket</button></article>
</section>
<section aria-label="Basket"><h2>Basket</h2><ul>
<li>Apple <button onclick="did('removed Apple')">Remove</button></li>
<li>Pear <button onclick="did('removed Pear')">Remove</button></li>
</ul></section>
<section aria-label="To do"><h2>To do</h2>
<input placeholder="What needs to be done?" onkeydown="if (event.key === 'Enter') did('added task ' + this.value)">
<ul><li>Water the plants</li></ul></section></main>`

// TestAnItemsOwnControlIsTheOneItsNameLeadsTo: "Put the Red Mug in the
// basket", "Take Apple out of the cart", "Create a task named Pay rent",
// "Put Call mum on the list" act on the item's own button, or type into
// the page's one new-item field. Two items of the name, two new-item
// fields, or a name that holds more than a name go to the agent.
func TestAnItemsOwnControlIsTheOneItsNameLeadsTo(t *testing.T) {
	pages := map[string]string{
		"/shop": itemsShop,
		"/twins": `<!doctype html><title>Shop</title><article><h3>Red Mug</h3><button>Add to basket</button></article>
<article><h3>Red Mug</h3><button>Add to basket</button></article>`,
		"/two-lists": `<!doctype html><title>Lists</title><input placeholder="New task"> <input placeholder="New note">`,
	}
	srv, s, ctx := onPages(t, pages)
	for _, c := range []struct {
		page, step string
		did        string // the page's title once the commands ran; "" the agent's
	}{
		{"/shop", "Put the Red Mug in the basket", "added Red Mug"},
		{"/shop", "Add Teapot to the basket", "added Teapot"},
		{"/shop", `put "Blue Mug" into my basket`, "added Blue Mug"},
		{"/shop", "Take Apple out of the basket", "removed Apple"},
		{"/shop", "take the Pear out of the cart", "removed Pear"},
		{"/shop", "Create a task named Pay rent", "added task Pay rent"},
		{"/shop", `Add a todo called "Call mum"`, "added task Call mum"},
		{"/shop", "Put Call mum on the list", "added task Call mum"},
		{"/shop", "Put the Green Mug in the basket", ""},
		{"/shop", "Put the Red Mug and the Teapot in the basket", ""},
		{"/twins", "Put the Red Mug in the basket", ""},
		{"/two-lists", "Put Call mum on the list", ""},
	} {
		t.Run(c.step, func(t *testing.T) {
			resolveAndRun(t, ctx, s, srv.URL+c.page, c.step, "", c.did)
		})
	}
}

// resolveAndRun opens url, resolves step (trail the punctuation it ended
// with) and runs its commands; did is the title the page then shows, or
// "" when the step must go to the agent.
func resolveAndRun(t *testing.T, ctx context.Context, s *browser.Session, url, step, trail, did string) {
	t.Helper()
	if err := s.Navigate(ctx, url); err != nil {
		t.Fatal(err)
	}
	res, err := lexical.Resolve(ctx, s, step, lexical.Options{Wait: time.Millisecond, Trail: trail})
	if did == "" {
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
	if got := s.Title(); got != did {
		t.Fatalf("the page says %q, want %q (commands %v)", got, did, res.Commands)
	}
}
