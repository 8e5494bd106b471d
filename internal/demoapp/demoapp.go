// Package demoapp is a small web app bundled with webpilot for the demo and
// the tests: a login, a form with validation, a list with add and delete,
// and a page whose content arrives after a delay. A variant switch changes
// the app the way real apps change under their tests — drift a repair must
// heal, and regressions it must report — without edited copies.
package demoapp

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"text/template"
	"time"
)

//go:embed pages/*.html pages/shop/*.html
var pages embed.FS

// Demo credentials accepted by the login page.
const (
	Email    = "demo@webpilot.test"
	Password = "s3cret-pass"
)

// Options tune the app.
type Options struct {
	Delay time.Duration // how long /api/report takes; default 800ms
}

// Variation is one way the app differs from its baseline.
type Variation string

// Variations. Drift keeps every feature working under new names, markup or
// flow; a regression breaks one.
const (
	RenamedIDs   Variation = "renamed_ids"  // ids, classes and test ids renamed
	Reworded     Variation = "reworded"     // buttons and labels reworded
	Rewrapped    Variation = "rewrapped"    // the list's form re-wrapped in new containers
	Interstitial Variation = "interstitial" // a cookie wall covers the list until accepted
	TipsGone     Variation = "tips_gone"    // the list's tips banner (and its Dismiss step) is gone
	SlowAdd      Variation = "slow_add"     // adding an item takes 7 s (timing)
	ConfirmAdd   Variation = "confirm_add"  // adding an item asks for confirmation in a dialog first
	NeedsQty     Variation = "needs_qty"    // adding an item asks for its quantity, a required field
	DeadAdd      Variation = "dead_add"     // regression: Add does nothing
	WrongCount   Variation = "wrong_count"  // regression: the item count is one too many
	ErrorBanner  Variation = "error_banner" // regression: adding fails with a server error and a banner
	MissingAdd   Variation = "missing_add"  // regression: the Add button is gone and adding is impossible
)

// Variations lists every variation, drift first.
var Variations = []Variation{RenamedIDs, Reworded, Rewrapped, Interstitial, TipsGone, SlowAdd, ConfirmAdd, NeedsQty, DeadAdd, WrongCount, ErrorBanner, MissingAdd}

// Regression reports whether a change breaks the app rather than moving it.
func (c Variation) Regression() bool {
	return c == DeadAdd || c == WrongCount || c == ErrorBanner || c == MissingAdd
}

// App is the demo app with a variant switch.
type App struct {
	mux     *http.ServeMux
	mu      sync.Mutex
	changes map[Variation]bool
	// shopFixed turns the shop's seeded bugs off; danger counts its
	// irreversible calls.
	shopFixed bool
	danger    map[string]int
	// zooFixed turns the zoo's seeded defects off.
	zooFixed bool
}

// Handler serves the demo app in its baseline form.
func Handler(o Options) http.Handler { return New(o) }

// SetVariant makes the app differ from its baseline by changes (none: the
// baseline). It applies to pages served from then on.
func (a *App) SetVariant(changes ...Variation) error {
	m := map[Variation]bool{}
	for _, c := range changes {
		known := false
		for _, k := range Variations {
			known = known || k == c
		}
		if !known {
			return fmt.Errorf("demoapp: unknown change %q", c)
		}
		m[c] = true
	}
	a.mu.Lock()
	a.changes = m
	a.mu.Unlock()
	return nil
}

func (a *App) has(c Variation) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changes[c]
}

// ServeHTTP serves the app.
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// templates are the pages a variant changes.
var templates = template.Must(template.ParseFS(pages, "pages/list.html", "pages/login.html"))

// New returns the demo app.
func New(o Options) *App {
	if o.Delay == 0 {
		o.Delay = 800 * time.Millisecond
	}
	a := &App{mux: http.NewServeMux(), changes: map[Variation]bool{}, danger: map[string]int{}}
	mux := a.mux
	a.shopRoutes(mux)
	a.zooRoutes(mux)
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var b []byte
			if t := templates.Lookup(name + ".html"); t != nil {
				a.mu.Lock()
				data := map[string]bool{}
				for c := range a.changes {
					data[string(c)] = true
				}
				a.mu.Unlock()
				var buf bytes.Buffer
				if err := t.Execute(&buf, variantData(data)); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				b = buf.Bytes()
			} else {
				var err error
				if b, err = pages.ReadFile("pages/" + name + ".html"); err != nil {
					http.NotFound(w, r)
					return
				}
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(b)
		}
	}
	mux.HandleFunc("POST /api/items", func(w http.ResponseWriter, r *http.Request) {
		if a.has(ErrorBanner) {
			http.Error(w, "storage unavailable", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /{$}", page("index"))
	mux.HandleFunc("GET /login", page("login"))
	mux.HandleFunc("GET /form", page("form"))
	mux.HandleFunc("GET /list", page("list"))
	mux.HandleFunc("GET /delayed", page("delayed"))
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("email") == Email && r.FormValue("password") == Password {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "ok-" + strings.SplitN(Email, "@", 2)[0], Path: "/", HttpOnly: true})
			http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
			return
		}
		http.Redirect(w, r, "/login?error=1", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /dashboard", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err != nil || !strings.HasPrefix(c.Value, "ok-") {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		page("dashboard")(w, r)
	})
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err != nil || !strings.HasPrefix(c.Value, "ok-") {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		page("search")(w, r)
	})
	mux.HandleFunc("GET /help", page("help"))
	mux.HandleFunc("GET /api/report", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(o.Delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"title": "Report ready", "rows": []map[string]any{
			{"region": "North", "revenue": 1200}, {"region": "South", "revenue": 950}, {"region": "West", "revenue": 1430},
		}})
	})
	return a
}

// variantData gives the templates one field per change.
func variantData(on map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, c := range Variations {
		out[templateName(c)] = on[string(c)]
	}
	return out
}

// templateName is a change's name in the templates: renamed_ids → RenamedIDs.
func templateName(c Variation) string {
	return map[Variation]string{RenamedIDs: "RenamedIDs", Reworded: "Reworded", Rewrapped: "Rewrapped", Interstitial: "Interstitial",
		TipsGone: "TipsGone", SlowAdd: "SlowAdd", ConfirmAdd: "ConfirmAdd", NeedsQty: "NeedsQty", DeadAdd: "DeadAdd", WrongCount: "WrongCount", ErrorBanner: "ErrorBanner", MissingAdd: "MissingAdd"}[c]
}
