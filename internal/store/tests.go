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

// Test is a stored test of a tenant's suite: the scenario, its current
// spec and the step manifest repair works from.
type Test struct {
	ID         string
	Name       string
	Tags       []string
	Version    int // the accepted version the script is
	Scenario   json.RawMessage
	Script     string
	Manifest   json.RawMessage
	LastStatus string
	SourceJob  *string
	UpdatedAt  time.Time
}

// TestRecord is what a finished scenario job stores in the suite.
type TestRecord struct {
	Name     string
	Tags     []string
	Scenario json.RawMessage // without secrets
	Manifest json.RawMessage
}

// saveTest upserts the job's test by name inside the finish transaction,
// recording a succeeded run's spec as the test's next accepted version. A
// failed run updates the status but keeps the last good script.
func saveTest(ctx context.Context, tx pgx.Tx, tenantID string, f Finish) error {
	rec := f.Test
	tags := rec.Tags
	if tags == nil {
		tags = []string{}
	}
	if f.State == JobStateSucceeded {
		_, err := storeAccepted(ctx, tx, tenantID, accepted{name: rec.Name, tags: tags, scenario: rec.Scenario, script: f.Script,
			manifest: rec.Manifest, status: string(f.State), job: f.JobID, summary: "generated"})
		return err
	}
	_, err := tx.Exec(ctx,
		`INSERT INTO tests (id, tenant_id, name, tags, scenario, last_status, source_job) VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (tenant_id, name) DO UPDATE SET last_status = EXCLUDED.last_status, updated_at = now()`,
		uuid.NewString(), tenantID, rec.Name, tags, rec.Scenario, f.State, f.JobID)
	return err
}

// accepted is a spec to store as a test's next accepted version.
type accepted struct {
	name, script, status, job, summary string
	tags                               []string
	scenario, manifest                 json.RawMessage
}

// storeAccepted upserts the tenant's test of that name with the spec as
// its script and records it as the test's next accepted version (once per
// job, so a retried finish adds none).
func storeAccepted(ctx context.Context, tx pgx.Tx, tenantID string, a accepted) (Test, error) {
	t := Test{Name: a.name, Tags: a.tags, LastStatus: a.status}
	err := tx.QueryRow(ctx,
		`INSERT INTO tests (id, tenant_id, name, tags, scenario, script, manifest, last_status, source_job, version)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1)
		 ON CONFLICT (tenant_id, name) DO UPDATE SET scenario = EXCLUDED.scenario, script = EXCLUDED.script, tags = EXCLUDED.tags,
		   manifest = EXCLUDED.manifest, last_status = EXCLUDED.last_status, source_job = EXCLUDED.source_job,
		   version = (SELECT COALESCE(max(version), 0) + 1 FROM test_versions WHERE test_id = tests.id), updated_at = now()
		 RETURNING id::text, version, updated_at`,
		uuid.NewString(), tenantID, a.name, a.tags, a.scenario, a.script, a.manifest, a.status, nullable(a.job)).
		Scan(&t.ID, &t.Version, &t.UpdatedAt)
	if err != nil {
		return Test{}, fmt.Errorf("store %q: %w", a.name, err)
	}
	if _, err := tx.Exec(ctx,
		`INSERT INTO test_versions (test_id, version, scenario, script, manifest, created_by_job, summary, status, decided_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, 'accepted', now())
		 ON CONFLICT (test_id, created_by_job) WHERE created_by_job IS NOT NULL DO NOTHING`,
		t.ID, t.Version, a.scenario, a.script, a.manifest, nullable(a.job), a.summary); err != nil {
		return Test{}, fmt.Errorf("store %q: %w", a.name, err)
	}
	return t, nil
}

// Tests lists a tenant's stored tests by name.
func (s *Store) Tests(ctx context.Context, tenantID string) ([]Test, error) {
	rows, err := s.db.Query(ctx,
		`SELECT id::text, name, tags, version, last_status, source_job::text, updated_at FROM tests WHERE tenant_id = $1 ORDER BY name`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list tests: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Test, error) {
		var t Test
		var status *string
		err := r.Scan(&t.ID, &t.Name, &t.Tags, &t.Version, &status, &t.SourceJob, &t.UpdatedAt)
		if status != nil {
			t.LastStatus = *status
		}
		return t, err
	})
}

// GetTest returns one of a tenant's tests with its script and manifest.
func (s *Store) GetTest(ctx context.Context, tenantID, id string) (Test, error) {
	if _, err := uuid.Parse(id); err != nil {
		return Test{}, ErrNotFound
	}
	var t Test
	var script, status *string
	err := s.db.QueryRow(ctx,
		`SELECT id::text, name, tags, version, scenario, script, manifest, last_status, source_job::text, updated_at
		 FROM tests WHERE id = $1 AND tenant_id = $2`, id, tenantID).
		Scan(&t.ID, &t.Name, &t.Tags, &t.Version, &t.Scenario, &script, &t.Manifest, &status, &t.SourceJob, &t.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Test{}, ErrNotFound
	}
	if err != nil {
		return Test{}, fmt.Errorf("get test: %w", err)
	}
	if script != nil {
		t.Script = *script
	}
	if status != nil {
		t.LastStatus = *status
	}
	return t, nil
}

// ImportedTest is a test read from an existing spec.
type ImportedTest struct {
	Name     string
	Tags     []string
	Scenario json.RawMessage
	Script   string
	Manifest json.RawMessage
}

// SuiteFullError is an import that would take a tenant's suite past its
// limit of stored tests.
type SuiteFullError struct{ Tests, Max int }

func (e *SuiteFullError) Error() string {
	return fmt.Sprintf("the suite would hold %d tests, above its limit of %d", e.Tests, e.Max)
}

// ImportTests stores imported tests in a tenant's suite, each as its next
// accepted version (a test of the same name gets a new version), all or
// none; with maxTests > 0 a suite that would then hold more tests is a
// *SuiteFullError and nothing is stored.
func (s *Store) ImportTests(ctx context.Context, tenantID string, list []ImportedTest, maxTests int) ([]Test, error) {
	var out []Test
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		if maxTests > 0 {
			// The tenant's row serialises concurrent imports' counts.
			if _, err := tx.Exec(ctx, `SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE`, tenantID); err != nil {
				return fmt.Errorf("lock tenant: %w", err)
			}
		}
		for _, it := range list {
			tags := it.Tags
			if tags == nil {
				tags = []string{}
			}
			t, err := storeAccepted(ctx, tx, tenantID, accepted{name: it.Name, tags: tags, scenario: it.Scenario, script: it.Script,
				manifest: it.Manifest, status: "imported", summary: "imported"})
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		if maxTests > 0 {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM tests WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
				return fmt.Errorf("count tests: %w", err)
			}
			if n > maxTests {
				return &SuiteFullError{Tests: n, Max: maxTests}
			}
		}
		return nil
	})
	return out, err
}

// captureFingerprints stores the manifest a passing replay recorded, with
// the fingerprints of every element it used, as the one of the version it
// replayed: an imported test has none until its first passing replay, and
// re-location needs them.
func captureFingerprints(ctx context.Context, tx pgx.Tx, tenantID, testID string, version int, manifest json.RawMessage) error {
	tag, err := tx.Exec(ctx, `UPDATE tests SET manifest = $4, updated_at = now() WHERE id = $1 AND tenant_id = $2 AND version = $3`,
		testID, tenantID, version, manifest)
	if err != nil {
		return fmt.Errorf("capture fingerprints: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return nil // another version was accepted meanwhile
	}
	_, err = tx.Exec(ctx, `UPDATE test_versions SET manifest = $3 WHERE test_id = $1 AND version = $2`, testID, version, manifest)
	return err
}
