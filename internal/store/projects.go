package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ProjectVersion is one upload of a tenant's project, addressed by its
// content's digest.
type ProjectVersion struct {
	Project string
	Digest  string
	Files   int
	Bytes   int
	// Parent is the version a patch was applied to ("" for an upload).
	Parent string
	// Tests is the runner's listing (nil until listed); ListErrors what
	// kept files from loading.
	Tests      json.RawMessage
	ListErrors json.RawMessage
	ListedAt   *time.Time
	CreatedAt  time.Time
	// Current says it is its project's current version.
	Current bool
}

// SaveProjectVersion stores an upload as the project's current version
// (creating the project). The same content uploaded again is the same
// version: it is stored once and made current; created says it was new.
func (s *Store) SaveProjectVersion(ctx context.Context, tenantID string, v ProjectVersion, archive []byte) (saved ProjectVersion, created bool, err error) {
	return s.saveProjectVersion(ctx, tenantID, v, archive, true)
}

// ProposeProjectVersion stores a version (a verified repair's) without
// making it current: AcceptProjectVersion does.
func (s *Store) ProposeProjectVersion(ctx context.Context, tenantID string, v ProjectVersion, archive []byte) (ProjectVersion, error) {
	saved, _, err := s.saveProjectVersion(ctx, tenantID, v, archive, false)
	return saved, err
}

// AcceptProjectVersion makes a version of a tenant's project its current
// one.
func (s *Store) AcceptProjectVersion(ctx context.Context, tenantID, project, digest string) (ProjectVersion, error) {
	tag, err := s.db.Exec(ctx,
		`UPDATE projects p SET current = $3, updated_at = now() WHERE p.tenant_id = $1 AND p.name = $2
		 AND EXISTS (SELECT 1 FROM project_versions v WHERE v.tenant_id = $1 AND v.project = $2 AND v.digest = $3)`,
		tenantID, project, digest)
	if err != nil {
		return ProjectVersion{}, fmt.Errorf("accept project version: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ProjectVersion{}, ErrNotFound
	}
	return s.ProjectVersion(ctx, tenantID, project, digest)
}

func (s *Store) saveProjectVersion(ctx context.Context, tenantID string, v ProjectVersion, archive []byte, current bool) (saved ProjectVersion, created bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx,
			`INSERT INTO project_versions (tenant_id, digest, project, archive, files, bytes, parent)
			 VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7, '')) ON CONFLICT DO NOTHING`,
			tenantID, v.Digest, v.Project, archive, v.Files, v.Bytes, v.Parent)
		if err != nil {
			return fmt.Errorf("store project version: %w", err)
		}
		created = tag.RowsAffected() == 1
		if created {
			// The same files under another of the tenant's projects: what
			// the runner listed and passing runs kept of them holds here too.
			if _, err := tx.Exec(ctx,
				`UPDATE project_versions v SET tests = o.tests, list_errors = o.list_errors, listed_at = o.listed_at, fingerprints = o.fingerprints
				 FROM (SELECT tests, list_errors, listed_at, fingerprints FROM project_versions
				       WHERE tenant_id = $1 AND digest = $2 AND project <> $3 AND listed_at IS NOT NULL ORDER BY listed_at DESC LIMIT 1) o
				 WHERE v.tenant_id = $1 AND v.digest = $2 AND v.project = $3`, tenantID, v.Digest, v.Project); err != nil {
				return fmt.Errorf("store project version: %w", err)
			}
		}
		if !current {
			return nil
		}
		if _, err := tx.Exec(ctx,
			`INSERT INTO projects (tenant_id, name, current) VALUES ($1, $2, $3)
			 ON CONFLICT (tenant_id, name) DO UPDATE SET current = EXCLUDED.current, updated_at = now()`,
			tenantID, v.Project, v.Digest); err != nil {
			return fmt.Errorf("store project: %w", err)
		}
		return nil
	})
	if err != nil {
		return ProjectVersion{}, false, err
	}
	saved, err = s.ProjectVersion(ctx, tenantID, v.Project, v.Digest)
	return saved, created, err
}

const projectVersionCols = `v.project, v.digest, v.files, v.bytes, COALESCE(v.parent, ''), v.tests, v.list_errors, v.listed_at, v.created_at,
	EXISTS (SELECT 1 FROM projects p WHERE p.tenant_id = v.tenant_id AND p.name = v.project AND p.current = v.digest)`

func scanProjectVersion(r pgx.Row) (ProjectVersion, error) {
	var v ProjectVersion
	err := r.Scan(&v.Project, &v.Digest, &v.Files, &v.Bytes, &v.Parent, &v.Tests, &v.ListErrors, &v.ListedAt, &v.CreatedAt, &v.Current)
	return v, err
}

// ProjectVersion returns a version of a tenant's project; digest "" is the
// current one.
func (s *Store) ProjectVersion(ctx context.Context, tenantID, project, digest string) (ProjectVersion, error) {
	q := `SELECT ` + projectVersionCols + ` FROM project_versions v WHERE v.tenant_id = $1 AND v.project = $2 AND v.digest = $3`
	args := []any{tenantID, project, digest}
	if digest == "" {
		q = `SELECT ` + projectVersionCols + ` FROM project_versions v JOIN projects p ON p.tenant_id = v.tenant_id AND p.current = v.digest AND p.name = v.project
			 WHERE v.tenant_id = $1 AND p.name = $2`
		args = args[:2]
	}
	v, err := scanProjectVersion(s.db.QueryRow(ctx, q, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return ProjectVersion{}, ErrNotFound
	}
	if err != nil {
		return ProjectVersion{}, fmt.Errorf("read project version: %w", err)
	}
	return v, nil
}

// ProjectArchive returns a version's files, packed as uploaded.
func (s *Store) ProjectArchive(ctx context.Context, tenantID, digest string) ([]byte, error) {
	var b []byte
	err := s.db.QueryRow(ctx, `SELECT archive FROM project_versions WHERE tenant_id = $1 AND digest = $2 LIMIT 1`, tenantID, digest).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read project archive: %w", err)
	}
	return b, nil
}

// Projects lists a tenant's projects at their current versions, by name.
func (s *Store) Projects(ctx context.Context, tenantID string) ([]ProjectVersion, error) {
	rows, err := s.db.Query(ctx, `SELECT `+projectVersionCols+` FROM project_versions v
		JOIN projects p ON p.tenant_id = v.tenant_id AND p.current = v.digest AND p.name = v.project
		WHERE v.tenant_id = $1 ORDER BY p.name`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ProjectVersion, error) { return scanProjectVersion(r) })
}

// SetProjectTests records the runner's listing of a version.
func (s *Store) SetProjectTests(ctx context.Context, tenantID, digest string, tests, listErrors json.RawMessage) error {
	tag, err := s.db.Exec(ctx, `UPDATE project_versions SET tests = $3, list_errors = $4, listed_at = now() WHERE tenant_id = $1 AND digest = $2`,
		tenantID, digest, tests, listErrors)
	if err != nil {
		return fmt.Errorf("record project tests: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// KeepProjectFingerprints merges tests' calls and targets (a JSON object
// keyed by test id) into a version's, each test's replacing what an
// earlier passing run kept.
func (s *Store) KeepProjectFingerprints(ctx context.Context, tenantID, digest string, byTest json.RawMessage) error {
	tag, err := s.db.Exec(ctx, `UPDATE project_versions SET fingerprints = fingerprints || $3::jsonb WHERE tenant_id = $1 AND digest = $2`,
		tenantID, digest, byTest)
	if err != nil {
		return fmt.Errorf("keep project fingerprints: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// ProjectFingerprints returns what passing runs of a version kept, keyed
// by test id.
func (s *Store) ProjectFingerprints(ctx context.Context, tenantID, digest string) (json.RawMessage, error) {
	var b json.RawMessage
	err := s.db.QueryRow(ctx, `SELECT fingerprints FROM project_versions WHERE tenant_id = $1 AND digest = $2 LIMIT 1`, tenantID, digest).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read project fingerprints: %w", err)
	}
	return b, nil
}

// ProjectVersions lists a tenant's versions of a project, newest first.
func (s *Store) ProjectVersions(ctx context.Context, tenantID, project string) ([]ProjectVersion, error) {
	rows, err := s.db.Query(ctx, `SELECT `+projectVersionCols+` FROM project_versions v
		WHERE v.tenant_id = $1 AND v.project = $2 ORDER BY v.created_at DESC, v.digest LIMIT 200`, tenantID, project)
	if err != nil {
		return nil, fmt.Errorf("list project versions: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ProjectVersion, error) { return scanProjectVersion(r) })
}

// FileRun is one ended run of a project's test file: its job and result.
type FileRun struct {
	JobID      string
	Version    string
	Result     json.RawMessage
	FinishedAt time.Time
}

// ProjectFileRuns lists the ended runs of a project's test files (its
// project_file jobs with a result), newest first, at most limit.
func (s *Store) ProjectFileRuns(ctx context.Context, tenantID, project string, limit int) ([]FileRun, error) {
	return s.projectJobs(ctx, tenantID, project, "project_file", limit)
}

// ProjectRepairs lists the ended repairs of a project (its project_repair
// jobs with a result: every test's verdict), newest first, at most limit.
func (s *Store) ProjectRepairs(ctx context.Context, tenantID, project string, limit int) ([]FileRun, error) {
	return s.projectJobs(ctx, tenantID, project, "project_repair", limit)
}

func (s *Store) projectJobs(ctx context.Context, tenantID, project, kind string, limit int) ([]FileRun, error) {
	rows, err := s.db.Query(ctx, `SELECT id, COALESCE(input->>'version', ''), result, finished_at FROM jobs
		WHERE tenant_id = $1 AND kind = $4 AND input->>'name' = $2 AND result IS NOT NULL AND finished_at IS NOT NULL
		ORDER BY finished_at DESC LIMIT $3`, tenantID, project, limit, kind)
	if err != nil {
		return nil, fmt.Errorf("list %s jobs of project: %w", kind, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (FileRun, error) {
		var f FileRun
		err := r.Scan(&f.JobID, &f.Version, &f.Result, &f.FinishedAt)
		return f, err
	})
}
