package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// BrowserTime is the model name of usage rows that charge browser time
// (a job's browser context, a project's sandboxed runner) rather than a
// model call.
const BrowserTime = "browser-seconds"

// ErrHoldExceeded means a job's hold cannot cover what a model call might
// cost; the call must not be sent.
var ErrHoldExceeded = errors.New("the job's credit hold cannot cover the call")

// Reservation sets aside the most a model call can cost before it is sent.
type Reservation struct {
	JobID   string
	Attempt int
	Seq     int
	Model   string
	Max     int64 // micro-credits
}

// Usage is the reported token usage of one model call.
type Usage struct {
	JobID            string
	Attempt          int
	Seq              int
	Model            string
	PromptTokens     int
	CachedTokens     int
	CompletionTokens int
	Credits          int64 // micro-credits the usage prices at
	// Seconds is the browser time a BrowserTime row charges for.
	Seconds float64
	// Reason is the ledger's word for the charge ("llm usage (MODEL)"
	// when empty).
	Reason string
}

// Charge is a job's spending against its hold.
type Charge struct {
	Consumed int64 // micro-credits charged to the job so far
	Hold     int64 // micro-credits the job may spend
}

// ReserveCall records the intent to make a model call, reserving its maximum
// cost from the job's hold. ErrHoldExceeded means what is left of the hold
// (after charges and other reservations) cannot cover it. Reserving the same
// (job, attempt, seq) again is a no-op, so a retried reservation is safe.
func (s *Store) ReserveCall(ctx context.Context, r Reservation) error {
	if r.Max < 0 {
		return fmt.Errorf("reserve call: negative maximum %d", r.Max)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockRunningAttempt(ctx, tx, r.JobID, r.Attempt); err != nil {
			return err
		}
		hold, err := holdOf(ctx, tx, r.JobID)
		if err != nil {
			return err
		}
		var amount, consumed, reserved int64
		var released bool
		err = tx.QueryRow(ctx, `SELECT amount, consumed, reserved, released FROM credit_holds WHERE job_id = $1 FOR UPDATE`, hold).
			Scan(&amount, &consumed, &reserved, &released)
		if errors.Is(err, pgx.ErrNoRows) || released {
			return fmt.Errorf("job %s has no open hold: %w", r.JobID, ErrHoldExceeded)
		}
		if err != nil {
			return fmt.Errorf("lock hold: %w", err)
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM token_usage WHERE job_id = $1 AND attempt = $2 AND seq = $3)`,
			r.JobID, r.Attempt, r.Seq).Scan(&exists); err != nil {
			return fmt.Errorf("find reservation: %w", err)
		}
		if exists {
			return nil
		}
		if left := amount - consumed - reserved; left < r.Max {
			return fmt.Errorf("%w: %d micro-credits left, the call may cost up to %d", ErrHoldExceeded, left, r.Max)
		}
		if _, err := tx.Exec(ctx,
			`INSERT INTO token_usage (job_id, attempt, seq, model, prompt_tokens, cached_tokens, completion_tokens, credits, state, reserved)
			 VALUES ($1, $2, $3, $4, 0, 0, 0, 0, 'reserved', $5)`, r.JobID, r.Attempt, r.Seq, r.Model, r.Max); err != nil {
			return fmt.Errorf("insert reservation: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE credit_holds SET reserved = reserved + $2 WHERE job_id = $1`, hold, r.Max); err != nil {
			return fmt.Errorf("reserve from hold: %w", err)
		}
		return nil
	})
}

// SettleCall charges a reserved call at its reported usage, never more than
// its reservation, and frees the rest of the reservation. It is not fenced:
// the provider billed the call whichever attempt made it. Settling a call
// that is already settled (by a retry, or by a later attempt that found it
// orphaned) changes nothing.
func (s *Store) SettleCall(ctx context.Context, u Usage) (Charge, error) {
	var c Charge
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var state string
		var reserved int64
		var tenantID string
		err := tx.QueryRow(ctx,
			`SELECT u.state, u.reserved, j.tenant_id::text FROM token_usage u JOIN jobs j ON j.id = u.job_id
			 WHERE u.job_id = $1 AND u.attempt = $2 AND u.seq = $3 FOR UPDATE OF u`, u.JobID, u.Attempt, u.Seq).
			Scan(&state, &reserved, &tenantID)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("settle call %d of job %s attempt %d: no reservation: %w", u.Seq, u.JobID, u.Attempt, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("lock reservation: %w", err)
		}
		if state == "reserved" {
			charge := min(max(u.Credits, 0), reserved)
			if _, err := tx.Exec(ctx,
				`UPDATE token_usage SET state = 'settled', model = $4, prompt_tokens = $5, cached_tokens = $6, completion_tokens = $7,
				   credits = $8, billed = $9, seconds = $10, settled_at = now() WHERE job_id = $1 AND attempt = $2 AND seq = $3`,
				u.JobID, u.Attempt, u.Seq, u.Model, u.PromptTokens, u.CachedTokens, u.CompletionTokens, charge, u.Credits, u.Seconds); err != nil {
				return fmt.Errorf("settle usage: %w", err)
			}
			reason := u.Reason
			if reason == "" {
				reason = "llm usage (" + u.Model + ")"
			}
			if err := chargeCall(ctx, tx, tenantID, u.JobID, u.Attempt, u.Seq, reserved, charge, reason); err != nil {
				return err
			}
		}
		hold, err := holdOf(ctx, tx, u.JobID)
		if err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT consumed, amount FROM credit_holds WHERE job_id = $1`, hold).Scan(&c.Consumed, &c.Hold)
	})
	return c, err
}

// holdOf names the job whose credit hold pays for a job's model calls:
// its own, or for a child of a bulk job its parent's (one budget for the
// whole run).
func holdOf(ctx context.Context, tx pgx.Tx, jobID string) (string, error) {
	var hold *string
	err := tx.QueryRow(ctx,
		`SELECT COALESCE(h.job_id, j.parent_id)::text FROM jobs j LEFT JOIN credit_holds h ON h.job_id = j.id WHERE j.id = $1`,
		jobID).Scan(&hold)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && hold == nil) {
		return jobID, nil // no hold: the caller finds none
	}
	if err != nil {
		return "", fmt.Errorf("find the hold of %s: %w", jobID, err)
	}
	return *hold, nil
}

// chargeCall moves one settled call's reservation out of the job's hold:
// charge micro-credits are consumed (a ledger entry, keyed so it can never
// be written twice), the rest of the reservation is freed.
func chargeCall(ctx context.Context, tx pgx.Tx, tenantID, jobID string, attempt, seq int, reserved, charge int64, reason string) error {
	if charge > 0 {
		if _, err := tx.Exec(ctx,
			`INSERT INTO credit_entries (tenant_id, job_id, amount, reason, idempotency_key) VALUES ($1, $2, $3, $4, $5)`,
			tenantID, jobID, -charge, reason, fmt.Sprintf("usage:%s:%d:%d", jobID, attempt, seq)); err != nil {
			return fmt.Errorf("insert charge: %w", err)
		}
	}
	hold, err := holdOf(ctx, tx, jobID)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx,
		`UPDATE credit_holds SET consumed = consumed + $2, reserved = reserved - $3 WHERE job_id = $1`,
		hold, charge, reserved); err != nil {
		return fmt.Errorf("consume hold: %w", err)
	}
	if _, err := tx.Exec(ctx,
		`UPDATE credit_accounts SET balance = balance - $2, held = held - $2 WHERE tenant_id = $1`, tenantID, charge); err != nil {
		return fmt.Errorf("charge account: %w", err)
	}
	return nil
}

// settleOrphans charges every reservation of a job whose reply never came
// back (its attempt died mid-call, or the settle was lost) at its reserved
// amount, so that no call the provider may have billed goes uncharged.
// Reservations of keepAttempt (the live one) are left alone; 0 settles all.
func settleOrphans(ctx context.Context, tx pgx.Tx, jobID string, keepAttempt int) error {
	rows, err := tx.Query(ctx,
		`SELECT u.attempt, u.seq, u.reserved, u.model, j.tenant_id::text FROM token_usage u JOIN jobs j ON j.id = u.job_id
		 WHERE u.job_id = $1 AND u.state = 'reserved' AND u.attempt <> $2 ORDER BY u.attempt, u.seq FOR UPDATE OF u`, jobID, keepAttempt)
	if err != nil {
		return fmt.Errorf("find orphaned reservations: %w", err)
	}
	type orphan struct {
		attempt, seq    int
		reserved        int64
		model, tenantID string
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (orphan, error) {
		var o orphan
		return o, r.Scan(&o.attempt, &o.seq, &o.reserved, &o.model, &o.tenantID)
	})
	if err != nil {
		return fmt.Errorf("read orphaned reservations: %w", err)
	}
	for _, o := range list {
		if _, err := tx.Exec(ctx,
			`UPDATE token_usage SET state = 'settled', credits = reserved, billed = reserved, settled_at = now()
			 WHERE job_id = $1 AND attempt = $2 AND seq = $3`, jobID, o.attempt, o.seq); err != nil {
			return fmt.Errorf("settle orphan: %w", err)
		}
		reason := "llm usage (" + o.model + "), reply lost with its attempt: charged at its reserved maximum"
		if o.model == BrowserTime {
			reason = "browser time, its attempt lost: charged at its reservation"
		}
		if err := chargeCall(ctx, tx, o.tenantID, jobID, o.attempt, o.seq, o.reserved, o.reserved, reason); err != nil {
			return err
		}
	}
	return nil
}
