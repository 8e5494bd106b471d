package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/webpilot/webpilot/internal/store"
)

// retrier repeats a store operation that failed because the database is
// briefly unreachable (store.Transient), backing off from 100 ms to 5 s, for
// at most limit. Other errors (fencing, missing rows) return at once.
type retrier struct {
	limit time.Duration
	log   *slog.Logger
}

func newRetrier(limit time.Duration, log *slog.Logger) *retrier {
	if limit <= 0 {
		limit = DefaultStoreRetry
	}
	if log == nil {
		log = slog.Default()
	}
	return &retrier{limit: limit, log: log}
}

func (r *retrier) do(ctx context.Context, what string, fn func() error) error {
	deadline := time.Now().Add(r.limit)
	delay := 100 * time.Millisecond
	for tries := 1; ; tries++ {
		err := fn()
		if err == nil || !store.Transient(err) {
			if err == nil && tries > 1 {
				r.log.Info("store write succeeded after retries", "what", what, "tries", tries)
			}
			return err
		}
		if time.Now().Add(delay).After(deadline) {
			return fmt.Errorf("%s: database unavailable for %s: %w", what, r.limit, err)
		}
		if tries == 1 {
			r.log.Warn("store write failed; retrying", "what", what, "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (database unavailable: %v)", what, ctx.Err(), err)
		case <-time.After(delay):
		}
		delay = min(delay*2, 5*time.Second)
	}
}
