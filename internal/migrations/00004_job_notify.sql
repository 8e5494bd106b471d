-- +goose Up
-- Progress streams follow one shared notification instead of polling: a
-- job's state, checkpoint (a step done) or result changing notifies
-- 'job_changed' with its id. Lease heartbeats do not.
-- +goose StatementBegin
CREATE FUNCTION jobs_notify_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('job_changed', NEW.id::text);
    RETURN NULL;
END
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
CREATE TRIGGER jobs_changed AFTER UPDATE OF state, checkpoint, result ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobs_notify_change();

-- +goose Down
DROP TRIGGER jobs_changed ON jobs;
DROP FUNCTION jobs_notify_change();
