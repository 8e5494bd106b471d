// Package netguardtest gives egress tests a canary: a server that counts
// every request, placed where a job must never reach.
package netguardtest

import (
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
