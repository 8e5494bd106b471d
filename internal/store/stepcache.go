package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// CachedStep is one step cache entry: the commands the agent ran for a
// step on a page of an app, as JSON the orchestrator reads.
type CachedStep struct {
	Origin    string          `json:"origin"`
	Path      string          `json:"path"`
	Step      string          `json:"step"`
	Entries   json.RawMessage `json:"entries"`
	Hits      int             `json:"hits"`
	UpdatedAt time.Time       `json:"updated_at"`
	UsedAt    *time.Time      `json:"used_at,omitempty"`
}

// StepCacheEntry returns a tenant's entry for a step and counts its use.
func (s *Store) StepCacheEntry(ctx context.Context, tenantID, origin, path, step string) (json.RawMessage, bool, error) {
	var entries json.RawMessage
	err := s.db.QueryRow(ctx,
		`UPDATE step_cache SET hits = hits + 1, used_at = now()
		 WHERE tenant_id = $1 AND origin = $2 AND path = $3 AND step = $4 RETURNING entries`,
		tenantID, origin, path, step).Scan(&entries)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the step cache: %w", err)
	}
	return entries, true, nil
}

// PutStepCacheEntry stores (or replaces) a tenant's entry for a step.
func (s *Store) PutStepCacheEntry(ctx context.Context, tenantID, origin, path, step string, entries json.RawMessage) error {
	_, err := s.db.Exec(ctx,
		`INSERT INTO step_cache (tenant_id, origin, path, step, entries) VALUES ($1, $2, $3, $4, $5)
		 ON CONFLICT (tenant_id, origin, path, step) DO UPDATE SET entries = EXCLUDED.entries, updated_at = now()`,
		tenantID, origin, path, step, entries)
	if err != nil {
		return fmt.Errorf("write the step cache: %w", err)
	}
	return nil
}

// StepCache lists a tenant's entries, newest first, optionally of one
// origin, at most limit.
func (s *Store) StepCache(ctx context.Context, tenantID, origin string, limit int) ([]CachedStep, error) {
	rows, err := s.db.Query(ctx,
		`SELECT origin, path, step, entries, hits, updated_at, used_at FROM step_cache
		 WHERE tenant_id = $1 AND ($2 = '' OR origin = $2) ORDER BY updated_at DESC LIMIT $3`, tenantID, origin, limit)
	if err != nil {
		return nil, fmt.Errorf("list the step cache: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (CachedStep, error) {
		var c CachedStep
		err := r.Scan(&c.Origin, &c.Path, &c.Step, &c.Entries, &c.Hits, &c.UpdatedAt, &c.UsedAt)
		return c, err
	})
}

// ClearStepCache deletes a tenant's entries (of one origin when origin is
// set) and returns how many there were.
func (s *Store) ClearStepCache(ctx context.Context, tenantID, origin string) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM step_cache WHERE tenant_id = $1 AND ($2 = '' OR origin = $2)`, tenantID, origin)
	if err != nil {
		return 0, fmt.Errorf("clear the step cache: %w", err)
	}
	return tag.RowsAffected(), nil
}
