// Package browser adapts playwright-go for webpilot: one Chromium per
// process, a fresh context per job with every request checked against the
// URL policy, page observation (aria snapshots with refs, secrets redacted),
// command execution, settling and state deltas.
package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/webpilot/webpilot/internal/chromium"
)

// Config says where the driver and Chromium are.
type Config struct {
	DriverDir      string // holds node and package/cli.js (PLAYWRIGHT_DRIVER_PATH)
	ExecutablePath string // Chromium binary; chromium.HeadlessShell (chromium.Full when Headful) if empty
	Headful        bool
}

// A session's waits, unless a command sets its own.
const (
	// NavigationTimeout is how long a page may take to load.
	NavigationTimeout = 15 * time.Second
	// ActionTimeout is how long an action waits for its element.
	ActionTimeout = 5 * time.Second
)

// actionWait is ActionTimeout as playwright-go's options take it, for the
// page calls bounded like an action.
func actionWait() *float64 { return playwright.Float(float64(ActionTimeout.Milliseconds())) }

// Browser is a running Chromium shared by all of a process's jobs. If
// Chromium dies, the next session relaunches it.
type Browser struct {
	cfg     Config
	pw      *playwright.Playwright
	mu      sync.Mutex
	browser playwright.Browser
	// exe is what the driver starts: Chromium, or its launcher
	// (withoutRaisedPriority), which done removes.
	exe  string
	done func()
}

// Launch starts the Playwright driver (never downloading anything) and Chromium.
func Launch(ctx context.Context, cfg Config) (*Browser, error) {
	if cfg.DriverDir == "" {
		return nil, errors.New("browser: PLAYWRIGHT_DRIVER_PATH is not set (run make setup)")
	}
	pw, err := playwright.Run(&playwright.RunOptions{DriverDirectory: cfg.DriverDir, SkipInstallBrowsers: true, Verbose: false})
	if err != nil {
		return nil, fmt.Errorf("start playwright driver: %w", err)
	}
	if cfg.ExecutablePath == "" {
		cfg.ExecutablePath = chromium.HeadlessShell
		if cfg.Headful {
			cfg.ExecutablePath = chromium.Full
		}
	}
	b := &Browser{cfg: cfg, pw: pw}
	if b.exe, b.done, err = withoutRaisedPriority(cfg.ExecutablePath); err != nil {
		_ = pw.Stop()
		return nil, err
	}
	if b.browser, err = b.launch(); err != nil {
		_ = pw.Stop()
		b.done()
		return nil, err
	}
	return b, nil
}

func (b *Browser) launch() (playwright.Browser, error) {
	br, err := b.pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(b.exe),
		Headless:       playwright.Bool(!b.cfg.Headful),
		Args:           chromium.Args(),
	})
	if err != nil {
		return nil, fmt.Errorf("launch chromium %s: %w", b.cfg.ExecutablePath, err)
	}
	return br, nil
}

// current returns a connected Chromium, relaunching it if it died.
func (b *Browser) current() (playwright.Browser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.browser.IsConnected() {
		return b.browser, nil
	}
	br, err := b.launch()
	if err != nil {
		return nil, err
	}
	b.browser = br
	return br, nil
}

// NewContext opens a plain browser context, without the job guard, on the
// same Chromium: for tests and tools that drive pages of their own (the
// console's tests).
func (b *Browser) NewContext(o playwright.BrowserNewContextOptions) (playwright.BrowserContext, error) {
	br, err := b.current()
	if err != nil {
		return nil, err
	}
	return br.NewContext(o)
}

// Close stops Chromium and the driver.
func (b *Browser) Close() error {
	b.mu.Lock()
	err := b.browser.Close()
	b.mu.Unlock()
	if serr := b.pw.Stop(); err == nil {
		err = serr
	}
	b.done()
	return err
}

// URLPolicy decides whether the page may load a URL.
type URLPolicy interface {
	CheckURL(raw string) error
}

// EgressProxy routes a context's connections through the worker's egress
// proxy, which checks each one where it is made (netguard.Proxy). Blocked
// reports what it refused this context.
type EgressProxy struct {
	Server, Username, Password string
	Blocked                    func() []string
}

// SessionOptions configure a job's browser context.
type SessionOptions struct {
	Policy URLPolicy
	// Egress, when set, sends every connection of the context (redirect
	// hops, WebSockets and workers included, which request routing does not
	// see) through the egress proxy.
	Egress       *EgressProxy
	StorageState []byte // JSON from Session.StorageState, to resume a job
	Viewport     *playwright.Size
	// Device emulates a phone or tablet (its viewport, user agent, touch
	// and scale); nil is a desktop browser.
	Device *Device
	Logger *slog.Logger
	// SlowResponse, when set, makes a response slower than this a
	// detected problem (ProblemSlowResponse).
	SlowResponse time.Duration
}

// Session is one job's browser context and page.
type Session struct {
	policy URLPolicy
	touch  bool // the context emulates a touch screen (tap works)
	egress *EgressProxy
	bctx   playwright.BrowserContext
	// hides says which text shows one of the job's secrets (pictures
	// paint it over); nil when the job has none.
	hides func(string) bool
	// axeWorld is where axe-core runs, out of the page's reach.
	axeMu    sync.Mutex
	axeWorld *isolatedWorld
	page     playwright.Page
	log      *slog.Logger
	net      *netTracker
	mu       sync.Mutex
	denied   []string // URLs the policy refused
	// refs resolves the latest snapshot's refs (see refMap).
	refs *refMap
	// pages are every page of the context in the order they opened; page
	// is the one commands act on.
	pages      []playwright.Page
	opening    time.Time // a document request of a page not yet known (a popup opening)
	dialogs    []Dialog
	nextDialog *DialogAnswer
	// refInfo is the role and name of each ref of the latest snapshot.
	refInfo map[string]refEntry
	// unspeakable are values no locator written for the spec may contain.
	unspeakable []string
	problems    []Problem // see watchProblems
	reqStart    map[playwright.Request]time.Time
	slow        time.Duration
	// ariaTook is how long the page's recent aria snapshots took (see
	// snapshotTimeout).
	ariaTook []time.Duration
	// fresh opens a context like the session's own (its options, its
	// egress guard) holding the session's cookies and storage; reloaded is
	// the current address loaded there, freshLoads how many were loaded, and
	// navMethod the method of the latest request for a page's own document
	// (see reload.go).
	fresh      func() (playwright.BrowserContext, error)
	reloaded   *freshLoad
	freshLoads int
	navMethod  string
	// cmds counts the commands that may have changed the page; mark is
	// the page as the settle probe last read it, and reuse the latest
	// representation's read while it may be patched (see incremental.go).
	cmds    int
	mark    pageMark
	reuse   *reuseBase
	patched int // representations patched instead of read
	// lastTyped is the typed list's place of the field the latest fill
	// went to; unchecked a fill whose effect the next settle checks.
	lastTyped int
	unchecked *fillCheck
	// guessing is the count taken beside the element's own read (see
	// guessCount).
	guessing *guessCount
}

// AvoidInLocators keeps values (a job's secrets) out of every locator the
// session writes for the spec: a spec holds secrets only as environment
// reads, so a locator naming an element by a secret shown on the page
// could not find it at run time.
func (s *Session) AvoidInLocators(values []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unspeakable = nil
	for _, v := range values {
		if v != "" {
			s.unspeakable = append(s.unspeakable, v)
		}
	}
}

type refEntry struct{ role, name string }

// NewSession opens a fresh context with the URL policy enforced on every
// request the page makes, not only the first navigation.
func (b *Browser) NewSession(ctx context.Context, o SessionOptions) (*Session, error) {
	if o.Policy == nil {
		return nil, errors.New("browser: a URL policy is required")
	}
	opts := playwright.BrowserNewContextOptions{
		Viewport:          o.Viewport,
		ServiceWorkers:    playwright.ServiceWorkerPolicyBlock,
		AcceptDownloads:   playwright.Bool(false),
		IgnoreHttpsErrors: playwright.Bool(false),
	}
	if d := o.Device; d != nil {
		opts.Viewport = &playwright.Size{Width: d.Viewport.Width, Height: d.Viewport.Height}
		opts.Screen = &playwright.Size{Width: d.Screen.Width, Height: d.Screen.Height}
		opts.UserAgent = playwright.String(d.UserAgent)
		opts.DeviceScaleFactor = playwright.Float(d.DeviceScaleFactor)
		opts.IsMobile = playwright.Bool(d.IsMobile)
		opts.HasTouch = playwright.Bool(d.HasTouch)
	}
	if opts.Viewport == nil {
		opts.Viewport = &playwright.Size{Width: 1280, Height: 800}
	}
	if o.Egress != nil {
		// Loopback is proxied too (Playwright adds <-loopback> to the bypass rules).
		opts.Proxy = &playwright.Proxy{Server: o.Egress.Server, Username: playwright.String(o.Egress.Username),
			Password: playwright.String(o.Egress.Password)}
	}
	if len(o.StorageState) > 0 {
		var st playwright.StorageState
		if err := json.Unmarshal(o.StorageState, &st); err != nil {
			return nil, fmt.Errorf("decode storage state: %w", err)
		}
		opts.StorageState = st.ToOptionalStorageState()
	}
	br, err := b.current()
	if err != nil {
		return nil, err
	}
	bctx, err := br.NewContext(opts)
	if err != nil {
		return nil, fmt.Errorf("new browser context: %w", err)
	}
	s := &Session{policy: o.Policy, egress: o.Egress, bctx: bctx, log: o.Logger, net: newNetTracker(), touch: o.Device != nil && o.Device.HasTouch,
		reqStart: map[playwright.Request]time.Time{}, slow: o.SlowResponse}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.fresh = func() (playwright.BrowserContext, error) {
		st, err := s.bctx.StorageState()
		if err != nil {
			return nil, fmt.Errorf("storage state: %w", err)
		}
		fo := opts
		fo.StorageState = st.ToOptionalStorageState()
		fctx, err := br.NewContext(fo)
		if err != nil {
			return nil, err
		}
		if err := fctx.Route("**/*", func(r playwright.Route) {
			if u := r.Request().URL(); !isLocalScheme(u) && o.Policy.CheckURL(u) != nil {
				_ = r.Abort("blockedbyclient")
				return
			}
			_ = r.Continue()
		}); err != nil {
			_ = fctx.Close()
			return nil, err
		}
		fctx.SetDefaultTimeout(float64(ActionTimeout.Milliseconds()))
		return fctx, nil
	}
	if err := bctx.Route("**/*", func(r playwright.Route) {
		u := r.Request().URL()
		if isLocalScheme(u) {
			_ = r.Continue()
			return
		}
		if req := r.Request(); req.IsNavigationRequest() && mainFrameOf(req) {
			s.mu.Lock()
			s.navMethod = req.Method()
			s.mu.Unlock()
		}
		s.noteOpening(r.Request())
		if err := o.Policy.CheckURL(u); err != nil {
			s.deny(u)
			s.log.Warn("blocked request", "url", u, "reason", err)
			_ = r.Abort("blockedbyclient")
			return
		}
		_ = r.Continue()
	}); err != nil {
		_ = bctx.Close()
		return nil, fmt.Errorf("install request guard: %w", err)
	}
	bctx.SetDefaultTimeout(float64(ActionTimeout.Milliseconds()))
	bctx.SetDefaultNavigationTimeout(float64(NavigationTimeout.Milliseconds()))
	if err := bctx.AddInitScript(playwright.Script{Content: playwright.String(initScript)}); err != nil {
		_ = bctx.Close()
		return nil, fmt.Errorf("install init script: %w", err)
	}
	page, err := bctx.NewPage()
	if err != nil {
		_ = bctx.Close()
		return nil, fmt.Errorf("new page: %w", err)
	}
	s.page = page
	s.net.attach(page)
	s.guardPages(bctx, page)
	s.trackPages(bctx, page)
	s.watchProblems(bctx)
	return s, nil
}

// localSchemes are documents a job must never show: the browser's own
// pages (which reveal paths and resolve internal names, and some of which
// crash the shared browser), local files and source views.
var localSchemes = []string{"chrome:", "chrome-untrusted:", "chrome-extension:", "devtools:", "view-source:", "file:", "filesystem:"}

func isLocalDocument(u string) bool {
	u = strings.ToLower(u)
	for _, p := range localSchemes {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// guardPages leaves any page of the context (popups included) that commits
// a local document: request routing never sees those, and the URL a
// navigation ends on is checked, not only the one it started from.
func (s *Session) guardPages(bctx playwright.BrowserContext, first playwright.Page) {
	watch := func(pg playwright.Page) {
		pg.OnFrameNavigated(func(f playwright.Frame) {
			if f.ParentFrame() != nil || !isLocalDocument(f.URL()) {
				return
			}
			s.deny(f.URL())
			s.log.Warn("blocked a local document", "url", f.URL())
			// Not from the event goroutine: the call waits on events it dispatches.
			go func() { _, _ = pg.Goto("about:blank") }()
		})
	}
	watch(first)
	bctx.OnPage(watch)
}

// mainFrameOf says a request is for a page's own document, not a frame's.
func mainFrameOf(req playwright.Request) bool {
	f := req.Frame()
	return f != nil && f.ParentFrame() == nil
}

func isLocalScheme(u string) bool {
	for _, p := range []string{"data:", "blob:", "about:"} {
		if len(u) >= len(p) && u[:len(p)] == p {
			return true
		}
	}
	return false
}

// Page exposes the Playwright page to tests and benchmarks in this module.
func (s *Session) Page() playwright.Page { return s.page }

// URL is the page's current URL.
func (s *Session) URL() string { return s.page.URL() }

// Title is the page's current title ("" on error).
func (s *Session) Title() string {
	t, _ := s.page.Title()
	return t
}

// deny records a URL the policy refused.
func (s *Session) deny(u string) {
	s.mu.Lock()
	s.denied = append(s.denied, u)
	s.mu.Unlock()
}

// Denied returns what was refused so far: requests the routing guard or the
// egress proxy refused, and local documents left.
func (s *Session) Denied() []string {
	s.mu.Lock()
	out := append([]string(nil), s.denied...)
	s.mu.Unlock()
	if s.egress != nil && s.egress.Blocked != nil {
		out = append(out, s.egress.Blocked()...)
	}
	return out
}

// Navigate loads url and waits for the load event. Only http(s) documents
// are opened (also when the caller is not the agent), and the URL the
// navigation ends on is checked again.
func (s *Session) Navigate(ctx context.Context, url string) error {
	if err := NavigableURL(url); err != nil {
		return err
	}
	s.acted(false)
	before := len(s.Denied())
	if _, err := s.page.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
		if blocked := s.Denied(); len(blocked) > before {
			return fmt.Errorf("navigate to %s: blocked by the URL policy (%s)", url, blocked[len(blocked)-1])
		}
		return fmt.Errorf("navigate to %s: %w", url, err)
	}
	if final := s.page.URL(); final != url {
		if err := s.policy.CheckURL(final); err != nil {
			s.deny(final)
			_, _ = s.page.Goto("about:blank")
			return fmt.Errorf("navigate to %s: it ended on %s, which the URL policy refuses: %v", url, final, err)
		}
	}
	return nil
}

// StorageState returns the context's cookies and local storage as JSON, so
// a resumed job can continue logged in. Callers must seal it before storing.
func (s *Session) StorageState() ([]byte, error) {
	st, err := s.bctx.StorageState()
	if err != nil {
		return nil, fmt.Errorf("read storage state: %w", err)
	}
	return json.Marshal(st)
}

// Close closes the context and everything in it.
func (s *Session) Close() error {
	s.mu.Lock()
	p := s.reloaded
	s.reloaded = nil
	s.mu.Unlock()
	p.close()
	done := make(chan error, 1)
	go func() { done <- s.bctx.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		return errors.New("browser context did not close in 10s")
	}
}

// Document identifies the page's current document: ID is unique per loaded
// document (a reload or a link is a new one; history.pushState is not), URL
// is the address the document was loaded from (after redirects). A resumed
// job rebuilds in-page state by loading URL again and replaying the
// commands that ran on ID.
type Document struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

const documentScript = `() => [String(performance.timeOrigin), ((performance.getEntriesByType('navigation')[0] || {}).name) || location.href]`

func parseDocument(v any) (Document, bool) {
	arr, _ := v.([]any)
	if len(arr) != 2 {
		return Document{}, false
	}
	id, _ := arr[0].(string)
	u, _ := arr[1].(string)
	return Document{ID: id, URL: u}, id != ""
}

// Document returns the current document's identity. A navigation that is
// committing can destroy the context mid-call, so it is asked twice.
func (s *Session) Document(ctx context.Context) (Document, error) {
	var err error
	for range 2 {
		var v any
		if v, err = s.page.Evaluate(documentScript); err == nil {
			if d, ok := parseDocument(v); ok {
				return d, nil
			}
			err = fmt.Errorf("unexpected document identity %v", v)
		}
		if ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return Document{}, fmt.Errorf("read document identity: %w", err)
}

// HasTouch reports whether the session emulates a touch screen, where the
// tap action works.
func (s *Session) HasTouch() bool { return s.touch }
