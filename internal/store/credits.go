package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/jackc/pgx/v5"
)

// MicroCredits per credit. All amounts are stored as micro-credits.
const MicroCredits = 1_000_000

// Account is a tenant's credit position.
type Account struct {
	TenantID  string `json:"tenant_id"`
	Balance   int64  `json:"balance_micro"`
	Held      int64  `json:"held_micro"`
	Available int64  `json:"available_micro"`
}

// Entry is one row of the append-only credit ledger.
type Entry struct {
	ID        int64     `json:"id"`
	JobID     *string   `json:"job_id,omitempty"`
	Amount    int64     `json:"amount_micro"`
	Reason    string    `json:"reason"`
	CreatedAt time.Time `json:"created_at"`
}

// Grant adds amount micro-credits to a tenant. The idempotency key, the
// tenant's own, makes a retried grant a no-op; another tenant's grant under
// the same key is a grant of its own.
func (s *Store) Grant(ctx context.Context, tenantID string, amount int64, idempotencyKey string) (Account, error) {
	if amount <= 0 {
		return Account{}, fmt.Errorf("grant amount must be positive, got %d", amount)
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx,
			`INSERT INTO credit_entries (tenant_id, amount, reason, idempotency_key) VALUES ($1, $2, 'grant', $3)
			 ON CONFLICT (idempotency_key) DO NOTHING`, tenantID, amount, "grant:"+tenantID+":"+idempotencyKey)
		if err != nil {
			return fmt.Errorf("insert grant entry: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		tag, err = tx.Exec(ctx, `UPDATE credit_accounts SET balance = balance + $2 WHERE tenant_id = $1`, tenantID, amount)
		if err != nil {
			return fmt.Errorf("credit account: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return Account{}, err
	}
	return s.Account(ctx, tenantID)
}

// Account returns a tenant's balance and holds.
func (s *Store) Account(ctx context.Context, tenantID string) (Account, error) {
	if _, err := uuid.Parse(tenantID); err != nil {
		return Account{}, ErrNotFound
	}
	a := Account{TenantID: tenantID}
	err := s.db.QueryRow(ctx, `SELECT balance, held FROM credit_accounts WHERE tenant_id = $1`, tenantID).
		Scan(&a.Balance, &a.Held)
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, ErrNotFound
	}
	if err != nil {
		return Account{}, fmt.Errorf("read account: %w", err)
	}
	a.Available = a.Balance - a.Held
	return a, nil
}

// Ledger returns a tenant's newest ledger entries first.
func (s *Store) Ledger(ctx context.Context, tenantID string, limit int) ([]Entry, error) {
	rows, err := s.db.Query(ctx,
		`SELECT id, job_id::text, amount, reason, created_at FROM credit_entries
		 WHERE tenant_id = $1 ORDER BY id DESC LIMIT $2`, tenantID, limit)
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) {
		var e Entry
		err := r.Scan(&e.ID, &e.JobID, &e.Amount, &e.Reason, &e.CreatedAt)
		return e, err
	})
}

// releaseHold returns what is left of a job's hold to the tenant's available
// balance. It is a no-op for a hold already released.
func releaseHold(ctx context.Context, tx pgx.Tx, jobID string) error {
	var tenantID string
	var remaining int64
	err := tx.QueryRow(ctx,
		`UPDATE credit_holds SET released = true WHERE job_id = $1 AND NOT released
		 RETURNING tenant_id::text, GREATEST(amount - consumed, 0)`, jobID).Scan(&tenantID, &remaining)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("release hold of %s: %w", jobID, err)
	}
	if _, err := tx.Exec(ctx, `UPDATE credit_accounts SET held = held - $2 WHERE tenant_id = $1`, tenantID, remaining); err != nil {
		return fmt.Errorf("release held credits: %w", err)
	}
	return nil
}

// ReleaseOrphanHolds releases the holds of jobs that ended without releasing
// them (a sweeper's safety net) and returns how many it released.
func (s *Store) ReleaseOrphanHolds(ctx context.Context) (int, error) {
	rows, err := s.db.Query(ctx,
		`SELECT h.job_id::text FROM credit_holds h JOIN jobs j ON j.id = h.job_id
		 WHERE NOT h.released AND j.state NOT IN ('queued', 'running', 'waiting')`)
	if err != nil {
		return 0, fmt.Errorf("find orphan holds: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := s.inTx(ctx, func(tx pgx.Tx) error {
			if err := settleOrphans(ctx, tx, id, 0); err != nil {
				return err
			}
			return releaseHold(ctx, tx, id)
		}); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}
