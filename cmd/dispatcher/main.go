// Command dispatcher runs webpilot's HTTP API. It applies migrations, starts
// an embedded NATS JetStream server when NATS_URL is unset, makes sure the
// JOBS stream exists, and runs the reconciler loops.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/config"
	"github.com/webpilot/webpilot/internal/console"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/metrics"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/outbox"
	"github.com/webpilot/webpilot/internal/reconcile"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/tracing"
	"github.com/webpilot/webpilot/internal/webhook"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		// A container's HEALTHCHECK (the image has no shell or curl).
		addr := os.Getenv("WEBPILOT_ADDR")
		if addr == "" {
			addr = "127.0.0.1:8080"
		}
		os.Exit(config.Healthcheck(addr))
	}
	cfg, err := config.LoadDispatcher()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dispatcher:", err)
		os.Exit(2)
	}
	log := cfg.Log.Logger(os.Stderr, "dispatcher")
	if err := run(cfg, log); err != nil {
		log.Error("dispatcher failed", "err", err)
		os.Exit(1)
	}
}

func run(cfg config.Dispatcher, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	endTracing, err := tracing.Setup(ctx, tracing.Config{Endpoint: cfg.Tracing.Endpoint, Sample: cfg.Tracing.Sample, Service: "webpilot-dispatcher"})
	if err != nil {
		return err
	}
	defer endTracing()
	dataDir := cfg.DataDir
	st, err := store.OpenMigrated(ctx, cfg.DatabaseURL, log)
	if err != nil {
		return err
	}
	defer st.Close()

	qcfg := cfg.Queue.Stream()
	q, err := jobs.Connect(ctx, cfg.NATS.Connect(dataDir, "webpilot-dispatcher", true, qcfg, log))
	if err != nil {
		return err
	}
	defer q.Close()
	nc, js, cons := q.Conn, q.JS, q.Consumer
	sealer, err := jobs.LoadSealer(cfg.SecretKey, dataDir)
	if err != nil {
		return err
	}
	adminToken, err := adminToken(cfg.AdminToken, dataDir, log)
	if err != nil {
		return err
	}
	pub := jobs.NewPublisher(js)
	sender := outbox.Start(pub, st, log, outbox.Options{})
	defer sender.Close() // after the HTTP server drained: the last submissions' messages go out
	policy := netguard.New(cfg.AllowHosts)
	inStream := func(ctx context.Context) (int, error) { return jobs.InStream(ctx, cons) }
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		metrics.NewCollector(st, inStream, log))
	ready := []api.ReadyCheck{
		{Name: "postgres", Check: st.Ping},
		{Name: "nats", Check: func(ctx context.Context) error {
			if !nc.IsConnected() {
				return fmt.Errorf("not connected (%s)", nc.Status())
			}
			_, err := js.AccountInfo(ctx)
			return err
		}},
	}
	proxies, err := cfg.Proxies()
	if err != nil {
		return err
	}
	srv := api.New(api.Config{AdminToken: adminToken, DefaultHold: int64(cfg.DefaultHold * store.MicroCredits), Metrics: reg, Ready: ready,
		TrustedProxies: proxies},
		st, sender, policy, sealer, log)
	con, err := console.New(console.Config{SessionTTL: cfg.ConsoleSession, Origins: cfg.Origins()}, st, srv, log)
	if err != nil {
		return err
	}
	srv.Mount("/console/", con)
	srv.Mount("/mcp", srv.MCP(nc, "dispatcher"))

	rec, err := reconcile.New(reconcile.Config{Store: st, Publisher: pub, Logger: log,
		InStream: inStream, ArtifactRetention: cfg.ArtifactRetention})
	if err != nil {
		return err
	}
	go rec.Run(ctx)
	// Webhook deliveries connect where tenants said, through the egress
	// guard like every such connection.
	go webhook.NewDeliverer(st, sealer, policy.Dial, log, webhook.Options{}).Run(ctx)
	if err := reconcile.WatchMaxDeliveries(ctx, nc, js, st, log); err != nil {
		return err
	}

	addr := cfg.Addr
	go srv.FollowChanges(ctx)
	hs := api.NewHTTPServer(addr, srv.Handler(), api.DefaultServerTimeouts())
	errc := make(chan error, 1)
	go func() { errc <- hs.ListenAndServe() }()
	log.Info("dispatcher listening", "addr", addr, "console", "http://"+addr+"/console/", "allow_hosts", policy.AllowedHosts())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return hs.Shutdown(shutdown)
}

// adminToken is the configured token (WEBPILOT_ADMIN_TOKEN), or on a single
// machine a token kept in dataDir/admin.token (mode 0600) for the CLI to read.
func adminToken(configured, dataDir string, log *slog.Logger) (string, error) {
	if configured != "" {
		return configured, nil
	}
	path := filepath.Join(dataDir, "admin.token")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
		return "", fmt.Errorf("write admin token: %w", err)
	}
	log.Info("generated an admin token", "file", path)
	return tok, nil
}
