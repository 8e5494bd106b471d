package api

import (
	"net"
	"net/http"
	"strconv"
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

// clientAddr is the connection's remote address without the port. Headers
// such as X-Forwarded-For are not trusted: a client can write them.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
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
