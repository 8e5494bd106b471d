-- +goose Up
CREATE TABLE tenants (
    id            uuid PRIMARY KEY,
    name          text NOT NULL,
    api_key_hash  bytea NOT NULL,
    max_running   int NOT NULL DEFAULT 4,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Amounts are micro-credits (1 credit = 1,000,000).
CREATE TABLE credit_accounts (
    tenant_id  uuid PRIMARY KEY REFERENCES tenants(id),
    balance    bigint NOT NULL DEFAULT 0,
    held       bigint NOT NULL DEFAULT 0 CHECK (held >= 0)
);

CREATE TABLE jobs (
    id            uuid PRIMARY KEY,
    tenant_id     uuid NOT NULL REFERENCES tenants(id),
    parent_id     uuid REFERENCES jobs(id),
    kind          text NOT NULL,
    state         text NOT NULL DEFAULT 'queued',
    input         jsonb NOT NULL,
    result        jsonb,
    script        text,
    error         text,
    checkpoint    jsonb,
    attempt       int NOT NULL DEFAULT 0,
    worker_id     text,
    lease_until   timestamptz,
    cancel_requested boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    finished_at   timestamptz,
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_tenant_created ON jobs (tenant_id, created_at DESC, id DESC);
CREATE INDEX jobs_active ON jobs (state) WHERE state IN ('queued', 'running');

CREATE TABLE credit_holds (
    job_id     uuid PRIMARY KEY REFERENCES jobs(id),
    tenant_id  uuid NOT NULL REFERENCES tenants(id),
    amount     bigint NOT NULL CHECK (amount >= 0),
    consumed   bigint NOT NULL DEFAULT 0,
    released   boolean NOT NULL DEFAULT false
);

CREATE TABLE credit_entries (
    id               bigserial PRIMARY KEY,
    tenant_id        uuid NOT NULL REFERENCES tenants(id),
    job_id           uuid REFERENCES jobs(id),
    amount           bigint NOT NULL,
    reason           text NOT NULL,
    idempotency_key  text NOT NULL UNIQUE,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credit_entries_tenant ON credit_entries (tenant_id, id DESC);

CREATE TABLE job_outbox (
    job_id      uuid PRIMARY KEY REFERENCES jobs(id),
    subject     text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    sent_at     timestamptz
);
CREATE INDEX job_outbox_unsent ON job_outbox (created_at) WHERE sent_at IS NULL;

CREATE TABLE history (
    id           bigserial PRIMARY KEY,
    job_id       uuid NOT NULL REFERENCES jobs(id),
    attempt      int NOT NULL,
    step         int NOT NULL,
    iteration    int NOT NULL,
    kind         text NOT NULL,
    action       text NOT NULL,
    target       text,
    result       text NOT NULL,
    error        text,
    observation  jsonb,
    duration_ms  int NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX history_job ON history (job_id, id);

CREATE TABLE experiences (
    id          bigserial PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants(id),
    origin      text NOT NULL,
    text        text NOT NULL,
    uses        int NOT NULL DEFAULT 1,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, origin, text)
);

CREATE TABLE extracted_data (
    job_id   uuid NOT NULL REFERENCES jobs(id),
    key      text NOT NULL,
    value    jsonb NOT NULL,
    attempt  int NOT NULL,
    PRIMARY KEY (job_id, key)
);

CREATE TABLE token_usage (
    job_id             uuid NOT NULL REFERENCES jobs(id),
    attempt            int NOT NULL,
    seq                int NOT NULL,
    model              text NOT NULL,
    prompt_tokens      int NOT NULL,
    cached_tokens      int NOT NULL,
    completion_tokens  int NOT NULL,
    credits            bigint NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, attempt, seq)
);

CREATE TABLE tests (
    id          uuid PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants(id),
    name        text NOT NULL,
    scenario    jsonb NOT NULL,
    script      text,
    manifest    jsonb,
    last_status text,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE artifacts (
    id          bigserial PRIMARY KEY,
    job_id      uuid NOT NULL REFERENCES jobs(id),
    kind        text NOT NULL,
    name        text NOT NULL,
    content     bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE artifacts, tests, token_usage, extracted_data, experiences, history,
    job_outbox, credit_entries, credit_holds, jobs, credit_accounts, tenants;
