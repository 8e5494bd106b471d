package browser

import (
	"context"

	"github.com/webpilot/webpilot/internal/chromium"
)

// FreshSnapshot reads the page afresh, never patching the last
// representation: what a patched one must equal.
func (s *Session) FreshSnapshot(ctx context.Context, o SnapshotOptions) (Snapshot, error) {
	s.mu.Lock()
	s.reuse = nil
	s.mu.Unlock()
	return s.Snapshot(ctx, o)
}

// Patched counts the representations patched instead of read.
func (s *Session) Patched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.patched
}

// HoldsSysNice says whether this process may raise a priority.
func HoldsSysNice() bool { return chromium.Unraised() != nil }
