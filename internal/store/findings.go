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

// MaxOccurrences bounds the places one finding lists: the same console
// error on every page of a large app is one finding, not an unbounded row.
const MaxOccurrences = 50

// FindingRecord is one distinct bug an exploration found. Evidence, Path
// and Reproduction are the explorer's JSON, stored as given.
type FindingRecord struct {
	ID        string          `json:"id"`
	JobID     string          `json:"job_id"`
	Seq       int             `json:"seq"`
	Type      string          `json:"type"`
	Severity  string          `json:"severity"`
	Title     string          `json:"title"`
	URL       string          `json:"url"`
	State     string          `json:"state"`
	Signature string          `json:"signature"`
	Evidence  json.RawMessage `json:"evidence"`
	// Path is the shortest action path from the start URL that reached it.
	Path json.RawMessage `json:"path"`
	// Occurrences are the distinct places ({url, state}) it was seen.
	Occurrences  json.RawMessage `json:"occurrences"`
	Reproduction json.RawMessage `json:"reproduction,omitempty"`
	// Confidence is how sure it is once its reproduction ran; Status how
	// it compares with the previous exploration of the app (new,
	// still_open; "" when there was none).
	Confidence string    `json:"confidence"`
	Status     string    `json:"status,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Occurrence is one place a finding was seen.
type Occurrence struct {
	URL   string `json:"url"`
	State string `json:"state"`
}

// RecordFinding stores a finding of a running attempt, or, when the job
// already has one with the same signature, adds the occurrence to it
// (once: the same place seen again, by this attempt or a resumed one,
// changes nothing). It returns the finding's number within the job and
// whether it is new.
func (s *Store) RecordFinding(ctx context.Context, attempt int, f FindingRecord, at Occurrence) (seq int, isNew bool, err error) {
	occ, _ := json.Marshal([]Occurrence{at})
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockRunningAttempt(ctx, tx, f.JobID, attempt); err != nil {
			return err
		}
		var inserted bool
		err := tx.QueryRow(ctx,
			`INSERT INTO findings (job_id, seq, type, severity, title, url, state, signature, evidence, path, occurrences, attempt)
			 VALUES ($1, (SELECT COALESCE(max(seq), 0) + 1 FROM findings WHERE job_id = $1), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			 ON CONFLICT (job_id, signature) DO UPDATE SET
			   occurrences = CASE WHEN findings.occurrences @> EXCLUDED.occurrences
			                        OR jsonb_array_length(findings.occurrences) >= $12
			                      THEN findings.occurrences ELSE findings.occurrences || EXCLUDED.occurrences END,
			   updated_at = CASE WHEN findings.occurrences @> EXCLUDED.occurrences THEN findings.updated_at ELSE now() END
			 RETURNING seq, xmax = 0`,
			f.JobID, f.Type, f.Severity, f.Title, f.URL, f.State, f.Signature, jsonOr(f.Evidence, `{}`),
			jsonOr(f.Path, `[]`), occ, attempt, MaxOccurrences).Scan(&seq, &inserted)
		isNew = inserted
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("record finding of job %s: %w", f.JobID, err)
	}
	return seq, isNew, nil
}

// FindingOutcome is what a finding became once the exploration ended: its
// title and evidence with every place it was seen, its reproduction under
// the runner, its confidence and its status against the previous run.
type FindingOutcome struct {
	Title        string
	Evidence     json.RawMessage
	Reproduction json.RawMessage
	Confidence   string
	Status       string
}

// SetFindingOutcome stores a finding's outcome, fenced by the attempt like
// every write of a running job.
func (s *Store) SetFindingOutcome(ctx context.Context, jobID string, attempt, seq int, o FindingOutcome) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockRunningAttempt(ctx, tx, jobID, attempt); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE findings SET title = COALESCE(NULLIF($3, ''), title), evidence = COALESCE($4, evidence),
		   reproduction = $5, confidence = COALESCE(NULLIF($6, ''), confidence), status = $7, updated_at = now()
		 WHERE job_id = $1 AND seq = $2`, jobID, seq, o.Title, nullJSON(o.Evidence), nullJSON(o.Reproduction), o.Confidence, o.Status)
		if err != nil {
			return fmt.Errorf("store the outcome of finding %d of job %s: %w", seq, jobID, err)
		}
		return nil
	})
}

// PriorFindings returns the latest other exploration of the tenant that
// succeeded on the same base URL and scope — what a new one is compared
// with — and its findings; "" and none when there was no such run.
func (s *Store) PriorFindings(ctx context.Context, tenantID, jobID, baseURL string, scope []string) (string, []FindingRecord, error) {
	sc, _ := json.Marshal(scope)
	if len(scope) == 0 {
		sc = nil
	}
	var prev string
	err := s.db.QueryRow(ctx,
		`SELECT id::text FROM jobs
		 WHERE tenant_id = $1 AND kind = 'exploration' AND state = 'succeeded' AND id <> $2 AND parent_id IS NULL
		   AND input->>'base_url' = $3 AND COALESCE(input->'scope', 'null'::jsonb) = COALESCE($4::jsonb, 'null'::jsonb)
		 ORDER BY finished_at DESC LIMIT 1`, tenantID, jobID, baseURL, sc).Scan(&prev)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("find the exploration before job %s: %w", jobID, err)
	}
	fs, err := s.Findings(ctx, tenantID, prev)
	return prev, fs, err
}

func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Findings lists a tenant's job's findings in the order they were found,
// those of its children (an exploration's journeys) included.
func (s *Store) Findings(ctx context.Context, tenantID, jobID string) ([]FindingRecord, error) {
	if _, err := uuid.Parse(jobID); err != nil {
		return nil, ErrNotFound
	}
	rows, err := s.db.Query(ctx,
		`SELECT f.id::text, f.job_id::text, f.seq, f.type, f.severity, f.title, f.url, f.state, f.signature,
		        f.evidence, f.path, f.occurrences, f.reproduction, f.confidence, f.status, f.created_at, f.updated_at
		 FROM findings f JOIN jobs j ON j.id = f.job_id
		 WHERE (j.id = $1 OR j.parent_id = $1) AND j.tenant_id = $2
		 ORDER BY j.created_at, f.seq`, jobID, tenantID)
	if err != nil {
		return nil, fmt.Errorf("read findings of job %s: %w", jobID, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (FindingRecord, error) {
		var f FindingRecord
		err := r.Scan(&f.ID, &f.JobID, &f.Seq, &f.Type, &f.Severity, &f.Title, &f.URL, &f.State, &f.Signature,
			&f.Evidence, &f.Path, &f.Occurrences, &f.Reproduction, &f.Confidence, &f.Status, &f.CreatedAt, &f.UpdatedAt)
		return f, err
	})
}

func jsonOr(b json.RawMessage, empty string) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage(empty)
	}
	return b
}
