-- +goose Up
-- A tenant's stored suite holds one test per scenario name; each finished
-- job updates it. source_job says which job produced the current script.
ALTER TABLE tests ADD COLUMN source_job uuid REFERENCES jobs(id);
ALTER TABLE tests ADD CONSTRAINT tests_tenant_name UNIQUE (tenant_id, name);

-- +goose Down
ALTER TABLE tests DROP CONSTRAINT tests_tenant_name;
ALTER TABLE tests DROP COLUMN source_job;
