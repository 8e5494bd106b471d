package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
)

// NewRecorder returns the Postgres recorder the worker gives the agent for
// one attempt of a job.
func NewRecorder(st *store.Store, jobID string, attempt int, prices llm.Prices, sealer *jobs.Sealer) orchestrator.Recorder {
	return &recorder{store: st, jobID: jobID, attempt: attempt, prices: prices, sealer: sealer, retry: newRetrier(0, nil)}
}

// recorder writes what the agent does to Postgres, fenced by the attempt.
// Writes that fail because the database is briefly away are retried with
// backoff (see retrier) rather than failing the job or being dropped.
type recorder struct {
	store   *store.Store
	jobID   string
	attempt int
	prices  llm.Prices
	sealer  *jobs.Sealer
	retry   *retrier
	metrics *Metrics
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
	return r.retry.do(ctx, "record history", func() error { return r.store.RecordHistory(ctx, entries) })
}

func (r *recorder) Reserve(ctx context.Context, c orchestrator.Call) error {
	max := r.prices.MicroCredits(c.Model, c.Usage)
	err := r.retry.do(ctx, "reserve model call", func() error {
		return r.store.ReserveCall(ctx, store.Reservation{JobID: r.jobID, Attempt: r.attempt, Seq: c.Seq, Model: c.Model, Max: max})
	})
	if errors.Is(err, store.ErrHoldExceeded) {
		return fmt.Errorf("%w: %v", orchestrator.ErrOverBudget, err)
	}
	return err
}

func (r *recorder) Settle(ctx context.Context, c orchestrator.Call) (int64, int64, error) {
	var ch store.Charge
	err := r.retry.do(ctx, "settle model call", func() error {
		var err error
		ch, err = r.store.SettleCall(ctx, store.Usage{JobID: r.jobID, Attempt: r.attempt, Seq: c.Seq, Model: c.Model,
			PromptTokens: c.Usage.PromptTokens, CachedTokens: c.Usage.CachedTokens, CompletionTokens: c.Usage.CompletionTokens,
			Credits: r.prices.MicroCredits(c.Model, c.Usage)})
		return err
	})
	if err == nil && r.metrics != nil {
		r.metrics.modelCall(c.Model, c.Usage, r.prices.MicroCredits(c.Model, c.Usage))
	}
	return ch.Consumed, ch.Hold, err
}

// storedCheckpoint is a checkpoint with its storage state (cookies, local
// storage: session tokens) and its document's URL (a GET form can put typed
// values into it) sealed.
type storedCheckpoint struct {
	orchestrator.Checkpoint
	SealedState  string `json:"sealed_state,omitempty"`
	SealedDocURL string `json:"sealed_document_url,omitempty"`
}

func (r *recorder) Checkpoint(ctx context.Context, cp orchestrator.Checkpoint) error {
	sc := storedCheckpoint{Checkpoint: cp}
	var err error
	if sc.SealedState, err = r.sealState(cp.StorageState); err != nil {
		return err
	}
	sc.StorageState = nil
	if cp.Document.URL != "" {
		sealed, err := r.sealer.Seal([]byte(cp.Document.URL), "docurl:"+r.jobID)
		if err != nil {
			return fmt.Errorf("seal document url: %w", err)
		}
		sc.SealedDocURL = sealed
		sc.Document.URL = ""
	}
	b, err := json.Marshal(sc)
	if err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	return r.retry.do(ctx, "save checkpoint", func() error { return r.store.SaveCheckpoint(ctx, r.jobID, r.attempt, b) })
}

// sealState seals a checkpoint's storage state (cookies, local storage:
// session tokens) to the job.
func (r *recorder) sealState(state []byte) (string, error) {
	if len(state) == 0 {
		return "", nil
	}
	sealed, err := r.sealer.Seal(state, "state:"+r.jobID)
	if err != nil {
		return "", fmt.Errorf("seal storage state: %w", err)
	}
	return sealed, nil
}

func (r *recorder) Artifact(ctx context.Context, a orchestrator.Artifact) error {
	return r.retry.do(ctx, "store artifact", func() error { return r.store.AddArtifact(ctx, r.jobID, a.Kind, a.Name, a.Content) })
}

func (r *recorder) Extracted(ctx context.Context, key string, value json.RawMessage) error {
	return r.retry.do(ctx, "save extracted data", func() error { return r.store.SaveExtracted(ctx, r.jobID, r.attempt, key, value) })
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
	if sc.SealedDocURL != "" {
		u, err := sealer.Open(sc.SealedDocURL, "docurl:"+jobID)
		if err != nil {
			return nil, fmt.Errorf("open document url: %w", err)
		}
		sc.Document.URL = string(u)
	}
	return &sc.Checkpoint, nil
}

// stepCache is a tenant's step cache in Postgres (see orchestrator.StepCache).
type stepCache struct {
	store    *store.Store
	tenantID string
}

// NewStepCache returns the step cache of a tenant.
func NewStepCache(st *store.Store, tenantID string) orchestrator.StepCache {
	return &stepCache{store: st, tenantID: tenantID}
}

func (c *stepCache) CachedStep(ctx context.Context, key orchestrator.StepKey) ([]orchestrator.ManifestEntry, bool, error) {
	raw, ok, err := c.store.StepCacheEntry(ctx, c.tenantID, key.Origin, key.Path, key.Text)
	if err != nil || !ok {
		return nil, false, err
	}
	var entries []orchestrator.ManifestEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, false, fmt.Errorf("step cache entry of %q: %w", key.Text, err)
	}
	return entries, true, nil
}

func (c *stepCache) CacheStep(ctx context.Context, key orchestrator.StepKey, entries []orchestrator.ManifestEntry) error {
	raw, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	return c.store.PutStepCacheEntry(ctx, c.tenantID, key.Origin, key.Path, key.Text, raw)
}
