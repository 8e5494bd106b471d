package worker

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// repairAsker is the agent a repair asks about a failing call no run
// recorded (suite.Asker): each call is reserved from the job's hold
// before it is sent and settled at its usage, as a scenario's calls are,
// and the job's secrets are taken out of what is sent.
type repairAsker struct {
	model  orchestrator.Model
	rec    *recorder
	prices llm.Prices
	redact func(string) string
	mu     sync.Mutex
	seq    int
}

// newRepairAsker is the asker of one attempt of a repair job, or nil
// when no model is configured (the agent is then never asked).
func (w *Worker) newRepairAsker(claim store.Claim, redact func(string) string) suite.Asker {
	if w.model == nil {
		return nil
	}
	return &repairAsker{model: w.model, prices: w.cfg.Prices, redact: redact,
		rec: &recorder{store: w.store, jobID: claim.JobID, attempt: claim.Attempt, prices: w.cfg.Prices, sealer: w.sealer, retry: w.retry, metrics: w.cfg.Metrics}}
}

func (a *repairAsker) Ask(ctx context.Context, req llm.Request) (llm.Reply, int64, error) {
	a.mu.Lock()
	a.seq++
	seq := a.seq
	a.mu.Unlock()
	req.Messages = slices.Clone(req.Messages)
	for i := range req.Messages {
		req.Messages[i].Text = a.redact(req.Messages[i].Text)
	}
	if err := a.rec.Reserve(ctx, orchestrator.Call{Seq: seq, Model: a.model.Model(), Usage: llm.MaxUsage(req)}); err != nil {
		if errors.Is(err, orchestrator.ErrOverBudget) {
			return llm.Reply{}, 0, suite.ErrAskOverBudget
		}
		return llm.Reply{}, 0, fmt.Errorf("reserve model call: %w", err)
	}
	reply, err := a.model.Chat(ctx, req)
	model := cmp.Or(reply.Model, a.model.Model())
	if _, _, serr := a.rec.Settle(context.WithoutCancel(ctx), orchestrator.Call{Seq: seq, Model: model, Usage: reply.Usage}); serr != nil {
		return reply, 0, fmt.Errorf("settle model call: %w", serr)
	}
	return reply, a.prices.MicroCredits(model, reply.Usage), err
}

// partAnswers shares the agent's answers among the files of a repair
// fanned out (suite.Answers), through the store: the first file's repair
// to need an answer claims the question and asks; the others wait for it
// and are not charged.
type partAnswers struct {
	store  *store.Store
	claim  store.Claim
	redact func(string) string
	log    *slog.Logger
	// poll is how often a waiting file looks for the answer.
	poll time.Duration
}

// Answer is the answer a file's repair recorded for key, or the one ask
// gives when this one holds the question. An answer that holds one of the
// job's secrets is not shared; nor is one the store cannot keep: the
// file asks for itself rather than fail its tests.
func (a *partAnswers) Answer(ctx context.Context, key string, ask func(context.Context) ([]byte, error)) ([]byte, bool, error) {
	sum := sha256.Sum256([]byte(key))
	k := hex.EncodeToString(sum[:])
	for {
		got, mine, err := a.store.ClaimAgentAnswer(ctx, a.claim.TenantID, a.claim.JobID, a.claim.Attempt, k)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, false, ctx.Err()
		case err != nil:
			a.log.Warn("the agent's answers are not shared", "error", err)
			ans, err := ask(ctx)
			return ans, true, err
		case got != nil:
			return got, false, nil
		case mine:
			ans, err := ask(ctx)
			keep := context.WithoutCancel(ctx)
			if err != nil || a.redact(string(ans)) != string(ans) {
				if rerr := a.store.ReleaseAgentAnswer(keep, a.claim.TenantID, a.claim.JobID, a.claim.Attempt, k); rerr != nil {
					a.log.Warn("the agent's question is not released", "error", rerr)
				}
				return ans, true, err
			}
			if serr := a.store.SaveAgentAnswer(keep, a.claim.TenantID, a.claim.JobID, a.claim.Attempt, k, ans); serr != nil {
				a.log.Warn("the agent's answer is not shared", "error", serr)
			}
			return ans, true, nil
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(a.poll):
		}
	}
}
