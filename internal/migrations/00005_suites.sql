-- +goose Up
-- A test keeps versions: a repair proposes a new one (with its diff) instead
-- of overwriting; a person accepts or rejects it, or the job's auto_accept
-- does. tests.version is the accepted version the script and manifest are.
ALTER TABLE tests ADD COLUMN tags text[] NOT NULL DEFAULT '{}';
ALTER TABLE tests ADD COLUMN version int NOT NULL DEFAULT 0;
CREATE INDEX tests_tags ON tests USING gin (tags);

CREATE TABLE test_versions (
    test_id         uuid NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
    version         int NOT NULL,
    scenario        jsonb NOT NULL,
    script          text NOT NULL,
    manifest        jsonb NOT NULL,
    created_by_job  uuid REFERENCES jobs(id),
    verdict         text,
    summary         text NOT NULL DEFAULT '',
    changes         jsonb,
    diff            text NOT NULL DEFAULT '',
    status          text NOT NULL CHECK (status IN ('proposed', 'accepted', 'rejected')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    decided_at      timestamptz,
    PRIMARY KEY (test_id, version)
);
-- One version per job and test: a repair retried after a crash proposes nothing twice.
CREATE UNIQUE INDEX test_versions_job ON test_versions (test_id, created_by_job) WHERE created_by_job IS NOT NULL;

INSERT INTO test_versions (test_id, version, scenario, script, manifest, created_by_job, summary, status, decided_at)
    SELECT id, 1, scenario, script, COALESCE(manifest, '[]'), source_job, 'generated', 'accepted', updated_at
    FROM tests WHERE script IS NOT NULL;
UPDATE tests SET version = 1 WHERE script IS NOT NULL;

-- Bulk jobs: one child per (parent, test), so a parent retried after a crash
-- creates no duplicate.
ALTER TABLE jobs ADD COLUMN test_id uuid REFERENCES tests(id);
CREATE UNIQUE INDEX jobs_parent_test ON jobs (parent_id, test_id) WHERE parent_id IS NOT NULL AND test_id IS NOT NULL;
CREATE INDEX jobs_parent ON jobs (parent_id) WHERE parent_id IS NOT NULL;

-- +goose Down
DROP INDEX jobs_parent;
DROP INDEX jobs_parent_test;
ALTER TABLE jobs DROP COLUMN test_id;
DROP TABLE test_versions;
DROP INDEX tests_tags;
ALTER TABLE tests DROP COLUMN version, DROP COLUMN tags;
