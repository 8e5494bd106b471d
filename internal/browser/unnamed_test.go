package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

// unnamedForm serves a sign-up form whose checkboxes have no label, as
// forms written without accessibility do; ?v=2 re-ids and re-wraps the
// form, ?v=3 also adds a third checkbox.
func unnamedForm(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, open, close, extra := "signup", "", "", ""
		switch r.URL.Query().Get("v") {
		case "2":
			id, open, close = "signup-form-v2", "<div class=card>", "</div>"
		case "3":
			id, open, close, extra = "signup-form-v2", "<div class=card>", "</div>", "<input type=checkbox> offers<br>"
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><html><head><title>sign up</title></head><body><h1>Sign up</h1>%s
<form id=%q onsubmit="return false"><input type=checkbox> newsletter<br><input type=checkbox> terms<br>%s
<button>Create account</button></form>%s</body></html>`, open, id, extra, close)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestAnUnnamedElementIsFoundByRoleAndPosition: the first of two
// unlabelled checkboxes is written as the first checkbox, not as a path
// through the form's id, so the spec survives the form being re-ided and
// re-wrapped; and a recorded structural path is re-located to it by its
// place among look-alikes that kept their number, never when one was added.
func TestAnUnnamedElementIsFoundByRoleAndPosition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := unnamedForm(t)
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, base+"/"); err != nil {
		t.Fatal(err)
	}
	out := s.Execute(ctx, browser.Command{Action: browser.ActionCheck, Target: browser.Target{CSS: "#signup > input:nth-of-type(1)"}},
		browser.ExecOptions{Fingerprint: true, RequireLocator: true})
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	got := out.Element.Locator
	if got.Role != "checkbox" || got.Nth == nil || *got.Nth != 0 || got.CSS != "" {
		t.Fatalf("the unlabelled checkbox is written as %+v, want the first checkbox", got)
	}
	recorded := *out.Element

	for _, tc := range []struct {
		version string
		found   bool
	}{{"2", true}, {"3", false}} {
		t.Run("version "+tc.version, func(t *testing.T) {
			s := browsertest.Session(t)
			if err := s.Navigate(ctx, base+"/?v="+tc.version); err != nil {
				t.Fatal(err)
			}
			if tc.found {
				// The written locator still finds it.
				if out := s.Execute(ctx, browser.Command{Action: browser.ActionCheck, Target: got}, browser.ExecOptions{}); out.Err != nil {
					t.Fatalf("the written locator broke: %v", out.Err)
				}
			}
			old := recorded
			old.Locator = browser.Target{CSS: "#signup > input:nth-of-type(1)"}
			rel, err := s.Relocate(ctx, old, browser.RelocateOptions{Visible: true})
			if err != nil {
				t.Fatal(err)
			}
			if (rel.Element != nil) != tc.found {
				t.Fatalf("re-located: %+v (%s), want found: %v", rel.Element, rel.Reason, tc.found)
			}
			if rel.Element != nil && (rel.Element.Index != 1 || rel.Element.Locator.Role != "checkbox") {
				t.Fatalf("re-located to %+v, want the first checkbox", rel.Element)
			}
		})
	}
}
