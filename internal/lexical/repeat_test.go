package lexical_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/lexical"
)

// TestARepeatedActionIsTheSameCommandThatOften: "Click Next three times",
// "press the plus button twice", "Press Tab twice" are one click or key
// press, repeated, on the one element the page has for it. Where the page
// has two such elements, or the step repeats what is not a click or a key
// (typing a value twice), or a count no step means, it goes to the agent.
func TestARepeatedActionIsTheSameCommandThatOften(t *testing.T) {
	pages := map[string]string{
		"/wizard": `<!doctype html><title>Wizard</title><h1>Step <span id="n">1</span></h1>
<label>Name <input name="name"></label>
<button id="next">Next</button> <button aria-label="plus" id="inc">+</button> <output id="qty">1</output>`,
		"/two": `<!doctype html><title>Wizard</title><section><h2>Shipping</h2><button>Next</button></section>
<section><h2>Billing</h2><button>Next</button></section>`,
	}
	srv, s, ctx := onPages(t, pages)
	for _, c := range []struct {
		page, step string
		action     browser.Action
		times      int // 0: the agent's
	}{
		{"/wizard", "Click Next three times", browser.ActionClick, 3},
		{"/wizard", "click the Next button twice", browser.ActionClick, 2},
		{"/wizard", "Press the plus button twice", browser.ActionClick, 2},
		{"/wizard", "Press Tab twice", browser.ActionPress, 2},
		{"/wizard", "Click Next 4 times.", browser.ActionClick, 4},
		{"/wizard", "Click Next once", browser.ActionClick, 1},
		{"/wizard", "Fill the name with Bob twice", "", 0},
		{"/wizard", "Click Next 500 times", "", 0},
		{"/two", "Click Next twice", "", 0},
	} {
		t.Run(c.step, func(t *testing.T) {
			if err := s.Navigate(ctx, srv.URL+c.page); err != nil {
				t.Fatal(err)
			}
			res, err := lexical.Resolve(ctx, s, c.step, lexical.Options{Wait: time.Millisecond})
			if c.times == 0 {
				if err == nil {
					t.Fatalf("resolved to %v, want the agent's", res.Commands)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Commands) != c.times {
				t.Fatalf("%d commands, want %d: %v", len(res.Commands), c.times, res.Commands)
			}
			for _, cmd := range res.Commands {
				if cmd.Action != c.action || !reflect.DeepEqual(cmd.Target, res.Commands[0].Target) || cmd.Value != res.Commands[0].Value {
					t.Errorf("command %+v, want %s on the same target as the first", cmd, c.action)
				}
			}
		})
	}
}
