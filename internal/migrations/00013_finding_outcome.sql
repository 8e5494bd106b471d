-- +goose Up
-- How sure a finding is once its reproduction ran, and how it compares
-- with the same app's previous exploration (new, still_open).
ALTER TABLE findings ADD COLUMN confidence text NOT NULL DEFAULT 'observed';
ALTER TABLE findings ADD COLUMN status text NOT NULL DEFAULT '';
CREATE INDEX jobs_tenant_explorations ON jobs (tenant_id, finished_at DESC) WHERE kind = 'exploration' AND state = 'succeeded';

-- +goose Down
DROP INDEX jobs_tenant_explorations;
ALTER TABLE findings DROP COLUMN status;
ALTER TABLE findings DROP COLUMN confidence;
