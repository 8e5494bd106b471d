// Package netguard decides which URLs a tenant's job may reach. By default it
// refuses non-http(s) schemes and every address that is not public:
// loopback, private ranges, link-local (cloud metadata included), CGNAT,
// unspecified and multicast. Operators allow-list hosts explicitly.
package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Policy checks URLs against the allow-list and the blocked ranges.
type Policy struct {
	allow    map[string]bool // host or host:port, lower case
	resolver *net.Resolver

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	err     error
	expires time.Time
}

// New returns a policy that additionally allows the given hosts
// ("127.0.0.1", "localhost:8080", ...) whatever they resolve to.
func New(allowHosts []string) *Policy {
	p := &Policy{allow: map[string]bool{}, resolver: net.DefaultResolver, cache: map[string]cached{}}
	for _, h := range allowHosts {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			p.allow[h] = true
		}
	}
	return p
}

// AllowedHosts lists the operator's allow-list.
func (p *Policy) AllowedHosts() []string {
	out := make([]string, 0, len(p.allow))
	for h := range p.allow {
		out = append(out, h)
	}
	return out
}

var blocked = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		// IPv4: this network, private, CGNAT, loopback, link-local (cloud
		// metadata), IETF protocol assignments, documentation, benchmarking,
		// multicast, reserved and broadcast.
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		// IPv6: unspecified, loopback, unique-local, link-local, site-local
		// (deprecated but routed by some stacks), multicast, discard, documentation.
		"::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8", "100::/64", "2001:db8::/32",
		// IPv6 forms that embed an IPv4 address, whichever it is: mapped,
		// translated, compatible, NAT64 (well-known and local-use), 6to4,
		// Teredo and ORCHID.
		"::ffff:0:0/96", "::ffff:0:0:0/96", "::/96", "64:ff9b::/96", "64:ff9b:1::/48", "2002::/16",
		"2001::/32", "2001:10::/28", "2001:20::/28",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// BlockedAddr reports whether an address is in a refused range. A zone
// (fe80::1%eth0) does not change what the address is.
func BlockedAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	// A mapped address is the IPv4 address it carries (resolvers return
	// IPv4 answers in this form too).
	a = a.WithZone("").Unmap()
	for _, p := range blocked {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// CheckURL returns an error saying why raw may not be fetched, or nil.
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a valid URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q is not allowed (http or https only)", u.Scheme)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return fmt.Errorf("URL has no host")
	}
	if p.allow[host] || p.allow[strings.ToLower(u.Host)] {
		return nil
	}
	return p.checkHost(host)
}

func (p *Policy) checkHost(host string) error {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if BlockedAddr(a) {
			return fmt.Errorf("host %s is a private, loopback or link-local address", host)
		}
		return nil
	}
	p.mu.Lock()
	c, ok := p.cache[host]
	p.mu.Unlock()
	if ok && time.Now().Before(c.expires) {
		return c.err
	}
	err := p.resolve(host)
	p.mu.Lock()
	p.cache[host] = cached{err: err, expires: time.Now().Add(time.Minute)}
	p.mu.Unlock()
	return err
}

func (p *Policy) resolve(host string) error {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fmt.Errorf("host %s is loopback", host)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	addrs, err := p.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		// Not the resolver's own words: they name the host's resolver.
		return fmt.Errorf("host %s does not resolve", host)
	}
	for _, a := range addrs {
		if BlockedAddr(a) {
			return fmt.Errorf("host %s resolves to a private, loopback or link-local address", host) // not which: that would map the host's network
		}
	}
	return nil
}
