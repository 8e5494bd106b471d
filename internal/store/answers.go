package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ClaimAgentAnswer is how the parts of one repair (the children of a
// parent job) share the agent's answer about a question, key: the answer
// a part recorded for it, or, when none is, the claim to ask it (claimed:
// the caller asks, then saves or releases the answer), or neither while
// another part that still runs holds the claim (the caller waits and
// claims again). A claim held by a part that ended or was handed back
// unanswered is taken over. jobID's attempt is the caller's.
func (s *Store) ClaimAgentAnswer(ctx context.Context, tenantID, jobID string, attempt int, key string) (answer json.RawMessage, claimed bool, err error) {
	err = pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		var parent *string
		if err := tx.QueryRow(ctx, `SELECT parent_id::text FROM jobs WHERE id = $1 AND tenant_id = $2`, jobID, tenantID).Scan(&parent); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		if parent == nil {
			claimed = true // nothing to share with
			return nil
		}
		err := tx.QueryRow(ctx,
			`INSERT INTO agent_answers (parent_id, key, claimed_by, claimed_attempt) VALUES ($1, $2, $3, $4)
			 ON CONFLICT (parent_id, key) DO UPDATE SET claimed_by = EXCLUDED.claimed_by, claimed_attempt = EXCLUDED.claimed_attempt, created_at = now()
			 WHERE agent_answers.answer IS NULL AND NOT EXISTS (
			     SELECT 1 FROM jobs j WHERE j.id = agent_answers.claimed_by AND j.state = 'running'
			        AND j.attempt = agent_answers.claimed_attempt AND j.lease_until > now()
			        AND NOT (j.id = EXCLUDED.claimed_by AND j.attempt = EXCLUDED.claimed_attempt))
			 RETURNING true`, *parent, key, jobID, attempt).Scan(&claimed)
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		return tx.QueryRow(ctx, `SELECT answer FROM agent_answers WHERE parent_id = $1 AND key = $2`, *parent, key).Scan(&answer)
	})
	if err != nil {
		return nil, false, fmt.Errorf("claim the agent's answer for job %s: %w", jobID, err)
	}
	return answer, claimed, nil
}

// SaveAgentAnswer records the answer of the question jobID's attempt
// claimed, for the other parts of its repair. A claim taken over since
// (the attempt was handed back) records nothing.
func (s *Store) SaveAgentAnswer(ctx context.Context, tenantID, jobID string, attempt int, key string, answer json.RawMessage) error {
	_, err := s.db.Exec(ctx,
		`UPDATE agent_answers a SET answer = $5, answered_at = now() FROM jobs j
		 WHERE j.id = $1 AND j.tenant_id = $2 AND a.parent_id = j.parent_id AND a.key = $4
		   AND a.claimed_by = $1 AND a.claimed_attempt = $3 AND a.answer IS NULL`, jobID, tenantID, attempt, key, answer)
	if err != nil {
		return fmt.Errorf("save the agent's answer for job %s: %w", jobID, err)
	}
	return nil
}

// ReleaseAgentAnswer gives up the claim jobID's attempt holds on a
// question it could not have answered (the call failed, or the answer is
// not to be shared): the next part to need it asks.
func (s *Store) ReleaseAgentAnswer(ctx context.Context, tenantID, jobID string, attempt int, key string) error {
	_, err := s.db.Exec(ctx,
		`DELETE FROM agent_answers a USING jobs j
		 WHERE j.id = $1 AND j.tenant_id = $2 AND a.parent_id = j.parent_id AND a.key = $4
		   AND a.claimed_by = $1 AND a.claimed_attempt = $3 AND a.answer IS NULL`, jobID, tenantID, attempt, key)
	if err != nil {
		return fmt.Errorf("release the agent's answer for job %s: %w", jobID, err)
	}
	return nil
}
