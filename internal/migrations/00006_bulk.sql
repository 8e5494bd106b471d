-- +goose Up
-- A bulk job (suite_run, suite_repair) fans out one child job per stored
-- test and waits, holding no worker and no running slot, until the last
-- child ends; its children draw their model calls from its credit hold.
-- jobs.verdict is what a replay or repair child found for its test.
ALTER TABLE jobs ADD COLUMN verdict text;

-- A child's change is also its parent's progress.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION jobs_notify_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('job_changed', NEW.id::text);
    IF NEW.parent_id IS NOT NULL THEN
        PERFORM pg_notify('job_changed', NEW.parent_id::text);
    END IF;
    RETURN NULL;
END
$$ LANGUAGE plpgsql;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION jobs_notify_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('job_changed', NEW.id::text);
    RETURN NULL;
END
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
ALTER TABLE jobs DROP COLUMN verdict;
