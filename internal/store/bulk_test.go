package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// storedTests writes n replayable tests into a tenant's suite.
func storedTests(t *testing.T, st *store.Store, tenantID string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id := uuid.NewString()
		if _, err := st.Pool().Exec(context.Background(),
			`INSERT INTO tests (id, tenant_id, name, tags, scenario, script, manifest, version) VALUES ($1, $2, $3, $4, '{}', 'spec', '[]', 1)`,
			id, tenantID, fmt.Sprintf("test %02d", i), []string{"smoke"}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// fanOut claims a bulk job and fans it out over tests.
func fanOut(t *testing.T, st *store.Store, parent store.Job, attempt int, tests []string) []store.OutboxItem {
	t.Helper()
	var children []store.Child
	for _, id := range tests {
		children = append(children, store.Child{TestID: id, Kind: "repair", Subject: "jobs.repair." + parent.TenantID,
			Input: func(string) (json.RawMessage, error) { return json.Marshal(map[string]string{"test_id": id}) }})
	}
	items, err := st.FanOut(context.Background(), parent.ID, attempt, children)
	if err != nil {
		t.Fatalf("fan out: %v", err)
	}
	return items
}

func jobState(t *testing.T, st *store.Store, tenantID, id string) store.Job {
	t.Helper()
	j, err := st.GetJob(context.Background(), tenantID, id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestBulkJobFansOutOnceDrawsOneBudgetAndEndsWithItsLastChild(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	tn, _ := storetest.Tenant(t, st, "bulk", 10)
	tests := storedTests(t, st, tn.ID, 3)

	got, missing, err := st.SelectTests(ctx, tn.ID, store.Selection{TestIDs: []string{tests[1], uuid.NewString()}})
	if err != nil || len(got) != 1 || got[0].ID != tests[1] || len(missing) != 1 {
		t.Fatalf("select by id: %v %v %v", got, missing, err)
	}

	parent, err := st.SubmitJob(ctx, store.NewJob{TenantID: tn.ID, Kind: "suite_repair", Input: json.RawMessage(`{}`),
		Hold: 1_000_000, Subject: "jobs.suite_repair." + tn.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimJob(ctx, parent.ID, "w1", 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	// The first attempt's lease lapsed; a second attempt fans out, and the
	// first one's late fan-out is fenced off: nothing is created twice.
	if c, err := st.ClaimJob(ctx, parent.ID, "w2", time.Minute); err != nil || c.Attempt != 2 {
		t.Fatalf("second attempt: %+v %v", c, err)
	}
	items := fanOut(t, st, parent, 2, tests)
	if len(items) != 3 {
		t.Fatalf("%d children to publish, want 3", len(items))
	}
	if _, err := st.FanOut(ctx, parent.ID, 1, nil); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("a stale attempt's fan-out: %v", err)
	}
	// A retry of the same fan-out (its worker died before acknowledging)
	// creates no child twice and republishes only what was not confirmed.
	if err := st.MarkPublished(ctx, items[0].JobID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE jobs SET state = 'running' WHERE id = $1`, parent.ID); err != nil {
		t.Fatal(err)
	}
	if again := fanOut(t, st, parent, 2, tests); len(again) != 2 {
		t.Fatalf("the retried fan-out republishes %d children, want the 2 unconfirmed", len(again))
	}
	var n int
	_ = st.Pool().QueryRow(ctx, `SELECT count(*) FROM jobs WHERE parent_id = $1`, parent.ID).Scan(&n)
	if n != 3 {
		t.Fatalf("%d children after a retried fan-out, want 3", n)
	}
	if p := jobState(t, st, tn.ID, parent.ID); p.State != store.JobStateWaiting {
		t.Fatalf("parent is %s, want waiting", p.State)
	}
	// A redelivered parent message finds nothing to claim.
	if _, err := st.ClaimJob(ctx, parent.ID, "w3", time.Minute); !errors.Is(err, store.ErrStale) {
		t.Fatalf("claiming a waiting parent: %v", err)
	}

	// Children have no hold: their calls draw from the parent's.
	c1, err := st.ClaimJob(ctx, items[0].JobID, "w1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ReserveCall(ctx, store.Reservation{JobID: c1.JobID, Attempt: 1, Seq: 1, Model: "m", Max: 600_000}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SettleCall(ctx, store.Usage{JobID: c1.JobID, Attempt: 1, Seq: 1, Model: "m", PromptTokens: 90, CompletionTokens: 10, Credits: 300_000}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.FinishJob(ctx, store.Finish{JobID: c1.JobID, Attempt: 1, State: store.JobStateSucceeded, Result: json.RawMessage(`{}`),
		TestID: tests[0], TestStatus: "healed"}); err != nil {
		t.Fatal(err)
	}
	if c := jobState(t, st, tn.ID, c1.JobID); c.HoldMicro != 0 || c.ChargedMicro != 300_000 {
		t.Fatalf("the child shows hold %d, charged %d", c.HoldMicro, c.ChargedMicro)
	}
	if p := jobState(t, st, tn.ID, parent.ID); p.State != store.JobStateWaiting || p.ChargedMicro != 300_000 {
		t.Fatalf("after one child: %s charged %d", p.State, p.ChargedMicro)
	}
	rep, err := st.BulkProgress(ctx, tn.ID, parent.ID)
	if err != nil || rep.Done != 1 || rep.Tests != 3 || rep.Verdicts["healed"] != 1 || rep.Tokens != 100 || rep.CreditsMicro != 300_000 {
		t.Fatalf("progress: %+v %v", rep, err)
	}

	// The second child cannot reserve past what is left of the one budget
	// (1.0 - 0.3); when it ends budget-exhausted the third never starts.
	c2, err := st.ClaimJob(ctx, items[1].JobID, "w1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ReserveCall(ctx, store.Reservation{JobID: c2.JobID, Attempt: 1, Seq: 1, Model: "m", Max: 800_000}); !errors.Is(err, store.ErrHoldExceeded) {
		t.Fatalf("a child reserved past the suite's budget: %v", err)
	}
	if _, err := st.FinishJob(ctx, store.Finish{JobID: c2.JobID, Attempt: 1, State: store.JobStateBudgetExhausted, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	p := jobState(t, st, tn.ID, parent.ID)
	if p.State != store.JobStateBudgetExhausted {
		t.Fatalf("parent is %s, want budget_exhausted", p.State)
	}
	var final struct{ Suite store.BulkReport }
	if err := json.Unmarshal(p.Result, &final); err != nil || final.Suite.Done != 3 || final.Suite.States[store.JobStateBudgetExhausted] != 2 {
		t.Fatalf("parent report: %s %v", p.Result, err)
	}
	if _, err := st.ClaimJob(ctx, items[2].JobID, "w1", time.Minute); !errors.Is(err, store.ErrStale) {
		t.Fatalf("a child stopped by the budget was claimed: %v", err)
	}
	// Credits add up: the hold is released, the ledger is what was charged.
	a := account(t, st, tn.ID)
	ledger, _ := st.Ledger(ctx, tn.ID, 10)
	var sum int64
	for _, e := range ledger {
		sum += e.Amount
	}
	if a.Held != 0 || a.Balance != 9_700_000 || sum != a.Balance {
		t.Fatalf("account %+v, ledger sum %d", a, sum)
	}
}

func TestCancellingABulkJobCancelsItsChildren(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	tn, _ := storetest.Tenant(t, st, "bulk-cancel", 5)
	tests := storedTests(t, st, tn.ID, 3)
	parent, err := st.SubmitJob(ctx, store.NewJob{TenantID: tn.ID, Kind: "suite_run", Input: json.RawMessage(`{}`), Subject: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimJob(ctx, parent.ID, "w1", time.Minute); err != nil {
		t.Fatal(err)
	}
	items := fanOut(t, st, parent, 1, tests)
	if _, err := st.ClaimJob(ctx, items[0].JobID, "w1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RequestCancel(ctx, tn.ID, parent.ID); err != nil {
		t.Fatal(err)
	}
	// Children not started are cancelled; the running one is asked to stop,
	// and the parent ends when it does.
	if c := jobState(t, st, tn.ID, items[1].JobID); c.State != store.JobStateCancelled {
		t.Fatalf("queued child is %s", c.State)
	}
	if stop, err := st.ExtendLease(ctx, items[0].JobID, 1, time.Minute); err != nil || !stop {
		t.Fatalf("the running child was not asked to stop: %v %v", stop, err)
	}
	if p := jobState(t, st, tn.ID, parent.ID); p.State != store.JobStateWaiting {
		t.Fatalf("parent is %s while a child still runs", p.State)
	}
	if _, err := st.FinishJob(ctx, store.Finish{JobID: items[0].JobID, Attempt: 1, State: store.JobStateCancelled, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if p := jobState(t, st, tn.ID, parent.ID); p.State != store.JobStateCancelled {
		t.Fatalf("parent is %s, want cancelled", p.State)
	}
	// Another tenant sees none of it.
	other, _ := storetest.Tenant(t, st, "bulk-other", 1)
	if _, err := st.BulkProgress(ctx, other.ID, parent.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another tenant read the report: %v", err)
	}
}
