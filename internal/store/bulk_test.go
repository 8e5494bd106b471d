package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// storedTests writes n replayable tests into a tenant's suite.
func storedTests(t *testing.T, db storetest.Execer, tenantID string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id := uuid.NewString()
		if _, err := db.Exec(context.Background(),
			`INSERT INTO tests (id, tenant_id, name, tags, scenario, script, manifest, version) VALUES ($1, $2, $3, $4, '{}', 'spec', '[]', 1)`,
			id, tenantID, fmt.Sprintf("test %02d", i), []string{"smoke"}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// fanOut fans a claimed bulk job out over tests.
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

// bulkBundle is a tenant with ten credits, three stored tests and a bulk
// repair job of theirs with a one-credit budget, in a transaction rolled
// back after the test.
type bulkBundle struct {
	st     *store.Store
	tx     pgx.Tx
	tenant store.Tenant
	tests  []string
	parent store.Job
}

func setupBulk(t *testing.T) *bulkBundle {
	t.Helper()
	// A database of its own: a claim while the tenant runs another job
	// yields to any other tenant's waiting job (fair share), and a shared
	// database holds other tests' tenants and jobs, committed (a child's
	// claim was parked: "tenant is at its running-jobs limit or its share").
	tx, err := storetest.New(t).Pool().Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	st := store.FromTx(tx)
	tn, _ := storetest.Tenant(t, st, "bulk", 10)
	b := &bulkBundle{st: st, tx: tx, tenant: tn, tests: storedTests(t, tx, tn.ID, 3)}
	b.parent, err = st.SubmitJob(context.Background(), store.NewJob{TenantID: tn.ID, Kind: "suite_repair", Input: json.RawMessage(`{}`),
		Hold: 1_000_000, Subject: "jobs.suite_repair." + tn.ID})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fannedOut claims the bulk job and fans it out over the three tests.
func (b *bulkBundle) fannedOut(t *testing.T) []store.OutboxItem {
	t.Helper()
	if _, err := b.st.ClaimJob(context.Background(), b.parent.ID, "w1", time.Minute); err != nil {
		t.Fatal(err)
	}
	return fanOut(t, b.st, b.parent, 1, b.tests)
}

// runChild claims a child and finishes it in state after one model call
// charged charge micro-credits.
func (b *bulkBundle) runChild(t *testing.T, childID, testID string, charge int64, state store.JobState, verdict string) {
	t.Helper()
	ctx := context.Background()
	c, err := b.st.ClaimJob(ctx, childID, "w1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if charge > 0 {
		if err := b.st.ReserveCall(ctx, store.Reservation{JobID: c.JobID, Attempt: 1, Seq: 1, Model: "m", Max: 600_000}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.SettleCall(ctx, store.Usage{JobID: c.JobID, Attempt: 1, Seq: 1, Model: "m", PromptTokens: 90,
			CompletionTokens: 10, Credits: charge}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.st.FinishJob(ctx, store.Finish{JobID: c.JobID, Attempt: 1, State: state, Result: json.RawMessage(`{}`),
		TestID: testID, TestStatus: verdict}); err != nil {
		t.Fatal(err)
	}
}

func TestBulkJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("selects tests by id and names the missing ones", func(t *testing.T) {
		t.Parallel()
		b := setupBulk(t)
		got, missing, err := b.st.SelectTests(ctx, b.tenant.ID, store.Selection{TestIDs: []string{b.tests[1], uuid.NewString()}})
		if err != nil || len(got) != 1 || got[0].ID != b.tests[1] || len(missing) != 1 {
			t.Fatalf("select by id: %v %v %v", got, missing, err)
		}
	})

	t.Run("a lapsed attempt's fan-out is fenced off and the new attempt's creates each child once", func(t *testing.T) {
		t.Parallel()
		b := setupBulk(t)
		if _, err := b.st.ClaimJob(ctx, b.parent.ID, "w1", time.Minute); err != nil {
			t.Fatal(err)
		}
		storetest.ExpireLease(t, b.tx, b.parent.ID)
		if c, err := b.st.ClaimJob(ctx, b.parent.ID, "w2", time.Minute); err != nil || c.Attempt != 2 {
			t.Fatalf("second attempt: %+v %v", c, err)
		}
		if items := fanOut(t, b.st, b.parent, 2, b.tests); len(items) != 3 {
			t.Fatalf("%d children to publish, want 3", len(items))
		}
		if _, err := b.st.FanOut(ctx, b.parent.ID, 1, nil); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("a stale attempt's fan-out: %v", err)
		}
	})

	t.Run("a retried fan-out creates no child twice and republishes only the unconfirmed", func(t *testing.T) {
		t.Parallel()
		b := setupBulk(t)
		items := b.fannedOut(t)
		if err := b.st.MarkPublished(ctx, items[0].JobID); err != nil {
			t.Fatal(err)
		}
		// Its worker died before acknowledging: the message comes again.
		if _, err := b.tx.Exec(ctx, `UPDATE jobs SET state = 'running' WHERE id = $1`, b.parent.ID); err != nil {
			t.Fatal(err)
		}
		if again := fanOut(t, b.st, b.parent, 1, b.tests); len(again) != 2 {
			t.Fatalf("the retried fan-out republishes %d children, want the 2 unconfirmed", len(again))
		}
		var n int
		if err := b.tx.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE parent_id = $1`, b.parent.ID).Scan(&n); err != nil || n != 3 {
			t.Fatalf("%d children after a retried fan-out, want 3 (%v)", n, err)
		}
	})

	t.Run("a parent that resumes is queued again by its last child, with its hold, and finds its children", func(t *testing.T) {
		t.Parallel()
		b := setupBulk(t)
		if _, err := b.st.ClaimJob(ctx, b.parent.ID, "w1", time.Minute); err != nil {
			t.Fatal(err)
		}
		var children []store.Child
		for _, f := range []string{"tests/a.spec.ts", "tests/b.spec.ts"} {
			children = append(children, store.Child{Key: f, Kind: "project_repair", Subject: "jobs.project_repair." + b.tenant.ID,
				Input: func(string) (json.RawMessage, error) { return json.Marshal(map[string]any{"files": []string{f}}) }})
		}
		items, err := b.st.FanOutThenResume(ctx, b.parent.ID, 1, children)
		if err != nil || len(items) != 2 {
			t.Fatalf("fan out: %v %v", items, err)
		}
		finish := func(id string) []store.OutboxItem {
			c, err := b.st.ClaimJob(ctx, id, "w2", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			woken, err := b.st.FinishJob(ctx, store.Finish{JobID: c.JobID, Attempt: c.Attempt, State: store.JobStateSucceeded,
				Result: json.RawMessage(`{"healed":1}`)})
			if err != nil {
				t.Fatal(err)
			}
			return woken
		}
		if woken := finish(items[0].JobID); len(woken) != 0 {
			t.Fatalf("the first child woke %+v", woken)
		}
		woken := finish(items[1].JobID)
		if len(woken) != 1 || woken[0].JobID != b.parent.ID || woken[0].Seq == 0 {
			t.Fatalf("the last child woke %+v, want the parent's message once more", woken)
		}
		released := func() bool {
			var r bool
			if err := b.tx.QueryRow(ctx, `SELECT released FROM credit_holds WHERE job_id = $1`, b.parent.ID).Scan(&r); err != nil {
				t.Fatal(err)
			}
			return r
		}
		if p := jobState(t, b.st, b.tenant.ID, b.parent.ID); p.State != store.JobStateQueued || released() {
			t.Fatalf("the parent is %s, its hold released %v", p.State, released())
		}
		c, err := b.st.ClaimJob(ctx, b.parent.ID, "w3", time.Minute)
		if err != nil || c.Attempt != 2 {
			t.Fatalf("its next attempt: %+v %v", c, err)
		}
		kids, err := b.st.Children(ctx, b.tenant.ID, b.parent.ID)
		if err != nil || len(kids) != 2 || kids[0].Key != "tests/a.spec.ts" || kids[1].State != store.JobStateSucceeded || string(kids[1].Result) != `{"healed": 1}` {
			t.Fatalf("children %+v %v", kids, err)
		}
		if other, err := b.st.Children(ctx, uuid.NewString(), b.parent.ID); err != nil || len(other) != 0 {
			t.Fatalf("another tenant sees %+v %v", other, err)
		}
		if _, err := b.st.FinishJob(ctx, store.Finish{JobID: c.JobID, Attempt: 2, State: store.JobStateSucceeded, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if p := jobState(t, b.st, b.tenant.ID, b.parent.ID); p.State != store.JobStateSucceeded || !released() {
			t.Fatalf("after its own end the parent is %s, its hold released %v", p.State, released())
		}
	})

	t.Run("a cancelled parent that resumes ends cancelled with its children", func(t *testing.T) {
		t.Parallel()
		b := setupBulk(t)
		if _, err := b.st.ClaimJob(ctx, b.parent.ID, "w1", time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.FanOutThenResume(ctx, b.parent.ID, 1, []store.Child{{Key: "a", Kind: "project_repair", Subject: "s",
			Input: func(string) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }}}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.RequestCancel(ctx, b.tenant.ID, b.parent.ID); err != nil {
			t.Fatal(err)
		}
		if p := jobState(t, b.st, b.tenant.ID, b.parent.ID); p.State != store.JobStateCancelled {
			t.Fatalf("the parent is %s", p.State)
		}
	})

	t.Run("a waiting parent cannot be claimed again", func(t *testing.T) {
		t.Parallel()
		b := setupBulk(t)
		b.fannedOut(t)
		if p := jobState(t, b.st, b.tenant.ID, b.parent.ID); p.State != store.JobStateWaiting {
			t.Fatalf("parent is %s, want waiting", p.State)
		}
		if _, err := b.st.ClaimJob(ctx, b.parent.ID, "w3", time.Minute); !errors.Is(err, store.ErrStale) {
			t.Fatalf("claiming a waiting parent: %v", err)
		}
	})

	t.Run("children hold nothing and draw on the parent's budget", func(t *testing.T) {
		t.Parallel()
		b := setupBulk(t)
		items := b.fannedOut(t)
		b.runChild(t, items[0].JobID, b.tests[0], 300_000, store.JobStateSucceeded, "healed")
		if c := jobState(t, b.st, b.tenant.ID, items[0].JobID); c.HoldMicro != 0 || c.ChargedMicro != 300_000 {
			t.Fatalf("the child shows hold %d, charged %d", c.HoldMicro, c.ChargedMicro)
		}
		if p := jobState(t, b.st, b.tenant.ID, b.parent.ID); p.State != store.JobStateWaiting || p.ChargedMicro != 300_000 {
			t.Fatalf("after one child: %s charged %d", p.State, p.ChargedMicro)
		}
		rep, err := b.st.BulkProgress(ctx, b.tenant.ID, b.parent.ID)
		if err != nil || rep.Done != 1 || rep.Tests != 3 || rep.Verdicts["healed"] != 1 || rep.Tokens != 100 || rep.CreditsMicro != 300_000 {
			t.Fatalf("progress: %+v %v", rep, err)
		}
	})

	t.Run("a spent budget stops the children not started and the ledger is what was charged", func(t *testing.T) {
		t.Parallel()
		b := setupBulk(t)
		items := b.fannedOut(t)
		b.runChild(t, items[0].JobID, b.tests[0], 300_000, store.JobStateSucceeded, "healed")
		// The second child cannot reserve past what is left of the one
		// budget (1.0 - 0.3); when it ends budget-exhausted the third never
		// starts.
		c2, err := b.st.ClaimJob(ctx, items[1].JobID, "w1", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.st.ReserveCall(ctx, store.Reservation{JobID: c2.JobID, Attempt: 1, Seq: 1, Model: "m", Max: 800_000}); !errors.Is(err, store.ErrHoldExceeded) {
			t.Fatalf("a child reserved past the suite's budget: %v", err)
		}
		if _, err := b.st.FinishJob(ctx, store.Finish{JobID: c2.JobID, Attempt: 1, State: store.JobStateBudgetExhausted, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		p := jobState(t, b.st, b.tenant.ID, b.parent.ID)
		if p.State != store.JobStateBudgetExhausted {
			t.Fatalf("parent is %s, want budget_exhausted", p.State)
		}
		var final struct{ Suite store.BulkReport }
		if err := json.Unmarshal(p.Result, &final); err != nil || final.Suite.Done != 3 || final.Suite.States[store.JobStateBudgetExhausted] != 2 {
			t.Fatalf("parent report: %s %v", p.Result, err)
		}
		if _, err := b.st.ClaimJob(ctx, items[2].JobID, "w1", time.Minute); !errors.Is(err, store.ErrStale) {
			t.Fatalf("a child stopped by the budget was claimed: %v", err)
		}
		a := account(t, b.st, b.tenant.ID)
		ledger, _ := b.st.Ledger(ctx, b.tenant.ID, 10)
		var sum int64
		for _, e := range ledger {
			sum += e.Amount
		}
		if a.Held != 0 || a.Balance != 9_700_000 || sum != a.Balance {
			t.Fatalf("account %+v, ledger sum %d", a, sum)
		}
	})

	t.Run("cancelling it cancels the children not started and it ends with the running one", func(t *testing.T) {
		t.Parallel()
		b := setupBulk(t)
		items := b.fannedOut(t)
		if _, err := b.st.ClaimJob(ctx, items[0].JobID, "w1", time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.RequestCancel(ctx, b.tenant.ID, b.parent.ID); err != nil {
			t.Fatal(err)
		}
		if c := jobState(t, b.st, b.tenant.ID, items[1].JobID); c.State != store.JobStateCancelled {
			t.Fatalf("queued child is %s", c.State)
		}
		if stop, err := b.st.ExtendLease(ctx, items[0].JobID, 1, time.Minute); err != nil || !stop {
			t.Fatalf("the running child was not asked to stop: %v %v", stop, err)
		}
		if p := jobState(t, b.st, b.tenant.ID, b.parent.ID); p.State != store.JobStateWaiting {
			t.Fatalf("parent is %s while a child still runs", p.State)
		}
		if _, err := b.st.FinishJob(ctx, store.Finish{JobID: items[0].JobID, Attempt: 1, State: store.JobStateCancelled, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if p := jobState(t, b.st, b.tenant.ID, b.parent.ID); p.State != store.JobStateCancelled {
			t.Fatalf("parent is %s, want cancelled", p.State)
		}
	})

	t.Run("another tenant sees none of it", func(t *testing.T) {
		t.Parallel()
		b := setupBulk(t)
		b.fannedOut(t)
		other, _ := storetest.Tenant(t, b.st, "bulk-other", 1)
		if _, err := b.st.BulkProgress(ctx, other.ID, b.parent.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant read the report: %v", err)
		}
		if _, err := b.st.GetJob(ctx, other.ID, b.parent.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant read the job: %v", err)
		}
	})
}

// TestAProjectRunIsRedWhenAFileIs: a project run whose files' jobs end
// failed (a test of each failed) ends failed, saying how many files did,
// as the runner's own exit is red; one whose files all passed succeeds
// (it was shown succeeded with both its files failed).
func TestAProjectRunIsRedWhenAFileIs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		files []store.JobState
		want  store.JobState
		why   string
	}{
		{[]store.JobState{store.JobStateFailed, store.JobStateFailed}, store.JobStateFailed, "2 of 2 files failed"},
		{[]store.JobState{store.JobStateSucceeded, store.JobStateFailed}, store.JobStateFailed, "1 of 2 files failed"},
		{[]store.JobState{store.JobStateSucceeded, store.JobStateSucceeded}, store.JobStateSucceeded, ""},
	} {
		t.Run(tc.why, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st, _ := storetest.InTx(t)
			tn, _ := storetest.Tenant(t, st, "runs", 10)
			run, err := st.SubmitJob(ctx, store.NewJob{TenantID: tn.ID, Kind: "project_run", Input: json.RawMessage(`{"name":"shop"}`),
				Hold: 1_000_000, Subject: "jobs.project_run." + tn.ID})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.ClaimJob(ctx, run.ID, "w1", time.Minute); err != nil {
				t.Fatal(err)
			}
			var children []store.Child
			for _, f := range []string{"tests/a.spec.ts", "tests/b.spec.ts"} {
				children = append(children, store.Child{Key: f, Kind: "project_file", Subject: "jobs.project_file." + tn.ID,
					Input: func(string) (json.RawMessage, error) {
						return json.Marshal(map[string]any{"name": "shop", "files": []string{f}})
					}})
			}
			items, err := st.FanOut(ctx, run.ID, 1, children)
			if err != nil || len(items) != 2 {
				t.Fatalf("fan out: %v %d", err, len(items))
			}
			for i, it := range items {
				if _, err := st.ClaimJob(ctx, it.JobID, "w1", time.Minute); err != nil {
					t.Fatal(err)
				}
				if _, err := st.FinishJob(ctx, store.Finish{JobID: it.JobID, Attempt: 1, State: tc.files[i], Result: json.RawMessage(`{}`)}); err != nil {
					t.Fatal(err)
				}
			}
			j := jobState(t, st, tn.ID, run.ID)
			if j.State != tc.want || j.Error != tc.why {
				t.Fatalf("the run ended %s (%q), want %s (%q)", j.State, j.Error, tc.want, tc.why)
			}
		})
	}
}
