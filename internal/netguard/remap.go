package netguard

import (
	"net/http"
	"net/url"
	"strings"
)

// A remapped origin must behave as the origin, not merely reach the
// target: a server-rendered app answers a login's POST with a redirect to
// its own absolute URL and sets its session cookie for its own host, and a
// browser that follows the target's URL leaves the origin, and its cookie
// behind ("You must login"). So the proxy says on each request which origin
// the browser asked for (X-Forwarded-Host and -Proto, Origin and Referer
// in the target's terms), and maps every URL and cookie domain of the
// target in the answer back to the origin.

// originMap is the remapped origin a request was made for (what the
// browser uses, and where the proxy sends it), and the tunnel's others: a
// page on one remapped origin calls another (its API), and names its own
// in Origin and Referer.
type originMap struct {
	from, to *url.URL
	others   []originMap
}

// toTarget rewrites raw, an absolute URL on any of the remapped origins,
// to its target.
func (m originMap) toTarget(raw string) string {
	for _, o := range append([]originMap{m}, m.others...) {
		if out := swap(raw, o.from, o.to); out != raw {
			return out
		}
	}
	return raw
}

// toOrigin rewrites raw, an absolute URL on a target, to its origin: the
// request's own first, when several origins share a target.
func (m originMap) toOrigin(raw string) string {
	for _, o := range append([]originMap{m}, m.others...) {
		if out := swap(raw, o.to, o.from); out != raw {
			return out
		}
	}
	return raw
}

// sameOrigin reports whether u (absolute) is on origin o.
func sameOrigin(u, o *url.URL) bool {
	return strings.EqualFold(u.Scheme, o.Scheme) && hostPort(u) == hostPort(o)
}

// swap rewrites raw, an absolute URL on origin a, to origin b; any other
// value is left as it is.
func swap(raw string, a, b *url.URL) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !u.IsAbs() || !sameOrigin(u, a) {
		return raw
	}
	u.Scheme, u.Host = b.Scheme, b.Host
	return u.String()
}

// request puts the origin's request into the target's terms and says which
// origin it was made for.
func (m originMap) request(h http.Header) {
	h.Set("X-Forwarded-Host", m.from.Host)
	h.Set("X-Forwarded-Proto", m.from.Scheme)
	if o := h.Get("Origin"); o != "" && o != "null" {
		h.Set("Origin", strings.TrimSuffix(m.toTarget(o), "/"))
	}
	if r := h.Get("Referer"); r != "" {
		h.Set("Referer", m.toTarget(r))
	}
}

// response maps the target's answer back to the origin: redirects and the
// other headers naming a URL, cookies' domains, and CORS.
func (m originMap) response(h http.Header) {
	for _, k := range []string{"Location", "Content-Location"} {
		if v := h.Get(k); v != "" {
			h.Set(k, m.toOrigin(v))
		}
	}
	if v := h.Get("Refresh"); v != "" {
		// "5; url=http://target/next"
		if i := strings.Index(strings.ToLower(v), "url="); i >= 0 {
			h.Set("Refresh", v[:i+4]+m.toOrigin(strings.Trim(v[i+4:], `'"`)))
		}
	}
	if v := h.Get("Access-Control-Allow-Origin"); v != "" && v != "*" {
		h.Set("Access-Control-Allow-Origin", strings.TrimSuffix(m.toOrigin(v), "/"))
	}
	if cookies := h.Values("Set-Cookie"); len(cookies) > 0 {
		h.Del("Set-Cookie")
		for _, c := range cookies {
			h.Add("Set-Cookie", m.cookie(c))
		}
	}
}

// cookie maps a Set-Cookie's Domain from the target's host to the origin's:
// a cookie for the target's host would never be sent to the origin.
func (m originMap) cookie(c string) string {
	parts := strings.Split(c, ";")
	for i, p := range parts {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(k, "domain") {
			continue
		}
		d := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(v)), ".")
		if d == strings.ToLower(m.to.Hostname()) {
			parts[i] = " Domain=" + m.from.Hostname()
		}
	}
	return strings.Join(parts, ";")
}
