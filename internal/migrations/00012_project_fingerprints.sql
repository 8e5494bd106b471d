-- +goose Up
-- Each test's calls with their target elements, from its last passing run
-- of the version: what re-location starts from when the app drifts.
ALTER TABLE project_versions ADD COLUMN fingerprints jsonb NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE project_versions DROP COLUMN fingerprints;
