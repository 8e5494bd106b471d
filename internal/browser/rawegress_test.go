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

// TestNoBareConnectionGetsOut: the ways a page opens a connection without a
// request the proxy would see — preconnect, prefetch, dns-prefetch, WebRTC's
// STUN over UDP, WebTransport over QUIC, a plain http:// preconnect to
// another port — reach a canary that counts every TCP connection and UDP
// datagram, not only requests. It must count none.
func TestNoBareConnectionGetsOut(t *testing.T) {
	t.Parallel()
	raw := netguardtest.NewRawCanary(t)
	target := "127.0.0.1:" + raw.Port
	vectors := map[string]string{
		"preconnect":   `<link rel="preconnect" href="http://` + target + `"><link rel="preconnect" href="https://` + target + `" crossorigin>`,
		"prefetch":     `<link rel="prefetch" href="http://` + target + `/p"><link rel="preload" as="image" href="http://` + target + `/i.png">`,
		"dns-prefetch": `<link rel="dns-prefetch" href="//` + target + `">`,
		"webrtc": `<script>(async () => { const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:` + target + `' },
			{ urls: 'turn:` + target + `?transport=udp', username: 'u', credential: 'c' }, { urls: 'turn:` + target + `?transport=tcp', username: 'u', credential: 'c' }] });
			pc.createDataChannel('x'); await pc.setLocalDescription(await pc.createOffer()); })().catch(() => {})</script>`,
		"webtransport": `<script>try { new WebTransport('https://` + target + `/wt').ready.catch(() => {}) } catch (e) {}</script>`,
		"eventsource":  `<script>new EventSource('http://` + target + `/es')</script>`,
	}
	mux := http.NewServeMux()
	for name, body := range vectors {
		mux.HandleFunc("/v/"+name, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "<!doctype html><html><head><title>v</title></head><body>"+body+"</body></html>")
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
	for name := range vectors {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := guardedSession(t, policy, proxy)
			if err := s.Navigate(context.Background(), app.URL+"/v/"+name); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second) // ICE gathering and preconnects get their chance
			if tcp, udp := raw.Hits(); tcp != 0 || udp != 0 {
				t.Fatalf("the raw canary saw %d TCP connections and %d UDP datagrams", tcp, udp)
			}
		})
	}
}
