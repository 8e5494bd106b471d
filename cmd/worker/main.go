// Command worker pulls webpilot jobs from NATS JetStream and runs them in
// one shared Chromium, a fresh browser context per job.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/browser"
	"github.com/webpilot/webpilot/jobs"
	"github.com/webpilot/webpilot/llm"
	"github.com/webpilot/webpilot/netguard"
	"github.com/webpilot/webpilot/orchestrator"
	"github.com/webpilot/webpilot/specrun"
	"github.com/webpilot/webpilot/store"
	"github.com/webpilot/webpilot/worker"
)

func main() {
	host, _ := os.Hostname()
	id := env("WEBPILOT_WORKER_ID", fmt.Sprintf("%s-%d", host, os.Getpid()))
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("proc", "worker")
	if err := run(id, log); err != nil {
		log.Error("worker failed", "err", err)
		os.Exit(1)
	}
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(id string, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	dataDir := env("WEBPILOT_DATA_DIR", ".data")
	st, err := store.OpenFromEnv(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()
	qcfg, maxAttempts, err := jobs.QueueConfigFromEnv()
	if err != nil {
		return err
	}
	natsURL := os.Getenv("NATS_URL")
	natsToken := os.Getenv("WEBPILOT_NATS_TOKEN")
	if natsURL == "" {
		// The dispatcher's embedded server on this machine: its token is in the data dir.
		natsURL = "nats://127.0.0.1:" + env("WEBPILOT_NATS_PORT", "4222")
		if natsToken == "" {
			if natsToken, err = jobs.EmbeddedToken(dataDir); err != nil {
				return err
			}
		}
	}
	nc, err := nats.Connect(natsURL, append(jobs.ClientOptions(natsToken, os.Getenv("NATS_CREDS"), os.Getenv("NATS_CA")),
		nats.Name("webpilot-worker-"+id), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true))...)
	if err != nil {
		return fmt.Errorf("connect to NATS %s: %w", natsURL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	var cons jetstream.Consumer
	for {
		if cons, err = jobs.EnsureQueue(ctx, js, qcfg); err == nil {
			break
		}
		if ctx.Err() != nil {
			return err
		}
		log.Info("waiting for NATS", "url", natsURL, "err", err)
		time.Sleep(time.Second)
	}
	sealer, err := jobs.LoadSealer(dataDir)
	if err != nil {
		return err
	}
	prices, err := llm.ParsePrices(os.Getenv("WEBPILOT_PRICES"))
	if err != nil {
		return err
	}
	b, err := browser.Launch(ctx, browser.ConfigFromEnv())
	if err != nil {
		return err
	}
	defer b.Close()

	cfg := worker.Config{ID: id, AckWait: qcfg.AckWait, MaxAttempts: maxAttempts, Prices: prices}
	if v := os.Getenv("WEBPILOT_DRAIN_GRACE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("WEBPILOT_DRAIN_GRACE must be a duration of 0s or more, got %q", v)
		}
		cfg.DrainGrace = d
		if d == 0 {
			cfg.DrainGrace = -1 // hand back at the next step boundary at once
		}
	}
	if cfg.Concurrency, err = strconv.Atoi(env("WEBPILOT_CONCURRENCY", "2")); err != nil || cfg.Concurrency < 1 || cfg.Concurrency > 64 {
		return fmt.Errorf("WEBPILOT_CONCURRENCY must be a whole number from 1 to 64, got %q", os.Getenv("WEBPILOT_CONCURRENCY"))
	}
	runner := specrun.Runner{Dir: env("WEBPILOT_SPEC_RUNNER", filepath.Join(".cache", "pwtest")), Chromium: os.Getenv("WEBPILOT_CHROMIUM")}
	if err := runner.Available(); err != nil {
		log.Warn("repairs will be reported but not proposed: no runner to verify them", "err", err)
	} else {
		cfg.SpecRunner = runner
	}
	// axe-core is installed beside the runner by make setup; without it
	// explorations run every detector but the accessibility one.
	axePath := env("WEBPILOT_AXE", filepath.Join(runner.Dir, "node_modules", "axe-core", "axe.min.js"))
	if src, err := os.ReadFile(axePath); err != nil {
		log.Warn("explorations will not check accessibility: axe-core not found", "path", axePath, "err", err)
	} else {
		cfg.Explore.AxeSource = string(src)
	}
	var model orchestrator.Model // stays nil without a key: deterministic tier only
	if lc, ok := llm.ConfigFromEnv(); ok {
		model = llm.New(lc)
		log.Info("agent tier enabled", "model", lc.Model, "base_url", lc.BaseURL)
	} else {
		log.Info("no OPENAI_API_KEY: deterministic tier only")
	}
	policy := netguard.New(strings.Split(os.Getenv("WEBPILOT_ALLOW_HOSTS"), ","))
	return worker.New(cfg, st, cons, jobs.NewPublisher(js), b, model, policy, sealer, log).Run(ctx)
}
