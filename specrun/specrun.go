// Package specrun runs a generated spec under the real @playwright/test
// runner: a repair proposes a new version only after its spec passed there.
// The spec is webpilot's own output (commands are data; every string in it
// is escaped by the emitter), never code a model or a page wrote.
package specrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// Runner is an installation of @playwright/test and the Chromium it drives.
type Runner struct {
	// Dir holds node_modules/@playwright/test (make setup installs it).
	Dir string
	// Chromium is the browser executable; default /usr/lib/chromium/chromium.
	Chromium string
	// Timeout bounds one run; default 3 minutes.
	Timeout time.Duration
}

// Proxy sends the runner's browser through the worker's egress guard.
type Proxy struct {
	Server, Username, Password string
}

// Options are one run's environment.
type Options struct {
	// Env adds variables (the secrets the spec reads from process.env);
	// they are never written to disk.
	Env   map[string]string
	Proxy *Proxy
}

// ErrNotInstalled means the runner is missing.
var ErrNotInstalled = errors.New("@playwright/test is not installed")

const config = `import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: '.',
  timeout: 60000,
  retries: 0,
  reporter: 'line',
  use: {
    launchOptions: { executablePath: %s, args: ['--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'] },%s
  },
});
`

func (r Runner) cli() string {
	return filepath.Join(r.Dir, "node_modules", "@playwright", "test", "cli.js")
}

// Available reports whether the runner is installed.
func (r Runner) Available() error {
	if _, err := os.Stat(r.cli()); err != nil {
		return fmt.Errorf("%w in %s (run make setup): %v", ErrNotInstalled, r.Dir, err)
	}
	return nil
}

// Run runs spec and returns the runner's output; a failing spec is an error.
func (r Runner) Run(ctx context.Context, spec string, o Options) (string, error) {
	if err := r.Available(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(r.Dir, "runs"), 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(filepath.Join(r.Dir, "runs"), "spec-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	exe := r.Chromium
	if exe == "" {
		exe = "/usr/lib/chromium/chromium"
	}
	proxy := ""
	if p := o.Proxy; p != nil {
		// Credentials come from the environment, not the file.
		proxy = fmt.Sprintf("\n    proxy: { server: %s, username: process.env.WEBPILOT_PROXY_USER, password: process.env.WEBPILOT_PROXY_PASSWORD },",
			strconv.Quote(p.Server))
	}
	if err := os.WriteFile(filepath.Join(dir, "playwright.config.ts"), []byte(fmt.Sprintf(config, strconv.Quote(exe), proxy)), 0o600); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "generated.spec.ts"), []byte(spec), 0o600); err != nil {
		return "", err
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", r.cli(), "test", "--config", filepath.Join(dir, "playwright.config.ts"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "CI=1")
	if p := o.Proxy; p != nil {
		cmd.Env = append(cmd.Env, "WEBPILOT_PROXY_USER="+p.Username, "WEBPILOT_PROXY_PASSWORD="+p.Password)
	}
	for k, v := range o.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("the spec fails under @playwright/test: %w", err)
	}
	return string(out), nil
}
