package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// RunnerDir is where make setup installs @playwright/test.
func RunnerDir() string {
	if d := os.Getenv("WEBPILOT_SPEC_RUNNER"); d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(DriverDir()), "pwtest")
}

const specConfig = `import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: '.',
  timeout: 60000,
  retries: 0,
  reporter: 'line',
  use: { launchOptions: { executablePath: %q, args: ['--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'] } },
});
`

// RunSpec runs a generated spec under the real @playwright/test runner with
// env added to the environment, and returns the runner's output and error.
func RunSpec(ctx context.Context, spec string, env map[string]string) (string, error) {
	runner := RunnerDir()
	if _, err := os.Stat(filepath.Join(runner, "node_modules", "@playwright", "test", "cli.js")); err != nil {
		return "", fmt.Errorf("@playwright/test is not installed in %s (run make setup): %w", runner, err)
	}
	if err := os.MkdirAll(filepath.Join(runner, "runs"), 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(filepath.Join(runner, "runs"), "spec-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	exe := os.Getenv("WEBPILOT_CHROMIUM")
	if exe == "" {
		exe = "/usr/lib/chromium/chromium"
	}
	if err := os.WriteFile(filepath.Join(dir, "playwright.config.ts"), []byte(fmt.Sprintf(specConfig, exe)), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "generated.spec.ts"), []byte(spec), 0o644); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(runner, "node_modules", "@playwright", "test", "cli.js"),
		"test", "--config", filepath.Join(dir, "playwright.config.ts"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "CI=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var passed sync.Map // scripts that already passed in this test binary

// MustPassSpec fails the test unless spec passes under @playwright/test.
// Every test that gets a succeeded job's spec calls it: a succeeded job's
// spec must pass where the job passed. A script that passed once is not
// run again.
func MustPassSpec(t testing.TB, spec string, env map[string]string) {
	t.Helper()
	if _, ok := passed.Load(spec); ok {
		return
	}
	out, err := RunSpec(context.Background(), spec, env)
	if err != nil {
		t.Fatalf("generated spec fails under @playwright/test: %v\n%s\n%s", err, out, spec)
	}
	passed.Store(spec, true)
}
