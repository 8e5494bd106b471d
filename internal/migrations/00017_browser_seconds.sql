-- +goose Up
-- Browser time is metered like model calls (a reservation, then a charge):
-- its usage rows keep the seconds they charged for.
ALTER TABLE token_usage ADD COLUMN seconds double precision NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE token_usage DROP COLUMN seconds;
