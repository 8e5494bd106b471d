package netguard_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
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
