package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/netguard/netguardtest"
)

// TestWhatTheGuardRefusesIsNotTheAppsError: an app whose page pulls in a
// third-party script, a font and an image the egress guard refuses shows
// console errors for them in the browser; they are the guard's doing, not
// the app's, so they are listed as refusals and never as the app's errors
// (which a repair would take as evidence of a regression). The app's own
// console.error still is one.
func TestWhatTheGuardRefusesIsNotTheAppsError(t *testing.T) {
	t.Parallel()
	canary := netguardtest.NewCanary(t)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><html><head><title>shop</title>
<script src="%[1]s/analytics.js"></script><link rel="stylesheet" href="%[1]s/fonts.css"></head>
<body><img src="%[1]s/pixel.gif" alt=""><h1>Shop</h1>
<script>if (location.search.includes("bug")) console.error("cart total is NaN");</script></body></html>`, canary.URL)
	}))
	t.Cleanup(app.Close)
	policy := netguard.New([]string{strings.TrimPrefix(app.URL, "http://")})
	proxy, err := netguard.NewProxy(policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	for _, tc := range []struct {
		name     string
		query    string
		appError string // the app's error expected among Problems, if any
	}{
		{"only refusals", "", ""},
		{"refusals and the app's own error", "?bug", "cart total is NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := guardedSession(t, policy, proxy)
			since := time.Now()
			if err := s.Navigate(context.Background(), app.URL+"/"+tc.query); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond) // late console messages
			var texts []string
			for _, p := range s.Problems(since) {
				texts = append(texts, string(p.Kind)+": "+p.Text)
			}
			switch {
			case tc.appError == "" && len(texts) > 0:
				t.Errorf("the guard's refusals are reported as the app's errors: %q", texts)
			case tc.appError != "" && (len(texts) != 1 || !strings.Contains(texts[0], tc.appError)):
				t.Errorf("problems %q, want only the app's %q", texts, tc.appError)
			}
			if len(s.Denied()) == 0 {
				t.Error("the refusals are not listed")
			}
			if canary.Hits() != 0 {
				t.Fatalf("the canary was reached %d times", canary.Hits())
			}
		})
	}
}
