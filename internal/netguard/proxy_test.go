package netguard_test

import (
	"crypto/tls"
	"io"
	"net/http"
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
