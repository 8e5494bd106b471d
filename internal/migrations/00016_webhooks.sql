-- +goose Up
-- A tenant's webhooks: where its events are sent and which. The signing
-- secret is sealed (WEBPILOT_SECRET_KEY) to the webhook's id; it is shown
-- once, when the webhook is made.
CREATE TABLE webhooks (
    id            uuid PRIMARY KEY,
    tenant_id     uuid NOT NULL REFERENCES tenants(id),
    url           text NOT NULL,
    events        text[] NOT NULL,
    secret_sealed text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    deleted_at    timestamptz
);
CREATE INDEX webhooks_tenant ON webhooks (tenant_id) WHERE deleted_at IS NULL;

-- A delivery is written in the transaction that ends its job (the outbox of
-- events), then sent at least once: claimed for a while (next_attempt_at
-- moves on before the request), retried with backoff until an answer in
-- 2xx or its attempts run out.
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    webhook_id      uuid NOT NULL REFERENCES webhooks(id),
    tenant_id       uuid NOT NULL REFERENCES tenants(id),
    event           text NOT NULL,
    job_id          uuid REFERENCES jobs(id),
    payload         jsonb NOT NULL,
    state           text NOT NULL DEFAULT 'pending',
    attempts        int NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (webhook_id, created_at DESC);

CREATE TABLE webhook_attempts (
    delivery_id  uuid NOT NULL REFERENCES webhook_deliveries(id),
    n            int NOT NULL,
    at           timestamptz NOT NULL DEFAULT now(),
    status       int NOT NULL DEFAULT 0,
    error        text,
    duration_ms  int NOT NULL DEFAULT 0,
    PRIMARY KEY (delivery_id, n)
);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
