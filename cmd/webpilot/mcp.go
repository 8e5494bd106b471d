package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/config"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/mcpserver"
)

// envSecretFlag is --secret NAME=env:VAR: the value is read from the
// environment, never from the command line (which other users can list).
var envSecretFlag = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=env:([A-Za-z_][A-Za-z0-9_]*)$`)

func mcpCommand(errOut io.Writer) *cobra.Command {
	var (
		addr    string
		origins []string
		secrets []string
		device  string
	)
	cmd := &cobra.Command{Use: "mcp", Short: "Serve the browser engine to AI clients over MCP (stdio, or Streamable HTTP with --http)",
		Long: `Serve webpilot's browser engine to AI clients (Claude, Cursor, your own agents) over the Model
Context Protocol: navigate, snapshot, execute_sequence, verify, screenshot, tabs, dialogs, spec and
run_scenario. Without --http it speaks over stdin and stdout, as a client's configuration starts it.

The browser runs on this machine, its connections checked by the same egress policy as a worker's:
loopback and private addresses only where --allow-origin names them.

Environment: PLAYWRIGHT_DRIVER_PATH, WEBPILOT_CHROMIUM (as make setup installs them), and
OPENAI_API_KEY for the agent to take run_scenario's steps the fast tiers cannot.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := config.LoadMCP()
			if err != nil {
				return err
			}
			log := c.Log.Logger(errOut, "mcp")
			vals := map[string]string{}
			for _, s := range secrets {
				m := envSecretFlag.FindStringSubmatch(s)
				if m == nil {
					return fmt.Errorf("--secret %q: NAME=env:VARIABLE (the value is read from the environment)", s)
				}
				v, ok := os.LookupEnv(m[2])
				if !ok || v == "" {
					return fmt.Errorf("--secret %s: the environment variable %s is not set", m[1], m[2])
				}
				vals[m[1]] = v
			}
			var launch struct {
				sync.Mutex
				b *browser.Browser
			}
			local := &mcpserver.Local{AllowedOrigins: origins, Secrets: vals, Device: device, Log: log,
				Browser: func(ctx context.Context) (*browser.Browser, error) {
					launch.Lock()
					defer launch.Unlock()
					if launch.b == nil {
						b, err := browser.Launch(context.WithoutCancel(ctx), browser.Config{DriverDir: c.DriverPath, ExecutablePath: c.Chromium})
						if err != nil {
							return nil, err
						}
						launch.b = b
					}
					return launch.b, nil
				}}
			if c.Model.APIKey != "" {
				local.Model = llm.New(llm.Config{APIKey: c.Model.APIKey, BaseURL: c.Model.BaseURL, Model: c.Model.Name})
			}
			backend, err := mcpserver.NewLocal(local)
			if err != nil {
				return err
			}
			defer func() {
				_ = backend.Close()
				launch.Lock()
				if launch.b != nil {
					_ = launch.b.Close()
				}
				launch.Unlock()
			}()
			srv := mcpserver.New(mcpserver.Options{Backend: backend, Version: versionString(), Log: log})
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if addr == "" {
				return srv.ServeStdio(ctx)
			}
			return serveHTTP(ctx, addr, srv.Handler(), errOut)
		}}
	cmd.Flags().StringVar(&addr, "http", "", "serve Streamable HTTP at ADDR/mcp (as 127.0.0.1:8931) instead of stdio")
	cmd.Flags().StringArrayVar(&origins, "allow-origin", nil, "an origin sessions may navigate to, as http://localhost:3000 (repeatable; default: each session's first page's origin, public addresses only)")
	cmd.Flags().StringArrayVar(&secrets, "secret", nil, "NAME=env:VARIABLE: a secret typed where a command says {{NAME}}, never shown (repeatable)")
	cmd.Flags().StringVar(&device, "device", "", "emulate a Playwright device, as \"iPhone 13\"")
	return cmd
}

// serveHTTP serves the MCP endpoint at /mcp until ctx ends.
func serveHTTP(ctx context.Context, addr string, h http.Handler, errOut io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--http %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(errOut, "webpilot mcp: serving http://%s/mcp\n", ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
