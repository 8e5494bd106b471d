-- +goose Up
-- What an exploration found: one row per distinct bug of a job (signature),
-- however many places it was seen (occurrences), with its evidence, the
-- action path that first reached it and its verified reproduction.
CREATE TABLE findings (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    job_id        uuid NOT NULL REFERENCES jobs(id),
    seq           int NOT NULL,
    type          text NOT NULL,
    severity      text NOT NULL,
    title         text NOT NULL,
    url           text NOT NULL,
    state         text NOT NULL,
    signature     text NOT NULL,
    evidence      jsonb NOT NULL,
    path          jsonb NOT NULL,
    occurrences   jsonb NOT NULL DEFAULT '[]',
    reproduction  jsonb,
    attempt       int NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (job_id, signature),
    UNIQUE (job_id, seq)
);

-- A finding is progress of its job: its stream tells at once.
-- +goose StatementBegin
CREATE FUNCTION findings_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('job_changed', NEW.job_id::text);
    RETURN NULL;
END
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
CREATE TRIGGER findings_changed AFTER INSERT OR UPDATE ON findings
    FOR EACH ROW EXECUTE FUNCTION findings_notify();

-- An exploration's journeys are its children, keyed like a suite's tests
-- so that a fan-out retried after a crash creates none twice.
ALTER TABLE jobs ADD COLUMN child_key text;
CREATE UNIQUE INDEX jobs_parent_key ON jobs (parent_id, child_key) WHERE parent_id IS NOT NULL AND child_key IS NOT NULL;

-- +goose Down
DROP INDEX jobs_parent_key;
ALTER TABLE jobs DROP COLUMN child_key;
DROP TRIGGER findings_changed ON findings;
DROP FUNCTION findings_notify();
DROP TABLE findings;
