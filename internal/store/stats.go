package store

import (
	"context"
	"fmt"
	"time"
)

// JobCount is how many jobs of a kind are in a state.
type JobCount struct {
	Kind  string
	State JobState
	N     int64
}

// JobCounts counts every tenant's jobs by kind and state, for operators.
func (s *Store) JobCounts(ctx context.Context) ([]JobCount, error) {
	rows, err := s.db.Query(ctx, `SELECT kind, state, count(*) FROM jobs GROUP BY kind, state`)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer rows.Close()
	var out []JobCount
	for rows.Next() {
		var c JobCount
		if err := rows.Scan(&c.Kind, &c.State, &c.N); err != nil {
			return nil, fmt.Errorf("count jobs: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// OldestQueued is how long the longest-waiting queued job (parked ones
// included) has waited, by the database's clock; zero when none waits.
func (s *Store) OldestQueued(ctx context.Context) (time.Duration, error) {
	var secs float64
	err := s.db.QueryRow(ctx, `SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 FROM jobs WHERE state = 'queued'`).Scan(&secs)
	if err != nil {
		return 0, fmt.Errorf("oldest queued job: %w", err)
	}
	return time.Duration(secs * float64(time.Second)), nil
}
