// Package console is the dispatcher's web console, served on the API's
// origin under /console/: server-rendered pages (html/template, with htmx
// for filters and refreshes and a small script for live timelines) for a
// tenant signed in with its API key.
//
// A sign-in is a server-side session: the browser's cookie holds a random
// token (HttpOnly, SameSite=Strict, Secure behind TLS) and the database only
// its hash; the API key itself is never kept. Every form that changes
// something carries the session's CSRF token and must come from this
// origin. Pages forbid inline script and framing (Content-Security-Policy).
package console

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// API is what the console reads through the dispatcher's API server;
// *api.Server implements it.
type API interface {
	// JobView is a job as the API shows it in detail.
	JobView(ctx context.Context, j store.Job) api.JobView
	// Watch follows a job's changes for a live page (see api.Server.Watch).
	Watch(tenantID, jobID string) (changed <-chan struct{}, stop func(), ok bool)
	// Authenticate resolves a key presented by r's client under the API's
	// limit on failed authentications (see api.Server.Authenticate).
	Authenticate(r *http.Request, key string) (store.Tenant, error)
}

// Config tunes the console.
type Config struct {
	// SessionTTL is how long a sign-in lasts (default 12h).
	SessionTTL time.Duration
	// Poll is how often a live page rereads its job when no change was
	// signalled (default 1s).
	Poll time.Duration
	// StreamLife bounds one live connection; the browser reconnects
	// (default 10m).
	StreamLife time.Duration
	// Origins are where the console is served from (scheme, host and
	// port, as browsers send them in Origin): forms are taken only from
	// them. Required: a request's own Host header proves nothing.
	Origins []string
}

// WithDefaults fills in the zero fields.
func (c Config) WithDefaults() Config {
	if c.SessionTTL <= 0 {
		c.SessionTTL = 12 * time.Hour
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.StreamLife <= 0 {
		c.StreamLife = 10 * time.Minute
	}
	return c
}

// Console serves the pages.
type Console struct {
	cfg   Config
	store *store.Store
	api   API
	pages map[string]*template.Template
	mux   *http.ServeMux
	log   *slog.Logger
	// origins are the accepted Origin values, normalised.
	origins map[string]bool
}

// cookieName is the session cookie.
const cookieName = "webpilot_console"

// New builds the console.
func New(cfg Config, st *store.Store, a API, log *slog.Logger) (*Console, error) {
	if log == nil {
		log = slog.Default()
	}
	c := &Console{cfg: cfg.WithDefaults(), store: st, api: a, log: log, mux: http.NewServeMux(), origins: map[string]bool{}}
	for _, o := range cfg.Origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("console: %q is not an origin (scheme://host:port)", o)
		}
		c.origins[u.Scheme+"://"+strings.ToLower(u.Host)] = true
	}
	if len(c.origins) == 0 {
		return nil, errors.New("console: no origin configured (Config.Origins)")
	}
	var err error
	if c.pages, err = parsePages(); err != nil {
		return nil, err
	}
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/console/static/", http.FileServerFS(static))
	c.mux.Handle("GET /console/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	}))
	c.mux.HandleFunc("GET /console/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/console/jobs", http.StatusSeeOther)
	})
	c.mux.HandleFunc("GET /console/login", c.loginPage)
	c.mux.HandleFunc("POST /console/login", c.login)
	c.mux.HandleFunc("POST /console/logout", c.signedIn(c.logout))
	c.mux.HandleFunc("GET /console/jobs", c.signedIn(c.jobs))
	c.mux.HandleFunc("GET /console/jobs/{id}", c.signedIn(c.job))
	c.mux.HandleFunc("GET /console/jobs/{id}/live", c.signedIn(c.live))
	c.mux.HandleFunc("GET /console/jobs/{id}/spec", c.signedIn(c.spec))
	c.mux.HandleFunc("GET /console/jobs/{id}/patch", c.signedIn(c.patch))
	c.mux.HandleFunc("GET /console/jobs/{id}/artifacts/{name}", c.signedIn(c.artifact))
	c.mux.HandleFunc("GET /console/jobs/{id}/report/{path...}", c.signedIn(c.htmlReport))
	c.mux.HandleFunc("POST /console/jobs/{id}/cancel", c.signedIn(c.cancel))
	c.mux.HandleFunc("GET /console/credits", c.signedIn(c.credits))
	c.mux.HandleFunc("GET /console/projects", c.signedIn(c.projects))
	c.mux.HandleFunc("GET /console/projects/{name}", c.signedIn(c.project))
	c.mux.HandleFunc("POST /console/projects/{name}/versions/{version}/accept", c.signedIn(c.acceptProject))
	c.mux.HandleFunc("GET /console/tests", c.signedIn(c.tests))
	c.mux.HandleFunc("GET /console/tests/{id}", c.signedIn(c.test))
	c.mux.HandleFunc("POST /console/tests/{id}/versions/{v}/{decision}", c.signedIn(c.decide))
	return c, nil
}

// ServeHTTP serves the console's pages with its security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, "/console/static/") {
		h.Set("Cache-Control", "no-store")
	}
	c.mux.ServeHTTP(w, r)
}

// session is a signed-in request's.
type session struct {
	store.ConsoleSession
	token string
}

type sessionHandler func(w http.ResponseWriter, r *http.Request, s session)

// signedIn lets a request through with its session; a page asked for
// without one goes to the sign-in, anything else is refused. A form must
// come from this origin and carry the session's CSRF token.
func (c *Console) signedIn(next sessionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var s session
		ck, err := r.Cookie(cookieName)
		if err == nil {
			s.token = ck.Value
			s.ConsoleSession, err = c.store.ConsoleSession(r.Context(), ck.Value)
		}
		switch {
		case errors.Is(err, http.ErrNoCookie), errors.Is(err, store.ErrNotFound):
			if r.Method == http.MethodGet && !strings.HasSuffix(r.URL.Path, "/live") {
				http.Redirect(w, r, "/console/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		case err != nil:
			c.fail(w, r, err)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !c.sameOrigin(r) || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.CSRF)) != 1 {
				http.Error(w, "this form did not come from the console; reload the page and try again", http.StatusForbidden)
				return
			}
		}
		next(w, r, s)
	}
}

// sameOrigin reports whether a state-changing request names one of the
// console's configured origins, scheme included, as where it came from
// (browsers send Origin with every POST; Referer is the fallback).
func (c *Console) sameOrigin(r *http.Request) bool {
	from := r.Header.Get("Origin")
	if from == "" {
		from = r.Header.Get("Referer")
	}
	u, err := url.Parse(from)
	return err == nil && from != "" && c.origins[u.Scheme+"://"+strings.ToLower(u.Host)]
}

func secure(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "login", loginData{Next: safeNext(r.URL.Query().Get("next"))})
}

type loginData struct {
	page
	Next  string
	Error string
}

// safeNext keeps a sign-in's return address on the console.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/console/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return "/console/jobs"
	}
	return next
}

func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if !c.sameOrigin(r) {
		http.Error(w, "this form did not come from the console", http.StatusForbidden)
		return
	}
	next := safeNext(r.PostFormValue("next"))
	t, err := c.api.Authenticate(r, strings.TrimSpace(r.PostFormValue("api_key")))
	var limited *api.AuthLimitedError
	if errors.As(err, &limited) {
		w.Header().Set("Retry-After", limited.RetryAfter)
		c.render(w, r, http.StatusTooManyRequests, "login", loginData{Next: next, Error: "Too many failed sign-ins from this address; try again later."})
		return
	}
	if errors.Is(err, store.ErrNotFound) {
		c.render(w, r, http.StatusUnauthorized, "login", loginData{Next: next, Error: "That API key is not valid."})
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	token, err := c.store.CreateConsoleSession(r.Context(), t.ID, c.cfg.SessionTTL)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: token, Path: "/console/", MaxAge: int(c.cfg.SessionTTL.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, s session) {
	if err := c.store.DeleteConsoleSession(r.Context(), s.token); err != nil {
		c.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/console/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	http.Redirect(w, r, "/console/login", http.StatusSeeOther)
}

// fail answers an unexpected error without its details, which are logged.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	c.log.Error("console request failed", "path", r.URL.Path, "err", err)
	http.Error(w, "something went wrong; try again", http.StatusInternalServerError)
}

// notFound answers 404 with the console's page; another tenant's job is
// answered the same as one that does not exist.
func (c *Console) notFound(w http.ResponseWriter, r *http.Request, s session, what string) {
	c.render(w, r, http.StatusNotFound, "missing", missingData{page: s.page("Not found"), What: what})
}

type missingData struct {
	page
	What string
}
