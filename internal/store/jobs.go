package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// JobFilter selects a page of a tenant's jobs, newest first.
type JobFilter struct {
	After string // the id of the last job of the previous page
	Limit int
	State JobState // "" for any
	Kind  string   // "" for any
}

// Job is a job row. The API shows it through its own view (api.JobView),
// so the row may change without changing the wire.
type Job struct {
	ID         string
	TenantID   string
	Kind       string
	State      JobState
	Input      json.RawMessage
	Result     json.RawMessage
	Checkpoint json.RawMessage
	Script     string
	Error      string
	Attempt    int
	// Crashes counts the attempts that ended with their worker gone
	// (its lease lapsed while it held the job).
	Crashes         int
	CancelRequested bool
	HoldMicro       int64
	ChargedMicro    int64
	// ParentID is the bulk job a child job belongs to ("" for none): a
	// child holds nothing of its own and charges its parent's hold.
	ParentID   string
	CreatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
}

const jobColumns = `j.id::text, j.tenant_id::text, j.kind, j.state, j.input, j.result, j.checkpoint,
	COALESCE(j.script, ''), COALESCE(j.error, ''), j.attempt, j.crashes, j.cancel_requested,
	COALESCE(h.amount, 0),
	COALESCE(h.consumed, (SELECT -sum(e.amount) FROM credit_entries e WHERE e.job_id = j.id AND j.parent_id IS NOT NULL), 0)::bigint,
	COALESCE(j.parent_id::text, ''), j.created_at, j.started_at, j.finished_at`

func scanJob(r pgx.Row) (Job, error) {
	var j Job
	err := r.Scan(&j.ID, &j.TenantID, &j.Kind, &j.State, &j.Input, &j.Result, &j.Checkpoint,
		&j.Script, &j.Error, &j.Attempt, &j.Crashes, &j.CancelRequested, &j.HoldMicro, &j.ChargedMicro,
		&j.ParentID, &j.CreatedAt, &j.StartedAt, &j.FinishedAt)
	return j, err
}

// NewJob is what SubmitJob records.
type NewJob struct {
	TenantID string
	Kind     string
	Input    json.RawMessage
	Hold     int64 // micro-credits reserved for the job
	Subject  string
	// Prepare, if set, produces the input once the job's id is known
	// (secrets are sealed to it).
	Prepare func(jobID string) (json.RawMessage, error)
	// IdempotencyKey, when set, makes a retried submission return the job
	// the first one created (KeyReusedError) instead of creating another.
	IdempotencyKey string
	RequestHash    []byte // what the key was first used for
	// TraceParent is the submitting request's W3C traceparent, carried in
	// the job's messages ("" when tracing is off).
	TraceParent string
	// TestID is the stored test the job replays or repairs, if any.
	TestID string
	// ParentID is the bulk job this one is a child of, if any.
	ParentID string
}

// KeyReusedError answers a submission whose idempotency key was used before:
// JobID is the job the first submission created, and SameRequest says
// whether the request was the same.
type KeyReusedError struct {
	JobID       string
	SameRequest bool
}

// Error describes the reuse.
func (e *KeyReusedError) Error() string {
	if e.SameRequest {
		return "idempotency key already used for job " + e.JobID
	}
	return "idempotency key already used for a different request (job " + e.JobID + ")"
}

// keyReused looks up an idempotency key of a tenant.
func (s *Store) keyReused(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, n NewJob) error {
	var jobID string
	var hash []byte
	err := q.QueryRow(ctx, `SELECT job_id::text, request_hash FROM submit_keys WHERE tenant_id = $1 AND key = $2`,
		n.TenantID, n.IdempotencyKey).Scan(&jobID, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up idempotency key: %w", err)
	}
	return &KeyReusedError{JobID: jobID, SameRequest: bytes.Equal(hash, n.RequestHash)}
}

// SubmitJob inserts the job, places its credit hold and writes its outbox
// row in one transaction. ErrInsufficientCredits means nothing was written.
func (s *Store) SubmitJob(ctx context.Context, n NewJob) (Job, error) {
	id := uuid.NewString()
	if n.Prepare != nil {
		in, err := n.Prepare(id)
		if err != nil {
			return Job{}, fmt.Errorf("prepare job input: %w", err)
		}
		n.Input = in
	}
	if n.IdempotencyKey != "" {
		if err := s.keyReused(ctx, s.db, n); err != nil {
			return Job{}, err
		}
	}
	// One statement, so one round trip and its own transaction: the hold,
	// the job, its hold row, its outbox row and its idempotency key are
	// written together or not at all (foreign keys are checked at its end).
	var j Job
	err := s.db.QueryRow(ctx, submitSQL, n.TenantID, n.Hold, id, n.Kind, n.Input, nullable(n.TestID), nullable(n.ParentID),
		n.Subject, n.IdempotencyKey, n.RequestHash, n.TraceParent).
		Scan(&j.ID, &j.TenantID, &j.Kind, &j.State, &j.Input, &j.Attempt, &j.CancelRequested, &j.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Job{}, ErrInsufficientCredits
	}
	if n.IdempotencyKey != "" && isUniqueViolation(err) {
		// A concurrent submission with the same key won the race.
		if kerr := s.keyReused(ctx, s.db, n); kerr != nil {
			return Job{}, kerr
		}
	}
	if err != nil {
		return Job{}, fmt.Errorf("submit job: %w", err)
	}
	j.HoldMicro = n.Hold
	return j, nil
}

const submitSQL = `WITH hold AS (
  UPDATE credit_accounts SET held = held + $2 WHERE tenant_id = $1 AND balance - held >= $2 RETURNING tenant_id
), job AS (
  INSERT INTO jobs (id, tenant_id, kind, input, test_id, parent_id) SELECT $3, tenant_id, $4, $5, $6, $7 FROM hold
  RETURNING id::text, tenant_id::text, kind, state, input, attempt, cancel_requested, created_at
), held AS (
  INSERT INTO credit_holds (job_id, tenant_id, amount) SELECT $3, tenant_id, $2 FROM hold
), outbox AS (
  INSERT INTO job_outbox (job_id, subject, trace_parent) SELECT $3, $8, NULLIF($11, '') FROM hold
), idem AS (
  INSERT INTO submit_keys (tenant_id, key, request_hash, job_id) SELECT tenant_id, $9, $10, $3 FROM hold WHERE $9::text <> ''
)
SELECT * FROM job`

// OutboxItem is a job message to publish. Seq numbers the job's publishes:
// a parked job is published again under a new message id once it may run,
// because the stream drops a repeated id inside its duplicates window.
type OutboxItem struct {
	JobID   string
	Subject string
	Seq     int
	// TraceParent continues the submitting request's trace in the worker.
	TraceParent string
}

// outboxColumns and scanOutbox read outbox rows aliased o.
const outboxColumns = `o.job_id::text, o.subject, o.seq, COALESCE(o.trace_parent, '')`

func scanOutbox(r pgx.CollectableRow) (OutboxItem, error) {
	var o OutboxItem
	return o, r.Scan(&o.JobID, &o.Subject, &o.Seq, &o.TraceParent)
}

// MarkPublished records that the jobs' messages reached the stream.
func (s *Store) MarkPublished(ctx context.Context, jobIDs ...string) error {
	if len(jobIDs) == 0 {
		return nil
	}
	_, err := s.db.Exec(ctx, `UPDATE job_outbox SET sent_at = now() WHERE job_id = ANY($1::uuid[]) AND sent_at IS NULL`, jobIDs)
	if err != nil {
		return fmt.Errorf("mark %d job(s) published: %w", len(jobIDs), err)
	}
	return nil
}

// Unpublished lists jobs whose message may be missing from the stream:
// outbox rows older than age that were never confirmed, queued jobs
// confirmed longer than stale ago, and running jobs whose lease expired more
// than stale ago (their message was lost with a crashed worker). Parked jobs
// wait on purpose and are not listed. Each listed job is not listed again
// before a backoff that doubles with every republish (age, 2×age, … at most
// 32×age), so a job that stays unclaimed is not republished every tick.
// A stale of zero or less lists only unconfirmed publishes.
func (s *Store) Unpublished(ctx context.Context, age, stale time.Duration, limit int) ([]OutboxItem, error) {
	rows, err := s.db.Query(ctx,
		`WITH due AS (
		   SELECT o.job_id FROM job_outbox o JOIN jobs j ON j.id = o.job_id
		   WHERE o.next_check <= now() AND (
		     (j.state = 'queued' AND NOT j.parked AND (
		       (o.sent_at IS NULL AND o.created_at < now() - $1::interval) OR
		       ($2::interval > interval '0' AND o.sent_at IS NOT NULL AND o.sent_at < now() - $2::interval)))
		     OR ($2::interval > interval '0' AND j.state = 'running' AND j.lease_until < now() - $2::interval))
		   ORDER BY o.created_at LIMIT $3 FOR UPDATE OF o SKIP LOCKED)
		 UPDATE job_outbox o SET republished = o.republished + 1,
		   next_check = now() + $1::interval * power(2, LEAST(o.republished, 5))
		 FROM due WHERE o.job_id = due.job_id
		 RETURNING `+outboxColumns, age, stale, limit)
	if err != nil {
		return nil, fmt.Errorf("read outbox: %w", err)
	}
	return pgx.CollectRows(rows, scanOutbox)
}

// wakeParked unparks as many of a tenant's parked jobs as it has free
// running slots (at most most of them, when most is not negative), oldest
// first, and returns them to be published under a new message id. The
// tenant lock serialises it with claims, so a job cannot be parked just
// after the last slot was freed and stay parked.
func wakeParked(ctx context.Context, tx pgx.Tx, tenantID string, most int) ([]OutboxItem, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, tenantID); err != nil {
		return nil, fmt.Errorf("tenant lock: %w", err)
	}
	rows, err := tx.Query(ctx,
		`WITH free AS (
		   SELECT GREATEST(t.max_running - (SELECT count(*) FROM jobs r
		     WHERE r.tenant_id = t.id AND r.state = 'running' AND r.lease_until > now()), 0) AS n
		   FROM tenants t WHERE t.id = $1),
		 woken AS (
		   UPDATE jobs SET parked = false, updated_at = now() WHERE id IN (
		     SELECT id FROM jobs WHERE tenant_id = $1 AND parked AND state = 'queued'
		     ORDER BY created_at, id
		     LIMIT (SELECT CASE WHEN $2::int < 0 THEN n ELSE LEAST(n, $2::int) END FROM free) FOR UPDATE SKIP LOCKED)
		   RETURNING id)
		 UPDATE job_outbox o SET seq = o.seq + 1, sent_at = NULL, republished = 0, next_check = now()
		 FROM woken WHERE o.job_id = woken.id
		 RETURNING `+outboxColumns, tenantID, most)
	if err != nil {
		return nil, fmt.Errorf("wake parked jobs: %w", err)
	}
	return pgx.CollectRows(rows, scanOutbox)
}

// WakeParked unparks parked jobs of every tenant that has free running
// slots (a slot can also free without a finish: a worker died and its
// lease lapsed) and returns them to be published.
func (s *Store) WakeParked(ctx context.Context) ([]OutboxItem, error) {
	return s.wakeEvery(ctx, "", -1)
}

// WakeYielded unparks the oldest parked job of every tenant but except
// that has a free running slot, and returns them to be published: a job
// that yielded its slot to another tenant's (ClaimJob's fair share) may
// take one again once any job ends. One each, so that a tenant with many
// jobs waiting sends one back to the queue, not all of them.
func (s *Store) WakeYielded(ctx context.Context, except string) ([]OutboxItem, error) {
	return s.wakeEvery(ctx, except, 1)
}

// wakeEvery unparks, tenant by tenant (each in its own transaction under
// its own lock, so that two wakes never wait on each other's), at most
// each (all its free slots when negative) parked jobs of every tenant but
// except.
func (s *Store) wakeEvery(ctx context.Context, except string, each int) ([]OutboxItem, error) {
	rows, err := s.db.Query(ctx, `SELECT DISTINCT tenant_id::text FROM jobs WHERE parked AND state = 'queued' AND tenant_id::text <> $1`, except)
	if err != nil {
		return nil, fmt.Errorf("find parked tenants: %w", err)
	}
	tenants, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var all []OutboxItem
	for _, t := range tenants {
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			items, err := wakeParked(ctx, tx, t, each)
			all = append(all, items...)
			return err
		})
		if err != nil {
			return all, err
		}
	}
	return all, nil
}

// GetJob returns a tenant's job; another tenant's job is ErrNotFound.
func (s *Store) GetJob(ctx context.Context, tenantID, id string) (Job, error) {
	if _, err := uuid.Parse(id); err != nil {
		return Job{}, ErrNotFound
	}
	j, err := scanJob(s.db.QueryRow(ctx,
		`SELECT `+jobColumns+` FROM jobs j LEFT JOIN credit_holds h ON h.job_id = j.id
		 WHERE j.id = $1 AND j.tenant_id = $2`, id, tenantID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Job{}, ErrNotFound
	}
	if err != nil {
		return Job{}, fmt.Errorf("get job: %w", err)
	}
	return j, nil
}

// ListJobs returns a tenant's jobs, newest first, starting after the cursor
// (the id of the last job of the previous page; empty for the first page).
func (s *Store) ListJobs(ctx context.Context, tenantID string, f JobFilter) ([]Job, error) {
	q := `SELECT ` + jobColumns + ` FROM jobs j LEFT JOIN credit_holds h ON h.job_id = j.id WHERE j.tenant_id = $1`
	args := []any{tenantID, f.Limit}
	if f.After != "" {
		if _, err := uuid.Parse(f.After); err != nil {
			return nil, ErrNotFound
		}
		args = append(args, f.After)
		q += fmt.Sprintf(` AND (j.created_at, j.id) < (SELECT created_at, id FROM jobs WHERE id = $%d AND tenant_id = $1)`, len(args))
	}
	if f.State != "" {
		args = append(args, f.State)
		q += fmt.Sprintf(` AND j.state = $%d`, len(args))
	}
	if f.Kind != "" {
		args = append(args, f.Kind)
		q += fmt.Sprintf(` AND j.kind = $%d`, len(args))
	}
	q += ` ORDER BY j.created_at DESC, j.id DESC LIMIT $2`
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Job, error) { return scanJob(r) })
}

// RequestCancel cancels a queued job at once (releasing its hold) or flags a
// running one so its worker stops between iterations. Cancelling a bulk job
// cancels its children that have not started and flags the running ones;
// it ends when the last of them does.
func (s *Store) RequestCancel(ctx context.Context, tenantID, id string) (Job, error) {
	if _, err := uuid.Parse(id); err != nil {
		return Job{}, ErrNotFound
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		parentID, err := lockParentOf(ctx, tx, id)
		if err != nil {
			return err
		}
		var state JobState
		err = tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1 AND tenant_id = $2 FOR UPDATE`, id, tenantID).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("lock job: %w", err)
		}
		switch state {
		case JobStateQueued:
			if _, err := end(ctx, tx, theQueuedJob, id, cancelledBeforeStart("cancelled before it started")); err != nil {
				return fmt.Errorf("cancel job: %w", err)
			}
			if err := releaseHold(ctx, tx, id); err != nil {
				return err
			}
			if parentID != "" {
				_, err := settleParent(ctx, tx, parentID, JobStateCancelled)
				return err
			}
			return nil
		case JobStateRunning, JobStateWaiting:
			if _, err := tx.Exec(ctx, `UPDATE jobs SET cancel_requested = true, updated_at = now() WHERE id = $1`, id); err != nil {
				return fmt.Errorf("flag job cancelled: %w", err)
			}
			if state == JobStateWaiting {
				if err := cancelChildren(ctx, tx, id); err != nil {
					return err
				}
				_, err := settleParent(ctx, tx, id, "")
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Job{}, err
	}
	return s.GetJob(ctx, tenantID, id)
}

// Claim is what a worker learns when it claims a job.
type Claim struct {
	JobID      string
	TenantID   string
	Kind       string
	Attempt    int
	Input      json.RawMessage
	Checkpoint json.RawMessage
	CreatedAt  time.Time
	ClaimedAt  time.Time
	// Crashes counts the job's attempts that ended with their worker's
	// death (the lease lapsed while it ran; a hand-back is not one) while
	// it was the only job that worker held, this claim's predecessor
	// included: a death shared with other jobs blames none of them.
	Crashes int
	// RunAlone says the job's worker died while running it (alone or
	// beside others): this attempt runs with no other job beside it, so
	// that a death now is its own.
	RunAlone bool
}

// LeasedError says how long another attempt still holds the job (by the
// database's clock, so workers' clocks do not matter).
type LeasedError struct{ Remaining time.Duration }

// Error says how long the lease has left.
func (e *LeasedError) Error() string { return fmt.Sprintf("job is leased for another %s", e.Remaining) }

// Unwrap makes errors.Is(err, ErrLeased) true.
func (e *LeasedError) Unwrap() error { return ErrLeased }

// ClaimJob moves a queued job (or a running one whose lease expired) to
// running under a new attempt. ErrStale means the message is obsolete and
// can be acknowledged; a LeasedError means another attempt may still be
// alive, so the message must come back after the lease; ErrTenantBusy means
// the tenant is at its running-jobs cap, or yields the slot to a tenant
// running fewer whose job waits (fair share): the job is parked and its
// message can be acknowledged, because it is published again when a slot
// frees.
// Reservations left by earlier attempts that died mid-call are charged.
// workerID names the worker process (a restarted worker is another one):
// a death is blamed by which jobs that process held.
func (s *Store) ClaimJob(ctx context.Context, jobID, workerID string, lease time.Duration) (Claim, error) {
	var c Claim
	parked := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var state JobState
		var leaseLeft float64 // seconds
		var maxRunning int
		var cancelRequested bool
		var holder *string
		err := tx.QueryRow(ctx,
			`SELECT j.tenant_id::text, j.state, COALESCE(EXTRACT(EPOCH FROM (j.lease_until - now())), 0)::float8, t.max_running,
			   j.cancel_requested, j.worker_id
			 FROM jobs j JOIN tenants t ON t.id = j.tenant_id WHERE j.id = $1 FOR UPDATE OF j`, jobID).
			Scan(&c.TenantID, &state, &leaseLeft, &maxRunning, &cancelRequested, &holder)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrStale
		}
		if err != nil {
			return fmt.Errorf("lock job: %w", err)
		}
		if state == JobStateRunning && leaseLeft > 0 {
			return &LeasedError{Remaining: time.Duration(leaseLeft * float64(time.Second))}
		}
		if state == JobStateRunning && cancelRequested {
			// Its tenant cancelled it and its attempt stopped (the worker
			// died, or handed it back): a cancelled job never starts again.
			return ErrCancelledAbandoned
		}
		crashed, crashedOn := 0, ""
		if state == JobStateRunning && holder != nil {
			// The lease lapsed while a worker held it: the worker died (a
			// hand-back clears the holder). It counts against this job
			// only if the job was alone in it: the jobs that died with it
			// are still held by it, or were claimed since with it named.
			crashedOn = *holder
			var shared bool
			if err := tx.QueryRow(ctx,
				`SELECT EXISTS (SELECT 1 FROM jobs WHERE id <> $1 AND ((worker_id = $2 AND state = 'running') OR crashed_on = $2))`,
				jobID, crashedOn).Scan(&shared); err != nil {
				return fmt.Errorf("jobs that died beside it: %w", err)
			}
			if !shared {
				crashed = 1
			}
		}
		if state == JobStateQueued {
			// Serialise claims per tenant so the running count cannot race.
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, c.TenantID); err != nil {
				return fmt.Errorf("tenant lock: %w", err)
			}
			var running int
			if err := tx.QueryRow(ctx,
				`SELECT count(*) FROM jobs WHERE tenant_id = $1 AND state = 'running' AND lease_until > now()`,
				c.TenantID).Scan(&running); err != nil {
				return fmt.Errorf("count running: %w", err)
			}
			yield := false
			if running > 0 && running < maxRunning {
				// Fair share: a tenant already running yields the slot to
				// one running fewer whose job waits (it is woken when a
				// job ends), so one tenant's many files do not hold every
				// slot while another's wait; running jobs are never stopped.
				if err := tx.QueryRow(ctx,
					`WITH waiting AS (SELECT DISTINCT tenant_id FROM jobs WHERE state = 'queued' AND NOT parked AND tenant_id <> $1)
					 SELECT EXISTS (SELECT 1 FROM waiting w JOIN tenants u ON u.id = w.tenant_id
					   WHERE (SELECT count(*) FROM jobs r WHERE r.tenant_id = w.tenant_id AND r.state = 'running' AND r.lease_until > now())
					     < LEAST($2, u.max_running))`, c.TenantID, running).Scan(&yield); err != nil {
					return fmt.Errorf("fair share: %w", err)
				}
			}
			if running >= maxRunning || yield {
				if _, err := tx.Exec(ctx, `UPDATE jobs SET parked = true, updated_at = now() WHERE id = $1`, jobID); err != nil {
					return fmt.Errorf("park job: %w", err)
				}
				parked = true
				return nil
			}
		}
		// The clock, not now(): the transaction may have begun before the
		// job whose slot this one takes finished.
		err = tx.QueryRow(ctx,
			`UPDATE jobs SET state = 'running', attempt = attempt + 1, worker_id = $2, crashes = crashes + $4,
			   crashed_on = COALESCE(NULLIF($5, ''), crashed_on), run_alone = run_alone OR $5 <> '',
			   lease_until = clock_timestamp() + $3::interval, started_at = COALESCE(started_at, clock_timestamp()), updated_at = now()
			 WHERE id = $1 AND (state = 'queued' OR (state = 'running' AND lease_until < now()))
			 RETURNING kind, attempt, input, checkpoint, created_at, clock_timestamp(), crashes, run_alone`, jobID, workerID, lease, crashed, crashedOn).
			Scan(&c.Kind, &c.Attempt, &c.Input, &c.Checkpoint, &c.CreatedAt, &c.ClaimedAt, &c.Crashes, &c.RunAlone)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrStale
		}
		if err != nil {
			return fmt.Errorf("claim job: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE jobs SET parked = false WHERE id = $1 AND parked`, jobID); err != nil {
			return fmt.Errorf("unpark job: %w", err)
		}
		// A later loss of its message starts the republish backoff afresh.
		if _, err := tx.Exec(ctx, `UPDATE job_outbox SET republished = 0, next_check = now() WHERE job_id = $1 AND republished > 0`, jobID); err != nil {
			return fmt.Errorf("reset republish backoff: %w", err)
		}
		c.JobID = jobID
		return settleOrphans(ctx, tx, jobID, c.Attempt)
	})
	if err == nil && parked {
		return c, ErrTenantBusy
	}
	return c, err
}

// ExtendLease pushes a running job's lease forward and reports whether
// cancellation was requested.
func (s *Store) ExtendLease(ctx context.Context, jobID string, attempt int, lease time.Duration) (cancel bool, err error) {
	err = s.db.QueryRow(ctx,
		`UPDATE jobs SET lease_until = now() + $3::interval, updated_at = now()
		 WHERE id = $1 AND attempt = $2 AND state = 'running' RETURNING cancel_requested`,
		jobID, attempt, lease).Scan(&cancel)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, ErrFenced
	}
	if err != nil {
		return false, fmt.Errorf("extend lease: %w", err)
	}
	return cancel, nil
}

// SaveCheckpoint stores the progress a later attempt resumes from.
func (s *Store) SaveCheckpoint(ctx context.Context, jobID string, attempt int, checkpoint json.RawMessage) error {
	tag, err := s.db.Exec(ctx,
		`UPDATE jobs SET checkpoint = $3, updated_at = now() WHERE id = $1 AND attempt = $2 AND state = 'running'`,
		jobID, attempt, checkpoint)
	if err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrFenced
	}
	return nil
}

// Finish is a job's terminal outcome.
type Finish struct {
	JobID   string
	Attempt int
	State   JobState
	Result  json.RawMessage
	Script  string
	Error   string
	Test    *TestRecord // stored in the tenant's suite with the result, when set
	// A replay or repair of a stored test: the test, what the replay found
	// (its verdict) and the version a repair proposes (nil: none).
	TestID     string
	TestStatus string
	Proposal   *Proposal
	// Fingerprints is the manifest, with the fingerprints a passing replay
	// took, to keep for the replayed version (TestVersion) of the test.
	Fingerprints json.RawMessage
	TestVersion  int
}

// FinishJob writes the result, charges any reservation left open, releases
// what is left of the hold and sets the terminal state in one transaction,
// fenced by attempt. It returns the parked jobs the freed slot woke (the
// tenant's own, and one each of others that yielded a slot), for the
// caller to publish (if it cannot, the reconciler will).
func (s *Store) FinishJob(ctx context.Context, f Finish) ([]OutboxItem, error) {
	if !f.State.Terminal() {
		return nil, fmt.Errorf("finish job %s: %q is not a terminal state", f.JobID, f.State)
	}
	var woken []OutboxItem
	var freedBy string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		parentID, err := lockParentOf(ctx, tx, f.JobID)
		if err != nil {
			return err
		}
		tenantID, err := lockRunningAttempt(ctx, tx, f.JobID, f.Attempt)
		if err != nil {
			return err
		}
		if f.TestID != "" && f.TestStatus != "" {
			if err := setTestStatus(ctx, tx, tenantID, f.TestID, f.TestStatus); err != nil {
				return err
			}
		}
		if len(f.Fingerprints) > 0 && f.TestID != "" {
			if err := captureFingerprints(ctx, tx, tenantID, f.TestID, f.TestVersion, f.Fingerprints); err != nil {
				return err
			}
		}
		if f.Proposal != nil {
			if err := propose(ctx, tx, tenantID, f.JobID, *f.Proposal); err != nil {
				return err
			}
		}
		if f.Test != nil && f.State != JobStateCancelled {
			if err := saveTest(ctx, tx, tenantID, f); err != nil {
				return fmt.Errorf("save test: %w", err)
			}
		}
		if _, err := end(ctx, tx, theJob, f.JobID, finished(f)); err != nil {
			return fmt.Errorf("write result: %w", err)
		}
		if err := settleOrphans(ctx, tx, f.JobID, 0); err != nil {
			return err
		}
		if err := releaseHold(ctx, tx, f.JobID); err != nil {
			return err
		}
		var resumed []OutboxItem
		if parentID != "" {
			if resumed, err = settleParent(ctx, tx, parentID, f.State); err != nil {
				return err
			}
		}
		woken, err = wakeParked(ctx, tx, tenantID, -1)
		woken = append(woken, resumed...)
		freedBy = tenantID
		return err
	})
	if err != nil {
		return woken, err
	}
	// The freed slot may be another tenant's turn: a job that yielded to
	// this one's is woken, after the commit and under its own tenant's
	// lock. The job is finished whatever becomes of it; what it could not
	// wake the reconciler wakes.
	if yielded, err := s.WakeYielded(ctx, freedBy); err == nil {
		woken = append(woken, yielded...)
	}
	return woken, nil
}

// FailUndeliverable ends a job that can no longer be delivered (MaxDeliver
// reached) as failed with reason, releasing its hold. A finished job, or one
// a live attempt still holds, is left as it is.
func (s *Store) FailUndeliverable(ctx context.Context, jobID, reason string) error {
	return s.endUnheld(ctx, jobID, undeliverable(reason))
}

// EndAbandoned ends a job no live attempt holds whose cancellation its
// tenant asked for (ClaimJob's ErrCancelledAbandoned) as cancelled,
// releasing its hold, without starting it again. A finished job, or one a
// live attempt still holds, is left as it is.
func (s *Store) EndAbandoned(ctx context.Context, jobID string) error {
	return s.endUnheld(ctx, jobID, ending{to: JobStateCancelled, cancel: true,
		reason: "cancelled: its last attempt stopped before it ended, and a cancelled job is not started again"})
}

// endUnheld moves a job no live attempt holds into e's terminal state,
// settling what its attempts reserved, its hold and its parent.
func (s *Store) endUnheld(ctx context.Context, jobID string, e ending) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		parentID, err := lockParentOf(ctx, tx, jobID)
		if err != nil {
			return err
		}
		n, err := end(ctx, tx, theUnheldJob, jobID, e)
		if err != nil {
			return fmt.Errorf("end job: %w", err)
		}
		if n == 0 {
			return nil
		}
		if err := settleOrphans(ctx, tx, jobID, 0); err != nil {
			return err
		}
		if err := releaseHold(ctx, tx, jobID); err != nil {
			return err
		}
		if parentID != "" {
			// A parent this resumes is published by the reconciler.
			_, err := settleParent(ctx, tx, parentID, e.to)
			return err
		}
		return nil
	})
}

// ReleaseLease lets another worker claim a running job at once (used when a
// draining worker hands its job back).
func (s *Store) ReleaseLease(ctx context.Context, jobID string, attempt int) error {
	_, err := s.db.Exec(ctx,
		`UPDATE jobs SET lease_until = now() - interval '1 second', worker_id = NULL, updated_at = now()
		 WHERE id = $1 AND attempt = $2 AND state = 'running'`, jobID, attempt)
	if err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	return nil
}

// WaitingForMessage counts the jobs that should have a message in the
// stream: queued and not parked, or running with a lapsed lease.
func (s *Store) WaitingForMessage(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRow(ctx,
		`SELECT count(*) FROM jobs WHERE (state = 'queued' AND NOT parked) OR (state = 'running' AND lease_until < now())`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count waiting jobs: %w", err)
	}
	return n, nil
}

// ForgetSubmitKeys deletes idempotency keys older than age (they are kept
// for at least a day; the sweeper passes two).
func (s *Store) ForgetSubmitKeys(ctx context.Context, age time.Duration) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM submit_keys WHERE created_at < now() - $1::interval`, age)
	if err != nil {
		return 0, fmt.Errorf("forget idempotency keys: %w", err)
	}
	return tag.RowsAffected(), nil
}

// nullable is nil for an empty string, for optional uuid columns.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
