-- +goose Up
-- How many attempts of a job ended with their worker's death (the lease
-- lapsed while the job ran, not handed back): a job that keeps killing its
-- workers is stopped instead of being delivered to the next one.
ALTER TABLE jobs ADD COLUMN crashes int NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE jobs DROP COLUMN crashes;
