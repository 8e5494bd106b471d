package worker

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/webpilot/webpilot/jobs"
	"github.com/webpilot/webpilot/llm"
	"github.com/webpilot/webpilot/orchestrator"
	"github.com/webpilot/webpilot/store"
)

// NewRecorder returns the Postgres recorder the worker gives the agent for
// one attempt of a job.
func NewRecorder(st *store.Store, jobID string, attempt int, prices llm.Prices, sealer *jobs.Sealer) orchestrator.Recorder {
	return &recorder{store: st, jobID: jobID, attempt: attempt, prices: prices, sealer: sealer}
}

// recorder writes what the agent does to Postgres, fenced by the attempt.
type recorder struct {
	store   *store.Store
	jobID   string
	attempt int
	prices  llm.Prices
	sealer  *jobs.Sealer
}

func (r *recorder) History(ctx context.Context, events []orchestrator.Event) error {
	entries := make([]store.HistoryEntry, len(events))
	for i, e := range events {
		result := "ok"
		if !e.OK {
			result = "failed"
		}
		entries[i] = store.HistoryEntry{JobID: r.jobID, Attempt: r.attempt, Step: e.Step + 1, Iteration: e.Iteration,
			Kind: e.Kind, Action: e.Action, Target: e.Target, Result: result, Error: e.Error,
			Observation: e.Observation, Duration: e.Duration}
	}
	return r.store.RecordHistory(ctx, entries)
}

func (r *recorder) Usage(ctx context.Context, c orchestrator.Call) (int64, int64, error) {
	ch, err := r.store.RecordUsage(ctx, store.Usage{JobID: r.jobID, Attempt: r.attempt, Seq: c.Seq, Model: c.Model,
		PromptTokens: c.Usage.PromptTokens, CachedTokens: c.Usage.CachedTokens, CompletionTokens: c.Usage.CompletionTokens,
		Credits: r.prices.MicroCredits(c.Model, c.Usage)})
	return ch.Consumed, ch.Hold, err
}

// storedCheckpoint is a checkpoint with its storage state (cookies, local
// storage: session tokens) sealed.
type storedCheckpoint struct {
	orchestrator.Checkpoint
	SealedState string `json:"sealed_state,omitempty"`
}

func (r *recorder) Checkpoint(ctx context.Context, cp orchestrator.Checkpoint) error {
	sc := storedCheckpoint{Checkpoint: cp}
	if len(cp.StorageState) > 0 {
		sealed, err := r.sealer.Seal(cp.StorageState, "state:"+r.jobID)
		if err != nil {
			return fmt.Errorf("seal storage state: %w", err)
		}
		sc.SealedState = sealed
		sc.StorageState = nil
	}
	b, err := json.Marshal(sc)
	if err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	return r.store.SaveCheckpoint(ctx, r.jobID, r.attempt, b)
}

func (r *recorder) Extracted(ctx context.Context, key string, value json.RawMessage) error {
	return r.store.SaveExtracted(ctx, r.jobID, r.attempt, key, value)
}

// loadCheckpoint decodes a stored checkpoint, opening its storage state.
func loadCheckpoint(raw json.RawMessage, jobID string, sealer *jobs.Sealer) (*orchestrator.Checkpoint, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var sc storedCheckpoint
	if err := json.Unmarshal(raw, &sc); err != nil {
		return nil, fmt.Errorf("decode checkpoint: %w", err)
	}
	if sc.SealedState != "" {
		st, err := sealer.Open(sc.SealedState, "state:"+jobID)
		if err != nil {
			return nil, fmt.Errorf("open storage state: %w", err)
		}
		sc.StorageState = st
	}
	return &sc.Checkpoint, nil
}
