package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// UsageTotals sums a job's recorded usage.
type UsageTotals struct {
	// Calls counts model calls (browser time is not one).
	Calls            int   `json:"calls"`
	PromptTokens     int   `json:"prompt_tokens"`
	CachedTokens     int   `json:"cached_tokens"`
	CompletionTokens int   `json:"completion_tokens"`
	CreditsMicro     int64 `json:"credits_micro"`
	// BrowserSeconds is the browser time charged, and BrowserCreditsMicro
	// its part of CreditsMicro.
	BrowserSeconds      float64 `json:"browser_seconds"`
	BrowserCreditsMicro int64   `json:"browser_credits_micro"`
}

// JobUsage returns the totals of a job's usage over all attempts, its
// children's included: a bulk job's model calls and browser time are
// mostly its children's, charged to its hold.
func (s *Store) JobUsage(ctx context.Context, jobID string) (UsageTotals, error) {
	var t UsageTotals
	err := s.db.QueryRow(ctx, `SELECT `+usageColumns+` FROM token_usage
		WHERE job_id = $1 OR job_id IN (SELECT id FROM jobs WHERE parent_id = $1)`, jobID, BrowserTime).Scan(t.fields()...)
	if err != nil {
		return t, fmt.Errorf("sum usage: %w", err)
	}
	return t, nil
}

// HistoryEntry is one executed command or tool call.
type HistoryEntry struct {
	JobID       string          `json:"-"`
	Attempt     int             `json:"attempt"`
	Step        int             `json:"step"`
	Iteration   int             `json:"iteration"`
	Kind        string          `json:"kind"` // command, verification, tool
	Action      string          `json:"action"`
	Target      string          `json:"target,omitempty"`
	Result      string          `json:"result"` // ok, failed
	Error       string          `json:"error,omitempty"`
	Observation json.RawMessage `json:"observation,omitempty"`
	Duration    time.Duration   `json:"duration_ns"`
	CreatedAt   time.Time       `json:"created_at"`
}

// RecordHistory appends entries for a job, fenced by attempt.
func (s *Store) RecordHistory(ctx context.Context, entries []HistoryEntry) error {
	if len(entries) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockRunningAttempt(ctx, tx, entries[0].JobID, entries[0].Attempt); err != nil {
			return err
		}
		for _, e := range entries {
			if _, err := tx.Exec(ctx,
				`INSERT INTO history (job_id, attempt, step, iteration, kind, action, target, result, error, observation, duration_ms)
				 VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7, ''), $8, NULLIF($9, ''), $10, $11)`,
				e.JobID, e.Attempt, e.Step, e.Iteration, e.Kind, e.Action, e.Target, e.Result, e.Error,
				e.Observation, e.Duration.Milliseconds()); err != nil {
				return fmt.Errorf("insert history: %w", err)
			}
		}
		return nil
	})
}

// History returns a tenant's job history in order.
func (s *Store) History(ctx context.Context, tenantID, jobID string) ([]HistoryEntry, error) {
	rows, err := s.db.Query(ctx,
		`SELECT h.attempt, h.step, h.iteration, h.kind, h.action, COALESCE(h.target, ''), h.result,
		        COALESCE(h.error, ''), h.observation, h.duration_ms, h.created_at
		 FROM history h JOIN jobs j ON j.id = h.job_id WHERE h.job_id = $1 AND j.tenant_id = $2 ORDER BY h.id`,
		jobID, tenantID)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (HistoryEntry, error) {
		var e HistoryEntry
		var ms int64
		err := r.Scan(&e.Attempt, &e.Step, &e.Iteration, &e.Kind, &e.Action, &e.Target, &e.Result,
			&e.Error, &e.Observation, &ms, &e.CreatedAt)
		e.JobID = jobID
		e.Duration = time.Duration(ms) * time.Millisecond
		return e, err
	})
}

// SaveExtracted stores a named value a job extracted, fenced by attempt.
func (s *Store) SaveExtracted(ctx context.Context, jobID string, attempt int, key string, value json.RawMessage) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockRunningAttempt(ctx, tx, jobID, attempt); err != nil {
			return err
		}
		_, err := tx.Exec(ctx,
			`INSERT INTO extracted_data (job_id, key, value, attempt) VALUES ($1, $2, $3, $4)
			 ON CONFLICT (job_id, key) DO UPDATE SET value = EXCLUDED.value, attempt = EXCLUDED.attempt`,
			jobID, key, value, attempt)
		return err
	})
}

// Experiences returns what earlier jobs of a tenant learned about an app
// origin, most used first.
func (s *Store) Experiences(ctx context.Context, tenantID, origin string, limit int) ([]string, error) {
	rows, err := s.db.Query(ctx,
		`SELECT text FROM experiences WHERE tenant_id = $1 AND origin = $2 ORDER BY uses DESC, updated_at DESC LIMIT $3`,
		tenantID, origin, limit)
	if err != nil {
		return nil, fmt.Errorf("read experiences: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// AddExperiences records learned patterns, de-duplicated, and trims the
// origin's list to keep at most limit entries.
func (s *Store) AddExperiences(ctx context.Context, tenantID, origin string, texts []string, limit int) error {
	if len(texts) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		for _, t := range texts {
			if _, err := tx.Exec(ctx,
				`INSERT INTO experiences (tenant_id, origin, text) VALUES ($1, $2, $3)
				 ON CONFLICT (tenant_id, origin, text) DO UPDATE SET uses = experiences.uses + 1, updated_at = now()`,
				tenantID, origin, t); err != nil {
				return fmt.Errorf("insert experience: %w", err)
			}
		}
		_, err := tx.Exec(ctx,
			`DELETE FROM experiences WHERE tenant_id = $1 AND origin = $2 AND id NOT IN (
			   SELECT id FROM experiences WHERE tenant_id = $1 AND origin = $2 ORDER BY uses DESC, updated_at DESC LIMIT $3)`,
			tenantID, origin, limit)
		return err
	})
}

// Experience is one learned note as a tenant reviews it.
type Experience struct {
	ID        int64     `json:"id"`
	Origin    string    `json:"origin"`
	Text      string    `json:"text"`
	Uses      int       `json:"uses"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ListExperiences returns a tenant's learned notes, of one origin or all.
func (s *Store) ListExperiences(ctx context.Context, tenantID, origin string) ([]Experience, error) {
	rows, err := s.db.Query(ctx,
		`SELECT id, origin, text, uses, updated_at FROM experiences
		 WHERE tenant_id = $1 AND ($2 = '' OR origin = $2) ORDER BY origin, uses DESC, id LIMIT 1000`, tenantID, origin)
	if err != nil {
		return nil, fmt.Errorf("list experiences: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Experience, error) {
		var e Experience
		return e, r.Scan(&e.ID, &e.Origin, &e.Text, &e.Uses, &e.UpdatedAt)
	})
}

// DeleteExperiences removes a tenant's learned notes: one by id, those of
// an origin, or all (id 0 and origin ""), and says how many went.
func (s *Store) DeleteExperiences(ctx context.Context, tenantID, origin string, id int64) (int64, error) {
	tag, err := s.db.Exec(ctx,
		`DELETE FROM experiences WHERE tenant_id = $1 AND ($2 = '' OR origin = $2) AND ($3 = 0 OR id = $3)`, tenantID, origin, id)
	if err != nil {
		return 0, fmt.Errorf("delete experiences: %w", err)
	}
	return tag.RowsAffected(), nil
}

// AddArtifact stores a file a job produced (a failing state's screenshot).
// Saving it twice (a retried attempt) keeps one copy.
func (s *Store) AddArtifact(ctx context.Context, jobID, kind, name string, content []byte) error {
	_, err := s.db.Exec(ctx, `INSERT INTO artifacts (job_id, kind, name, content)
		SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM artifacts WHERE job_id = $1 AND name = $3)`, jobID, kind, name, content)
	if err != nil {
		return fmt.Errorf("add artifact: %w", err)
	}
	return nil
}

// Artifact returns one of a tenant's job's artifacts.
func (s *Store) Artifact(ctx context.Context, tenantID, jobID, name string) (kind string, content []byte, err error) {
	if _, err := uuid.Parse(jobID); err != nil {
		return "", nil, ErrNotFound
	}
	err = s.db.QueryRow(ctx, `SELECT a.kind, a.content FROM artifacts a JOIN jobs j ON j.id = a.job_id
		WHERE a.job_id = $1 AND j.tenant_id = $2 AND a.name = $3 ORDER BY a.id LIMIT 1`, jobID, tenantID, name).Scan(&kind, &content)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, ErrNotFound
	}
	return kind, content, err
}
