// Package config reads a webpilot process's settings from its environment,
// once, into typed structs with defaults, and says precisely what is wrong
// with a bad value. Library packages take these values as arguments and
// never read the environment themselves.
package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/webpilot/webpilot/internal/jobs"
)

// Log says how a process logs.
type Log struct {
	// Level is debug, info, warn or error.
	Level slog.Level `env:"WEBPILOT_LOG_LEVEL" envDefault:"info"`
	// Format is json (one object per line, for collectors) or text.
	Format string `env:"WEBPILOT_LOG_FORMAT" envDefault:"json"`
}

// Logger builds the process's logger; proc names the process in every
// record.
func (l Log) Logger(w io.Writer, proc string) *slog.Logger {
	o := &slog.HandlerOptions{Level: l.Level}
	var h slog.Handler = slog.NewJSONHandler(w, o)
	if l.Format == "text" {
		h = slog.NewTextHandler(w, o)
	}
	return slog.New(h).With("proc", proc)
}

// NATS says where the queue is. Without a URL the dispatcher starts an
// embedded server (on Port) and workers on the same machine connect to it.
type NATS struct {
	URL   string `env:"NATS_URL"`
	Token string `env:"WEBPILOT_NATS_TOKEN"`
	Creds string `env:"NATS_CREDS"`
	CA    string `env:"NATS_CA"`
	Port  int    `env:"WEBPILOT_NATS_PORT" envDefault:"4222"`
}

// Connect is how a binary named name reaches the queue; the dispatcher
// (dispatcher true) starts the single-machine server when no URL is set
// and owns the stream's settings, which workers only check.
func (n NATS) Connect(dataDir, name string, dispatcher bool, q jobs.QueueConfig, log *slog.Logger) jobs.ConnectConfig {
	return jobs.ConnectConfig{URL: n.URL, Token: n.Token, Creds: n.Creds, CA: n.CA, Port: n.Port, DataDir: dataDir,
		Embed: dispatcher, Manage: dispatcher, Name: name, Queue: q, Logger: log}
}

// Queue tunes delivery.
type Queue struct {
	// AckWait is how long a delivered job may go without a heartbeat.
	AckWait time.Duration `env:"WEBPILOT_ACK_WAIT" envDefault:"30s"`
	// MaxAttempts is how many times a job is tried.
	MaxAttempts int `env:"WEBPILOT_MAX_ATTEMPTS" envDefault:"5"`
	// Replicas is how many servers of a NATS cluster keep the job stream:
	// 1 on one server, 3 (or 5) in a JetStream cluster, so that losing a
	// server (or two) loses no job message. Dispatchers and workers must
	// agree; a worker refuses to start against a stream kept otherwise.
	Replicas int `env:"WEBPILOT_STREAM_REPLICAS" envDefault:"1"`
	// Cluster and Tags place the stream on a named NATS cluster and on
	// servers with all of those tags (a super-cluster or tiered servers).
	Cluster string   `env:"WEBPILOT_STREAM_CLUSTER"`
	Tags    []string `env:"WEBPILOT_STREAM_TAGS" envSeparator:","`
	// MaxAckPending bounds jobs delivered and not yet finished across all
	// workers: above the fleet's total concurrency, or workers idle.
	MaxAckPending int `env:"WEBPILOT_MAX_ACK_PENDING" envDefault:"10000"`
}

// Stream is the queue's stream and consumer configuration. Workers enforce
// the attempts in Postgres; the consumer's MaxDeliver is a generous backstop
// because fairness re-queues count as deliveries too.
func (q Queue) Stream() jobs.QueueConfig {
	c := jobs.DefaultQueueConfig()
	c.AckWait, c.MaxDeliver = q.AckWait, q.MaxAttempts*20
	c.Replicas, c.Cluster, c.Tags, c.MaxAckPending = q.Replicas, q.Cluster, q.Tags, q.MaxAckPending
	return c
}

func (q Queue) validate() []error {
	var errs []error
	if q.AckWait < time.Second {
		errs = append(errs, fmt.Errorf("WEBPILOT_ACK_WAIT must be a duration of at least 1s, got %s", q.AckWait))
	}
	if q.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("WEBPILOT_MAX_ATTEMPTS must be a positive whole number, got %d", q.MaxAttempts))
	}
	// An even count buys no more failures survived than the odd one below
	// it, and JetStream keeps at most 5.
	if q.Replicas != 1 && q.Replicas != 3 && q.Replicas != 5 {
		errs = append(errs, fmt.Errorf("WEBPILOT_STREAM_REPLICAS must be 1, 3 or 5, got %d", q.Replicas))
	}
	for _, tag := range q.Tags {
		if strings.TrimSpace(tag) == "" || strings.ContainsAny(tag, " \t") {
			errs = append(errs, fmt.Errorf("WEBPILOT_STREAM_TAGS must be comma-separated tags without spaces, got %q", strings.Join(q.Tags, ",")))
			break
		}
	}
	if q.MaxAckPending < 1 {
		errs = append(errs, fmt.Errorf("WEBPILOT_MAX_ACK_PENDING must be a positive whole number, got %d", q.MaxAckPending))
	}
	return errs
}

// Common is what the dispatcher and the workers both read.
type Common struct {
	// DataDir holds, on a single machine, the sealing key, the embedded
	// NATS server's token and store, and the admin token.
	DataDir     string `env:"WEBPILOT_DATA_DIR" envDefault:".data"`
	DatabaseURL string `env:"DATABASE_URL"`
	// SecretKey is the base64 of the 32-byte key secrets are sealed with;
	// without it the key is kept in DataDir.
	SecretKey  string   `env:"WEBPILOT_SECRET_KEY"`
	AllowHosts []string `env:"WEBPILOT_ALLOW_HOSTS" envSeparator:","`
	Log        Log
	NATS       NATS
	Queue      Queue
	Tracing    Tracing
}

// Tracing says where a process sends its OpenTelemetry spans; off unless an
// endpoint is set.
type Tracing struct {
	// Endpoint is the OTLP/HTTP collector (http://collector:4318).
	Endpoint string `env:"OTEL_EXPORTER_OTLP_ENDPOINT"`
	// Sample is the share of new traces kept, 0 to 1.
	Sample float64 `env:"WEBPILOT_TRACE_SAMPLE" envDefault:"1"`
}

func (c Common) validate() error {
	var errs []error
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("DATABASE_URL is required"))
	}
	if c.Log.Format != "json" && c.Log.Format != "text" {
		errs = append(errs, fmt.Errorf("WEBPILOT_LOG_FORMAT must be json or text, got %q", c.Log.Format))
	}
	if c.NATS.Port < 0 || c.NATS.Port > 65535 {
		errs = append(errs, fmt.Errorf("WEBPILOT_NATS_PORT must be a port number, got %d", c.NATS.Port))
	}
	errs = append(errs, c.Queue.validate()...)
	if c.Queue.Replicas > 1 && c.NATS.URL == "" {
		errs = append(errs, fmt.Errorf("WEBPILOT_STREAM_REPLICAS=%d needs a NATS cluster in NATS_URL: the embedded server is a single server", c.Queue.Replicas))
	}
	if c.Tracing.Sample < 0 || c.Tracing.Sample > 1 {
		errs = append(errs, fmt.Errorf("WEBPILOT_TRACE_SAMPLE must be a number from 0 to 1, got %g", c.Tracing.Sample))
	}
	if c.Tracing.Endpoint != "" && !strings.HasPrefix(c.Tracing.Endpoint, "http://") && !strings.HasPrefix(c.Tracing.Endpoint, "https://") {
		errs = append(errs, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL, got %q", c.Tracing.Endpoint))
	}
	if c.SecretKey != "" {
		if _, err := jobs.ParseSealingKey(c.SecretKey); err != nil {
			errs = append(errs, fmt.Errorf("WEBPILOT_SECRET_KEY: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Dispatcher is the HTTP API's configuration. It holds no model key: the
// dispatcher never calls a model.
type Dispatcher struct {
	Common
	Addr string `env:"WEBPILOT_ADDR" envDefault:"127.0.0.1:8080"`
	// AdminToken authenticates operators; without it a token is kept in
	// DataDir for the CLI.
	AdminToken string `env:"WEBPILOT_ADMIN_TOKEN"`
	// DefaultHold is the credits a job holds unless it says otherwise.
	DefaultHold float64 `env:"WEBPILOT_DEFAULT_HOLD" envDefault:"2"`
	// ArtifactRetention is how long jobs' files (step pictures, failing
	// states' screenshots) are kept.
	ArtifactRetention time.Duration `env:"WEBPILOT_ARTIFACT_RETENTION" envDefault:"720h"`
	// ConsoleSession is how long a console sign-in lasts.
	ConsoleSession time.Duration `env:"WEBPILOT_CONSOLE_SESSION" envDefault:"12h"`
	// PublicOrigins are the origins (scheme, host and port) browsers reach
	// the dispatcher at, comma-separated: the console accepts forms only
	// from them. Empty means the listen address's (see Origins).
	PublicOrigins []string `env:"WEBPILOT_PUBLIC_ORIGIN"`
	// TrustedProxies are the reverse proxies in front of the dispatchers
	// (addresses or CIDR prefixes, comma-separated): a request from one is
	// limited by the client address its X-Forwarded-For names. Empty: no
	// proxy is trusted and the header is never read.
	TrustedProxies []string `env:"WEBPILOT_TRUSTED_PROXIES" envSeparator:","`
}

// Proxies are TrustedProxies as prefixes (an address is a /32 or /128).
func (d Dispatcher) Proxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, p := range d.TrustedProxies {
		p = strings.TrimSpace(p)
		if a, err := netip.ParseAddr(p); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		pre, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("WEBPILOT_TRUSTED_PROXIES must list addresses or CIDR prefixes like 172.28.5.2 or 10.0.0.0/8, got %q", p)
		}
		out = append(out, pre.Masked())
	}
	return out, nil
}

// Origins are the console's accepted origins: PublicOrigins, or by default
// http:// and the listen address (a wildcard host as localhost and
// 127.0.0.1).
func (d Dispatcher) Origins() []string {
	if len(d.PublicOrigins) > 0 {
		return d.PublicOrigins
	}
	host, port, err := net.SplitHostPort(d.Addr)
	if err != nil {
		return nil
	}
	switch host {
	case "", "0.0.0.0", "::", "[::]":
		return []string{"http://localhost:" + port, "http://127.0.0.1:" + port}
	}
	return []string{"http://" + net.JoinHostPort(host, port)}
}

func (d Dispatcher) validate() error {
	var errs []error
	if err := d.Common.validate(); err != nil {
		errs = append(errs, err)
	}
	if d.DefaultHold <= 0 || d.DefaultHold > 1e9 {
		errs = append(errs, fmt.Errorf("WEBPILOT_DEFAULT_HOLD must be a positive number of credits up to 1e9, got %g", d.DefaultHold))
	}
	if d.ArtifactRetention < time.Hour {
		errs = append(errs, fmt.Errorf("WEBPILOT_ARTIFACT_RETENTION must be a duration of at least 1h, got %s", d.ArtifactRetention))
	}
	if d.ConsoleSession < time.Minute || d.ConsoleSession > 30*24*time.Hour {
		errs = append(errs, fmt.Errorf("WEBPILOT_CONSOLE_SESSION must be a duration from 1m to 720h, got %s", d.ConsoleSession))
	}
	if strings.TrimSpace(d.Addr) == "" {
		errs = append(errs, errors.New("WEBPILOT_ADDR must not be empty"))
	} else if _, _, err := net.SplitHostPort(d.Addr); err != nil {
		errs = append(errs, fmt.Errorf("WEBPILOT_ADDR must be host:port, got %q", d.Addr))
	}
	if _, err := d.Proxies(); err != nil {
		errs = append(errs, err)
	}
	for _, o := range d.PublicOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			errs = append(errs, fmt.Errorf("WEBPILOT_PUBLIC_ORIGIN must list origins like https://webpilot.example.com, got %q", o))
		}
	}
	return errors.Join(errs...)
}

// Model is the OpenAI-compatible endpoint of the agent tier.
type Model struct {
	APIKey  string `env:"OPENAI_API_KEY"`
	BaseURL string `env:"OPENAI_BASE_URL"`
	Name    string `env:"WEBPILOT_MODEL" envDefault:"gpt-4o-mini"`
	// Prices overrides the per-model token prices (see llm.ParsePrices).
	Prices string `env:"WEBPILOT_PRICES"`
}

// Browser is where the Playwright driver and Chromium are, as make setup
// installs them.
type Browser struct {
	// DriverPath holds the Playwright driver (node and package/cli.js).
	DriverPath string `env:"PLAYWRIGHT_DRIVER_PATH" envDefault:".cache/playwright-driver-1.52.0"`
	// Chromium is the browser's binary; chromium.HeadlessShell, the
	// headless shell, by default.
	Chromium string `env:"WEBPILOT_CHROMIUM" envDefault:"/usr/lib/chromium/chromium-headless-shell"`
}

// MCP is the configuration of webpilot mcp in local mode (a browser on
// this machine); its flags say where sessions may go.
type MCP struct {
	Browser
	Log   Log
	Model Model
}

func (m MCP) validate() error { return nil }

// LoadMCP reads webpilot mcp's configuration.
func LoadMCP() (MCP, error) {
	m, err := load(MCP.validate)
	m.DriverPath = Installed(m.DriverPath)
	return m, err
}

// Worker is a worker process's configuration.
type Worker struct {
	Common
	// ID names the worker in leases and logs (default host-pid).
	ID          string `env:"WEBPILOT_WORKER_ID"`
	Concurrency int    `env:"WEBPILOT_CONCURRENCY" envDefault:"2"`
	// DrainGrace is how long a stopping worker lets running jobs go on
	// before handing them back; 0 hands them back at the next step.
	DrainGrace *time.Duration `env:"WEBPILOT_DRAIN_GRACE"`
	Browser
	// SpecRunner is the @playwright/test installation repairs are verified with.
	SpecRunner string `env:"WEBPILOT_SPEC_RUNNER" envDefault:".cache/pwtest"`
	// DepsCache holds the packages customers' lockfiles pin, installed
	// once per lockfile (default: webpilot-deps under the temporary
	// directory, which the sandbox's users can read).
	DepsCache string `env:"WEBPILOT_DEPS_CACHE"`
	// NPMRegistry is where those packages come from; a lockfile pointing
	// anywhere else is refused.
	NPMRegistry string `env:"WEBPILOT_NPM_REGISTRY" envDefault:"https://registry.npmjs.org/"`
	// Run bounds each sandboxed run of a customer's project as a whole.
	Run RunBudget
	// Axe is axe-core's script (default: beside the spec runner).
	Axe string `env:"WEBPILOT_AXE"`
	// MetricsAddr serves the worker's /metrics and /healthz when set.
	MetricsAddr string `env:"WEBPILOT_METRICS_ADDR"`
	// StepShots pictures the page after each step for the console's
	// timeline (form fields masked when a job has secrets).
	StepShots bool `env:"WEBPILOT_STEP_SCREENSHOTS" envDefault:"true"`
	Model     Model
}

// RunBudget bounds one sandboxed run of a customer's code: all of its
// processes together, with what it writes.
type RunBudget struct {
	// MemoryMB is its processes' memory (proportional set size) with its
	// in-memory /tmp and /dev/shm.
	MemoryMB int `env:"WEBPILOT_RUN_MEMORY_MB" envDefault:"2048"`
	// DiskMB and Files bound its directory and /tmp together.
	DiskMB int `env:"WEBPILOT_RUN_DISK_MB" envDefault:"1024"`
	Files  int `env:"WEBPILOT_RUN_FILES" envDefault:"10000"`
	// CPU is its processes' CPU time together.
	CPU time.Duration `env:"WEBPILOT_RUN_CPU" envDefault:"15m"`
	// Wall is the longest a run may take: the ceiling of the budget a
	// run's tests earn.
	Wall time.Duration `env:"WEBPILOT_RUN_WALL" envDefault:"10m"`
	// Workers is the most runner workers (browsers side by side) a run
	// gets: a project's own workers setting is honoured up to it.
	Workers int `env:"WEBPILOT_RUN_WORKERS" envDefault:"2"`
	// Parts is how many parts a project run's files are cut into, each
	// one runner over its files (more when a part would hold over half
	// the wall of test time, or over 100 tests): as many as the workers'
	// slots that should share a run.
	Parts int `env:"WEBPILOT_RUN_PARTS" envDefault:"2"`
}

func (b RunBudget) validate() error {
	var errs []error
	if b.MemoryMB < 256 {
		errs = append(errs, fmt.Errorf("WEBPILOT_RUN_MEMORY_MB must be at least 256 (a browser and the runner), got %d", b.MemoryMB))
	}
	if b.DiskMB < 16 {
		errs = append(errs, fmt.Errorf("WEBPILOT_RUN_DISK_MB must be at least 16, got %d", b.DiskMB))
	}
	if b.Files < 100 {
		errs = append(errs, fmt.Errorf("WEBPILOT_RUN_FILES must be at least 100, got %d", b.Files))
	}
	if b.CPU < 10*time.Second {
		errs = append(errs, fmt.Errorf("WEBPILOT_RUN_CPU must be at least 10s, got %s", b.CPU))
	}
	if b.Wall < 30*time.Second {
		errs = append(errs, fmt.Errorf("WEBPILOT_RUN_WALL must be at least 30s, got %s", b.Wall))
	}
	if b.Workers < 1 || b.Workers > 16 {
		errs = append(errs, fmt.Errorf("WEBPILOT_RUN_WORKERS must be a whole number from 1 to 16, got %d", b.Workers))
	}
	if b.Parts < 1 || b.Parts > 256 {
		errs = append(errs, fmt.Errorf("WEBPILOT_RUN_PARTS must be a whole number from 1 to 256, got %d", b.Parts))
	}
	return errors.Join(errs...)
}

func (w Worker) validate() error {
	var errs []error
	if err := w.Common.validate(); err != nil {
		errs = append(errs, err)
	}
	if w.Concurrency < 1 || w.Concurrency > 64 {
		errs = append(errs, fmt.Errorf("WEBPILOT_CONCURRENCY must be a whole number from 1 to 64, got %d", w.Concurrency))
	}
	if w.DrainGrace != nil && *w.DrainGrace < 0 {
		errs = append(errs, fmt.Errorf("WEBPILOT_DRAIN_GRACE must be a duration of 0s or more, got %s", *w.DrainGrace))
	}
	if err := w.Run.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// named rewrites the parse errors of env, which name struct fields, to
// name the variables a person sets.
func named(t reflect.Type, err error) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return err
	}
	var out []error
	for _, e := range agg.Errors {
		var pe env.ParseError
		if errors.As(e, &pe) {
			if key := envKey(t, pe.Name); key != "" {
				out = append(out, fmt.Errorf("%s: %w", key, pe.Err))
				continue
			}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// envKey is the variable of the field named field in t or its nested structs.
func envKey(t reflect.Type, field string) string {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == field {
			if key, _, _ := strings.Cut(f.Tag.Get("env"), ","); key != "" {
				return key
			}
		}
		if f.Type.Kind() == reflect.Struct {
			if key := envKey(f.Type, field); key != "" {
				return key
			}
		}
	}
	return ""
}

// LoadDispatcher reads the dispatcher's configuration.
func LoadDispatcher() (Dispatcher, error) {
	return load(Dispatcher.validate)
}

// LoadWorker reads a worker's configuration.
func LoadWorker() (Worker, error) {
	w, err := load(Worker.validate)
	if err != nil {
		return w, err
	}
	w.DriverPath, w.SpecRunner = Installed(w.DriverPath), Installed(w.SpecRunner)
	if w.Axe != "" {
		w.Axe = Installed(w.Axe)
	}
	return w, nil
}

// executable is the running binary's path (a variable for tests).
var executable = os.Executable

// Installed is the absolute path of something make setup installs (the
// driver, the spec runner), so a binary finds it whatever directory it is
// started from and whatever directory it later runs a tool in: an absolute
// path as it is; a relative one under the working directory when it is
// there, else under the checkout the binary was built into (bin/NAME's
// parent), else under the working directory.
func Installed(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if _, err := os.Stat(p); err == nil {
		abs, _ := filepath.Abs(p)
		return abs
	}
	if exe, err := executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		beside := filepath.Join(filepath.Dir(filepath.Dir(exe)), p)
		if _, err := os.Stat(beside); err == nil {
			return beside
		}
	}
	abs, _ := filepath.Abs(p)
	return abs
}

func load[T any](validate func(T) error) (T, error) {
	var c T
	if err := env.Parse(&c); err != nil {
		return c, fmt.Errorf("configuration: %w", named(reflect.TypeOf(c), err))
	}
	if err := validate(c); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	return c, nil
}
