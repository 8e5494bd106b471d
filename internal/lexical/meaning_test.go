package lexical_test

import (
	"testing"
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
			resolveAndRun(t, ctx, s, srv.URL+c.page, c.step, "", c.did)
		})
	}
}

// TestAWholeIntentIsTheFormThatAccountsForEveryValue: "Sign in as ada with
// password s3cret" and "Subscribe with a@b.c" fill a form and submit it
// when its fields and its one submit button account for every value and
// nothing else; a form with a field more, two such forms, or a password
// whose end is not sure go to the agent.
func TestAWholeIntentIsTheFormThatAccountsForEveryValue(t *testing.T) {
	const did = `<script>function did(f) { document.title = [...new FormData(f)].map(([k, v]) => k + '=' + v).join(' '); return false; }</script>`
	signIn := `<form onsubmit="return did(this)"><label>Username <input name="user"></label>
<label>Password <input name="pass" type="password"></label><label><input type="checkbox" name="keep"> Keep me signed in</label>
<button>Sign in</button></form>`
	pages := map[string]string{
		"/login": `<!doctype html><title>Login</title>` + did + `<h1>Welcome</h1>` + signIn + `<a href="#">Forgot your password?</a>`,
		"/login-otp": `<!doctype html><title>Login</title>` + did + `<form onsubmit="return did(this)"><label>Username <input name="user"></label>
<label>Password <input name="pass" type="password"></label><label>One-time code <input name="otp"></label><button>Log in</button></form>`,
		"/two-logins": `<!doctype html><title>Login</title>` + did + signIn + signIn,
		"/news": `<!doctype html><title>News</title>` + did + `<form onsubmit="return did(this)"><label>Email <input name="email" type="email"></label>
<button>Subscribe</button></form>`,
		"/news-name": `<!doctype html><title>News</title>` + did + `<form onsubmit="return did(this)"><label>Name <input name="name"></label>
<label>Email <input name="email" type="email"></label><button>Subscribe</button></form>`,
	}
	srv, s, ctx := onPages(t, pages)
	for _, c := range []struct {
		page, step, trail string
		did               string // the page's title once the commands ran; "" the agent's
	}{
		{"/login", "Sign in as ada with password s3cret", "", "user=ada pass=s3cret"},
		{"/login", `log in as "ada lovelace" using the password "pa ss"`, "", "user=ada lovelace pass=pa ss"},
		{"/login", "Sign in with the username ada and password {{PASSWORD}}", "", "user=ada pass={{PASSWORD}}"},
		{"/news", "Subscribe with a@b.c", "", "email=a@b.c"},
		{"/news", "Sign up for the newsletter with the email a@b.c", "", "email=a@b.c"},
		{"/login", "Sign in as ada with password SuperSecretPassword", "!", ""},
		{"/login-otp", "Sign in as ada with password s3cret", "", ""},
		{"/two-logins", "Sign in as ada with password s3cret", "", ""},
		{"/news-name", "Subscribe with a@b.c", "", ""},
		{"/login", "Sign in as ada with password s3cret and the code 1234", "", ""},
	} {
		t.Run(c.step+c.trail, func(t *testing.T) {
			resolveAndRun(t, ctx, s, srv.URL+c.page, c.step, c.trail, c.did)
		})
	}
}
