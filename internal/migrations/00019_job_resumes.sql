-- +goose Up
-- A bulk job that runs again once its children have all ended (a project
-- repair merges what each file's repair healed and verifies it once),
-- instead of ending with their report.
ALTER TABLE jobs ADD COLUMN resumes boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE jobs DROP COLUMN resumes;
