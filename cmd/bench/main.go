// Command bench measures webpilot on this machine with every real part
// running (PostgreSQL, embedded NATS JetStream, Chromium) and prints tables:
// dispatcher throughput, queue latency, and where a deterministic job's wall
// time goes. Run it with make bench.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/outbox"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/worker"
)

func main() {
	submits := flag.Int("submits", 1000, "jobs submitted for the throughput figure")
	clients := flag.Int("clients", 8, "concurrent HTTP clients")
	latencyN := flag.Int("latency-jobs", 300, "jobs for the queue-latency figure")
	jobsN := flag.Int("jobs", 10, "5-step jobs run end to end")
	pageN := flag.Int("page-runs", 15, "runs of each page-level measurement")
	chaosN := flag.Int("chaos-jobs", 120, "jobs of the crash drill (0 skips it)")
	clusterN := flag.Int("cluster-jobs", 150, "jobs of the cluster drill (0 skips it)")
	peerN := flag.Int("peer-samples", 40, "samples of each action side by side with Playwright MCP (0 skips it)")
	replayN := flag.Int("replay-runs", 5, "runs of the 14-step replay and its spec under @playwright/test")
	flag.IntVar(&mcpRounds, "mcp-rounds", 5, "times each MCP task runs on each tool")
	flag.StringVar(&suitesProjects, "suites-projects", "", "comma-separated corpus projects the suites area measures; all when empty")
	flag.StringVar(&coldModeList, "cold-modes", strings.Join(coldModes, ","), "comma-separated modes the suites_cold area measures (warm is always measured: it is the reference)")
	flag.IntVar(&scaleTests, "scale-tests", 500, "tests of the suites_scale area's generated project (0 skips it; -scale-growth still runs)")
	flag.IntVar(&scaleFiles, "scale-files", 50, "test files of the suites_scale area's generated project")
	flag.StringVar(&scaleGrowth, "scale-growth", "100,250,500", "sizes at which suites_scale measures the repair after a run with the same 50 failing tests (empty skips it)")
	only := flag.String("only", "", "comma-separated areas to run (dispatcher, jobs, page, repair, exploration, explore_site, lexical, suites, suites_cold, suites_real, suites_scale, sandbox, projects_e2e, projects_overhead, generate_into_project, mcp, scaling, peer, chaos, cluster); all when empty")
	flag.Parse()
	areas = map[string]bool{}
	for _, a := range strings.Split(*only, ",") {
		if a = strings.TrimSpace(a); a != "" {
			areas[a] = true
		}
	}
	if err := run(*submits, *clients, *latencyN, *jobsN, *pageN, *chaosN, *clusterN, *peerN, *replayN); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type env struct {
	st      *store.Store
	js      jetstream.JetStream
	cons    jetstream.Consumer
	api     *httptest.Server
	sealer  *jobs.Sealer
	demo    string
	tenant  store.Tenant
	key     string
	browser *browser.Browser
	ns      *server.Server
}

func setup(ctx context.Context) (*env, func(), error) {
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		return nil, nil, errors.New("DATABASE_URL is not set (use make bench)")
	}
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return nil, nil, err
	}
	_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS webpilot_bench WITH (FORCE)")
	if _, err := admin.Exec(ctx, "CREATE DATABASE webpilot_bench"); err != nil {
		return nil, nil, err
	}
	admin.Close(ctx)
	u, _ := url.Parse(base)
	u.Path = "/webpilot_bench"
	st, err := store.Open(ctx, u.String())
	if err != nil {
		return nil, nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		return nil, nil, err
	}
	dir, _ := os.MkdirTemp("", "webpilot-bench-nats")
	token := jobs.NewToken()
	ns, err := jobs.StartEmbedded(dir, 0, token)
	if err != nil {
		return nil, nil, err
	}
	nc, err := nats.Connect(ns.ClientURL(), nats.Token(token))
	if err != nil {
		return nil, nil, err
	}
	js, _ := jetstream.New(nc)
	qcfg := jobs.DefaultQueueConfig()
	cons, err := jobs.EnsureQueue(ctx, js, qcfg)
	if err != nil {
		return nil, nil, err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sealer, _ := jobs.NewSealer(key)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sender := outbox.Start(jobs.NewPublisher(js), st, log, outbox.Options{})
	srv := api.New(api.Config{AdminToken: "bench", Submissions: -1, AuthFailures: -1}, st, sender, netguard.New([]string{"127.0.0.1"}), sealer, log)
	apiSrv := httptest.NewServer(srv.Handler())
	demo := httptest.NewServer(demoapp.Handler(demoapp.Options{Delay: 300 * time.Millisecond}))
	t, apiKey, err := st.CreateTenant(ctx, "bench", 10_000)
	if err != nil {
		return nil, nil, err
	}
	if _, err := st.Grant(ctx, t.ID, 1e15, "bench"); err != nil {
		return nil, nil, err
	}
	b, err := browser.Launch(ctx, browsertest.Config())
	if err != nil {
		return nil, nil, err
	}
	e := &env{st: st, js: js, cons: cons, api: apiSrv, sealer: sealer, demo: demo.URL, tenant: t, key: apiKey, browser: b, ns: ns}
	return e, func() {
		_ = b.Close()
		apiSrv.Close()
		sender.Close()
		demo.Close()
		nc.Close()
		ns.Shutdown()
		st.Close()
		os.RemoveAll(dir)
	}, nil
}

// areas are the parts of the bench -only asks for (all when empty).
var areas map[string]bool

func want(area string) bool { return len(areas) == 0 || areas[area] }

func run(submits, clients, latencyN, jobsN, pageN, chaosN, clusterN, peerN, replayN int) error {
	ctx := context.Background()
	e, done, err := setup(ctx)
	if err != nil {
		return err
	}
	defer done()
	fmt.Println("webpilot bench — real PostgreSQL, embedded NATS JetStream (file store), Chromium; this machine")
	fmt.Println()

	var rate float64
	if want("dispatcher") || want("peer") || want("scaling") {
		if rate, err = e.submitRate(ctx, submits, clients); err != nil {
			return err
		}
		fmt.Println("Dispatcher and queue")
		fmt.Printf("  %-58s %12s\n", "measure", "value")
		fmt.Printf("  %-58s %9.0f /s\n", fmt.Sprintf("submissions accepted (HTTP 202, %d jobs, %d clients)", submits, clients), rate)
	}
	if want("dispatcher") {
		lat, err := e.queueLatency(ctx, latencyN)
		if err != nil {
			return err
		}
		fmt.Printf("  %-58s %9.2f ms\n", fmt.Sprintf("queue latency publish -> claim, p50 (%d jobs)", latencyN), ms(percentile(lat, 50)))
		fmt.Printf("  %-58s %9.2f ms\n", "queue latency publish -> claim, p99", ms(percentile(lat, 99)))
	}
	fmt.Println()
	if want("jobs") {
		split, err := e.jobWallTime(ctx, jobsN)
		if err != nil {
			return err
		}
		fmt.Printf("5-step deterministic scenario job, submit -> succeeded (median of %d)\n", jobsN)
		for _, row := range split {
			fmt.Printf("  %-58s %9.1f ms\n", row.name, ms(row.d))
		}
		fmt.Println()
	}
	for _, a := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"page", func(ctx context.Context) error { return e.pageBench(ctx, pageN) }},
		{"repair", e.repairBench},
		{"exploration", e.exploreBench},
		{"explore_site", e.exploreSiteBench},
		{"lexical", e.lexicalBench},
		{"suites", e.suitesBench},
		{"suites_cold", suitesColdBench},
		{"suites_real", suitesRealBench},
		{"sandbox", sandboxBench},
		{"projects_e2e", projectsE2EBench},
		{"projects_overhead", projectsOverheadBench},
		{"generate_into_project", generateIntoProjectBench},
		{"stored_as_project", storedAsProjectBench},
		{"suites_scale", suitesScaleBench},
		{"mcp", func(ctx context.Context) error { return e.mcpBench(ctx, mcpRounds) }},
		{"scaling", func(ctx context.Context) error { return e.scalingBench(ctx, rate) }},
		{"peer", func(ctx context.Context) error {
			if peerN == 0 {
				return nil
			}
			ratio, err := e.replayVsRunner(ctx, replayN)
			if err != nil {
				return err
			}
			return e.peerBench(ctx, peerN, ratio, rate)
		}},
	} {
		if !want(a.name) {
			continue
		}
		if err := a.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
	}
	if chaosN > 0 && want("chaos") {
		if err := chaosBench(ctx, chaosN); err != nil {
			return err
		}
	}
	if clusterN > 0 && want("cluster") {
		return clusterBench(ctx, clusterN)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

// submitClient keeps a connection per submitting client open, as an API
// client's pool does (the default keeps two idle per host, so most
// submissions would pay for a new connection).
var submitClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func (e *env) post(body []byte) (int, []byte, error) {
	req, _ := http.NewRequest("POST", e.api.URL+"/v1/jobs", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := submitClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, nil
}

func fiveSteps(base string) []byte {
	b, _ := json.Marshal(map[string]any{"kind": "scenario", "scenario": map[string]any{
		"name": "five steps", "base_url": base + "/login",
		"secrets": map[string]string{"PASSWORD": demoapp.Password},
		"steps": []string{
			`Fill "Email" with "` + demoapp.Email + `"`,
			`Fill "Password" with "{{PASSWORD}}"`,
			`Click "Sign in"`,
			`Verify "Welcome back" is visible`,
			`Verify URL contains /dashboard`,
		}}})
	return b
}

// submitRate posts jobs concurrently (nobody consumes them), then clears them.
func (e *env) submitRate(ctx context.Context, n, clients int) (float64, error) {
	body := fiveSteps(e.demo)
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				code, _, err := e.post(body)
				if err != nil || code != http.StatusAccepted {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if f := failed.Load(); f > 0 {
		return 0, fmt.Errorf("%d submissions failed", f)
	}
	if err := e.clear(ctx); err != nil {
		return 0, err
	}
	return float64(n) / elapsed.Seconds(), nil
}

// clear purges the stream and retires queued jobs so later phases start empty.
func (e *env) clear(ctx context.Context) error {
	s, err := e.js.Stream(ctx, jobs.StreamName)
	if err != nil {
		return err
	}
	if err := s.Purge(ctx); err != nil {
		return err
	}
	_, err = e.st.Pool().Exec(ctx, `UPDATE jobs SET state = 'cancelled' WHERE state IN ('queued', 'running')`)
	return err
}

// queueLatency publishes jobs at a steady pace while four consumers pull one
// at a time and claim in Postgres, as workers do; it measures publish -> claim.
func (e *env) queueLatency(ctx context.Context, n int) ([]time.Duration, error) {
	pub := jobs.NewPublisher(e.js)
	var mu sync.Mutex
	published := map[string]time.Time{}
	var lat []time.Duration
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var claimed atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cctx.Err() == nil && claimed.Load() < int64(n) {
				batch, err := e.cons.Fetch(1, jetstream.FetchMaxWait(200*time.Millisecond))
				if err != nil {
					continue
				}
				for msg := range batch.Messages() {
					m, _ := jobs.ParseMessage(msg.Data())
					c, err := e.st.ClaimJob(cctx, m.JobID, "bench", time.Minute)
					now := time.Now()
					if err == nil {
						mu.Lock()
						lat = append(lat, now.Sub(published[m.JobID]))
						mu.Unlock()
						claimed.Add(1)
						_, _ = e.st.FinishJob(cctx, store.Finish{JobID: c.JobID, Attempt: c.Attempt, State: store.JobStateSucceeded, Result: json.RawMessage(`{}`)})
					}
					_ = msg.Ack()
				}
			}
		}()
	}
	for i := range n {
		j, err := e.st.SubmitJob(ctx, store.NewJob{TenantID: e.tenant.ID, Kind: "scenario", Input: json.RawMessage(`{"steps":["x"]}`),
			Hold: 1, Subject: jobs.Subject(jobs.KindScenario, e.tenant.ID)})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		published[j.ID] = time.Now()
		mu.Unlock()
		if err := pub.Publish(ctx, jobs.Subject(jobs.KindScenario, e.tenant.ID), j.ID, 0); err != nil {
			return nil, err
		}
		if i%10 == 9 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for claimed.Load() < int64(n) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if int(claimed.Load()) < n {
		return nil, fmt.Errorf("only %d of %d jobs claimed", claimed.Load(), n)
	}
	return lat, nil
}

type row struct {
	name string
	d    time.Duration
}

// jobWallTime runs 5-step jobs one after another through the API and a
// worker with a real browser and reads where the time went.
func (e *env) jobWallTime(ctx context.Context, n int) ([]row, error) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w, err := worker.New(worker.Config{ID: "bench", Concurrency: 1, AckWait: 30 * time.Second, Store: e.st, Consumer: e.cons,
		Publisher: jobs.NewPublisher(e.js), Browser: e.browser, Policy: netguard.New([]string{"127.0.0.1"}), Sealer: e.sealer, Logger: log})
	if err != nil {
		return nil, err
	}
	wctx, stop := context.WithCancel(ctx)
	wdone := make(chan struct{})
	go func() { _ = w.Run(wctx); close(wdone) }()
	defer func() { stop(); <-wdone }()

	var total, queue, brow, settle, persist, other []time.Duration
	body := fiveSteps(e.demo)
	for i := 0; i < n+1; i++ { // the first job warms up and is not counted
		code, b, err := e.post(body)
		if err != nil || code != http.StatusAccepted {
			return nil, fmt.Errorf("submit: %d %s %v", code, b, err)
		}
		var v api.JobView
		_ = json.Unmarshal(b, &v)
		var state store.JobState
		var created, finished time.Time
		var result []byte
		for deadline := time.Now().Add(60 * time.Second); ; {
			err := e.st.Pool().QueryRow(ctx, `SELECT state, created_at, coalesce(finished_at, now()), coalesce(result::text, '{}') FROM jobs WHERE id = $1`, v.ID).
				Scan(&state, &created, &finished, &result)
			if err != nil {
				return nil, err
			}
			if state.Terminal() || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if state != store.JobStateSucceeded {
			return nil, fmt.Errorf("bench job ended %s: %s", state, result)
		}
		if i == 0 {
			continue
		}
		var res struct {
			QueueNS int64 `json:"queue_ns"`
			Timing  struct {
				Total   int64 `json:"total_ns"`
				Browser int64 `json:"browser_ns"`
				Settle  int64 `json:"settle_ns"`
				Persist int64 `json:"persist_ns"`
			} `json:"timing"`
		}
		_ = json.Unmarshal(result, &res)
		wall := finished.Sub(created)
		total = append(total, wall)
		queue = append(queue, time.Duration(res.QueueNS))
		brow = append(brow, time.Duration(res.Timing.Browser))
		settle = append(settle, time.Duration(res.Timing.Settle))
		persist = append(persist, time.Duration(res.Timing.Persist))
		other = append(other, wall-time.Duration(res.QueueNS)-time.Duration(res.Timing.Browser)-time.Duration(res.Timing.Settle)-time.Duration(res.Timing.Persist))
	}
	return []row{
		{"wall time (created_at -> finished_at in Postgres)", percentile(total, 50)},
		{"  queue (submit -> claim)", percentile(queue, 50)},
		{"  browser (navigation, commands, snapshots, state capture)", percentile(brow, 50)},
		{"  settle (waiting for the page after each step)", percentile(settle, 50)},
		{"  persistence (history, checkpoints during the run)", percentile(persist, 50)},
		{"  rest (context open/close, result write, settlement)", percentile(other, 50)},
	}, nil
}
