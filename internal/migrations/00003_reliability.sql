-- +goose Up
-- A tenant can never spend more than it holds: the last line of defence
-- under the reservations below.
ALTER TABLE credit_accounts ADD CONSTRAINT credit_accounts_covered CHECK (balance >= 0 AND held <= balance);

-- Model calls are reserved at their maximum cost before they are sent and
-- settled at their actual cost (never above the reservation) when the reply
-- arrives; a reservation left by a dead attempt is settled at its amount.
ALTER TABLE credit_holds ADD COLUMN reserved bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0);
ALTER TABLE credit_holds ADD CONSTRAINT credit_holds_within CHECK (consumed + reserved <= amount);
ALTER TABLE token_usage ADD COLUMN state text NOT NULL DEFAULT 'settled' CHECK (state IN ('reserved', 'settled'));
ALTER TABLE token_usage ADD COLUMN reserved bigint NOT NULL DEFAULT 0;
ALTER TABLE token_usage ADD COLUMN billed bigint NOT NULL DEFAULT 0; -- what the reported usage priced at
ALTER TABLE token_usage ADD COLUMN settled_at timestamptz;
CREATE INDEX token_usage_reserved ON token_usage (job_id) WHERE state = 'reserved';

-- A job waiting behind its tenant's running cap is parked (its message is
-- acknowledged) and republished when a slot frees, so waiting never spends
-- deliveries. Each publish of a job carries its own message id (seq).
ALTER TABLE jobs ADD COLUMN parked boolean NOT NULL DEFAULT false;
CREATE INDEX jobs_parked ON jobs (tenant_id, created_at) WHERE parked;
ALTER TABLE job_outbox ADD COLUMN seq int NOT NULL DEFAULT 0;
ALTER TABLE job_outbox ADD COLUMN republished int NOT NULL DEFAULT 0;
ALTER TABLE job_outbox ADD COLUMN next_check timestamptz NOT NULL DEFAULT now();

-- Submissions retried with the same Idempotency-Key return the first job.
CREATE TABLE submit_keys (
    tenant_id     uuid NOT NULL REFERENCES tenants(id),
    key           text NOT NULL,
    request_hash  bytea NOT NULL,
    job_id        uuid NOT NULL REFERENCES jobs(id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, key)
);
CREATE INDEX submit_keys_created ON submit_keys (created_at);

-- +goose Down
DROP TABLE submit_keys;
ALTER TABLE job_outbox DROP COLUMN next_check, DROP COLUMN republished, DROP COLUMN seq;
DROP INDEX jobs_parked;
ALTER TABLE jobs DROP COLUMN parked;
DROP INDEX token_usage_reserved;
ALTER TABLE token_usage DROP COLUMN settled_at, DROP COLUMN billed, DROP COLUMN reserved, DROP COLUMN state;
ALTER TABLE credit_holds DROP CONSTRAINT credit_holds_within;
ALTER TABLE credit_holds DROP COLUMN reserved;
ALTER TABLE credit_accounts DROP CONSTRAINT credit_accounts_covered;
