package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// JobState is where a job is in its lifecycle. A job is queued when it is
// stored, running while a worker's attempt holds its lease, waiting while a
// bulk job's children run, and then in one terminal state. The store alone
// moves a job between them; its transitions are the methods that claim,
// finish, cancel and fail jobs.
type JobState string

const (
	// JobStateQueued is a stored job with its credit hold, whose message is
	// on the stream or in the outbox, waiting for a worker (or parked while
	// its tenant is at its limit of running jobs).
	JobStateQueued JobState = "queued"
	// JobStateRunning is a job a worker's attempt holds under a lease; a
	// lease that runs out lets another attempt claim it.
	JobStateRunning JobState = "running"
	// JobStateWaiting is a bulk job whose children run; it ends when the
	// last of them does.
	JobStateWaiting JobState = "waiting"
	// JobStateSucceeded is a job that did what it was asked.
	JobStateSucceeded JobState = "succeeded"
	// JobStateFailed is a job that ended without doing it; its error says
	// why.
	JobStateFailed JobState = "failed"
	// JobStateCancelled is a job its tenant cancelled.
	JobStateCancelled JobState = "cancelled"
	// JobStateBudgetExhausted is a job stopped before a model call its
	// credit hold could not cover; what it did is kept.
	JobStateBudgetExhausted JobState = "budget_exhausted"
)

// JobStates are every job state, in the order a job can reach them.
func JobStates() []JobState {
	return []JobState{JobStateQueued, JobStateRunning, JobStateWaiting, JobStateSucceeded, JobStateFailed,
		JobStateCancelled, JobStateBudgetExhausted}
}

// Terminal reports whether a job in state s has ended.
func (s JobState) Terminal() bool {
	switch s {
	case JobStateSucceeded, JobStateFailed, JobStateCancelled, JobStateBudgetExhausted:
		return true
	}
	return false
}

// Valid reports whether s is a job state.
func (s JobState) Valid() bool {
	for _, v := range JobStates() {
		if s == v {
			return true
		}
	}
	return false
}

// An ending is a job's move into a terminal state, with what it records.
// The lifecycle's endings are built by the named constructors below and
// carried out by end alone, so every terminal transition writes the same
// columns the same way (the lease cleared, finished_at stamped).
type ending struct {
	to      JobState
	reason  string          // the job's error; empty: none
	result  json.RawMessage // the job's result; nil: none
	script  string          // the spec a scenario, replay or repair job ends with
	verdict string          // a replay's or repair's finding
	cancel  bool            // also marks the job's cancellation asked for
}

// finished is a worker's attempt ending the job as f says.
func finished(f Finish) ending {
	return ending{to: f.State, reason: f.Error, result: f.Result, script: f.Script, verdict: f.TestStatus}
}

// cancelledBeforeStart is a queued job its tenant (or its parent's
// cancellation) stopped before any worker took it.
func cancelledBeforeStart(reason string) ending {
	return ending{to: JobStateCancelled, reason: reason, cancel: true}
}

// undeliverable is a job whose deliveries ran out before an attempt ended it.
func undeliverable(reason string) ending { return ending{to: JobStateFailed, reason: reason} }

// budgetSpent is a bulk job's child stopped before it started because the
// shared budget was spent.
func budgetSpent() ending {
	return ending{to: JobStateBudgetExhausted, reason: "not run: the suite's credit budget is spent"}
}

// parentSettled is a bulk job ending with its last child, in state with
// the children's report.
func parentSettled(state JobState, report json.RawMessage, reason string) ending {
	return ending{to: state, reason: reason, result: report}
}

// Which jobs an ending applies to, with the condition that must hold of
// each; $1 is the job's (or the parent's) id.
const (
	theJob           = `id = $1`
	theQueuedJob     = `id = $1 AND state = 'queued'`
	queuedChildrenOf = `parent_id = $1 AND state = 'queued'`
	// a job no live attempt holds
	theUnheldJob = `id = $1 AND (state = 'queued' OR (state = 'running' AND (lease_until IS NULL OR lease_until < now())))`
)

// end moves the jobs where selects (with id as $1) into e's terminal state
// and returns how many it moved. The events their end raises are written
// in the same transaction, so a job never ends without its webhooks'
// deliveries nor raises them without ending.
func end(ctx context.Context, tx pgx.Tx, where, id string, e ending) (int64, error) {
	if !e.to.Terminal() {
		return 0, fmt.Errorf("end %s: %q is not a terminal state", id, e.to)
	}
	rows, err := tx.Query(ctx,
		`UPDATE jobs SET state = $2, error = NULLIF($3, ''), result = COALESCE($4, result), script = COALESCE(NULLIF($5, ''), script),
		   verdict = COALESCE(NULLIF($6, ''), verdict), cancel_requested = cancel_requested OR $7,
		   lease_until = NULL, finished_at = now(), updated_at = now()
		 WHERE `+where+`
		 RETURNING id::text, tenant_id::text, kind, parent_id IS NULL, state, COALESCE(verdict, ''), COALESCE(error, ''), result::text`,
		id, e.to, e.reason, e.result, e.script, e.verdict, e.cancel)
	if err != nil {
		return 0, fmt.Errorf("end %s as %s: %w", id, e.to, err)
	}
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ended, error) {
		var j ended
		var result *string
		err := r.Scan(&j.id, &j.tenantID, &j.kind, &j.topLevel, &j.state, &j.verdict, &j.reason, &result)
		if result != nil {
			j.result = []byte(*result)
		}
		return j, err
	})
	if err != nil {
		return 0, fmt.Errorf("end %s as %s: %w", id, e.to, err)
	}
	if err := raiseEvents(ctx, tx, jobs); err != nil {
		return 0, err
	}
	return int64(len(jobs)), nil
}
