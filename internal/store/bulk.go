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

// Selection picks tests of a tenant's suite: the listed ones, those with
// any of the tags, or (both empty) all of them.
type Selection struct {
	TestIDs []string `json:"test_ids,omitempty"`
	Tags    []string `json:"tags,omitempty"`
}

// SelectTests returns the selected tests that have a script to replay, by
// name, and the ids of listed tests that are not the tenant's.
func (s *Store) SelectTests(ctx context.Context, tenantID string, sel Selection) (tests []Test, missing []string, err error) {
	q := `SELECT id::text, name, tags, version, scenario, COALESCE(script, ''), manifest, COALESCE(last_status, ''), updated_at
		FROM tests WHERE tenant_id = $1`
	args := []any{tenantID}
	switch {
	case len(sel.TestIDs) > 0:
		var ids []string
		for _, id := range sel.TestIDs {
			if _, err := uuid.Parse(id); err == nil {
				ids = append(ids, id)
			}
		}
		q += ` AND id = ANY($2::uuid[])`
		args = append(args, ids)
	case len(sel.Tags) > 0:
		q += ` AND tags && $2::text[]`
		args = append(args, sel.Tags)
	}
	rows, err := s.db.Query(ctx, q+` ORDER BY name, id`, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("select tests: %w", err)
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Test, error) {
		var t Test
		err := r.Scan(&t.ID, &t.Name, &t.Tags, &t.Version, &t.Scenario, &t.Script, &t.Manifest, &t.LastStatus, &t.UpdatedAt)
		return t, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("select tests: %w", err)
	}
	found := map[string]bool{}
	for _, t := range all {
		found[t.ID] = true
		if t.Script != "" {
			tests = append(tests, t)
		}
	}
	for _, id := range sel.TestIDs {
		if !found[id] {
			missing = append(missing, id)
		}
	}
	return tests, missing, nil
}

// Child is one job a bulk job fans out: for one stored test, or (Key) one
// part of the parent's work such as an exploration's journey.
type Child struct {
	TestID  string
	Key     string
	Kind    string
	Subject string
	// Input produces the child's input once its id is known (secrets are
	// sealed to it).
	Input func(jobID string) (json.RawMessage, error)
}

// FanOut creates a running bulk job's children, one per test, moves the
// parent to waiting and returns the children's messages still to publish.
// Children are keyed by parent and test, so a fan-out retried after a crash
// creates none twice and publishes what the crashed one may not have.
// Children draw from the parent's credit hold and have none of their own.
// A parent whose children have all ended (or that has none) ends at once;
// one whose cancellation was requested cancels the children not started.
func (s *Store) FanOut(ctx context.Context, parentID string, attempt int, children []Child) ([]OutboxItem, error) {
	return s.fanOut(ctx, parentID, attempt, children, false)
}

// FanOutThenResume is FanOut for a parent with work of its own after its
// children's: once the last child ends, the parent is queued again (its
// message returned to be published) instead of ending, still holding its
// credit hold; its next attempt finds its children ended (Children).
func (s *Store) FanOutThenResume(ctx context.Context, parentID string, attempt int, children []Child) ([]OutboxItem, error) {
	return s.fanOut(ctx, parentID, attempt, children, true)
}

func (s *Store) fanOut(ctx context.Context, parentID string, attempt int, children []Child, resumes bool) ([]OutboxItem, error) {
	var out []OutboxItem
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tenantID, err := lockRunningAttempt(ctx, tx, parentID, attempt)
		if err != nil {
			return err
		}
		for _, c := range children {
			id := uuid.NewString()
			in, err := c.Input(id)
			if err != nil {
				return fmt.Errorf("prepare child for test %s: %w", c.TestID, err)
			}
			// Either unique key (parent and test, parent and key) makes a retried fan-out a no-op.
			tag, err := tx.Exec(ctx,
				`INSERT INTO jobs (id, tenant_id, kind, input, test_id, parent_id, child_key)
				 VALUES ($1, $2, $3, $4, NULLIF($5, '')::uuid, $6, NULLIF($7, '')) ON CONFLICT DO NOTHING`,
				id, tenantID, c.Kind, in, c.TestID, parentID, c.Key)
			if err != nil {
				return fmt.Errorf("insert child for test %s: %w", c.TestID, err)
			}
			if tag.RowsAffected() == 1 {
				// A child continues its parent's trace.
				if _, err := tx.Exec(ctx, `INSERT INTO job_outbox (job_id, subject, trace_parent)
					VALUES ($1, $2, (SELECT trace_parent FROM job_outbox WHERE job_id = $3))`, id, c.Subject, parentID); err != nil {
					return fmt.Errorf("insert child outbox: %w", err)
				}
			}
		}
		var cancel bool
		if err := tx.QueryRow(ctx,
			`UPDATE jobs SET state = 'waiting', resumes = $2, lease_until = NULL, updated_at = now() WHERE id = $1 RETURNING cancel_requested`,
			parentID, resumes).Scan(&cancel); err != nil {
			return fmt.Errorf("parent waits: %w", err)
		}
		if cancel {
			if err := cancelChildren(ctx, tx, parentID); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx,
			`SELECT `+outboxColumns+` FROM job_outbox o JOIN jobs c ON c.id = o.job_id
			 WHERE c.parent_id = $1 AND c.state = 'queued' AND o.sent_at IS NULL ORDER BY c.created_at, c.id`, parentID)
		if err != nil {
			return fmt.Errorf("children to publish: %w", err)
		}
		if out, err = pgx.CollectRows(rows, scanOutbox); err != nil {
			return fmt.Errorf("children to publish: %w", err)
		}
		resumed, err := settleParent(ctx, tx, parentID, "")
		out = append(out, resumed...)
		return err
	})
	return out, err
}

// cancelChildren cancels a parent's children that have not started and asks
// the running ones to stop.
func cancelChildren(ctx context.Context, tx pgx.Tx, parentID string) error {
	if _, err := end(ctx, tx, queuedChildrenOf, parentID, cancelledBeforeStart("cancelled with its suite before it started")); err != nil {
		return fmt.Errorf("cancel queued children: %w", err)
	}
	if _, err := tx.Exec(ctx,
		`UPDATE jobs SET cancel_requested = true, updated_at = now() WHERE parent_id = $1 AND state = 'running'`, parentID); err != nil {
		return fmt.Errorf("cancel running children: %w", err)
	}
	return nil
}

// lockParentOf locks the parent of a child job first, so that a parent and
// its children are always locked in the same order (parent, then child),
// and returns its id ("" for a job without a parent).
func lockParentOf(ctx context.Context, tx pgx.Tx, jobID string) (string, error) {
	var parent *string
	err := tx.QueryRow(ctx, `SELECT parent_id::text FROM jobs WHERE id = $1`, jobID).Scan(&parent)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && parent == nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find parent of %s: %w", jobID, err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, *parent); err != nil {
		return "", fmt.Errorf("lock parent %s: %w", *parent, err)
	}
	return *parent, nil
}

// settleParent ends a waiting bulk job once none of its children is queued
// or running, storing the report of their outcomes and releasing its hold;
// a parent that resumes is queued again instead, and its message is
// returned to be published (the reconciler publishes it if it is not).
// childState is the state the child that just ended reached: a child that
// ran out of the shared budget stops the children not started yet.
func settleParent(ctx context.Context, tx pgx.Tx, parentID string, childState JobState) ([]OutboxItem, error) {
	if childState == JobStateBudgetExhausted {
		if _, err := end(ctx, tx, queuedChildrenOf, parentID, budgetSpent()); err != nil {
			return nil, fmt.Errorf("stop children: %w", err)
		}
	}
	var state JobState
	var kind string
	var cancel, resumes bool
	if err := tx.QueryRow(ctx, `SELECT state, kind, cancel_requested, resumes FROM jobs WHERE id = $1 FOR UPDATE`, parentID).
		Scan(&state, &kind, &cancel, &resumes); err != nil {
		return nil, fmt.Errorf("lock parent: %w", err)
	}
	if state != JobStateWaiting {
		return nil, nil
	}
	// Most children end while others still run: count them before reading
	// the whole report (diffs included).
	var open int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE parent_id = $1 AND state IN ('queued', 'running')`, parentID).
		Scan(&open); err != nil {
		return nil, fmt.Errorf("count open children: %w", err)
	}
	if open > 0 {
		return nil, nil
	}
	if resumes && !cancel {
		return resume(ctx, tx, parentID)
	}
	rep, err := bulkReport(ctx, tx, parentID)
	if err != nil {
		return nil, err
	}
	final, msg := rep.settled(kind, cancel)
	result, err := json.Marshal(map[string]any{"suite": rep})
	if err != nil {
		return nil, fmt.Errorf("encode suite report: %w", err)
	}
	if _, err := end(ctx, tx, theJob, parentID, parentSettled(final, result, msg)); err != nil {
		return nil, fmt.Errorf("finish parent: %w", err)
	}
	return nil, releaseHold(ctx, tx, parentID)
}

// settled is the state a bulk job ends in once its children have, and
// why when it is not success.
func (rep BulkReport) settled(kind string, cancel bool) (JobState, string) {
	switch {
	case cancel:
		return JobStateCancelled, "cancelled"
	case rep.States[JobStateBudgetExhausted] > 0:
		return JobStateBudgetExhausted, "the suite's credit budget was spent before every test had a verdict"
	case kind == "project_run" && rep.States[JobStateFailed] > 0:
		// A run of a project is red when a file of it is, as the runner's
		// own exit says (a file's job fails when a test of it does).
		return JobStateFailed, fmt.Sprintf("%d of %d files failed", rep.States[JobStateFailed], len(rep.Children))
	}
	return JobStateSucceeded, ""
}

// SettledReport is a resumed bulk job's report of its ended children and
// the state it ends in, as a parent that does not resume would have
// ended: what it finishes with after its own work.
func (s *Store) SettledReport(ctx context.Context, tenantID, parentID string) (BulkReport, JobState, string, error) {
	var kind string
	var cancel bool
	err := s.db.QueryRow(ctx, `SELECT kind, cancel_requested FROM jobs WHERE id = $1 AND tenant_id = $2`, parentID, tenantID).Scan(&kind, &cancel)
	if errors.Is(err, pgx.ErrNoRows) {
		return BulkReport{}, "", "", ErrNotFound
	}
	if err != nil {
		return BulkReport{}, "", "", fmt.Errorf("read the bulk job: %w", err)
	}
	rep, err := bulkReport(ctx, s.db, parentID)
	if err != nil {
		return BulkReport{}, "", "", err
	}
	final, msg := rep.settled(kind, cancel)
	return rep, final, msg, nil
}

// resume queues a parent whose children have all ended for its own next
// attempt, with its message to publish again.
func resume(ctx context.Context, tx pgx.Tx, parentID string) ([]OutboxItem, error) {
	if _, err := tx.Exec(ctx,
		`UPDATE jobs SET state = 'queued', resumes = false, worker_id = NULL, lease_until = NULL, updated_at = now() WHERE id = $1`,
		parentID); err != nil {
		return nil, fmt.Errorf("resume parent: %w", err)
	}
	rows, err := tx.Query(ctx,
		`UPDATE job_outbox o SET seq = o.seq + 1, sent_at = NULL, republished = 0, next_check = now()
		 WHERE o.job_id = $1 RETURNING `+outboxColumns, parentID)
	if err != nil {
		return nil, fmt.Errorf("resume parent's message: %w", err)
	}
	return pgx.CollectRows(rows, scanOutbox)
}

// BulkReport sums up a bulk job's children: what each test's run found,
// the tokens and credits they spent and the versions repairs proposed.
type BulkReport struct {
	Tests        int              `json:"tests"`
	Done         int              `json:"done"`
	Verdicts     map[string]int   `json:"verdicts"`
	States       map[JobState]int `json:"states"`
	Tokens       int64            `json:"tokens"`
	CreditsMicro int64            `json:"credits_micro"`
	Children     []ChildReport    `json:"children"`
}

// ChildReport is one test's line of a bulk report.
type ChildReport struct {
	JobID         string   `json:"job_id"`
	TestID        string   `json:"test_id"`
	TestName      string   `json:"test_name"`
	State         JobState `json:"state"`
	Verdict       string   `json:"verdict,omitempty"`
	Error         string   `json:"error,omitempty"`
	Tokens        int64    `json:"tokens"`
	CreditsMicro  int64    `json:"credits_micro"`
	Version       int      `json:"proposed_version,omitempty"`
	VersionStatus string   `json:"version_status,omitempty"`
	Diff          string   `json:"diff,omitempty"`
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func bulkReport(ctx context.Context, q querier, parentID string) (BulkReport, error) {
	rows, err := q.Query(ctx,
		`SELECT c.id::text, COALESCE(c.test_id::text, ''), COALESCE(t.name, c.input->>'goal', NULLIF(array_to_string(ARRAY(SELECT jsonb_array_elements_text(c.input->'files')), ', '), ''), ''), c.state, COALESCE(c.verdict, ''), COALESCE(c.error, ''),
		   COALESCE((SELECT sum(u.prompt_tokens + u.completion_tokens) FROM token_usage u WHERE u.job_id = c.id), 0)::bigint,
		   COALESCE((SELECT -sum(e.amount) FROM credit_entries e WHERE e.job_id = c.id), 0)::bigint,
		   COALESCE(v.version, 0), COALESCE(v.status, ''), COALESCE(v.diff, '')
		 FROM jobs c LEFT JOIN tests t ON t.id = c.test_id
		 LEFT JOIN test_versions v ON v.test_id = c.test_id AND v.created_by_job = c.id
		 WHERE c.parent_id = $1 ORDER BY t.name, c.child_key, c.id`, parentID)
	if err != nil {
		return BulkReport{}, fmt.Errorf("read children: %w", err)
	}
	children, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ChildReport, error) {
		var c ChildReport
		err := r.Scan(&c.JobID, &c.TestID, &c.TestName, &c.State, &c.Verdict, &c.Error, &c.Tokens, &c.CreditsMicro,
			&c.Version, &c.VersionStatus, &c.Diff)
		return c, err
	})
	if err != nil {
		return BulkReport{}, fmt.Errorf("read children: %w", err)
	}
	rep := BulkReport{Tests: len(children), Verdicts: map[string]int{}, States: map[JobState]int{}, Children: children}
	for _, c := range children {
		rep.States[c.State]++
		if c.Verdict != "" {
			rep.Verdicts[c.Verdict]++
		}
		if c.State.Terminal() {
			rep.Done++
		}
		rep.Tokens += c.Tokens
		rep.CreditsMicro += c.CreditsMicro
	}
	if rep.Children == nil {
		rep.Children = []ChildReport{}
	}
	return rep, nil
}

// BulkProgress is the report of a tenant's bulk job so far (its children
// as they stand).
func (s *Store) BulkProgress(ctx context.Context, tenantID, parentID string) (BulkReport, error) {
	if _, err := s.GetJob(ctx, tenantID, parentID); err != nil {
		return BulkReport{}, err
	}
	return bulkReport(ctx, s.db, parentID)
}

// ChildOutcome is how one child of a bulk job ended: its key, state, error
// and result as its worker wrote them.
type ChildOutcome struct {
	JobID  string
	Key    string
	State  JobState
	Error  string
	Result json.RawMessage
	// Checkpoint is the child's last progress, as of UpdatedAt.
	Checkpoint json.RawMessage
	UpdatedAt  time.Time
}

// Children lists a tenant's bulk job's children in their keys' order
// (none: the job has not fanned out).
func (s *Store) Children(ctx context.Context, tenantID, parentID string) ([]ChildOutcome, error) {
	rows, err := s.db.Query(ctx,
		`SELECT id::text, COALESCE(child_key, ''), state, COALESCE(error, ''), result, checkpoint, updated_at FROM jobs
		 WHERE parent_id = $1 AND tenant_id = $2 ORDER BY child_key, created_at, id`, parentID, tenantID)
	if err != nil {
		return nil, fmt.Errorf("children of %s: %w", parentID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ChildOutcome, error) {
		var c ChildOutcome
		return c, r.Scan(&c.JobID, &c.Key, &c.State, &c.Error, &c.Result, &c.Checkpoint, &c.UpdatedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("children of %s: %w", parentID, err)
	}
	return out, nil
}
