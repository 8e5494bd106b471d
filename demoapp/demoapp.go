// Package demoapp is a small web app bundled with webpilot for the demo and
// the tests: a login, a form with validation, a list with add and delete,
// and a page whose content arrives after a delay.
package demoapp

import (
	"embed"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

//go:embed pages/*.html
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

// Handler serves the demo app.
func Handler(o Options) http.Handler {
	if o.Delay == 0 {
		o.Delay = 800 * time.Millisecond
	}
	mux := http.NewServeMux()
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, err := pages.ReadFile("pages/" + name + ".html")
			if err != nil {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(b)
		}
	}
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
	return mux
}
