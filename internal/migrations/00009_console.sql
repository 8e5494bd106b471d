-- +goose Up
-- Console sign-ins. The browser's cookie holds a random token; only its
-- hash is kept, with the tenant it signs in and the token its forms carry
-- against cross-site requests.
CREATE TABLE console_sessions (
    token_hash  bytea PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants(id),
    csrf        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
-- Artifacts are kept for a retention period (step pictures add up).
CREATE INDEX artifacts_created ON artifacts (created_at);

-- +goose Down
DROP INDEX artifacts_created;
DROP TABLE console_sessions;
