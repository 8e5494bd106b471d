package netguard

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Proxy is the worker's egress proxy: every connection a job's browser
// context makes (documents, redirect hops, subresources, fetches, forms,
// WebSockets, shared and dedicated workers) goes through it, and it checks
// the address where the connection is made. A host is resolved once, every
// address it resolves to is checked against the policy, and the proxy dials
// exactly a checked address, so neither a redirect nor a DNS answer that
// changes between check and use (rebinding) can reach a refused address.
// Each browser context authenticates with its own Tunnel's credentials, so
// every refusal is reported to the job it belongs to.
type Proxy struct {
	policy *Policy
	log    *slog.Logger
	ln     net.Listener
	srv    *http.Server
	tr     *http.Transport

	mu      sync.Mutex
	tunnels map[string]*Tunnel

	certOnce sync.Once
	cert     tls.Certificate // what a remapped https origin presents
	certErr  error
}

// Tunnel is one browser context's credentials on the proxy and the record
// of what the proxy refused it.
type Tunnel struct {
	User, Password string
	proxy          *Proxy
	mu             sync.Mutex
	blocked        []string
	origins        map[string]*url.URL // remapped origin → where it goes
	maps           []originMap         // the same, as each request maps them
}

// Remap sends the tunnel's requests for each origin (scheme://host[:port])
// to another (a test suite's hard-coded staging origin to the job's
// target). The target is still checked where the connection is made; an
// https origin is answered by the proxy's own certificate, so the browser
// must ignore certificate errors for it.
func (t *Tunnel) Remap(origins map[string]string) error {
	m := map[string]*url.URL{}
	for from, to := range origins {
		f, err := ParseOrigin(from)
		if err != nil {
			return fmt.Errorf("origin %q: %w", from, err)
		}
		u, err := ParseOrigin(to)
		if err != nil {
			return fmt.Errorf("origin %q's target %q: %w", from, to, err)
		}
		m[f.Scheme+"://"+hostPort(f)] = u
	}
	maps := make([]originMap, 0, len(m))
	for from, to := range m {
		f, _ := url.Parse(from)
		maps = append(maps, originMap{from: f, to: to})
	}
	t.mu.Lock()
	t.origins, t.maps = m, maps
	t.mu.Unlock()
	return nil
}

// ParseOrigin reads an http(s) origin: a scheme and a host, with a port
// if any, and nothing else.
func ParseOrigin(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, err
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("not an http(s) origin")
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("an origin is a scheme and a host (and a port), nothing else")
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// hostPort is an origin's host and port, the default port written out.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return strings.ToLower(u.Host)
	}
	if u.Scheme == "https" {
		return strings.ToLower(u.Hostname()) + ":443"
	}
	return strings.ToLower(u.Hostname()) + ":80"
}

// remapped is where the tunnel sends an origin, if anywhere.
func (t *Tunnel) remapped(scheme, host string) *url.URL {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.origins) == 0 {
		return nil
	}
	return t.origins[scheme+"://"+hostPort(&url.URL{Scheme: scheme, Host: host})]
}

// remaps are the tunnel's remapped origins (built once, by Remap; never
// changed in place, so they are shared).
func (t *Tunnel) remaps() []originMap {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.maps
}

// blockedError is a refusal by the policy at dial time.
type blockedError struct{ msg string }

func (e *blockedError) Error() string { return e.msg }

// NewProxy starts a proxy for policy on a free loopback port.
func NewProxy(policy *Policy, log *slog.Logger) (*Proxy, error) {
	if log == nil {
		log = slog.Default()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("egress proxy: listen: %w", err)
	}
	p := &Proxy{policy: policy, log: log, ln: ln, tunnels: map[string]*Tunnel{}}
	p.tr = &http.Transport{
		DialContext:           p.dial,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute,
		DisableCompression:    true, // pass the page's encoding through untouched
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, ErrorLog: nil}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Server is the proxy's address for a browser's proxy settings.
func (p *Proxy) Server() string { return "http://" + p.ln.Addr().String() }

// Close stops the proxy.
func (p *Proxy) Close() error {
	p.tr.CloseIdleConnections()
	return p.srv.Close()
}

// Open issues credentials for one browser context.
func (p *Proxy) Open() *Tunnel {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	t := &Tunnel{User: "ctx-" + hex.EncodeToString(b[:8]), Password: hex.EncodeToString(b[8:]), proxy: p}
	p.mu.Lock()
	p.tunnels[t.User] = t
	p.mu.Unlock()
	return t
}

// Close revokes the tunnel's credentials.
func (t *Tunnel) Close() {
	t.proxy.mu.Lock()
	delete(t.proxy.tunnels, t.User)
	t.proxy.mu.Unlock()
}

// Blocked returns what the proxy refused this tunnel, oldest first.
func (t *Tunnel) Blocked() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.blocked...)
}

func (t *Tunnel) block(what string) {
	t.mu.Lock()
	t.blocked = append(t.blocked, what)
	t.mu.Unlock()
}

// tunnel authenticates a request's Proxy-Authorization.
func (p *Proxy) tunnel(r *http.Request) *Tunnel {
	h, ok := strings.CutPrefix(r.Header.Get("Proxy-Authorization"), "Basic ")
	if !ok {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h))
	if err != nil {
		return nil
	}
	user, pass, _ := strings.Cut(string(raw), ":")
	p.mu.Lock()
	t := p.tunnels[user]
	p.mu.Unlock()
	if t == nil || subtle.ConstantTimeCompare([]byte(pass), []byte(t.Password)) != 1 {
		return nil
	}
	return t
}

// ServeHTTP handles CONNECT tunnels (https, wss, ws) and plain http
// requests in absolute form.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := p.tunnel(r)
	if t == nil {
		w.Header().Set("Proxy-Authenticate", `Basic realm="webpilot egress"`)
		http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r, t)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		t.block(r.URL.String())
		http.Error(w, "egress: only http requests in absolute form and CONNECT are proxied", http.StatusBadRequest)
		return
	}
	p.forward(w, r, t)
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request, t *Tunnel) {
	// A remapped origin's tunnel is answered here: TLS for an https
	// origin, plain http for an http one (some clients tunnel http too).
	for _, scheme := range []string{"https", "http"} {
		if t.remapped(scheme, r.Host) != nil {
			p.terminate(w, r, t, scheme)
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	up, err := p.dial(ctx, "tcp", r.Host)
	cancel()
	if err != nil {
		p.refuse(w, t, "connect "+r.Host, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "egress: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	_, _ = down.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n"))
	go func() {
		if buf.Reader.Buffered() > 0 {
			_, _ = io.CopyN(up, buf, int64(buf.Reader.Buffered()))
		}
		_, _ = io.Copy(up, down)
		_ = up.Close()
	}()
	_, _ = io.Copy(down, up)
	_ = down.Close()
}

// terminate answers a CONNECT to a remapped origin itself: it speaks
// http (over TLS with the proxy's own certificate for https) and forwards
// each request to the origin's target.
func (p *Proxy) terminate(w http.ResponseWriter, r *http.Request, t *Tunnel, scheme string) {
	p.certOnce.Do(func() { p.cert, p.certErr = selfSigned() })
	if scheme == "https" && p.certErr != nil {
		http.Error(w, "egress: "+p.certErr.Error(), http.StatusInternalServerError)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "egress: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, _, err := hj.Hijack()
	if err != nil {
		return
	}
	_, _ = down.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n"))
	conn := down
	if scheme == "https" {
		conn = tls.Server(down, &tls.Config{Certificates: []tls.Certificate{p.cert}, NextProtos: []string{"http/1.1"}})
	}
	srv := &http.Server{ReadHeaderTimeout: 30 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, in *http.Request) {
		in.URL.Scheme, in.URL.Host = scheme, r.Host
		p.forward(w, in, t)
	})}
	_ = srv.Serve(&oneConn{conn: conn})
}

// oneConn is a listener that accepts one connection, then waits for it
// to close.
type oneConn struct {
	conn net.Conn
	once sync.Once
	done chan struct{}
	mu   sync.Mutex
}

func (l *oneConn) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.done == nil {
		l.done = make(chan struct{})
	}
	done := l.done
	l.mu.Unlock()
	var c net.Conn
	l.once.Do(func() { c = &closeNotify{Conn: l.conn, closed: done} })
	if c != nil {
		return c, nil
	}
	<-done
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.conn.LocalAddr() }

// closeNotify closes closed when the connection closes.
type closeNotify struct {
	net.Conn
	closed chan struct{}
	once   sync.Once
}

func (c *closeNotify) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// selfSigned is a throwaway certificate for remapped https origins.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webpilot egress"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour * 365),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// hopHeaders are meaningful for one connection only.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, t *Tunnel) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	var remap *originMap
	if to := t.remapped(r.URL.Scheme, r.URL.Host); to != nil {
		remap = &originMap{from: &url.URL{Scheme: r.URL.Scheme, Host: r.URL.Host}, to: to, others: t.remaps()}
		out.URL.Scheme, out.URL.Host, out.Host = to.Scheme, to.Host, to.Host
		remap.request(out.Header)
	}
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		p.refuse(w, t, r.Method+" "+r.URL.String(), err)
		return
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	if remap != nil {
		remap.response(resp.Header)
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	if f, ok := w.(http.Flusher); ok {
		// Stream (server-sent events, long polls) rather than buffer.
		buf := make([]byte, 32<<10)
		for {
			n, rerr := resp.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				f.Flush()
			}
			if rerr != nil {
				return
			}
		}
	}
	_, _ = io.Copy(w, resp.Body)
}

// refuse answers a request the policy (or the network) refused; policy
// refusals are recorded on the tunnel for the job's report.
func (p *Proxy) refuse(w http.ResponseWriter, t *Tunnel, what string, err error) {
	var be *blockedError
	if errors.As(err, &be) {
		t.block(what + ": " + be.msg)
		p.log.Warn("egress blocked", "request", what, "reason", be.msg)
		http.Error(w, "egress blocked: "+be.msg, http.StatusForbidden)
		return
	}
	http.Error(w, "egress: "+upstreamError(err), http.StatusBadGateway)
}

// upstreamError says why the proxy could not reach an allowed host, in
// words that name nothing of the host it runs on: Go's own messages name
// the resolver it asked (lookup x on 10.0.0.2:53) and the local address.
func upstreamError(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns):
		why := "it does not resolve"
		switch {
		case dns.IsTimeout:
			why = "its lookup timed out"
		case dns.IsTemporary:
			why = "its lookup failed for now"
		}
		return fmt.Sprintf("cannot reach %s: %s", dns.Name, why)
	case errors.As(err, &op):
		to := "the host"
		if op.Addr != nil {
			to = op.Addr.String()
		}
		var sys *os.SyscallError
		switch {
		case op.Timeout():
			return fmt.Sprintf("cannot reach %s: timed out", to)
		case errors.As(op.Err, &sys):
			return fmt.Sprintf("cannot reach %s: %v", to, sys.Err)
		}
		return fmt.Sprintf("cannot reach %s", to)
	case errors.Is(err, context.DeadlineExceeded):
		return "the upstream host did not answer in time"
	}
	return "the upstream host could not be reached"
}

// dial is the policy's Dial: the proxy's upstream connections.
func (p *Proxy) dial(ctx context.Context, network, hostport string) (net.Conn, error) {
	return p.policy.Dial(ctx, network, hostport)
}

// Dial resolves host once, checks every address, and connects to a
// checked one: the check is made where the connection is made (a name
// that resolves elsewhere later cannot slip past it). It is the
// DialContext of every client that connects where a tenant said.
func (p *Policy) Dial(ctx context.Context, network, hostport string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, &blockedError{fmt.Sprintf("bad address %q", hostport)}
	}
	addrs, err := p.DialAddrs(ctx, host, port)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// DialAddrs returns the addresses a connection to host:port may use: for an
// allow-listed host (or host:port) whatever it resolves to; otherwise its
// addresses, provided none is in a refused range (a name that resolves to
// any private address is refused whole). Refusals are blockedErrors.
func (p *Policy) DialAddrs(ctx context.Context, host, port string) ([]netip.Addr, error) {
	host = strings.ToLower(strings.Trim(host, "[]"))
	allowed := p.allow[host] || p.allow[net.JoinHostPort(host, port)] || p.allow[host+":"+port]
	if a, err := netip.ParseAddr(host); err == nil {
		if !allowed && BlockedAddr(a) {
			return nil, &blockedError{fmt.Sprintf("%s is a private, loopback or link-local address", host)}
		}
		return []netip.Addr{a.WithZone("").Unmap()}, nil
	}
	if !allowed && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
		return nil, &blockedError{fmt.Sprintf("host %s is loopback", host)}
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := p.resolver.LookupNetIP(rctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		a = a.Unmap()
		if !allowed && BlockedAddr(a) {
			return nil, &blockedError{fmt.Sprintf("host %s resolves to a private, loopback or link-local address", host)} // not which: that would map the host's network
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	return out, nil
}
