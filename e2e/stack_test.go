// Package e2e tests webpilot through its HTTP API with every real part
// running: PostgreSQL, embedded NATS JetStream, workers driving Chromium,
// and a scripted OpenAI-compatible model server.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/api/apitest"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/console"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/jobs/natstest"
	"github.com/webpilot/webpilot/internal/metrics"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/outbox"
	"github.com/webpilot/webpilot/internal/sandbox"
	"github.com/webpilot/webpilot/internal/specrun"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/testslot"
	"github.com/webpilot/webpilot/internal/webhook"
	"github.com/webpilot/webpilot/internal/worker"
)

const adminToken = "test-admin-token"

type stack struct {
	dbURL string
	store *store.Store
	queue *natstest.Queue
	api   *httptest.Server
	// contract validates the API's traffic against its OpenAPI document.
	contract *apitest.Contract
	sealer   *jobs.Sealer
	sealKey  string
	demo     string
	app      *demoapp.App // the demo app's variant switch
	ackWait  time.Duration
	// workerMetrics is the registry of the last in-process worker started
	// without metrics of its own.
	workerMetrics *prometheus.Registry

	mu      sync.Mutex
	secrets map[string]map[string]string // job id → the secrets its spec reads from the environment
}

func quietLog() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("WEBPILOT_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// newStack starts Postgres (a fresh database), NATS, the API and the demo app.
func newStack(t *testing.T, ackWait time.Duration, demoDelay time.Duration) *stack {
	t.Helper()
	return newStackWith(t, ackWait, demoDelay, 100)
}

// newStackWith is newStack with the consumer's MaxDeliver.
func newStackWith(t *testing.T, ackWait time.Duration, demoDelay time.Duration, maxDeliver int) *stack {
	t.Helper()
	return newStackOn(t, storetest.URL(t), ackWait, demoDelay, maxDeliver)
}

// newStackOn builds the stack on the (migrated) database at dbURL.
func newStackOn(t *testing.T, dbURL string, ackWait time.Duration, demoDelay time.Duration, maxDeliver int) *stack {
	t.Helper()
	testslot.Take(t)
	s := &stack{ackWait: ackWait, dbURL: dbURL}
	st, err := store.Open(context.Background(), s.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	s.store = st
	s.queue = natstest.NewWith(t, ackWait, maxDeliver)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	s.sealKey = base64.StdEncoding.EncodeToString(key)
	if s.sealer, err = jobs.NewSealer(key); err != nil {
		t.Fatal(err)
	}
	sender := outbox.Start(jobs.NewPublisher(s.queue.JS), st, quietLog(), outbox.Options{})
	t.Cleanup(sender.Close)
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(st, func(ctx context.Context) (int, error) { return jobs.InStream(ctx, s.queue.Consumer) }, quietLog()))
	policy := netguard.New([]string{"127.0.0.1"})
	srv := api.New(api.Config{AdminToken: adminToken, MaxBody: 64 << 10, Metrics: reg,
		Ready: []api.ReadyCheck{{Name: "postgres", Check: st.Ping}}}, st, sender,
		policy, s.sealer, quietLog())
	// The console takes forms only from its own origin: the server's
	// address is known before it serves.
	s.api = httptest.NewUnstartedServer(nil)
	con, err := console.New(console.Config{Origins: []string{"http://" + s.api.Listener.Addr().String()}}, st, srv, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	srv.Mount("/console/", con)
	srv.Mount("/mcp", srv.MCP(s.queue.Conn, "test"))
	// Every exchange with the API, the CLI's included, is checked against
	// the OpenAPI document it serves.
	s.contract = apitest.NewContract(t, srv.Handler())
	s.api.Config.Handler = s.contract
	s.api.Start()
	t.Cleanup(s.api.Close)
	follow, stopFollow := context.WithCancel(context.Background())
	go srv.FollowChanges(follow)
	// Webhooks go out as the dispatcher sends them, a failed one retried
	// after a second.
	go webhook.NewDeliverer(st, s.sealer, policy.Dial, quietLog(), webhook.Options{FirstRetry: time.Second}).Run(follow)
	t.Cleanup(stopFollow)
	s.app = demoapp.New(demoapp.Options{Delay: demoDelay})
	d := httptest.NewServer(s.app)
	t.Cleanup(d.Close)
	s.demo = d.URL
	return s
}

// startWorker runs an in-process worker on the shared test browser until the test ends.
func (s *stack) startWorker(t *testing.T, model orchestrator.Model) {
	t.Helper()
	s.startWorkerWith(t, model, worker.Config{})
}

// startWorkerWith starts a worker with cfg (ID, AckWait and Concurrency
// filled in when zero) and returns a function that stops it (SIGTERM-like:
// it drains) and waits.
func (s *stack) startWorkerWith(t *testing.T, model orchestrator.Model, cfg worker.Config) (stop func()) {
	t.Helper()
	return s.startWorkerLogged(t, model, cfg, quietLog())
}

// startWorkerLogged is startWorkerWith logging to log.
func (s *stack) startWorkerLogged(t *testing.T, model orchestrator.Model, cfg worker.Config, log *slog.Logger) (stop func()) {
	t.Helper()
	if cfg.ID == "" {
		cfg.ID = "test-worker"
	}
	if cfg.AckWait == 0 {
		cfg.AckWait = s.ackWait
	}
	if cfg.SpecRunner == nil {
		cfg.SpecRunner = specrun.Runner{Dir: browsertest.RunnerDir(), Chromium: os.Getenv("WEBPILOT_CHROMIUM")}
	}
	if cfg.Projects == nil {
		sb, err := sandbox.New(sandbox.Config{Runner: browsertest.RunnerDir()})
		if err != nil {
			t.Fatalf("the customer-code sandbox: %v", err)
		}
		cfg.Projects = suite.ProjectRunner{Sandbox: sb, Chromium: os.Getenv("WEBPILOT_CHROMIUM"), Deps: &suite.Deps{Dir: suite.DefaultDepsDir()}}
	}
	if cfg.Explore.AxeSource == "" {
		cfg.Explore.AxeSource = browsertest.AxeSource(t)
	}
	if cfg.Metrics == nil {
		reg := prometheus.NewRegistry()
		cfg.Metrics = worker.NewMetrics(reg)
		s.mu.Lock()
		s.workerMetrics = reg
		s.mu.Unlock()
	}
	cfg.Store, cfg.Consumer, cfg.Publisher, cfg.Browser, cfg.Model = s.store, s.queue.Consumer, jobs.NewPublisher(s.queue.JS), browsertest.Browser(t), model
	cfg.Policy, cfg.Sealer, cfg.Logger, cfg.Sessions = netguard.New([]string{"127.0.0.1"}), s.sealer, log, s.queue.Conn
	w, err := worker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// workerMetricsText is the exposition of the last worker's metrics.
func (s *stack) workerMetricsText(t *testing.T) string {
	t.Helper()
	s.mu.Lock()
	reg := s.workerMetrics
	s.mu.Unlock()
	if reg == nil {
		t.Fatal("no worker with metrics was started")
	}
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// tenant creates a tenant through the admin API and grants it credits.
func (s *stack) tenant(t *testing.T, name string, credits float64) (id, key string) {
	t.Helper()
	return s.tenantCapped(t, name, credits, 0)
}

// tenantCapped creates a tenant that may run maxRunning jobs at once (0: the default).
func (s *stack) tenantCapped(t *testing.T, name string, credits float64, maxRunning int) (id, key string) {
	t.Helper()
	var res struct {
		Tenant struct{ ID string }
		APIKey string `json:"api_key"`
	}
	s.mustJSON(t, "POST", "/v1/admin/tenants", adminToken, map[string]any{"name": name, "max_running": maxRunning}, http.StatusCreated, &res)
	if credits > 0 {
		s.mustJSON(t, "POST", "/v1/admin/tenants/"+res.Tenant.ID+"/credits", adminToken,
			map[string]any{"credits": credits, "idempotency_key": "initial"}, http.StatusOK, nil)
	}
	return res.Tenant.ID, res.APIKey
}

// call sends a request with a raw body and returns the status and body.
func (s *stack) call(t *testing.T, method, path, token string, body []byte) (int, []byte) {
	t.Helper()
	return s.callWith(t, method, path, token, body, nil)
}

// callWith is call with extra request headers.
func (s *stack) callWith(t *testing.T, method, path, token string, body []byte, header map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.api.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (s *stack) mustJSON(t *testing.T, method, path, token string, body any, want int, out any) {
	t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	code, b := s.call(t, method, path, token, raw)
	if code != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, code, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
	}
}

// submit posts a scenario and returns the accepted job.
func (s *stack) submit(t *testing.T, key string, sc map[string]any) api.JobView {
	t.Helper()
	var v api.JobView
	s.mustJSON(t, "POST", "/v1/jobs", key, map[string]any{"kind": "scenario", "scenario": sc}, http.StatusAccepted, &v)
	env := map[string]string{}
	switch secrets := sc["secrets"].(type) {
	case map[string]string:
		for k, val := range secrets {
			env[k] = val
		}
	case map[string]any:
		for k, val := range secrets {
			env[k], _ = val.(string)
		}
	}
	s.mu.Lock()
	if s.secrets == nil {
		s.secrets = map[string]map[string]string{}
	}
	s.secrets[v.ID] = env
	s.mu.Unlock()
	return v
}

// passSpec runs a succeeded job's spec under @playwright/test (with the
// secrets the job was submitted with): every job an e2e test sees succeed
// must have a spec that passes where the job passed.
func (s *stack) passSpec(t *testing.T, key, id string) {
	t.Helper()
	code, script := s.call(t, "GET", "/v1/jobs/"+id+"/script", key, nil)
	if code != http.StatusOK {
		t.Fatalf("script of succeeded job %s: %d %s", id, code, script)
	}
	s.mu.Lock()
	env := s.secrets[id]
	s.mu.Unlock()
	// Twice in a row, each on a freshly loaded page.
	browsertest.MustPassSpecTwice(t, string(script), env)
}

// wait polls the job until it ends; a succeeded job's spec must pass.
func (s *stack) wait(t *testing.T, key, id string, timeout time.Duration) api.JobView {
	t.Helper()
	v := s.waitEnd(t, key, id, timeout)
	if v.State == "succeeded" {
		s.passSpec(t, key, id)
	}
	return v
}

// waitSlack stretches every wait for a job's end (see waitEnd).
const waitSlack = 3

// waitEnd polls the job until it ends, leaving its spec to the caller.
func (s *stack) waitEnd(t *testing.T, key, id string, timeout time.Duration) api.JobView {
	t.Helper()
	// timeout is what the job takes on a quiet machine, with room. A loaded
	// two-core CI machine runs the same job three times slower, and no test
	// here asserts how fast a job ends, only how it ends.
	timeout *= waitSlack
	deadline := time.Now().Add(timeout)
	for {
		var v api.JobView
		s.mustJSON(t, "GET", "/v1/jobs/"+id, key, nil, http.StatusOK, &v)
		if store.JobState(v.State).Terminal() {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after %s", id, v.State, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *stack) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.store.Pool().QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// browserTime is what a job was charged for its browser time: the
// seconds and micro-credits of its browser rows, and how many there are.
// Each row must be priced at the documented price (jobs.BrowserSecondMicro
// a second, rounded up, at most its reservation; a row its attempt left
// open, at its reservation), and the seconds must fit in the time the job
// existed.
func (s *stack) browserTime(t *testing.T, jobID string) (seconds float64, micro int64, rows int) {
	t.Helper()
	ctx := context.Background()
	r, err := s.store.Pool().Query(ctx, `SELECT seconds, credits, reserved, state FROM token_usage WHERE job_id = $1 AND model = $2`, jobID, store.BrowserTime)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		var sec float64
		var credits, reserved int64
		var state string
		if err := r.Scan(&sec, &credits, &reserved, &state); err != nil {
			t.Fatal(err)
		}
		want := min(int64(math.Ceil(sec*jobs.BrowserSecondMicro)), reserved)
		if sec == 0 {
			want = reserved // its attempt died with it open: charged at its reservation
		}
		if state != "settled" || credits != want {
			t.Errorf("job %s: a browser row of %.3f s is %s at %d micro-credits, want settled at %d", jobID, sec, state, credits, want)
		}
		seconds, micro, rows = seconds+sec, micro+credits, rows+1
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	var ran float64
	if err := s.store.Pool().QueryRow(ctx, `SELECT EXTRACT(EPOCH FROM finished_at - created_at) FROM jobs WHERE id = $1`, jobID).Scan(&ran); err != nil {
		t.Fatal(err)
	}
	if seconds > ran+0.5 {
		t.Errorf("job %s was charged %.1f s of browser time in the %.1f s it existed", jobID, seconds, ran)
	}
	return seconds, micro, rows
}

func (s *stack) account(t *testing.T, tenantID string) store.Account {
	t.Helper()
	a, err := s.store.Account(context.Background(), tenantID)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// waitCheckpoint waits until the job has checkpointed at least n steps.
func (s *stack) waitCheckpoint(t *testing.T, jobID string, n int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; {
		var next int
		_ = s.store.Pool().QueryRow(context.Background(), `SELECT coalesce((checkpoint->>'next_step')::int, 0) FROM jobs WHERE id = $1`, jobID).Scan(&next)
		if next >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s never checkpointed %d steps", jobID, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// otherKey creates an unrelated tenant and returns its key.
func (s *stack) otherKey(t *testing.T) string {
	t.Helper()
	_, key := s.tenant(t, "someone else", 0)
	return key
}
