package console_test

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/console"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// noAPI is the console's API seam for tests that open no job page; keys
// are checked in the store, without a limit.
type noAPI struct{ st *store.Store }

func (a noAPI) Authenticate(r *http.Request, key string) (store.Tenant, error) {
	return a.st.Authenticate(r.Context(), key)
}

func (noAPI) JobView(context.Context, store.Job) api.JobView { return api.JobView{} }
func (noAPI) Watch(string, string) (<-chan struct{}, func(), bool) {
	return nil, nil, false
}

func newConsole(t *testing.T) (*httptest.Server, *store.Store) {
	t.Helper()
	st := storetest.New(t)
	return newConsoleWith(t, st, noAPI{st}), st
}

// newConsoleWith serves the console over st with its API seam a.
func newConsoleWith(t *testing.T, st *store.Store, a console.API) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	c, err := console.New(console.Config{Origins: []string{"http://" + srv.Listener.Addr().String()}}, st, a, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = c
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// client follows no redirect, so each answer can be read as it is.
func client(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func post(t *testing.T, c *http.Client, u, origin string, form url.Values) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// TestSignInAndOutAreSafe: a sign-in from another origin is refused, a
// wrong key says so, a right one sets an HttpOnly SameSite=Strict session
// cookie that is not the key and goes back where the user was going (never
// off the console); signing out needs the session's CSRF token and ends the
// session in the database, not only in the browser.
func TestSignInAndOutAreSafe(t *testing.T) {
	t.Parallel()
	srv, st := newConsole(t)
	_, key := storetest.Tenant(t, st, "acme", 1)
	c := client(t)

	if res := post(t, c, srv.URL+"/console/login", "http://evil.example", url.Values{"api_key": {key}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a sign-in posted from another origin answered %d, want 403", res.StatusCode)
	}
	if res := post(t, c, srv.URL+"/console/login", srv.URL, url.Values{"api_key": {key + "x"}}); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong key answered %d, want 401", res.StatusCode)
	}
	for _, tc := range []struct{ next, want string }{
		{"/console/tests", "/console/tests"},
		{"https://evil.example/", "/console/jobs"},
		{"//evil.example/console/", "/console/jobs"},
		{"/console/\\evil", "/console/jobs"},
	} {
		res := post(t, client(t), srv.URL+"/console/login", srv.URL, url.Values{"api_key": {key}, "next": {tc.next}})
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != tc.want {
			t.Errorf("signed in with next=%q: %d to %q, want 303 to %q", tc.next, res.StatusCode, res.Header.Get("Location"), tc.want)
		}
	}
	res := post(t, c, srv.URL+"/console/login", srv.URL, url.Values{"api_key": {key}})
	var session *http.Cookie
	for _, ck := range res.Cookies() {
		session = ck
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/console/" ||
		strings.Contains(session.Value, key) || len(session.Value) < 40 {
		t.Fatalf("session cookie = %+v", session)
	}
	if _, err := st.ConsoleSession(context.Background(), session.Value); err != nil {
		t.Fatalf("the session is not in the database: %v", err)
	}
	page, err := c.Get(srv.URL + "/console/credits")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != 200 || !strings.Contains(string(body), "acme") {
		t.Fatalf("signed in, /console/credits answered %d", page.StatusCode)
	}
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	csrf := between(string(body), `name="csrf" value="`, `"`)
	if csrf == "" {
		t.Fatal("the page's sign-out form carries no CSRF token")
	}
	if res := post(t, c, srv.URL+"/console/logout", srv.URL, url.Values{"csrf": {"guess"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("sign-out with a wrong token answered %d, want 403", res.StatusCode)
	}
	if res := post(t, c, srv.URL+"/console/logout", "http://evil.example", url.Values{"csrf": {csrf}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("sign-out from another origin answered %d, want 403", res.StatusCode)
	}
	if res := post(t, c, srv.URL+"/console/logout", srv.URL, url.Values{"csrf": {csrf}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out answered %d, want 303", res.StatusCode)
	}
	if _, err := st.ConsoleSession(context.Background(), session.Value); err != store.ErrNotFound {
		t.Fatalf("after sign-out the session is still valid (%v)", err)
	}
	// The old cookie, replayed, leads to the sign-in.
	req, _ := http.NewRequest("GET", srv.URL+"/console/jobs", nil)
	req.AddCookie(session)
	res, err = client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/console/login") {
		t.Fatalf("a signed-out cookie got %d %s", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestExpiredSessionsEnd: a session past its time signs nothing in, and the
// sweep deletes it.
func TestExpiredSessionsEnd(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	tn, _ := storetest.Tenant(t, st, "acme", 1)
	ctx := context.Background()
	token, err := st.CreateConsoleSession(ctx, tn.ID, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if _, err := st.ConsoleSession(ctx, token); err != store.ErrNotFound {
		t.Fatalf("an expired session answered %v", err)
	}
	if n, err := st.PruneConsoleSessions(ctx); err != nil || n != 1 {
		t.Fatalf("pruned %d sessions (%v), want 1", n, err)
	}
}

func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	out, _, _ := strings.Cut(rest, to)
	return out
}

// signIn signs c in as the tenant of key.
func signIn(t *testing.T, c *http.Client, srv *httptest.Server, key string) {
	t.Helper()
	if res := post(t, c, srv.URL+"/console/login", srv.URL, url.Values{"api_key": {key}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in answered %d", res.StatusCode)
	}
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestTheJobsListPagesAndKeepsItsFilters: 52 jobs are two pages, the link
// to the older ones keeps the filter, and a filter shows only its jobs.
func TestTheJobsListPagesAndKeepsItsFilters(t *testing.T) {
	t.Parallel()
	srv, st := newConsole(t)
	tn, key := storetest.Tenant(t, st, "acme", 100)
	for i := range 52 {
		kind := "scenario"
		if i == 0 {
			kind = "exploration"
		}
		if _, err := st.SubmitJob(context.Background(), store.NewJob{TenantID: tn.ID, Kind: kind, Input: []byte(`{"name":"job"}`),
			Hold: 1, Subject: "jobs." + kind + "." + tn.ID}); err != nil {
			t.Fatal(err)
		}
	}
	c := client(t)
	signIn(t, c, srv, key)
	code, page := get(t, c, srv.URL+"/console/jobs?state=queued&kind=scenario")
	if code != 200 || strings.Count(page, "<tr data-job=") != 50 {
		t.Fatalf("first page: %d with %d rows", code, strings.Count(page, "<tr data-job="))
	}
	older := html.UnescapeString(between(page, `<p><a href="`, `">Older jobs`))
	if !strings.Contains(older, "state=queued") || !strings.Contains(older, "kind=scenario") || !strings.Contains(older, "after=") {
		t.Fatalf("the older jobs' link %q loses the filter", older)
	}
	code, page = get(t, c, srv.URL+older)
	if code != 200 || strings.Count(page, "<tr data-job=") != 1 || strings.Contains(page, "Older jobs") {
		t.Fatalf("second page: %d with %d rows", code, strings.Count(page, "<tr data-job="))
	}
	if _, page = get(t, c, srv.URL+"/console/jobs?kind=exploration"); strings.Count(page, "<tr data-job=") != 1 {
		t.Fatalf("exploration filter: %d rows", strings.Count(page, "<tr data-job="))
	}
	if _, page = get(t, c, srv.URL+"/console/jobs?state=failed"); strings.Count(page, "<tr data-job=") != 0 || !strings.Contains(page, "match these filters") {
		t.Fatal("a filter nothing matches shows jobs")
	}
}
