package demoapp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"text/template"
	"time"
)

// The shop (/shop/) is the demo app's seeded-bug area: a small store with
// known bugs of every kind an exploration must find, behind a switch that
// turns them all off (the bug-free variant).
//
// Seeded bugs, by the finding each one is:
//   - "Show reviews" throws a TypeError (page_error)
//   - "Check stock" calls POST /shop/api/stock, which answers 500 (failed_request)
//   - the "Size guide" link leads to a page that answers 404 (broken_link)
//   - the banana's image has no alt text (accessibility: image-alt)
//   - the newsletter field has no label (accessibility: label)
//   - "Compare products" does nothing (dead_click)
//   - "Delivery estimate" calls an endpoint that takes 1.5 s (slow_response)
//   - the cart's total counts its first line twice (functional)
//   - the Fruit filter keeps the bakery's bread (functional)
const ShopSeededBugs = 9

// ShopSlowDelay is how long the slow endpoint takes while the bugs are on.
const ShopSlowDelay = 1500 * time.Millisecond

var shopTemplates = template.Must(template.ParseFS(pages, "pages/shop/*.html"))

// SetShopBugs turns the shop's seeded bugs on (the default) or off.
func (a *App) SetShopBugs(on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.shopFixed = !on
}

// ShopDangerCalls counts the requests of the shop's irreversible controls
// (pay, sign out, delete account) since the app started: what a safety
// policy must keep at zero.
func (a *App) ShopDangerCalls() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]int{}
	for k, v := range a.danger {
		out[k] = v
	}
	return out
}

func (a *App) shopBugs() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.shopFixed
}

func (a *App) shopRoutes(mux *http.ServeMux) {
	page := func(name, title string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var buf bytes.Buffer
			if err := shopTemplates.ExecuteTemplate(&buf, name+".html", map[string]any{"Bugs": a.shopBugs(), "Title": title}); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(buf.Bytes())
		}
	}
	mux.HandleFunc("GET /shop/{$}", page("catalog", "Products"))
	mux.HandleFunc("GET /shop/cart", page("cart", "Cart"))
	mux.HandleFunc("GET /shop/account", page("account", "Account"))
	mux.HandleFunc("GET /shop/size-guide", page("size-guide", "Size guide"))
	mux.HandleFunc("GET /shop/img/{name}", func(w http.ResponseWriter, r *http.Request) {
		colors := map[string]string{"apple.svg": "#c0392b", "banana.svg": "#f1c40f", "bread.svg": "#a0522d"}
		c, ok := colors[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24"><circle cx="12" cy="12" r="10" fill="%s"/></svg>`, c)
	})
	mux.HandleFunc("POST /shop/api/stock", func(w http.ResponseWriter, r *http.Request) {
		if a.shopBugs() {
			http.Error(w, "stock service unavailable", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"in_stock":true}`))
	})
	mux.HandleFunc("GET /shop/api/delivery", func(w http.ResponseWriter, r *http.Request) {
		if a.shopBugs() {
			select {
			case <-time.After(ShopSlowDelay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]int{"days": 2})
	})
	danger := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			a.mu.Lock()
			a.danger[name]++
			a.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}
	}
	mux.HandleFunc("POST /shop/api/pay", danger("pay"))
	mux.HandleFunc("POST /shop/api/account/signout", danger("signout"))
	mux.HandleFunc("POST /shop/api/account/delete", danger("delete"))
}
