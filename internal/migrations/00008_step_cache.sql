-- +goose Up
-- How the agent carried out a step on an app, per tenant: the next run of
-- the same step on the same page template replays these commands (robust
-- locators and the fingerprints of their targets) without the model, as
-- long as every target is still the element recorded.
CREATE TABLE step_cache (
    tenant_id   uuid NOT NULL REFERENCES tenants(id),
    origin      text NOT NULL,
    path        text NOT NULL,
    step        text NOT NULL,
    entries     jsonb NOT NULL,
    hits        int NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    used_at     timestamptz,
    PRIMARY KEY (tenant_id, origin, path, step)
);

-- +goose Down
DROP TABLE step_cache;
