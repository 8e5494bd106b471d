package netguard_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/netguard/netguardtest"
)

// TestARemappedOriginReachesItsTargetAndNothingElse: a suite's hard-coded
// origins (http and https) go to the job's target, which the policy still
// checks where the proxy connects; a remap to a refused address is
// refused, and an origin not remapped is not reached.
func TestARemappedOriginReachesItsTargetAndNothingElse(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "target "+r.Host+" "+r.URL.Path)
	}))
	t.Cleanup(target.Close)
	canary := netguardtest.NewCanary(t)
	host := strings.TrimPrefix(target.URL, "http://")
	proxy, err := netguard.NewProxy(netguard.New([]string{host}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	tun := proxy.Open()
	t.Cleanup(tun.Close)
	if err := tun.Remap(map[string]string{"http://staging.acme.test": target.URL, "https://secure.acme.test": target.URL + "/",
		"http://sneaky.acme.test:8080": canary.URL}); err != nil {
		t.Fatal(err)
	}
	pu, _ := url.Parse(proxy.Server())
	pu.User = url.UserPassword(tun.User, tun.Password)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(u string) (int, string) {
		resp, err := client.Get(u)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		url, want string
		status    int
	}{
		{"http://staging.acme.test/list", "target " + host + " /list", 200},
		{"https://secure.acme.test/shop?q=1", "target " + host + " /shop", 200},
		{"https://secure.acme.test:443/again", "target " + host + " /again", 200},
		{"http://sneaky.acme.test:8080/", "egress blocked", 403},
		{"http://staging.acme.test:8080/", "", 0},
	} {
		status, body := get(tc.url)
		if tc.status == 0 {
			if status == 200 {
				t.Errorf("%s: reached (%s): only the remapped origin goes to the target", tc.url, body)
			}
			continue
		}
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q, want %d %q", tc.url, status, body, tc.status, tc.want)
		}
	}
	if canary.Hits() != 0 {
		t.Errorf("a remap reached a refused address %d times", canary.Hits())
	}
	for _, bad := range []map[string]string{{"ftp://a.test": target.URL}, {"http://a.test/path": target.URL}, {"http://a.test": "not a url"}} {
		if err := tun.Remap(bad); err == nil {
			t.Errorf("remap %v was taken", bad)
		}
	}
}

// TestAnUnreachableHostIsAnsweredWithoutTheProxysHost: the proxy's 502
// named the host's resolver (lookup x on 10.0.0.2:53) to the run; it says
// why the host could not be reached and nothing of where the proxy runs.
func TestAnUnreachableHostIsAnsweredWithoutTheProxysHost(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	dead := strings.TrimPrefix(closed.URL, "http://")
	closed.Close()
	proxy, err := netguard.NewProxy(netguard.New([]string{"nowhere.invalid", dead}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	tun := proxy.Open()
	t.Cleanup(tun.Close)
	pu, _ := url.Parse(proxy.Server())
	pu.User = url.UserPassword(tun.User, tun.Password)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	resolv, _ := os.ReadFile("/etc/resolv.conf")
	var servers []string
	for _, line := range strings.Split(string(resolv), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "nameserver" {
			servers = append(servers, f[1])
		}
	}
	for _, u := range []string{"http://nowhere.invalid/", "http://" + dead + "/"} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		body := string(b)
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "cannot reach") {
			t.Errorf("%s: %d %q, want a 502 saying it cannot be reached", u, resp.StatusCode, body)
		}
		for _, leak := range append(servers, ":53", "lookup", "dial tcp") {
			if strings.Contains(body, leak) {
				t.Errorf("%s: the answer %q names %q", u, body, leak)
			}
		}
	}
}

// TestARemappedOriginBehavesAsTheOrigin: a suite written against
// http://staging.acme.test, remapped to the job's target, signs in: the
// app answers the form's POST with a redirect to its own absolute URL and
// a session cookie for its own host, and answers CORS for the origin it
// sees. Before, the browser followed the redirect out of the origin and
// left the cookie behind ("You must login"). Now every URL, cookie domain
// and CORS origin of the target maps back to the origin, the app is told
// which origin was asked for, and Origin and Referer reach it in its terms.
func TestARemappedOriginBehavesAsTheOrigin(t *testing.T) {
	t.Parallel()
	var target string
	var seen http.Header
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(strings.TrimPrefix(target, "http://"), ":")
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "s3ss10n", Domain: host, Path: "/", HttpOnly: true})
			w.Header().Set("Content-Location", target+"/login")
			http.Redirect(w, r, target+"/secure", http.StatusSeeOther)
		case "/secure":
			if c, err := r.Cookie("sid"); err != nil || c.Value != "s3ss10n" {
				http.Error(w, "You must login to view the secure area!", http.StatusUnauthorized)
				return
			}
			w.Header().Set("Refresh", "5; url="+target+"/logout")
			_, _ = io.WriteString(w, "the secure area")
		case "/api":
			seen = r.Header.Clone()
			w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
			_, _ = io.WriteString(w, "{}")
		}
	}))
	t.Cleanup(app.Close)
	target = app.URL
	proxy, err := netguard.NewProxy(netguard.New([]string{strings.TrimPrefix(target, "http://")}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	tun := proxy.Open()
	t.Cleanup(tun.Close)
	const origin = "http://staging.acme.test"
	if err := tun.Remap(map[string]string{origin: target}); err != nil {
		t.Fatal(err)
	}
	pu, _ := url.Parse(proxy.Server())
	pu.User = url.UserPassword(tun.User, tun.Password)
	jar, _ := cookiejar.New(nil)
	var hops []string
	client := &http.Client{Jar: jar, Transport: &http.Transport{Proxy: http.ProxyURL(pu)},
		CheckRedirect: func(r *http.Request, _ []*http.Request) error { hops = append(hops, r.URL.String()); return nil }}

	resp, err := client.PostForm(origin+"/login", url.Values{"username": {"tomsmith"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "the secure area" {
		t.Fatalf("signing in through the remapped origin: %d %q (went to %v)", resp.StatusCode, body, hops)
	}
	if len(hops) != 1 || hops[0] != origin+"/secure" {
		t.Errorf("the redirect went to %v, want the origin's /secure", hops)
	}
	if r := resp.Header.Get("Refresh"); r != "5; url="+origin+"/logout" {
		t.Errorf("Refresh = %q", r)
	}

	req, _ := http.NewRequest("GET", origin+"/api", nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Referer", origin+"/secure?tab=1")
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
		t.Errorf("Access-Control-Allow-Origin = %q, want the origin", got)
	}
	for k, want := range map[string]string{"Origin": target, "Referer": target + "/secure?tab=1",
		"X-Forwarded-Host": "staging.acme.test", "X-Forwarded-Proto": "http"} {
		if seen.Get(k) != want {
			t.Errorf("the app saw %s %q, want %q", k, seen.Get(k), want)
		}
	}
}
