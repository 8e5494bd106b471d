package browser_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/netguard/netguardtest"
)

// guardedSession opens a session whose every connection goes through its
// own tunnel of the egress proxy, as a job's does.
func guardedSession(t *testing.T, policy *netguard.Policy, proxy *netguard.Proxy) *browser.Session {
	t.Helper()
	tun := proxy.Open()
	t.Cleanup(tun.Close)
	s, err := browsertest.Browser(t).NewSession(context.Background(), browser.SessionOptions{Policy: policy,
		Egress: &browser.EgressProxy{Server: proxy.Server(), Username: tun.User, Password: tun.Password, Blocked: tun.Blocked}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestEgressHasNoWayAround loads pages that try every known way to reach a
// canary server on a loopback port the job may not use — redirects of each
// kind and chains, other names for loopback, subresources, forms, popups,
// meta refresh, WebSockets, workers, service workers and local documents —
// with only the app's own host:port allowed. The canary must see nothing,
// and each attempt that reached the network must be reported as blocked.
func TestEgressHasNoWayAround(t *testing.T) {
	t.Parallel()
	canary := netguardtest.NewCanary(t)
	_, cport, _ := net.SplitHostPort(strings.TrimPrefix(canary.URL, "http://"))
	can := canary.URL
	page := func(body string) string {
		return "<!doctype html><html><head><meta charset=utf-8><title>v</title></head><body>" + body + "</body></html>"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/r/{code}", func(w http.ResponseWriter, r *http.Request) {
		to := r.URL.Query().Get("to")
		if to == "" {
			to = can + "/hit"
		}
		var code int
		fmt.Sscan(r.PathValue("code"), &code)
		http.Redirect(w, r, to, code)
	})
	mux.HandleFunc("/worker.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintf(w, "fetch(%q).catch(()=>{}); onconnect = () => {};", can+"/from-worker")
	})
	mux.HandleFunc("/sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintf(w, "self.addEventListener('install', () => fetch(%q));", can+"/from-sw")
	})
	vectors := map[string]string{
		"iframe":          `<iframe src="/r/302"></iframe>`,
		"fetch":           `<script>fetch('/r/307').catch(()=>{})</script>`,
		"img":             `<img src="/r/301">`,
		"form":            fmt.Sprintf(`<form id=f method=post action="%s/form"><input name=a value=b></form><script>f.submit()</script>`, can),
		"form-redirect":   `<form id=f method=post action="/r/307"><input name=a value=b></form><script>f.submit()</script>`,
		"window-open":     `<script>window.open('/r/302')</script>`,
		"meta-refresh":    fmt.Sprintf(`<meta http-equiv="refresh" content="0;url=%s/meta">`, can),
		"websocket":       fmt.Sprintf(`<script>new WebSocket('ws://127.0.0.1:%s/ws')</script>`, cport),
		"websocket-name":  fmt.Sprintf(`<script>new WebSocket('ws://localhost:%s/ws')</script>`, cport),
		"shared-worker":   `<script>new SharedWorker('/worker.js')</script>`,
		"worker":          `<script>new Worker('/worker.js')</script>`,
		"service-worker":  `<script>navigator.serviceWorker && navigator.serviceWorker.register('/sw.js')</script>`,
		"location-chrome": `<script>location.href = 'chrome://version'</script>`,
		"beacon":          fmt.Sprintf(`<script>navigator.sendBeacon(%q, 'x')</script>`, can+"/beacon"),
	}
	for name, body := range vectors {
		mux.HandleFunc("/v/"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, page(body))
		})
	}
	app := httptest.NewServer(mux)
	t.Cleanup(app.Close)
	policy := netguard.New([]string{strings.TrimPrefix(app.URL, "http://")})
	proxy, err := netguard.NewProxy(policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })

	session := func(t *testing.T) *browser.Session { return guardedSession(t, policy, proxy) }
	type vector struct {
		name, url string
		reported  bool // the attempt reaches the network layer and must be reported
	}
	var cases []vector
	for _, code := range []string{"301", "302", "303", "307", "308"} {
		cases = append(cases, vector{"redirect " + code, app.URL + "/r/" + code, true})
	}
	cases = append(cases,
		vector{"redirect chain", app.URL + "/r/302?to=" + app.URL + "/r/307", true},
		vector{"redirect to [::1]", app.URL + "/r/302?to=http://[::1]:" + cport + "/", true},
		vector{"redirect to localhost", app.URL + "/r/301?to=http://localhost:" + cport + "/", true},
		vector{"redirect to 0.0.0.0", app.URL + "/r/302?to=http://0.0.0.0:" + cport + "/", true},
		vector{"redirect to a decimal IP", app.URL + "/r/302?to=http://2130706433:" + cport + "/", true},
		vector{"redirect to an IPv4-mapped IPv6", app.URL + "/r/307?to=http://[::ffff:127.0.0.1]:" + cport + "/", true},
		vector{"redirect to a NAT64 IPv6", app.URL + "/r/302?to=http://[64:ff9b::7f00:1]:" + cport + "/", true},
	)
	for name := range vectors {
		cases = append(cases, vector{name, app.URL + "/v/" + name, name != "service-worker" && name != "location-chrome"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := session(t)
			_ = s.Navigate(context.Background(), c.url)
			// Scripts, workers and sockets get their chance (longer on a loaded machine).
			for deadline := time.Now().Add(5 * time.Second); c.reported && len(s.Denied()) == 0 && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond)
			if n := canary.Hits(); n != 0 {
				t.Fatalf("the canary was reached (%d hits so far)", n)
			}
			if c.reported && len(s.Denied()) == 0 {
				t.Fatal("the attempt was not reported as blocked")
			}
			// Chromium's own error page after a refused load is fine; its other pages are not.
			if u := s.URL(); strings.HasPrefix(u, "chrome") && !strings.HasPrefix(u, "chrome-error:") {
				t.Fatalf("the page shows %s", u)
			}
		})
	}
	// Documents that are not http(s) are refused before anything loads.
	for _, u := range []string{"chrome://version", "chrome://history", "javascript:fetch('" + can + "')", "data:text/html,<b>x</b>",
		"file:///etc/passwd", "view-source:" + app.URL} {
		t.Run("navigate "+u, func(t *testing.T) {
			t.Parallel()
			if err := session(t).Navigate(context.Background(), u); err == nil {
				t.Fatalf("navigating to %s was allowed", u)
			}
		})
	}
}
