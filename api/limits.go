package api

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// keyedLimiters holds one token bucket per key (a client address, a
// tenant), dropping buckets that have refilled so the map stays small.
type keyedLimiters struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	m     map[string]*rate.Limiter
	swept time.Time
}

func newKeyedLimiters(perSecond float64, burst int) *keyedLimiters {
	return &keyedLimiters{limit: rate.Limit(perSecond), burst: burst, m: map[string]*rate.Limiter{}}
}

func (k *keyedLimiters) get(key string) *rate.Limiter {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	if now.Sub(k.swept) > time.Minute {
		for key, l := range k.m {
			if l.TokensAt(now) >= float64(k.burst) {
				delete(k.m, key)
			}
		}
		k.swept = now
	}
	l := k.m[key]
	if l == nil {
		l = rate.NewLimiter(k.limit, k.burst)
		k.m[key] = l
	}
	return l
}

// exhausted reports whether key has no token left, without taking one.
func (k *keyedLimiters) exhausted(key string) bool {
	return k.get(key).Tokens() < 1
}

// take takes a token for key and reports whether there was one.
func (k *keyedLimiters) take(key string) bool {
	return k.get(key).Allow()
}

// retryAfter is how long until key has a token again, in whole seconds.
func (k *keyedLimiters) retryAfter(key string) string {
	l := k.get(key)
	need := 1 - l.Tokens()
	secs := 1
	if need > 0 && k.limit > 0 {
		secs = int(need/float64(k.limit)) + 1
	}
	return strconv.Itoa(secs)
}

// clientAddr is the address limits count a request against: the
// connection's remote address without the port, or, when that is one of
// trusted (the reverse proxies in front of the dispatchers), the
// right-most address of X-Forwarded-For no trusted proxy wrote. Behind a
// proxy every client would otherwise share its address, and one client's
// failed keys would lock everyone out. The header is never read from a
// connection that is not a trusted proxy: a client can write it.
func clientAddr(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if len(trusted) == 0 || !inPrefixes(host, trusted) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if _, err := netip.ParseAddr(hop); err != nil {
			return host // a hop that is not an address: trust nothing beyond it
		}
		if !inPrefixes(hop, trusted) {
			return hop
		}
	}
	return host
}

func inPrefixes(addr string, prefixes []netip.Prefix) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func tooMany(w http.ResponseWriter, retryAfter, msg string) {
	w.Header().Set("Retry-After", retryAfter)
	writeError(w, http.StatusTooManyRequests, msg, nil)
}

// ServerTimeouts bound how long a connection may take at each stage, so a
// client that sends slowly (a byte a second) cannot hold a connection.
type ServerTimeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
}

// DefaultServerTimeouts are the dispatcher's.
func DefaultServerTimeouts() ServerTimeouts {
	return ServerTimeouts{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Write: 60 * time.Second, Idle: 2 * time.Minute}
}

// NewHTTPServer is the dispatcher's HTTP server for h with full timeouts.
// Progress streams extend their own write deadline as they send.
func NewHTTPServer(addr string, h http.Handler, t ServerTimeouts) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read,
		WriteTimeout: t.Write, IdleTimeout: t.Idle, MaxHeaderBytes: 64 << 10}
}
