package browser

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/playwright-community/playwright-go"
)

// initScript runs in every document before the page's own scripts and
// records when the DOM last changed, so settling can wait for quiet.
const initScript = `(() => {
  if (window.__wp) return;
  const wp = window.__wp = { last: performance.now(), n: 0 };
  const mark = () => { wp.last = performance.now(); wp.n++; };
  new MutationObserver(mark).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
})();`

// probeScript reports DOM quiet time, busy indicators and readiness.
const probeScript = `() => {
  const wp = window.__wp || { last: 0 };
  const visible = (e) => { const r = e.getBoundingClientRect(); if (r.width === 0 || r.height === 0) return false;
    const st = getComputedStyle(e); return st.visibility !== 'hidden' && st.display !== 'none' && st.opacity !== '0'; };
  const busy = [...document.querySelectorAll('[aria-busy="true"], [role="progressbar"], .spinner, .loading, .loader, [data-loading="true"]')]
    .filter(visible).slice(0, 3).map(e => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ')[0] : ''));
  return { quiet: performance.now() - wp.last, busy, ready: document.readyState };
}`

// netTracker follows the page's requests so settling can wait for the ones
// a batch started. Websockets and event streams never settle and are ignored.
type netTracker struct {
	mu       sync.Mutex
	inflight map[playwright.Request]inflightReq
	started  int       // requests seen so far (Activity)
	fetched  time.Time // when the page last sent a fetch or XHR
}

type inflightReq struct {
	url     string
	started time.Time
}

func newNetTracker() *netTracker {
	return &netTracker{inflight: map[playwright.Request]inflightReq{}}
}

func (n *netTracker) attach(p playwright.Page) {
	p.OnRequest(func(r playwright.Request) {
		switch r.ResourceType() {
		case "websocket", "eventsource", "manifest", "other":
			return
		}
		n.mu.Lock()
		n.inflight[r] = inflightReq{url: r.URL(), started: time.Now()}
		n.started++
		if t := r.ResourceType(); t == "fetch" || t == "xhr" {
			n.fetched = time.Now()
		}
		n.mu.Unlock()
	})
	done := func(r playwright.Request) {
		n.mu.Lock()
		delete(n.inflight, r)
		n.mu.Unlock()
	}
	p.OnRequestFinished(done)
	p.OnRequestFailed(done)
}

// fetchedWithin reports whether the page sent a fetch or XHR lately.
func (n *netTracker) fetchedWithin(d time.Duration) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.fetched.IsZero() && time.Since(n.fetched) < d
}

// pending lists requests started since `since` that have not finished and
// are younger than longPoll (older ones are treated as long-polls).
func (n *netTracker) pending(since time.Time, longPoll time.Duration) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	var out []string
	for _, r := range n.inflight {
		if r.started.Before(since) || now.Sub(r.started) > longPoll {
			continue
		}
		out = append(out, r.url)
	}
	sort.Strings(out)
	return out
}

// SettleOptions bound the wait after a batch.
type SettleOptions struct {
	Since       time.Time     // when the batch started: requests from before it are not waited for
	Timeout     time.Duration // default 5s
	QuietWindow time.Duration // DOM must be unchanged this long; default 40ms
	LongPoll    time.Duration // requests open longer are ignored; default 3s
	StartURL    string        // the URL before the batch, to detect navigation
	// Acted says the batch clicked, pressed, checked, selected, dragged or
	// uploaded: what that causes can start after the command returned (a
	// handler that fetches after a timeout, a request announced late by
	// the driver), so the page is watched longer before it is called
	// quiet, and longer still when it has been fetching lately.
	Acted bool
	// MinWindow, when set, is how long the page is watched at least after
	// the batch, instead of the adaptive window.
	MinWindow time.Duration
}

// The least time the page is watched after a batch: any batch, one that
// acted, one that acted on a page that has been fetching (a request its
// handlers start up to 300 ms later is still seen).
const (
	settleWindowQuiet    = 40 * time.Millisecond
	settleWindowActed    = 150 * time.Millisecond
	settleWindowFetching = 400 * time.Millisecond
	fetchingLately       = time.Minute
)

// SettleReport says how the wait ended.
type SettleReport struct {
	Duration  time.Duration `json:"duration_ns"`
	EndedBy   string        `json:"ended_by"` // quiet, timeout
	TimedOut  bool          `json:"timed_out"`
	Reason    string        `json:"reason,omitempty"`    // what was still pending on timeout
	LastWait  string        `json:"last_wait,omitempty"` // the signal that held the wait longest: load, network, dom, busy
	Navigated bool          `json:"navigated,omitempty"`
}

// Settle waits until the page is quiet: navigation loaded, the batch's
// requests finished, the DOM unchanged for the quiet window and no visible
// busy indicator. Each signal is bounded by the overall timeout.
func (s *Session) Settle(ctx context.Context, o SettleOptions) SettleReport {
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	if o.QuietWindow == 0 {
		o.QuietWindow = 40 * time.Millisecond
	}
	if o.LongPoll == 0 {
		o.LongPoll = 3 * time.Second
	}
	if o.Since.IsZero() {
		o.Since = time.Now()
	}
	start := time.Now()
	deadline := start.Add(o.Timeout)
	rep := SettleReport{}
	window := o.MinWindow
	if window == 0 {
		window = settleWindowQuiet
		if o.Acted {
			window = settleWindowActed
			if s.net.fetchedWithin(fetchingLately) {
				window = settleWindowFetching
			}
		}
	}
	waited := map[string]time.Duration{}
	if o.StartURL != "" && s.page.URL() != o.StartURL {
		rep.Navigated = true
		t := time.Now()
		_ = s.page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{
			State: playwright.LoadStateLoad, Timeout: playwright.Float(float64(o.Timeout.Milliseconds())),
		})
		waited["load"] += time.Since(t)
	}
	last := time.Now()
	for {
		pending := s.net.pending(o.Since, o.LongPoll)
		probe, perr := s.probe()
		var blocking []string
		var signal string
		switch {
		case perr != nil:
			// A navigation destroyed the context mid-probe: wait for the new document.
			signal, blocking = "load", []string{"document is navigating"}
		case probe.Ready == "loading":
			signal, blocking = "load", []string{"document still loading"}
		case s.pageOpening():
			signal, blocking = "load", []string{"a new page is opening"}
		case len(pending) > 0:
			signal, blocking = "network", []string{fmt.Sprintf("%d request(s) in flight: %s", len(pending), strings.Join(first(pending, 3), ", "))}
		case len(probe.Busy) > 0:
			signal, blocking = "busy", []string{"busy indicator visible: " + strings.Join(probe.Busy, ", ")}
		// Quiet counts from the end of the batch at the earliest: a DOM
		// unchanged since before the click says nothing of what the click did.
		case min(time.Duration(probe.Quiet*float64(time.Millisecond)), time.Since(start)) < o.QuietWindow:
			signal, blocking = "dom", []string{"DOM still changing"}
		case time.Since(start) < window:
			signal, blocking = "window", []string{"watching for what the batch starts late"}
		}
		now := time.Now()
		if signal != "" {
			waited[signal] += now.Sub(last)
		}
		last = now
		if len(blocking) == 0 {
			rep.EndedBy = "quiet"
			break
		}
		if now.After(deadline) || ctx.Err() != nil {
			rep.EndedBy, rep.TimedOut, rep.Reason = "timeout", true, strings.Join(blocking, "; ")
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	rep.Duration = time.Since(start)
	var longest time.Duration
	for sig, d := range waited {
		if d > longest {
			longest, rep.LastWait = d, sig
		}
	}
	return rep
}

type probeResult struct {
	Quiet float64  `json:"quiet"`
	Busy  []string `json:"busy"`
	Ready string   `json:"ready"`
}

func (s *Session) probe() (probeResult, error) {
	var p probeResult
	v, err := s.page.Evaluate(probeScript)
	if err != nil {
		return p, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return p, fmt.Errorf("unexpected probe result %T", v)
	}
	p.Quiet = toFloat(m["quiet"])
	p.Ready, _ = m["ready"].(string)
	if b, ok := m["busy"].([]any); ok {
		for _, x := range b {
			if s, ok := x.(string); ok {
				p.Busy = append(p.Busy, s)
			}
		}
	}
	return p, nil
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return 0
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
