package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/webpilot/webpilot/browser"
	"github.com/webpilot/webpilot/netguard"
)

func TestZZDump(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(peerPages())
	defer srv.Close()
	p, err := startPeer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	b, err := browser.Launch(ctx, browser.ConfigFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, pg := range []string{"/form.html", "/late.html", "/todo.html"} {
		p.call(ctx, "browser_navigate", map[string]any{"url": srv.URL + pg})
		snap, _, _ := p.call(ctx, "browser_snapshot", map[string]any{})
		fmt.Printf("=== MCP %s\n%s\n", pg, snap)
		s, _ := b.NewSession(ctx, browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"})})
		s.Navigate(ctx, srv.URL+pg)
		sn, _ := s.Snapshot(ctx, browser.SnapshotOptions{Budget: 12000})
		fmt.Printf("=== OURS %s\n%s\n", pg, sn.Text)
		s.Close()
	}
}
