-- +goose Up
-- The agent's answers about a drifted locator, shared among the files of
-- one repair (the parts of a parent job): the first part to need one
-- claims it and asks; the others wait for its answer instead of asking
-- the same question again. A claim whose part ended or was handed back
-- unanswered is taken over.
CREATE TABLE agent_answers (
    parent_id        uuid NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    key              text NOT NULL,
    claimed_by       uuid NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    claimed_attempt  int NOT NULL,
    answer           jsonb,
    created_at       timestamptz NOT NULL DEFAULT now(),
    answered_at      timestamptz,
    PRIMARY KEY (parent_id, key)
);

-- +goose Down
DROP TABLE agent_answers;
