// Package browsertest gives tests one real Chromium per test binary, driven
// through the offline Playwright driver that make setup lays out.
package browsertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/chromium"
	"github.com/webpilot/webpilot/internal/netguard"
)

var (
	once    sync.Once
	shared  *browser.Browser
	initErr error
)

// DriverDir finds the Playwright driver: PLAYWRIGHT_DRIVER_PATH, or the
// module's .cache/playwright-driver-1.52.0.
func DriverDir() string {
	if d := os.Getenv("PLAYWRIGHT_DRIVER_PATH"); d != "" {
		return d
	}
	dir, _ := os.Getwd()
	for dir != "/" && dir != "." {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".cache", "playwright-driver-1.52.0")
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// Config is the browser the tests launch: the driver of DriverDir and
// WEBPILOT_CHROMIUM, or Debian's Chromium.
func Config() browser.Config {
	c := browser.Config{DriverDir: DriverDir(), ExecutablePath: os.Getenv("WEBPILOT_CHROMIUM")}
	if c.ExecutablePath == "" {
		c.ExecutablePath = chromium.HeadlessShell
	}
	return c
}

// Browser returns the shared browser, launching it on first use. The
// process exit closes it.
func Browser(t testing.TB) *browser.Browser {
	t.Helper()
	once.Do(func() {
		shared, initErr = browser.Launch(context.Background(), Config())
	})
	if initErr != nil {
		t.Fatalf("browsertest: launch chromium (run make setup): %v", initErr)
	}
	return shared
}

// Session opens a fresh context allowing 127.0.0.1 and localhost (a second
// origin for cross-origin frames), closed when the test ends.
func Session(t testing.TB) *browser.Session {
	t.Helper()
	return SessionWith(t, browser.SessionOptions{})
}

// SessionWith is Session with options of the test's own (a device); the
// policy is Session's.
func SessionWith(t testing.TB, o browser.SessionOptions) *browser.Session {
	t.Helper()
	o.Policy = netguard.New([]string{"127.0.0.1", "localhost"})
	s, err := Browser(t).NewSession(context.Background(), o)
	if err != nil {
		t.Fatalf("browsertest: new session: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Context opens a plain context on the shared browser (no job guard), for
// tests that drive pages of their own; it is closed when the test ends.
func Context(t testing.TB, o playwright.BrowserNewContextOptions) playwright.BrowserContext {
	t.Helper()
	c, err := Browser(t).NewContext(o)
	if err != nil {
		t.Fatalf("browsertest: new context: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Serve serves the files of dir (a testdata directory) on 127.0.0.1 until
// the test ends, and returns the server's URL.
func Serve(t testing.TB, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL
}
