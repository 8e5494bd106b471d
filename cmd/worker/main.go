// Command worker pulls webpilot jobs from NATS JetStream and runs them in
// one shared Chromium, a fresh browser context per job.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/config"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/sandbox"
	"github.com/webpilot/webpilot/internal/specrun"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/tracing"
	"github.com/webpilot/webpilot/internal/worker"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		// A container's HEALTHCHECK: the metrics server's /healthz.
		os.Exit(config.Healthcheck(os.Getenv("WEBPILOT_METRICS_ADDR")))
	}
	cfg, err := config.LoadWorker()
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(2)
	}
	if cfg.ID == "" {
		host, _ := os.Hostname()
		cfg.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	log := cfg.Log.Logger(os.Stderr, "worker")
	if err := run(cfg, log); err != nil {
		log.Error("worker failed", "err", err)
		os.Exit(1)
	}
}

func run(c config.Worker, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	endTracing, err := tracing.Setup(ctx, tracing.Config{Endpoint: c.Tracing.Endpoint, Sample: c.Tracing.Sample, Service: "webpilot-worker"})
	if err != nil {
		return err
	}
	defer endTracing()
	dataDir := c.DataDir
	st, err := store.OpenMigrated(ctx, c.DatabaseURL, log)
	if err != nil {
		return err
	}
	defer st.Close()
	qcfg := c.Queue.Stream()
	// Without NATS_URL: the dispatcher's embedded server on this machine.
	q, err := jobs.Connect(ctx, c.NATS.Connect(dataDir, "webpilot-worker-"+c.ID, false, qcfg, log))
	if err != nil {
		return err
	}
	defer q.Close()
	js, cons := q.JS, q.Consumer
	sealer, err := jobs.LoadSealer(c.SecretKey, dataDir)
	if err != nil {
		return err
	}
	prices, err := llm.ParsePrices(c.Model.Prices)
	if err != nil {
		return err
	}
	b, err := browser.Launch(ctx, browser.Config{DriverDir: c.DriverPath, ExecutablePath: c.Chromium})
	if err != nil {
		return err
	}
	defer b.Close()

	cfg := worker.Config{ID: c.ID, AckWait: qcfg.AckWait, MaxAttempts: c.Queue.MaxAttempts, Prices: prices, Concurrency: c.Concurrency,
		StepShots: c.StepShots, DrainGrace: c.DrainGrace, RunParts: c.Run.Parts}
	runner := specrun.Runner{Dir: c.SpecRunner, Chromium: c.Chromium}
	if err := runner.Available(); err != nil {
		log.Warn("repairs will be reported but not proposed: no runner to verify them", "err", err)
	} else {
		cfg.SpecRunner = runner
	}
	// Customers' own test code runs only in the sandbox.
	budget := sandbox.Limits{MemoryBudget: int64(c.Run.MemoryMB) << 20, Disk: int64(c.Run.DiskMB) << 20, Files: c.Run.Files, TotalCPU: c.Run.CPU, Wall: c.Run.Wall}
	if sb, err := sandbox.New(sandbox.Config{Runner: runner.Dir, Limits: budget}); err != nil {
		log.Warn("customer projects will not run: no sandbox", "err", err)
	} else {
		deps := &suite.Deps{Dir: cmp.Or(c.DepsCache, suite.DefaultDepsDir()), Registry: c.NPMRegistry}
		cfg.Projects = suite.ProjectRunner{Sandbox: sb, Chromium: c.Chromium, Deps: deps, Workers: c.Run.Workers}
	}
	// axe-core is installed beside the runner by make setup; without it
	// explorations run every detector but the accessibility one.
	axePath := c.Axe
	if axePath == "" {
		axePath = filepath.Join(runner.Dir, "node_modules", "axe-core", "axe.min.js")
	}
	if src, err := os.ReadFile(axePath); err != nil {
		log.Warn("explorations will not check accessibility: axe-core not found", "path", axePath, "err", err)
	} else {
		cfg.Explore.AxeSource = string(src)
	}
	var model orchestrator.Model // stays nil without a key: deterministic tier only
	if c.Model.APIKey != "" {
		lc := llm.Config{APIKey: c.Model.APIKey, BaseURL: c.Model.BaseURL, Model: c.Model.Name}
		model = llm.New(lc)
		log.Info("agent tier enabled", "model", lc.Model, "base_url", lc.BaseURL)
	} else {
		log.Info("no OPENAI_API_KEY: deterministic tier only")
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg.Metrics = worker.NewMetrics(reg)
	if c.MetricsAddr != "" {
		go serveMetrics(ctx, c.MetricsAddr, reg, log)
	}
	cfg.Store, cfg.Consumer, cfg.Publisher, cfg.Browser, cfg.Model = st, cons, jobs.NewPublisher(js), b, model
	cfg.Policy, cfg.Sealer, cfg.Logger, cfg.Sessions = netguard.New(c.AllowHosts), sealer, log, q.Conn
	w, err := worker.New(cfg)
	if err != nil {
		return err
	}
	return w.Run(ctx)
}

// serveMetrics serves /metrics and a cheap /healthz until ctx ends.
func serveMetrics(ctx context.Context, addr string, reg *prometheus.Registry, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	hs := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	log.Info("metrics listening", "addr", addr)
	if err := hs.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("metrics server failed", "err", err)
	}
}
