package browser_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/netguard"
)

func demo(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(demoapp.Handler(demoapp.Options{Delay: 300 * time.Millisecond}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestLoginCommandsAndRedactedSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := demo(t)
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, base+"/login"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []browser.Command{
		{Action: browser.ActionFill, Target: browser.Target{Label: "Email"}, Value: demoapp.Email},
		{Action: browser.ActionFill, Target: browser.Target{Label: "Password"}, Value: demoapp.Password},
	} {
		if out := s.Execute(ctx, c, browser.ExecOptions{}); out.Err != nil {
			t.Fatalf("%s: %v", c.Describe(), out.Err)
		}
	}
	snap, err := s.Snapshot(ctx, browser.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(snap.Text, demoapp.Password) {
		t.Fatalf("snapshot shows the password:\n%s", snap.Text)
	}
	if !strings.Contains(snap.Text, browser.Redacted) || len(snap.Refs) == 0 {
		t.Fatalf("snapshot lacks the redaction marker or refs:\n%s", snap.Text)
	}
	before, _ := s.CaptureState(500)
	start := time.Now()
	startURL := s.URL()
	out := s.Execute(ctx, browser.Command{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: "Sign in"}}, browser.ExecOptions{Fingerprint: true})
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	if out.Element == nil || out.Element.Locator.Role != "button" || out.Element.Locator.Name != "Sign in" {
		t.Fatalf("fingerprint locator = %+v", out.Element)
	}
	rep := s.Settle(ctx, browser.SettleOptions{Since: start, StartURL: startURL})
	if rep.TimedOut {
		t.Fatalf("settle timed out: %+v", rep)
	}
	after, _ := s.CaptureState(500)
	d := browser.Diff(before, after, 10)
	if d.URL == nil || !strings.HasSuffix(d.URL[1], "/dashboard") {
		t.Fatalf("delta has no navigation to /dashboard: %s", d)
	}
	if !strings.Contains(d.String(), "Welcome back") {
		t.Fatalf("delta does not show the welcome heading: %s", d)
	}
}

func TestSettleWaitsForFetchAndBlocksPrivateHosts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// When the app answered the report's fetch: the settle must end after
	// it, however long the click itself took (on a loaded machine most of
	// the fetch's 300 ms may pass inside the click, so the settle's own
	// duration says nothing).
	var mu sync.Mutex
	var answered time.Time
	app := demoapp.Handler(demoapp.Options{Delay: 300 * time.Millisecond})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		app.ServeHTTP(w, r)
		if r.URL.Path == "/api/report" {
			mu.Lock()
			answered = time.Now()
			mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, srv.URL+"/delayed"); err != nil {
		t.Fatal(err)
	}
	s.Settle(ctx, browser.SettleOptions{Since: time.Now().Add(-time.Second)})
	start := time.Now()
	if out := s.Execute(ctx, browser.Command{Action: browser.ActionClick, Target: browser.Target{Role: "button", Name: "Refresh"}}, browser.ExecOptions{}); out.Err != nil {
		t.Fatal(out.Err)
	}
	rep := s.Settle(ctx, browser.SettleOptions{Since: start})
	settled := time.Now()
	mu.Lock()
	last := answered
	mu.Unlock()
	if rep.TimedOut || !last.After(start) || settled.Before(last) {
		t.Fatalf("settle should wait for the 300ms fetch the click started (answered %s after the click began, settled %s after): %+v",
			last.Sub(start), settled.Sub(start), rep)
	}
	if out := s.Execute(ctx, browser.Command{Action: browser.ActionVerify, Assert: browser.AssertIsVisible, Target: browser.Target{Role: "heading", Name: "Report ready"}}, browser.ExecOptions{Timeout: time.Millisecond * 100}); out.Err != nil {
		t.Fatalf("report not visible right after settle: %v", out.Err)
	}
	// A request to a host outside the allow-list is refused by routing.
	err := s.Navigate(ctx, "http://169.254.169.254/latest/meta-data")
	if err == nil || len(s.Denied()) == 0 {
		t.Fatalf("metadata address was not blocked: err=%v denied=%v", err, s.Denied())
	}
}

func TestBrowserRelaunchesAfterChromiumDies(t *testing.T) {
	t.Parallel()
	b, err := browser.Launch(context.Background(), browsertest.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	policy := browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"})}
	s, err := b.NewSession(context.Background(), policy)
	if err != nil {
		t.Fatal(err)
	}
	// Chromium goes away under the worker (crash, OOM kill).
	if err := s.Page().Context().Browser().Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := b.NewSession(context.Background(), policy)
	if err != nil {
		t.Fatalf("no session after Chromium died: %v", err)
	}
	defer s2.Close()
	if err := s2.Navigate(context.Background(), demo(t)+"/login"); err != nil {
		t.Fatalf("the relaunched browser does not work: %v", err)
	}
}
