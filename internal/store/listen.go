package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// JobChangedChannel is notified with a job's id when its state, checkpoint
// or result changes (migration 00004).
const JobChangedChannel = "job_changed"

// ListenJobChanges calls changed with the id of every job that changes, on
// one dedicated connection, until ctx ends. live reports whether it is
// listening (false while the connection is being re-established, when a
// caller must not rely on notifications).
func (s *Store) ListenJobChanges(ctx context.Context, changed func(jobID string), live func(bool)) {
	delay := 200 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listen(ctx, changed, live)
		live(false)
		if ctx.Err() != nil {
			return
		}
		_ = err // the database may be away: listen again after a pause
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, 5*time.Second)
	}
}

func (s *Store) listen(ctx context.Context, changed func(string), live func(bool)) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("listen: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+JobChangedChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	live(true)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("listen: wait: %w", err)
		}
		changed(n.Payload)
	}
}
