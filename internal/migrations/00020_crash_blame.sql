-- +goose Up
-- Which worker process a job was held by when that process died
-- (crashed_on), so that a death is counted only against the job that was
-- alone in it (jobs that died together are each run alone next), and
-- whether the job's next attempts must run with no other job beside them.
ALTER TABLE jobs ADD COLUMN crashed_on text, ADD COLUMN run_alone boolean NOT NULL DEFAULT false;
CREATE INDEX jobs_held_by ON jobs (worker_id) WHERE state = 'running';
CREATE INDEX jobs_crashed_on ON jobs (crashed_on) WHERE crashed_on IS NOT NULL;

-- +goose Down
DROP INDEX jobs_crashed_on;
DROP INDEX jobs_held_by;
ALTER TABLE jobs DROP COLUMN crashed_on, DROP COLUMN run_alone;
