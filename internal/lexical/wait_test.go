package lexical_test

import (
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/lexical"
)

// TestAWaitForAnElementIsTheCheckThatWaits: "… and wait for the banner to
// go away", "wait until Done is shown" are the check that the element is
// hidden or shown, which waits (bounded) as a check does, on the one
// element the page has (one not there yet only by its quoted text); with
// two banners, "it", or an unquoted name of nothing on the page, the
// agent decides.
func TestAWaitForAnElementIsTheCheckThatWaits(t *testing.T) {
	pages := map[string]string{
		"/save": `<!doctype html><title>Save</title><div role="status" id="banner">Saving your changes</div>
<button>Save</button><p id="done" hidden>Done</p>`,
		"/two": `<!doctype html><title>Save</title><div class="banner">Saving</div><div class="banner">Syncing</div><button>Save</button>`,
	}
	srv, s, ctx := onPages(t, pages)
	for _, c := range []struct {
		page, step string
		assert     browser.Assertion // "": the agent's
		clauses    int
	}{
		{"/save", "Click Save and wait for the banner to go away", browser.AssertIsHidden, 2},
		{"/save", "wait until the saving banner disappears", browser.AssertIsHidden, 1},
		{"/save", "Wait for the saving message to be hidden", browser.AssertIsHidden, 1},
		{"/save", `Click Save, then wait until "Done" is shown`, browser.AssertIsVisible, 2},
		{"/save", "Click Save, then wait until Done is shown", "", 2},
		{"/save", "wait for the Save button to appear", browser.AssertIsVisible, 1},
		{"/two", "Click Save and wait for the banner to go away", "", 2},
		{"/save", "Click Save and wait for it to go away", "", 2},
	} {
		t.Run(c.page+" "+c.step, func(t *testing.T) {
			if err := s.Navigate(ctx, srv.URL+c.page); err != nil {
				t.Fatal(err)
			}
			clauses, err := lexical.Clauses(c.step)
			if err != nil || len(clauses) != c.clauses {
				t.Fatalf("clauses %+v, %v", clauses, err)
			}
			wait := clauses[len(clauses)-1]
			res, err := lexical.Resolve(ctx, s, wait.Text, lexical.Options{Wait: time.Millisecond})
			if c.assert == "" {
				if err == nil {
					t.Fatalf("%q resolved to %v, want the agent's", wait.Text, res.Commands)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", wait.Text, err)
			}
			if len(res.Commands) != 1 || res.Commands[0].Action != browser.ActionVerify || res.Commands[0].Assert != c.assert {
				t.Fatalf("%q: %+v, want a check %s", wait.Text, res.Commands, c.assert)
			}
		})
	}
}
