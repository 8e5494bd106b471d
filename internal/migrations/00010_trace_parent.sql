-- +goose Up
-- The W3C traceparent of the request that submitted a job, carried in its
-- NATS message so the worker's spans join the same trace (tracing only).
ALTER TABLE job_outbox ADD COLUMN trace_parent text;

-- +goose Down
ALTER TABLE job_outbox DROP COLUMN trace_parent;
