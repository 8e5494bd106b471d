package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// Local runs sessions in a browser on this machine. Every connection the
// browser makes goes through an egress proxy with the same policy as a
// worker's: private and loopback addresses only where an allowed origin
// names them.
type Local struct {
	// Browser returns the browser, launched at the first session.
	Browser func(ctx context.Context) (*browser.Browser, error)
	// AllowedOrigins are where sessions may navigate (scheme://host[:port]);
	// empty allows each session's first page's origin, on a public address.
	AllowedOrigins []string
	// Secrets are typed where a command's value says {{NAME}}.
	Secrets map[string]string
	// Device emulates a phone or tablet (a Playwright device name).
	Device string
	// Model, when set, takes the steps of run_scenario the fast tiers cannot.
	Model orchestrator.Model
	Log   *slog.Logger

	once   sync.Once
	proxy  *netguard.Proxy
	policy *netguard.Policy
	err    error
}

// NewLocal checks the local settings and returns the backend.
func NewLocal(l *Local) (*Local, error) {
	if l.Log == nil {
		l.Log = slog.Default()
	}
	var hosts []string
	for i, o := range l.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return nil, fmt.Errorf("--allow-origin %q: an origin is scheme://host[:port], as http://localhost:3000", o)
		}
		l.AllowedOrigins[i] = strings.ToLower(u.Scheme + "://" + u.Host)
		hosts = append(hosts, u.Host, u.Hostname())
	}
	if l.Device != "" {
		if _, ok := browser.DeviceNamed(l.Device); !ok {
			return nil, fmt.Errorf("--device %q: not a Playwright device name (as \"iPhone 13\" or \"Pixel 7\")", l.Device)
		}
	}
	l.policy = netguard.New(hosts)
	return l, nil
}

func (l *Local) start() error {
	l.once.Do(func() {
		l.proxy, l.err = netguard.NewProxy(l.policy, l.Log)
	})
	return l.err
}

// Close stops the egress proxy.
func (l *Local) Close() error {
	if l.proxy != nil {
		return l.proxy.Close()
	}
	return nil
}

func (l *Local) session(ctx context.Context) (*browser.Session, func(), error) {
	if err := l.start(); err != nil {
		return nil, nil, fmt.Errorf("egress proxy: %w", err)
	}
	b, err := l.Browser(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("browser: %w", err)
	}
	tun := l.proxy.Open()
	opts := browser.SessionOptions{Policy: l.policy, Logger: l.Log,
		Egress: &browser.EgressProxy{Server: l.proxy.Server(), Username: tun.User, Password: tun.Password, Blocked: tun.Blocked}}
	if l.Device != "" {
		d, _ := browser.DeviceNamed(l.Device)
		opts.Device = &d
	}
	sess, err := b.NewSession(ctx, opts)
	if err != nil {
		tun.Close()
		return nil, nil, fmt.Errorf("browser session: %w", err)
	}
	return sess, sync.OnceFunc(func() {
		_ = sess.Close()
		tun.Close()
	}), nil
}

// Open opens a browser context for one MCP session.
func (l *Local) Open(ctx context.Context) (Conn, error) {
	sess, closeSession, err := l.session(ctx)
	if err != nil {
		return nil, err
	}
	ag := &orchestrator.Agent{Page: sess, Recorder: orchestrator.NopRecorder{}, Log: l.Log}
	s := ag.NewSession(orchestrator.SessionInput{Name: "mcp session", AllowedOrigins: l.AllowedOrigins, Secrets: l.Secrets, Device: l.Device})
	return &localConn{Session: s, close: closeSession}, nil
}

type localConn struct {
	*orchestrator.Session
	close func()
}

func (c *localConn) Close() error {
	c.close()
	return nil
}

// Run runs a scenario in a browser context of its own, as a worker runs a
// job: the fast tiers first, the model (when configured) for the rest.
func (l *Local) Run(ctx context.Context, in RunInput, progress func(StepProgress)) (RunResult, error) {
	if in.TestID != "" {
		return RunResult{}, errors.New("test_id: stored tests live on the platform; start webpilot mcp --remote to run one")
	}
	sc, err := scenarioOf(in)
	if err != nil {
		return RunResult{}, err
	}
	var v scenario.ValidationError
	sc.Validate(&v, "scenario", l.policy)
	if len(v) > 0 {
		return RunResult{}, v
	}
	if len(l.AllowedOrigins) > 0 {
		u, _ := url.Parse(sc.BaseURL)
		if u == nil || !containsFold(l.AllowedOrigins, u.Scheme+"://"+u.Host) {
			return RunResult{}, fmt.Errorf("scenario.base_url: %s is not an allowed origin (%s)", sc.BaseURL, strings.Join(l.AllowedOrigins, ", "))
		}
		sc.Options.AllowedOrigins = append(sc.Options.AllowedOrigins, l.AllowedOrigins...)
	}
	secrets := map[string]string{}
	for k, v := range l.Secrets {
		secrets[k] = v
	}
	for k, v := range sc.Secrets {
		secrets[k] = v
	}
	sc.Secrets = nil
	sess, closeSession, err := l.session(ctx)
	if err != nil {
		return RunResult{}, err
	}
	defer closeSession()
	rec := &progressRecorder{total: len(sc.Steps), progress: progress}
	ag := &orchestrator.Agent{Page: sess, Recorder: rec, Log: l.Log}
	if l.Model != nil {
		ag.Model = l.Model
	}
	res, err := ag.Run(ctx, orchestrator.Input{Scenario: sc, Secrets: secrets})
	if err != nil {
		return RunResult{}, err
	}
	return RunResult{Status: string(res.Status), Error: res.Error, Steps: len(res.Steps), Spec: res.Script}, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// scenarioOf is the scenario a run_scenario call names.
func scenarioOf(in RunInput) (scenario.Scenario, error) {
	switch {
	case in.Scenario != nil && in.Text != "":
		return scenario.Scenario{}, errors.New("scenario, text: give one of them")
	case in.Scenario != nil:
		return *in.Scenario, nil
	case strings.TrimSpace(in.Text) != "":
		sc := scenario.ParseTextScenario("mcp scenario", in.Text, in.BaseURL)
		if sc.BaseURL == "" {
			return sc, errors.New("base_url: a text scenario needs its start URL (or a first line 'base: URL')")
		}
		return sc, nil
	}
	return scenario.Scenario{}, errors.New("scenario: give a scenario, its text, or a test_id")
}

// progressRecorder reports each finished step (a checkpoint follows every
// completed step) and keeps nothing else.
type progressRecorder struct {
	orchestrator.NopRecorder
	total    int
	progress func(StepProgress)
}

func (p *progressRecorder) Checkpoint(_ context.Context, cp orchestrator.Checkpoint) error {
	if n := len(cp.Steps); n > 0 {
		s := cp.Steps[n-1]
		p.progress(StepProgress{Step: n, Total: p.total, Goal: s.Goal, Status: s.Status, Tier: s.Tier, Error: s.Error})
	}
	return nil
}
