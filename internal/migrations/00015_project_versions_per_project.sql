-- +goose Up
-- A version is addressed by its content's digest within its project: two
-- projects of a tenant may hold the same files (the same suite uploaded
-- under a second name answered 500, its version found under the first).
ALTER TABLE projects DROP CONSTRAINT projects_tenant_id_current_fkey;
ALTER TABLE project_versions DROP CONSTRAINT project_versions_pkey;
ALTER TABLE project_versions ADD PRIMARY KEY (tenant_id, project, digest);
CREATE INDEX project_versions_digest ON project_versions (tenant_id, digest);
ALTER TABLE projects ADD FOREIGN KEY (tenant_id, name, current) REFERENCES project_versions (tenant_id, project, digest);

-- +goose Down
ALTER TABLE projects DROP CONSTRAINT projects_tenant_id_name_current_fkey;
DROP INDEX project_versions_digest;
ALTER TABLE project_versions DROP CONSTRAINT project_versions_pkey;
ALTER TABLE project_versions ADD PRIMARY KEY (tenant_id, digest);
ALTER TABLE projects ADD FOREIGN KEY (tenant_id, current) REFERENCES project_versions (tenant_id, digest);
