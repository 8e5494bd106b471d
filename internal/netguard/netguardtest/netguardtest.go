// Package netguardtest gives egress tests a canary: a server that counts
// every request, placed where a job must never reach.
package netguardtest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Canary is a local server counting the requests it receives.
type Canary struct {
	*httptest.Server
	hits atomic.Int32
}

// NewCanary starts a canary on 127.0.0.1, closed when the test ends.
func NewCanary(t testing.TB) *Canary {
	t.Helper()
	c := &Canary{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { c.hits.Add(1) }))
	t.Cleanup(c.Close)
	return c
}

// Hits is how many requests reached the canary.
func (c *Canary) Hits() int32 { return c.hits.Load() }

// RawCanary counts bare connections and datagrams: a TCP listener that
// counts every accepted connection (whether or not a request follows) and
// a UDP socket on the same port number that counts every datagram, so a
// preconnect, a WebRTC STUN probe or a QUIC handshake is seen too.
type RawCanary struct {
	Port     string
	tcp, udp atomic.Int32
	ln       net.Listener
	pc       net.PacketConn
}

// NewRawCanary starts a raw canary on 127.0.0.1, closed when the test ends.
func NewRawCanary(t testing.TB) *RawCanary {
	t.Helper()
	c := &RawCanary{}
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		pc, err := net.ListenPacket("udp", "127.0.0.1:"+port)
		if err != nil {
			ln.Close()
			continue
		}
		c.ln, c.pc, c.Port = ln, pc, port
		break
	}
	if c.ln == nil {
		t.Fatal("no port free for both TCP and UDP")
	}
	go func() {
		for {
			conn, err := c.ln.Accept()
			if err != nil {
				return
			}
			c.tcp.Add(1)
			conn.Close()
		}
	}()
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := c.pc.ReadFrom(buf); err != nil {
				return
			}
			c.udp.Add(1)
		}
	}()
	t.Cleanup(func() { c.ln.Close(); c.pc.Close() })
	return c
}

// Hits is how many TCP connections and UDP datagrams reached the canary.
func (c *RawCanary) Hits() (tcp, udp int32) { return c.tcp.Load(), c.udp.Load() }
