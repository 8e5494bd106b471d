-- +goose Up
-- A tenant's plan may bound how long any one run of its own tests takes
-- (0: the deployment's ceiling, WEBPILOT_RUN_WALL).
ALTER TABLE tenants ADD COLUMN max_run_seconds integer NOT NULL DEFAULT 0 CHECK (max_run_seconds >= 0);

-- +goose Down
ALTER TABLE tenants DROP COLUMN max_run_seconds;
