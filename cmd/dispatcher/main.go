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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/jobs"
	"github.com/webpilot/webpilot/netguard"
	"github.com/webpilot/webpilot/outbox"
	"github.com/webpilot/webpilot/reconcile"
	"github.com/webpilot/webpilot/store"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("proc", "dispatcher")
	if err := run(log); err != nil {
		log.Error("dispatcher failed", "err", err)
		os.Exit(1)
	}
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	dataDir := env("WEBPILOT_DATA_DIR", ".data")
	st, err := store.OpenFromEnv(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()

	qcfg, _, err := jobs.QueueConfigFromEnv()
	if err != nil {
		return err
	}
	natsURL := os.Getenv("NATS_URL")
	natsToken := os.Getenv("WEBPILOT_NATS_TOKEN")
	if natsURL == "" {
		if natsToken == "" {
			if natsToken, err = jobs.EmbeddedToken(dataDir); err != nil {
				return err
			}
		}
		port, err := strconv.Atoi(env("WEBPILOT_NATS_PORT", "4222"))
		if err != nil || port < 0 || port > 65535 {
			return fmt.Errorf("WEBPILOT_NATS_PORT must be a port number, got %q", os.Getenv("WEBPILOT_NATS_PORT"))
		}
		ns, err := jobs.StartEmbedded(filepath.Join(dataDir, "nats"), port, natsToken)
		if err != nil {
			return err
		}
		defer ns.Shutdown()
		natsURL = ns.ClientURL()
		log.Info("embedded NATS JetStream started", "url", natsURL)
	}
	nc, err := nats.Connect(natsURL, append(jobs.ClientOptions(natsToken, os.Getenv("NATS_CREDS"), os.Getenv("NATS_CA")),
		nats.Name("webpilot-dispatcher"), nats.MaxReconnects(-1))...)
	if err != nil {
		return fmt.Errorf("connect to NATS %s: %w", natsURL, err)
	}
	defer nc.Drain()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	cons, err := jobs.EnsureQueue(ctx, js, qcfg)
	if err != nil {
		return err
	}
	sealer, err := jobs.LoadSealer(dataDir)
	if err != nil {
		return err
	}
	adminToken, err := adminToken(dataDir, log)
	if err != nil {
		return err
	}
	pub := jobs.NewPublisher(js)
	sender := outbox.Start(pub, st, log, outbox.Options{})
	defer sender.Close() // after the HTTP server drained: the last submissions' messages go out
	policy := netguard.New(strings.Split(os.Getenv("WEBPILOT_ALLOW_HOSTS"), ","))
	hold, err := strconv.ParseFloat(env("WEBPILOT_DEFAULT_HOLD", "2"), 64)
	if err != nil || hold <= 0 || hold > 1e9 {
		return fmt.Errorf("WEBPILOT_DEFAULT_HOLD must be a positive number of credits, got %q", os.Getenv("WEBPILOT_DEFAULT_HOLD"))
	}
	srv := api.New(api.Config{AdminToken: adminToken, DefaultHold: int64(hold * store.MicroCredits)}, st, sender, policy, sealer, log)

	go reconcile.New(reconcile.Config{InStream: func(ctx context.Context) (int, error) { return jobs.InStream(ctx, cons) }},
		st, pub, log).Run(ctx)
	if err := reconcile.WatchMaxDeliveries(ctx, nc, js, st, log); err != nil {
		return err
	}

	addr := env("WEBPILOT_ADDR", "127.0.0.1:8080")
	go srv.FollowChanges(ctx)
	hs := api.NewHTTPServer(addr, srv.Handler(), api.DefaultServerTimeouts())
	errc := make(chan error, 1)
	go func() { errc <- hs.ListenAndServe() }()
	log.Info("dispatcher listening", "addr", addr, "allow_hosts", policy.AllowedHosts())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return hs.Shutdown(shutdown)
}

// adminToken is WEBPILOT_ADMIN_TOKEN, or on a single machine a token kept in
// dataDir/admin.token (mode 0600) for the CLI to read.
func adminToken(dataDir string, log *slog.Logger) (string, error) {
	if t := os.Getenv("WEBPILOT_ADMIN_TOKEN"); t != "" {
		return t, nil
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
