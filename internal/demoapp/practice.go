package demoapp

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"sync"
)

//go:embed pages/practice/*.html
var practicePages embed.FS

var practiceTemplates = template.Must(template.ParseFS(practicePages, "pages/practice/*.html"))

// Practice credentials accepted by the practice app's login.
const (
	PracticeUser     = "tomsmith"
	PracticePassword = "SuperSecretPassword!"
)

// PracticeChange is one way the practice app differs from its release.
type PracticeChange string

// The practice app's changes.
const (
	// PracticeDrift renames and rewords without changing what anything
	// does: the login's username field (label User name, id user-name),
	// its button (" Log in", the icon glyph kept), Add Element (Add New
	// Element), the dropdown's id (dropdown-list) and the checkboxes'
	// form's id (checkbox-form).
	PracticeDrift PracticeChange = "drift"
	// PracticeRejectsLogin is a regression: valid credentials are refused
	// as an invalid username.
	PracticeRejectsLogin PracticeChange = "rejects_login"
)

// Practice is an app built the way public practice apps for test
// automation are: a form login whose button carries an icon font's
// glyph, add and remove buttons, a dropdown, checkboxes, a modal ad, a
// menu whose Gallery link comes and goes between loads, content loaded
// late, a table.
type Practice struct {
	mux     *http.ServeMux
	mu      sync.Mutex
	changes map[PracticeChange]bool
	loads   int // of /disappearing_elements: Gallery shows on every other
}

// NewPractice returns the practice app as released.
func NewPractice() *Practice {
	a := &Practice{mux: http.NewServeMux(), changes: map[PracticeChange]bool{}}
	page := func(name string, data func(r *http.Request, d map[string]any)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			d := map[string]any{"Drift": a.has(PracticeDrift)}
			if f := r.URL.Query().Get("flash"); f != "" {
				d["Flash"], d["FlashKind"] = flashes[f][0], flashes[f][1]
			}
			if data != nil {
				data(r, d)
			}
			var buf bytes.Buffer
			if err := practiceTemplates.ExecuteTemplate(&buf, name+".html", d); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(buf.Bytes())
		}
	}
	signedIn := func(r *http.Request) bool {
		c, err := r.Cookie("rack.session")
		return err == nil && c.Value == "signed-in"
	}
	m := a.mux
	m.HandleFunc("GET /{$}", page("index", nil))
	m.HandleFunc("GET /login", page("login", nil))
	m.HandleFunc("POST /authenticate", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.FormValue("username") != PracticeUser || a.has(PracticeRejectsLogin):
			http.Redirect(w, r, "/login?flash=invalid_user", http.StatusFound)
		case r.FormValue("password") != PracticePassword:
			http.Redirect(w, r, "/login?flash=invalid_password", http.StatusFound)
		default:
			http.SetCookie(w, &http.Cookie{Name: "rack.session", Value: "signed-in", Path: "/", HttpOnly: true})
			http.Redirect(w, r, "/secure?flash=signed_in", http.StatusFound)
		}
	})
	m.HandleFunc("GET /secure", func(w http.ResponseWriter, r *http.Request) {
		if !signedIn(r) {
			http.Redirect(w, r, "/login?flash=must_login", http.StatusFound)
			return
		}
		page("secure", nil)(w, r)
	})
	m.HandleFunc("GET /logout", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "rack.session", Value: "", Path: "/", MaxAge: -1})
		http.Redirect(w, r, "/login?flash=signed_out", http.StatusFound)
	})
	m.HandleFunc("GET /add_remove_elements/{$}", page("add_remove", nil))
	m.HandleFunc("GET /dropdown", page("dropdown", nil))
	m.HandleFunc("GET /checkboxes", page("checkboxes", nil))
	m.HandleFunc("GET /disappearing_elements", page("disappearing", func(_ *http.Request, d map[string]any) {
		a.mu.Lock()
		a.loads++
		d["Gallery"] = a.loads%2 == 0
		a.mu.Unlock()
	}))
	m.HandleFunc("GET /dynamic_loading/1", page("dynamic_loading", nil))
	m.HandleFunc("GET /entry_ad", page("entry_ad", func(r *http.Request, d map[string]any) {
		c, err := r.Cookie("ad_closed")
		d["AdClosed"] = err == nil && c.Value == "1"
	}))
	m.HandleFunc("GET /inputs", page("inputs", nil))
	m.HandleFunc("GET /tables", page("tables", nil))
	return a
}

// flashes are the login's messages, by the query's key: text and kind.
var flashes = map[string][2]string{
	"invalid_user":     {"Your username is invalid!", "error"},
	"invalid_password": {"Your password is invalid!", "error"},
	"signed_in":        {"You logged into a secure area!", "success"},
	"signed_out":       {"You logged out of the secure area!", "success"},
	"must_login":       {"You must login to view the secure area!", "error"},
}

// Set makes the app differ from its release by changes (none: the
// release), for pages served from then on.
func (a *Practice) Set(changes ...PracticeChange) {
	m := map[PracticeChange]bool{}
	for _, c := range changes {
		m[c] = true
	}
	a.mu.Lock()
	a.changes = m
	a.mu.Unlock()
}

func (a *Practice) has(c PracticeChange) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changes[c]
}

// ServeHTTP serves the app.
func (a *Practice) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }
