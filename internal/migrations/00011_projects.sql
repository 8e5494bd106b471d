-- +goose Up
-- Customers' own @playwright/test projects, as uploaded: each upload is a
-- version addressed by its content's digest, per tenant; a project names
-- its current version. Tests are listed by the runner, not parsed.
CREATE TABLE project_versions (
    tenant_id   uuid NOT NULL REFERENCES tenants(id),
    digest      text NOT NULL,
    project     text NOT NULL,
    archive     bytea NOT NULL,
    files       int NOT NULL,
    bytes       int NOT NULL,
    parent      text,            -- the version a patch was applied to
    tests       jsonb,           -- the runner's listing; NULL until listed
    list_errors jsonb,
    listed_at   timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, digest)
);

CREATE TABLE projects (
    tenant_id  uuid NOT NULL REFERENCES tenants(id),
    name       text NOT NULL,
    current    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, name),
    FOREIGN KEY (tenant_id, current) REFERENCES project_versions (tenant_id, digest)
);

-- +goose Down
DROP TABLE projects;
DROP TABLE project_versions;
