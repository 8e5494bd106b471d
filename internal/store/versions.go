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

// VersionStatus is where a test version stands.
type VersionStatus string

// Version statuses: a repair proposes; a person (or the job's auto_accept)
// accepts or rejects. An accepted version is the test's script.
const (
	VersionProposed VersionStatus = "proposed"
	VersionAccepted VersionStatus = "accepted"
	VersionRejected VersionStatus = "rejected"
)

// ErrConflict means the request contradicts the record's state (deciding a
// version that is not proposed).
var ErrConflict = errors.New("conflict")

// TestVersion is one version of a stored test.
type TestVersion struct {
	TestID    string          `json:"test_id"`
	Version   int             `json:"version"`
	Status    VersionStatus   `json:"status"`
	Verdict   string          `json:"verdict,omitempty"`
	Summary   string          `json:"summary"`
	Changes   json.RawMessage `json:"changes,omitempty"`
	Scenario  json.RawMessage `json:"scenario,omitempty"`
	Script    string          `json:"script,omitempty"`
	Manifest  json.RawMessage `json:"manifest,omitempty"`
	Diff      string          `json:"diff,omitempty"`
	Job       *string         `json:"created_by_job,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	DecidedAt *time.Time      `json:"decided_at,omitempty"`
}

// Proposal is the new version a repair job ends with.
type Proposal struct {
	TestID   string
	Verdict  string
	Summary  string
	Changes  json.RawMessage
	Scenario json.RawMessage
	Script   string
	Manifest json.RawMessage
	Diff     string
	// Accept makes it the test's script at once (the job's auto_accept).
	Accept bool
}

// propose records a repair's version inside the finish transaction; the
// job's retry after a crash proposes nothing twice.
func propose(ctx context.Context, tx pgx.Tx, tenantID, jobID string, p Proposal) error {
	var version int
	err := tx.QueryRow(ctx, `SELECT COALESCE(max(v.version), 0) + 1 FROM tests t LEFT JOIN test_versions v ON v.test_id = t.id
		WHERE t.id = $1 AND t.tenant_id = $2 GROUP BY t.id`, p.TestID, tenantID).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("propose a version: test %s: %w", p.TestID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("propose a version: %w", err)
	}
	status := VersionProposed
	if p.Accept {
		status = VersionAccepted
	}
	tag, err := tx.Exec(ctx,
		`INSERT INTO test_versions (test_id, version, scenario, script, manifest, created_by_job, verdict, summary, changes, diff, status, decided_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $11 = 'accepted' THEN now() END)
		 ON CONFLICT (test_id, created_by_job) WHERE created_by_job IS NOT NULL DO NOTHING`,
		p.TestID, version, p.Scenario, p.Script, p.Manifest, jobID, p.Verdict, p.Summary, p.Changes, p.Diff, status)
	if err != nil {
		return fmt.Errorf("propose a version: %w", err)
	}
	if tag.RowsAffected() == 1 && p.Accept {
		return adopt(ctx, tx, p.TestID, version)
	}
	return nil
}

// adopt makes a version the test's current script.
func adopt(ctx context.Context, tx pgx.Tx, testID string, version int) error {
	_, err := tx.Exec(ctx, `UPDATE tests t SET scenario = v.scenario, script = v.script, manifest = v.manifest, version = v.version,
		updated_at = now() FROM test_versions v WHERE v.test_id = t.id AND t.id = $1 AND v.version = $2`, testID, version)
	return err
}

// setTestStatus records what the latest run of a test found.
func setTestStatus(ctx context.Context, tx pgx.Tx, tenantID, testID, status string) error {
	_, err := tx.Exec(ctx, `UPDATE tests SET last_status = $3, updated_at = now() WHERE id = $1 AND tenant_id = $2`, testID, tenantID, status)
	return err
}

const versionColumns = `test_id::text, version, status, COALESCE(verdict, ''), summary, changes, scenario, script, manifest, diff,
	created_by_job::text, created_at, decided_at`

func scanVersion(r pgx.Row) (TestVersion, error) {
	var v TestVersion
	err := r.Scan(&v.TestID, &v.Version, &v.Status, &v.Verdict, &v.Summary, &v.Changes, &v.Scenario, &v.Script, &v.Manifest,
		&v.Diff, &v.Job, &v.CreatedAt, &v.DecidedAt)
	return v, err
}

// TestVersions lists a tenant's test's versions, newest first, without
// their scripts.
func (s *Store) TestVersions(ctx context.Context, tenantID, testID string) ([]TestVersion, error) {
	if _, err := s.GetTest(ctx, tenantID, testID); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, `SELECT `+versionColumns+` FROM test_versions WHERE test_id = $1 ORDER BY version DESC`, testID)
	if err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TestVersion, error) { return scanVersion(r) })
	for i := range list {
		list[i].Script, list[i].Manifest, list[i].Scenario, list[i].Diff = "", nil, nil, ""
	}
	return list, err
}

// GetTestVersion returns one version of a tenant's test.
func (s *Store) GetTestVersion(ctx context.Context, tenantID, testID string, version int) (TestVersion, error) {
	if _, err := uuid.Parse(testID); err != nil {
		return TestVersion{}, ErrNotFound
	}
	v, err := scanVersion(s.db.QueryRow(ctx, `SELECT `+versionColumns+` FROM test_versions v
		WHERE test_id = $1 AND version = $2 AND EXISTS (SELECT 1 FROM tests t WHERE t.id = v.test_id AND t.tenant_id = $3)`,
		testID, version, tenantID))
	if errors.Is(err, pgx.ErrNoRows) {
		return TestVersion{}, ErrNotFound
	}
	if err != nil {
		return TestVersion{}, fmt.Errorf("get version: %w", err)
	}
	return v, nil
}

// DecideVersion accepts (making it the test's script) or rejects a
// proposed version. Deciding a version that is not proposed is ErrConflict.
func (s *Store) DecideVersion(ctx context.Context, tenantID, testID string, version int, accept bool) (TestVersion, error) {
	if _, err := s.GetTestVersion(ctx, tenantID, testID, version); err != nil {
		return TestVersion{}, err
	}
	status := VersionRejected
	if accept {
		status = VersionAccepted
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE test_versions SET status = $3, decided_at = now()
			WHERE test_id = $1 AND version = $2 AND status = 'proposed'`, testID, version, status)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("version %d is not proposed: %w", version, ErrConflict)
		}
		if accept {
			return adopt(ctx, tx, testID, version)
		}
		return nil
	})
	if err != nil {
		return TestVersion{}, err
	}
	return s.GetTestVersion(ctx, tenantID, testID, version)
}

// ScriptUpdate is a stored test's new script and manifest from a version
// of a project of stored tests that was accepted, applied only to the
// script it was made from.
type ScriptUpdate struct {
	TestID string
	// From is the script the update was made from: a test whose script is
	// no longer it (repaired or accepted since) is left alone.
	From     string
	Script   string
	Manifest json.RawMessage
	Verdict  string
	Summary  string
	Changes  json.RawMessage
	Diff     string
}

// AcceptScripts makes each update its test's current version (a new
// accepted version), in one transaction. It answers the versions made, by
// test id; a test of another tenant's, gone, or whose script is no longer
// the one the update was made from, gets none and is named in stale.
func (s *Store) AcceptScripts(ctx context.Context, tenantID string, updates []ScriptUpdate) (made map[string]int, stale []string, err error) {
	made = map[string]int{}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		clear(made)
		stale = stale[:0]
		for _, u := range updates {
			var version int
			err := tx.QueryRow(ctx, `SELECT (SELECT COALESCE(max(v.version), 0) + 1 FROM test_versions v WHERE v.test_id = t.id)
				FROM tests t WHERE t.id = $1 AND t.tenant_id = $2 AND t.script = $3 FOR UPDATE`, u.TestID, tenantID, u.From).Scan(&version)
			if errors.Is(err, pgx.ErrNoRows) {
				stale = append(stale, u.TestID)
				continue
			}
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx,
				`INSERT INTO test_versions (test_id, version, scenario, script, manifest, verdict, summary, changes, diff, status, decided_at)
				 SELECT id, $2, scenario, $3, $4, NULLIF($5, ''), $6, $7, $8, 'accepted', now() FROM tests WHERE id = $1`,
				u.TestID, version, u.Script, u.Manifest, u.Verdict, u.Summary, u.Changes, u.Diff); err != nil {
				return err
			}
			if err := adopt(ctx, tx, u.TestID, version); err != nil {
				return err
			}
			made[u.TestID] = version
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("accept scripts: %w", err)
	}
	return made, stale, nil
}
