package lexical_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/lexical"
)

// trailPage is a sign-in form with a dropdown and two messages; answer is
// the dropdown's first option.
func trailPage(answer string) string {
	return fmt.Sprintf(`<!doctype html><title>Sign in</title><h1>Welcome!</h1><p id="status">Saved</p>
<form><label>Username <input name="username"></label><label>Password <input type="password" name="password"></label>
<label>Answer <select name="answer"><option>%s</option><option>No</option></select></label>
<button type="submit">Sign in</button></form>`, answer)
}

// TestAValueEndingWhereTheSentenceEndsIsNeverGuessed: a compound step
// filling a user name and a password written unquoted and ending in "!"
// typed the password without it, reported the step passed, and the login
// failed two steps later. The "!" may be the value's or the sentence's:
// it is kept where the page shows an option or text that has it, left
// off where the page shows one without it, and where the page cannot tell
// (a field takes anything) the clause goes to the agent saying why.
func TestAValueEndingWhereTheSentenceEndsIsNeverGuessed(t *testing.T) {
	pages := map[string]string{"/bang": trailPage("Yes!"), "/plain": trailPage("Yes")}
	srv, s, ctx := onPages(t, pages)
	for _, c := range []struct {
		page, step string
		want       []string // each clause's command value, or "agent: why"
	}{
		{"/bang", "Fill username with tomsmith and password with SuperSecretPassword!", []string{"fill tomsmith", "agent: written unquoted"}},
		{"/bang", `Fill the password with "SuperSecretPassword!"`, []string{"fill SuperSecretPassword!"}},
		{"/bang", "Fill the password with SuperSecretPassword", []string{"fill SuperSecretPassword"}},
		{"/bang", "Set the answer dropdown to Yes!", []string{"select Yes!"}},
		{"/plain", "Set the answer dropdown to Yes!", []string{"select Yes"}},
		{"/bang", "Verify the heading says Welcome!", []string{"verify Welcome!"}},
		{"/bang", "Verify the status says Saved.", []string{"verify Saved"}},
		{"/bang", "Verify the status says Stored.", []string{"agent: written unquoted"}},
	} {
		t.Run(c.page+" "+c.step, func(t *testing.T) {
			if err := s.Navigate(ctx, srv.URL+c.page); err != nil {
				t.Fatal(err)
			}
			clauses, err := lexical.Clauses(c.step)
			if err != nil || len(clauses) != len(c.want) {
				t.Fatalf("clauses %+v, %v", clauses, err)
			}
			for k, cl := range clauses {
				res, err := lexical.Resolve(ctx, s, cl.Text, lexical.Options{Wait: time.Millisecond, Trail: cl.Trail})
				got := ""
				switch {
				case err != nil:
					got = "agent: " + err.Error()
				case len(res.Commands) == 1:
					cmd := res.Commands[0]
					got = string(cmd.Action) + " " + cmd.Value
					if cmd.Action == browser.ActionVerify {
						got = "verify " + cmd.Value
					}
				default:
					got = fmt.Sprint(res.Commands)
				}
				if want := c.want[k]; got != want && !(strings.HasPrefix(want, "agent: ") && strings.HasPrefix(got, "agent: ") &&
					strings.Contains(got, strings.TrimPrefix(want, "agent: "))) {
					t.Errorf("clause %q: %s, want %s", cl.Text, got, want)
				}
			}
		})
	}
}

// onPages serves pages (by path) and opens a browser session for a
// minute's steps on them.
func onPages(t *testing.T, pages map[string]string) (*httptest.Server, *browser.Session, context.Context) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, pages[r.URL.Path])
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return srv, browsertest.Session(t), ctx
}
