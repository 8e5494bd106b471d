package console_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/console"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// TestSignInTrustsOnlyTheConfiguredOrigin: the origin check compares the
// configured public origin, scheme included; a request whose Host and
// Origin both name another site, or an https Origin over http, is refused.
func TestSignInTrustsOnlyTheConfiguredOrigin(t *testing.T) {
	t.Parallel()
	srv, st := newConsole(t)
	_, key := storetest.Tenant(t, st, "acme", 1)
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		name, host, origin string
		want               int
	}{
		{"another site in Host and Origin", "evil.example", "http://evil.example", http.StatusForbidden},
		{"https over http", host, "https://" + host, http.StatusForbidden},
		{"another port", host, "http://127.0.0.1:1", http.StatusForbidden},
		{"the configured origin", host, srv.URL, http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", srv.URL+"/console/login", strings.NewReader(url.Values{"api_key": {key}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", tc.origin)
			req.Host = tc.host
			res, err := client(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Fatalf("answered %d, want %d", res.StatusCode, tc.want)
			}
		})
	}
}

// TestSignInCountsAgainstTheAuthenticationLimit: wrong keys at the
// console's sign-in count against the same per-address limit as the API's
// bearer tokens (it once answered 560 × 401 and never 429), and the limit
// then holds for both ways of presenting a key.
func TestSignInCountsAgainstTheAuthenticationLimit(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	_, key := storetest.Tenant(t, st, "acme", 1)
	sealer, _ := jobs.NewSealer(make([]byte, 32))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := api.New(api.Config{AuthFailures: 0.01}, st, nil, netguard.New(nil), sealer, quiet)
	srv := httptest.NewUnstartedServer(nil)
	con, err := console.New(console.Config{Origins: []string{"http://" + srv.Listener.Addr().String()}}, st, a, quiet)
	if err != nil {
		t.Fatal(err)
	}
	a.Mount("/console/", con)
	srv.Config.Handler = a.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	c := client(t)
	limited := 0
	for range 25 {
		res := post(t, c, srv.URL+"/console/login", srv.URL, url.Values{"api_key": {key + "x"}})
		switch res.StatusCode {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			limited++
			if res.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		default:
			t.Fatalf("a wrong key answered %d", res.StatusCode)
		}
	}
	if limited != 5 {
		t.Fatalf("%d of 25 wrong sign-ins were limited, want the 5 past the burst of 20", limited)
	}
	// Even the right key is refused unchecked now, by the API and the console.
	req, _ := http.NewRequest("GET", srv.URL+"/v1/jobs", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the API after 25 failed sign-ins answered %d, want 429", res.StatusCode)
	}
	if res := post(t, c, srv.URL+"/console/login", srv.URL, url.Values{"api_key": {key}}); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a right key at the limit answered %d, want 429", res.StatusCode)
	}
}
