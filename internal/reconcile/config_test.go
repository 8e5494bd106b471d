package reconcile

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/internal/store"
)

type nopPublisher struct{}

func (nopPublisher) PublishAsync(string, string, int, string) (jetstream.PubAckFuture, error) {
	return nil, nil
}

func TestNewValidatesAndFillsDefaults(t *testing.T) {
	t.Parallel()
	st := &store.Store{}
	for _, tc := range []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{"no store", Config{Publisher: nopPublisher{}}, true},
		{"no publisher", Config{Store: st}, true},
		{"negative interval", Config{Store: st, Publisher: nopPublisher{}, Every: -time.Second}, true},
		{"zero fields take defaults", Config{Store: st, Publisher: nopPublisher{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := New(tc.cfg)
			if (err != nil) != tc.wantErr {
				t.Fatalf("New: err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if r.cfg.Every != DefaultEvery || r.cfg.Unsent != DefaultUnsent || r.cfg.Stale != DefaultStale ||
				r.cfg.SweepEvery != DefaultSweepEvery || r.log == nil {
				t.Fatalf("defaults not filled: %+v", r.cfg)
			}
		})
	}
}
