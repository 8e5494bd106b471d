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

// initScript runs in every document before the page's own scripts. It
// records when the DOM last changed, the short timers the page schedules
// (a handler that fetches "a moment later", a debounce) and the fetch/XHR
// requests it has open. All three are read in the page by the settle probe,
// so nothing depends on when the driver announces an event to Go.
const initScript = `(() => {
  if (window.__wp) return;
  const now = () => performance.now();
  const wp = window.__wp = { last: now(), n: 0, timers: new Map(), fired: [], reqs: new Map(), seq: 0 };
  const mark = () => { wp.last = now(); wp.n++; };
  new MutationObserver(mark).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const setT = window.setTimeout, clearT = window.clearTimeout;
  window.setTimeout = function (fn, delay, ...args) {
    const d = Number(delay) || 0;
    if (typeof fn !== 'function' || d > 1000) return setT.call(window, fn, delay, ...args);
    const created = now();
    const id = setT.call(window, function () {
      wp.timers.delete(id);
      wp.fired.push([created, now()]);
      if (wp.fired.length > 32) wp.fired.shift();
      return fn.apply(this, arguments);
    }, delay, ...args);
    wp.timers.set(id, created);
    return id;
  };
  window.clearTimeout = function (id) { wp.timers.delete(id); return clearT.call(window, id); };
  // Which elements listen for a click, a right-click, a press or a drag:
  // a div with only a contextmenu handler still acts, though nothing else
  // tells it from text.
  const acts = new Set(['click', 'dblclick', 'contextmenu', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchstart', 'dragstart']);
  const listened = wp.listened = new WeakMap();
  const addL = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, fn, opts) {
    if (acts.has(type) && this instanceof Element) {
      const kinds = listened.get(this) || new Set();
      kinds.add(type);
      listened.set(this, kinds);
    }
    return addL.call(this, type, fn, opts);
  };
  // Form state a script sets (a value, a checked box, a chosen option, a
  // reset form) is no DOM mutation: it is counted as one, so a page whose
  // count has not moved has changed in nothing but what the user did.
  for (const [proto, props] of [[HTMLInputElement.prototype, ['value', 'checked', 'indeterminate', 'valueAsNumber', 'valueAsDate']],
    [HTMLTextAreaElement.prototype, ['value']], [HTMLSelectElement.prototype, ['value', 'selectedIndex']], [HTMLOptionElement.prototype, ['selected']]]) {
    for (const k of props) {
      const d = Object.getOwnPropertyDescriptor(proto, k);
      if (!d || !d.set || !d.configurable) continue;
      Object.defineProperty(proto, k, { ...d, set(v) { mark(); return d.set.call(this, v); } });
    }
  }
  for (const [proto, k] of [[HTMLFormElement.prototype, 'reset'], [HTMLInputElement.prototype, 'setRangeText'], [HTMLTextAreaElement.prototype, 'setRangeText'],
    [HTMLInputElement.prototype, 'stepUp'], [HTMLInputElement.prototype, 'stepDown']]) {
    const f = proto[k];
    if (typeof f === 'function') proto[k] = function () { mark(); return f.apply(this, arguments); };
  }
  const open = () => { const k = ++wp.seq; wp.reqs.set(k, now()); return () => { wp.reqs.delete(k); mark(); }; };
  const f = window.fetch;
  if (f) window.fetch = function () {
    const done = open();
    let p;
    try { p = f.apply(this, arguments); } catch (e) { done(); throw e; }
    // Open until the answer's headers arrive; the body is followed by the
    // driver's request events, which by then have certainly been sent.
    Promise.resolve(p).then(done, done);
    return p;
  };
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function () {
    const done = open();
    this.addEventListener('loadend', done, { once: true });
    try { return send.apply(this, arguments); } catch (e) { done(); throw e; }
  };
})();`

// probeScript reports DOM quiet time, busy indicators and readiness, and
// the ages (milliseconds before the probe ran) of the short timers that have
// not fired, of the ones that fired lately (created, fired) and of the
// fetch/XHR requests still open, up to maxAge. Which of them belong to the
// batch is decided in Go, which knows when the probe was sent and answered:
// the page cannot tell how long the probe waited to run, and under load that
// wait is long enough to push a batch's own timer out of a window computed
// here.
const probeScript = `(maxAge) => {
  const wp = window.__wp || { last: 0, timers: new Map(), fired: [], reqs: new Map() };
  const t = performance.now();
  const ages = (xs) => { const out = []; for (const c of xs) if (t - c <= maxAge) out.push(t - c); return out.slice(-256); };
  const visible = (e) => { const r = e.getBoundingClientRect(); if (r.width === 0 || r.height === 0) return false;
    const st = getComputedStyle(e); return st.visibility !== 'hidden' && st.display !== 'none' && st.opacity !== '0'; };
  const busy = [...document.querySelectorAll('[aria-busy="true"], [role="progressbar"], .spinner, .loading, .loader, [data-loading="true"]')]
    .filter(visible).slice(0, 3).map(e => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ')[0] : ''));
  let active = document.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  const typed = wp.typed || [];
  return { quiet: t - wp.last, busy, ready: document.readyState, timers: ages(wp.timers.values()),
    fired: wp.fired.filter(([c]) => t - c <= maxAge).map(([c, at]) => [t - c, t - at]), reqs: ages(wp.reqs.values()),
    n: wp.n || 0, x: scrollX, y: scrollY, doc: String(performance.timeOrigin),
    typed: typed.map((e) => e.isConnected ? e.value : null), active: typed.indexOf(active) };
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
	QuietWindow time.Duration // DOM must be unchanged this long; default 25ms
	LongPoll    time.Duration // requests open longer are ignored; default 3s
	StartURL    string        // the URL before the batch, to detect navigation
	// Acted says the batch clicked, pressed, checked, selected, dragged or
	// uploaded: what that causes can start after the command returned, so
	// the page is watched longer before it is called quiet, and longer
	// still when it has been fetching lately.
	Acted bool
	// Ended is when the batch's last command returned; the quiet window and
	// the watch after acting count from it (default: the call). A wait
	// taken up again later counts only what is still missing.
	Ended time.Time
	// Typed says every command of the batch typed into a field (fill,
	// type): what typing does at once (input handlers, their microtask
	// renders) is done when the command returns, and what it starts later
	// is a timer or a request the page's trackers hold the wait for. So
	// the DOM need only be quiet now (typedQuiet), with no window counted
	// from the end of the batch.
	Typed bool
}

// The least time the page is watched after a batch: any batch, one that
// acted, one that acted on a page that has been fetching. These only cover
// what the page's own trackers cannot see (a promise chain, an animation
// frame): a timer the batch scheduled, or a fetch/XHR it opened, holds
// the wait however late it comes.
const (
	// defaultQuietWindow is how long the DOM must be unchanged. Short: a
	// debounce or a deferred render is held by the timer tracker instead.
	defaultQuietWindow   = 25 * time.Millisecond
	settleWindowActed    = 60 * time.Millisecond
	settleWindowFetching = 200 * time.Millisecond
	fetchingLately       = time.Minute
	// typedQuiet is how long the DOM must be unchanged, by the page's own
	// clock, after a batch that only typed.
	typedQuiet = 5 * time.Millisecond
)

// SettleReport says how the wait ended.
type SettleReport struct {
	Duration  time.Duration `json:"duration_ns"`
	EndedBy   string        `json:"ended_by"` // quiet, timeout
	TimedOut  bool          `json:"timed_out"`
	Reason    string        `json:"reason,omitempty"`    // what was still pending on timeout
	LastWait  string        `json:"last_wait,omitempty"` // the signal that held the wait longest: load, network, timer, busy, dom, window
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
		o.QuietWindow = defaultQuietWindow
	}
	if o.LongPoll == 0 {
		o.LongPoll = 3 * time.Second
	}
	if o.Since.IsZero() {
		o.Since = time.Now()
	}
	start := time.Now()
	deadline := start.Add(o.Timeout)
	ended := start
	if !o.Ended.IsZero() && o.Ended.Before(start) {
		ended = o.Ended
	}
	rep := SettleReport{}
	window := o.QuietWindow
	if o.Acted {
		window = settleWindowActed
		if s.net.fetchedWithin(fetchingLately) {
			window = settleWindowFetching
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
		probe, perr := s.probe(o.Since, ended, o.LongPoll)
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
		case probe.Requests > 0:
			// Opened in the page but not yet announced to us by the driver.
			signal, blocking = "network", []string{fmt.Sprintf("%d fetch/XHR request(s) opened by the page", probe.Requests)}
		case probe.Timers > 0:
			signal, blocking = "timer", []string{fmt.Sprintf("%d timer(s) the batch scheduled have not fired", probe.Timers)}
		case probe.SinceTimer >= 0 && probe.SinceTimer < float64(o.QuietWindow.Milliseconds()):
			signal, blocking = "timer", []string{"a timer the batch scheduled has just fired"}
		case len(probe.Busy) > 0:
			signal, blocking = "busy", []string{"busy indicator visible: " + strings.Join(probe.Busy, ", ")}
		// Quiet counts from the end of the batch at the earliest: a DOM
		// unchanged since before the click says nothing of what the click did.
		case o.Typed && time.Duration(probe.Quiet*float64(time.Millisecond)) < typedQuiet:
			signal, blocking = "dom", []string{"DOM still changing"}
		case o.Typed:
			// Typing's own effects are done; later ones hold the wait above.
		case min(time.Duration(probe.Quiet*float64(time.Millisecond)), time.Since(ended)) < o.QuietWindow:
			signal, blocking = "dom", []string{"DOM still changing"}
		case time.Since(ended) < window:
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
	Quiet      float64 // ms since the DOM last changed
	Busy       []string
	Ready      string
	Timers     int     // the batch's timers that have not fired
	SinceTimer float64 // ms since the last of the batch's timers fired, -1 if none has
	Requests   int     // the batch's fetch/XHR requests still open
}

// batchWindow says whether something the page created age before the probe
// ran belongs to a batch that ran from since to ended. The probe ran at some
// moment between sent and answered, so the creation time is only known to
// lie in [sent-age, answered-age]: anything that may be in the window is
// counted, so a slow probe can lengthen the wait but never shorten it.
type batchWindow struct{ since, ended, sent, answered time.Time }

func (w batchWindow) has(age time.Duration) bool {
	// A click's handler can run a moment after the driver's click returned,
	// so timers created shortly after the batch ended are the batch's too.
	return !w.answered.Add(-age).Before(w.since.Add(-5*time.Millisecond)) &&
		!w.sent.Add(-age).After(w.ended.Add(100*time.Millisecond))
}

// probe reads the page's trackers for a batch that ran from since to ended.
func (s *Session) probe(since, ended time.Time, longPoll time.Duration) (probeResult, error) {
	var p probeResult
	maxAge := time.Since(since) + 10*time.Second
	sent := time.Now()
	v, err := s.page.Evaluate(probeScript, float64(maxAge.Milliseconds()))
	if err != nil {
		return p, err
	}
	w := batchWindow{since: since, ended: ended, sent: sent, answered: time.Now()}
	m, ok := v.(map[string]any)
	if !ok {
		return p, fmt.Errorf("unexpected probe result %T", v)
	}
	ms := func(v any) time.Duration { return time.Duration(toFloat(v) * float64(time.Millisecond)) }
	p.Quiet = toFloat(m["quiet"])
	p.Ready, _ = m["ready"].(string)
	for _, a := range anys(m["timers"]) {
		if w.has(ms(a)) {
			p.Timers++
		}
	}
	p.SinceTimer = -1
	for _, f := range anys(m["fired"]) {
		pair := anys(f)
		if len(pair) != 2 || !w.has(ms(pair[0])) {
			continue
		}
		// The age at the probe's run is the least it can be now.
		if at := toFloat(pair[1]); p.SinceTimer < 0 || at < p.SinceTimer {
			p.SinceTimer = at
		}
	}
	for _, a := range anys(m["reqs"]) {
		// Only the start bound applies: a request is the batch's however
		// late it opens, until it is old enough to be a long-poll.
		if age := ms(a); age < longPoll && !w.answered.Add(-age).Before(since.Add(-5*time.Millisecond)) {
			p.Requests++
		}
	}
	mark := pageMark{n: toFloat(m["n"]), x: toFloat(m["x"]), y: toFloat(m["y"]), active: int(toFloat(m["active"])), present: true}
	mark.doc, _ = m["doc"].(string)
	for _, v := range anys(m["typed"]) {
		if t, ok := v.(string); ok {
			mark.typed = append(mark.typed, &t)
		} else {
			mark.typed = append(mark.typed, nil)
		}
	}
	s.mu.Lock()
	mark.cmds = s.cmds
	s.mark = mark
	s.checkPending(mark)
	s.mu.Unlock()
	if b, ok := m["busy"].([]any); ok {
		for _, x := range b {
			if s, ok := x.(string); ok {
				p.Busy = append(p.Busy, s)
			}
		}
	}
	return p, nil
}

func anys(v any) []any {
	xs, _ := v.([]any)
	return xs
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
