package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

func submit(t *testing.T, st *store.Store, tenantID string, hold int64) store.Job {
	t.Helper()
	j, err := st.SubmitJob(context.Background(), store.NewJob{TenantID: tenantID, Kind: "scenario",
		Input: json.RawMessage(`{"steps":["x"]}`), Hold: hold, Subject: "jobs.scenario." + tenantID})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func account(t *testing.T, st *store.Store, id string) store.Account {
	t.Helper()
	a, err := st.Account(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestCreditLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Shared(t) // a refused write would end a test transaction
	tn, _ := storetest.Tenant(t, st, "acme", 5)

	j := submit(t, st, tn.ID, 2_000_000)
	if a := account(t, st, tn.ID); a.Held != 2_000_000 || a.Available != 3_000_000 {
		t.Fatalf("after hold: %+v", a)
	}
	// A hold the available balance cannot cover is refused and writes nothing.
	if _, err := st.SubmitJob(ctx, store.NewJob{TenantID: tn.ID, Kind: "scenario", Input: json.RawMessage(`{}`),
		Hold: 3_000_001, Subject: "s"}); !errors.Is(err, store.ErrInsufficientCredits) {
		t.Fatalf("oversized hold: %v", err)
	}
	jobs, _ := st.ListJobs(ctx, tn.ID, store.JobFilter{Limit: 10})
	if len(jobs) != 1 {
		t.Fatalf("a refused submit left %d jobs", len(jobs))
	}

	c, err := st.ClaimJob(ctx, j.ID, "w1", time.Minute)
	if err != nil || c.Attempt != 1 {
		t.Fatalf("claim: %+v %v", c, err)
	}
	// A call is reserved at its maximum, then settled at what it reported.
	if err := st.ReserveCall(ctx, store.Reservation{JobID: j.ID, Attempt: 1, Seq: 1, Model: "m", Max: 800_000}); err != nil {
		t.Fatal(err)
	}
	// What is left of the hold (2.0 - 0.8 reserved) cannot cover a second call of 1.3.
	if err := st.ReserveCall(ctx, store.Reservation{JobID: j.ID, Attempt: 1, Seq: 2, Model: "m", Max: 1_300_000}); !errors.Is(err, store.ErrHoldExceeded) {
		t.Fatalf("over-hold reservation: %v", err)
	}
	u := store.Usage{JobID: j.ID, Attempt: 1, Seq: 1, Model: "m", PromptTokens: 100, CompletionTokens: 10, Credits: 500_000}
	ch, err := st.SettleCall(ctx, u)
	if err != nil || ch.Consumed != 500_000 || ch.Hold != 2_000_000 {
		t.Fatalf("usage: %+v %v", ch, err)
	}
	// Settling the same call again (a retried write) charges nothing more.
	if ch, err = st.SettleCall(ctx, u); err != nil || ch.Consumed != 500_000 {
		t.Fatalf("duplicate usage: %+v %v", ch, err)
	}
	if a := account(t, st, tn.ID); a.Balance != 4_500_000 || a.Held != 1_500_000 {
		t.Fatalf("after charge: %+v", a)
	}
	// An endpoint that reports more than the call could have used is charged
	// the reservation, never more: the tenant never spends past its hold.
	if err := st.ReserveCall(ctx, store.Reservation{JobID: j.ID, Attempt: 1, Seq: 2, Model: "m", Max: 1_000_000}); err != nil {
		t.Fatal(err)
	}
	if ch, err = st.SettleCall(ctx, store.Usage{JobID: j.ID, Attempt: 1, Seq: 2, Model: "m", Credits: 9_000_000}); err != nil || ch.Consumed != 1_500_000 {
		t.Fatalf("overreported usage: %+v %v", ch, err)
	}
	// A zombie's reservation (an older attempt) is fenced off.
	if err := st.ReserveCall(ctx, store.Reservation{JobID: j.ID, Attempt: 0, Seq: 3, Model: "m", Max: 1}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("stale attempt accepted: %v", err)
	}
	if _, err := st.FinishJob(ctx, store.Finish{JobID: j.ID, Attempt: 1, State: store.JobStateSucceeded, Result: json.RawMessage(`{}`), Script: "x"}); err != nil {
		t.Fatal(err)
	}
	if a := account(t, st, tn.ID); a.Balance != 3_500_000 || a.Held != 0 || a.Available != 3_500_000 {
		t.Fatalf("after settle: %+v", a)
	}
	// Finishing twice is fenced: the job is no longer running.
	if _, err := st.FinishJob(ctx, store.Finish{JobID: j.ID, Attempt: 1, State: store.JobStateFailed, Result: json.RawMessage(`{}`)}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("second finish: %v", err)
	}
	// The database refuses a negative balance whatever the code above it does.
	if _, err := st.Pool().Exec(ctx, `UPDATE credit_accounts SET balance = -1 WHERE tenant_id = $1`, tn.ID); err == nil {
		t.Fatal("a negative balance was accepted")
	}
	ledger, _ := st.Ledger(ctx, tn.ID, 10)
	if len(ledger) != 3 || ledger[0].Amount != -1_000_000 || ledger[1].Amount != -500_000 || ledger[2].Amount != 5_000_000 {
		t.Fatalf("ledger: %+v", ledger)
	}
}

func TestClaimFencingAndFairness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Shared(t)
	tn, key, err := st.CreateTenant(ctx, "solo", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Grant(ctx, tn.ID, 10_000_000, "g-"+tn.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Authenticate(ctx, key); err != nil || got.ID != tn.ID {
		t.Fatalf("authenticate: %v", err)
	}
	if _, err := st.Authenticate(ctx, key+"x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a wrong key authenticated: %v", err)
	}
	a, b := submit(t, st, tn.ID, 1), submit(t, st, tn.ID, 1)
	if _, err := st.ClaimJob(ctx, a.ID, "w1", time.Second); err != nil {
		t.Fatal(err)
	}
	// The tenant may run one job at a time: the second is parked, not claimed.
	if _, err := st.ClaimJob(ctx, b.ID, "w2", time.Minute); !errors.Is(err, store.ErrTenantBusy) {
		t.Fatalf("second running job allowed: %v", err)
	}
	// A running job with a live lease is not claimable; once it lapses it is, under a new attempt.
	var leased *store.LeasedError
	// (A second-long lease: a loaded machine must not let it lapse before the check.)
	if _, err := st.ClaimJob(ctx, a.ID, "w2", time.Minute); !errors.As(err, &leased) || leased.Remaining > time.Second {
		t.Fatalf("leased job re-claimed, or lease not reported: %v", err)
	}
	storetest.ExpireLease(t, st.Pool(), a.ID)
	c, err := st.ClaimJob(ctx, a.ID, "w2", time.Minute)
	if err != nil || c.Attempt != 2 {
		t.Fatalf("reclaim after lease: %+v %v", c, err)
	}
	if _, err := st.ExtendLease(ctx, a.ID, 1, time.Minute); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("the old attempt extended its lease: %v", err)
	}
	if err := st.SaveCheckpoint(ctx, a.ID, 1, json.RawMessage(`{}`)); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("the old attempt checkpointed: %v", err)
	}
	// Another tenant cannot see the job.
	other, _ := storetest.Tenant(t, st, "other", 0)
	if _, err := st.GetJob(ctx, other.ID, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("cross-tenant read: %v", err)
	}
	// Cancelling a queued job releases its hold at once.
	if _, err := st.RequestCancel(ctx, tn.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if acct := account(t, st, tn.ID); acct.Held != 1 {
		t.Fatalf("held after cancelling the queued job = %d, want 1 (the running job's)", acct.Held)
	}
	// A job a live attempt holds is not failed by the max-deliveries path...
	if err := st.FailUndeliverable(ctx, a.ID, "gave up"); err != nil {
		t.Fatal(err)
	}
	if j, _ := st.GetJob(ctx, tn.ID, a.ID); j.State != store.JobStateRunning {
		t.Fatalf("a leased job was failed: %s", j.State)
	}
	// ...but one whose lease lapsed is, and its hold is released.
	if err := st.ReleaseLease(ctx, a.ID, 2); err != nil {
		t.Fatal(err)
	}
	if err := st.FailUndeliverable(ctx, a.ID, "gave up"); err != nil {
		t.Fatal(err)
	}
	if acct := account(t, st, tn.ID); acct.Held != 0 || acct.Balance != 10_000_000 {
		t.Fatalf("after failing: %+v", acct)
	}
}

func TestParkedJobIsWokenWhenASlotFrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.InTx(t) // WakeParked looks at every tenant
	tn, _, err := st.CreateTenant(ctx, "capped", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Grant(ctx, tn.ID, 10, "g"); err != nil {
		t.Fatal(err)
	}
	a, b := submit(t, st, tn.ID, 1), submit(t, st, tn.ID, 1)
	ca, err := st.ClaimJob(ctx, a.ID, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimJob(ctx, b.ID, "w", time.Minute); !errors.Is(err, store.ErrTenantBusy) {
		t.Fatalf("claim beyond the cap: %v", err)
	}
	// While its tenant is at the cap, a parked job is not offered again.
	if woken, err := st.WakeParked(ctx); err != nil || len(woken) != 0 {
		t.Fatalf("a parked job was woken while its tenant is at its cap: %v %v", woken, err)
	}
	woken, err := st.FinishJob(ctx, store.Finish{JobID: a.ID, Attempt: ca.Attempt, State: store.JobStateSucceeded, Result: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	// The freed slot wakes b under a new message id, so the stream does not
	// drop it as a repeat of its first publish.
	if len(woken) != 1 || woken[0].JobID != b.ID || woken[0].Seq != 1 {
		t.Fatalf("woken = %+v, want job b at seq 1", woken)
	}
	if cb, err := st.ClaimJob(ctx, b.ID, "w", time.Minute); err != nil || cb.Attempt != 1 {
		t.Fatalf("woken job not claimable as its first attempt: %+v %v", cb, err)
	}
}

// TestATenantRunningYieldsTheNextSlotToOneWaiting: tenant A runs a job
// and has two more queued; tenant B's one job arrived after them. A's next
// claim yields the slot (parked, its message acknowledged) to B's, which
// runs beside A's first; when B's ends, A's yielded job is woken and runs,
// and with nobody else waiting A takes slots up to its cap again. Before,
// A's queued files took every free slot while B's waited behind them.
func TestATenantRunningYieldsTheNextSlotToOneWaiting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t) // fair share looks at every tenant's queue
	a, _ := storetest.Tenant(t, st, "many-files", 5)
	b, _ := storetest.Tenant(t, st, "one-file", 5)
	a1, a2, a3 := submit(t, st, a.ID, 1), submit(t, st, a.ID, 1), submit(t, st, a.ID, 1)
	b1 := submit(t, st, b.ID, 1)
	if _, err := st.ClaimJob(ctx, a1.ID, "w", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimJob(ctx, a2.ID, "w", time.Minute); !errors.Is(err, store.ErrTenantBusy) {
		t.Fatalf("A's second job, with B's waiting: %v", err)
	}
	cb, err := st.ClaimJob(ctx, b1.ID, "w", time.Minute)
	if err != nil {
		t.Fatalf("B's job: %v", err)
	}
	// A and B run one each and nobody waits: A takes a slot again.
	if _, err := st.ClaimJob(ctx, a3.ID, "w", time.Minute); err != nil {
		t.Fatalf("A's third job, nobody else waiting: %v", err)
	}
	woken, err := st.FinishJob(ctx, store.Finish{JobID: b1.ID, Attempt: cb.Attempt, State: store.JobStateSucceeded, Result: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(woken) != 1 || woken[0].JobID != a2.ID {
		t.Fatalf("B's finish woke %+v, want A's yielded job", woken)
	}
	if c, err := st.ClaimJob(ctx, a2.ID, "w", time.Minute); err != nil || c.Attempt != 1 {
		t.Fatalf("A's yielded job: %+v %v", c, err)
	}
}

func TestOrphanedReservationIsChargedByTheNextAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, tx := storetest.InTx(t)
	tn, _ := storetest.Tenant(t, st, "crashy", 5)
	j := submit(t, st, tn.ID, 2_000_000)
	if _, err := st.ClaimJob(ctx, j.ID, "w1", 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// The worker reserves a call and dies before the reply: nobody settles it.
	if err := st.ReserveCall(ctx, store.Reservation{JobID: j.ID, Attempt: 1, Seq: 1, Model: "m", Max: 300_000}); err != nil {
		t.Fatal(err)
	}
	storetest.ExpireLease(t, tx, j.ID)
	c, err := st.ClaimJob(ctx, j.ID, "w2", time.Minute)
	if err != nil || c.Attempt != 2 {
		t.Fatalf("reclaim: %+v %v", c, err)
	}
	if a := account(t, st, tn.ID); a.Balance != 4_700_000 || a.Held != 1_700_000 {
		t.Fatalf("the orphaned call was not charged at its reservation: %+v", a)
	}
	// The dead attempt's late settle (a zombie) changes nothing.
	if _, err := st.SettleCall(ctx, store.Usage{JobID: j.ID, Attempt: 1, Seq: 1, Model: "m", Credits: 100_000}); err != nil {
		t.Fatal(err)
	}
	if a := account(t, st, tn.ID); a.Balance != 4_700_000 {
		t.Fatalf("a zombie settle changed the balance: %+v", a)
	}
}

func TestIdempotentSubmit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.InTx(t)
	tn, _ := storetest.Tenant(t, st, "retrying", 5)
	n := store.NewJob{TenantID: tn.ID, Kind: "scenario", Input: json.RawMessage(`{}`), Hold: 1_000_000, Subject: "s",
		IdempotencyKey: "k-1", RequestHash: []byte("a")}
	first, err := st.SubmitJob(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	var reused *store.KeyReusedError
	if _, err := st.SubmitJob(ctx, n); !errors.As(err, &reused) || reused.JobID != first.ID || !reused.SameRequest {
		t.Fatalf("retry: %v", err)
	}
	n.RequestHash = []byte("b")
	if _, err := st.SubmitJob(ctx, n); !errors.As(err, &reused) || reused.SameRequest {
		t.Fatalf("reuse for another request: %v", err)
	}
	if a := account(t, st, tn.ID); a.Held != 1_000_000 {
		t.Fatalf("retries placed more holds: %+v", a)
	}
}

func TestGrant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// grants are (tenant index, key) pairs, in order.
		grants []struct {
			tenant int
			key    string
		}
		want [2]int64 // each tenant's balance after
	}{
		{"a retried grant is a no-op", []struct {
			tenant int
			key    string
		}{{0, "k"}, {0, "k"}}, [2]int64{1_000_000, 0}},
		{"another tenant's grant under the same key is its own", []struct {
			tenant int
			key    string
		}{{0, "k"}, {1, "k"}}, [2]int64{1_000_000, 1_000_000}},
		{"different keys grant twice", []struct {
			tenant int
			key    string
		}{{0, "k1"}, {0, "k2"}}, [2]int64{2_000_000, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, _ := storetest.InTx(t)
			a, _ := storetest.Tenant(t, st, "a", 0)
			b, _ := storetest.Tenant(t, st, "b", 0)
			tenants := []string{a.ID, b.ID}
			for _, g := range tc.grants {
				if _, err := st.Grant(ctx, tenants[g.tenant], 1_000_000, g.key); err != nil {
					t.Fatal(err)
				}
			}
			for i, id := range tenants {
				if got := account(t, st, id).Balance; got != tc.want[i] {
					t.Errorf("tenant %d holds %d, want %d", i, got, tc.want[i])
				}
			}
		})
	}
}

// A claim that waited for the tenant's slot starts when it took the slot, not
// when its transaction began: under load a claim begins, the running job
// finishes, and only then does the claim count the tenant's running jobs.
// Stamping it with the transaction's start made two jobs of a tenant capped
// at one look as if they had run at the same time.
func TestAClaimStartsAfterTheJobWhoseSlotItTook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Shared(t)
	tn, _ := storetest.Tenant(t, st, "one-at-a-time", 1)
	if _, err := st.Pool().Exec(ctx, `UPDATE tenants SET max_running = 1 WHERE id = $1`, tn.ID); err != nil {
		t.Fatal(err)
	}
	a, b := submit(t, st, tn.ID, 1), submit(t, st, tn.ID, 1)
	if _, err := st.ClaimJob(ctx, a.ID, "w1", time.Minute); err != nil {
		t.Fatal(err)
	}
	// Hold b's row so that b's claim begins and then waits.
	hold, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(ctx, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, b.ID); err != nil {
		t.Fatal(err)
	}
	claimed := make(chan error, 1)
	go func() {
		_, err := st.ClaimJob(ctx, b.ID, "w2", time.Minute)
		claimed <- err
	}()
	// Wait until the claim is blocked on the row.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		_ = st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE OF j%'`).Scan(&waiting)
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the claim never waited on the job's row")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := st.FinishJob(ctx, store.Finish{JobID: a.ID, Attempt: 1, State: store.JobStateSucceeded, Result: json.RawMessage(`{}`), Script: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-claimed; err != nil {
		t.Fatalf("the claim after the slot freed: %v", err)
	}
	var overlap bool
	if err := st.Pool().QueryRow(ctx, `SELECT b.started_at < a.finished_at FROM jobs a, jobs b WHERE a.id = $1 AND b.id = $2`,
		a.ID, b.ID).Scan(&overlap); err != nil {
		t.Fatal(err)
	}
	if overlap {
		t.Fatal("the second job started before the first, whose slot it took, finished")
	}
}

// TestADeathIsBlamedOnlyOnTheJobAloneInIt: a worker process dies holding
// two tenants' jobs: neither is counted a crash (either may have killed
// it), and both are claimed to run alone; the one that then dies alone in
// its worker is counted, and the other, which ended, never is.
func TestADeathIsBlamedOnlyOnTheJobAloneInIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Shared(t)
	a, _ := storetest.Tenant(t, st, "bomber", 10_000_000)
	b, _ := storetest.Tenant(t, st, "bystander", 10_000_000)
	ja, jb := submit(t, st, a.ID, 1), submit(t, st, b.ID, 1)
	claim := func(id, worker string, crashes int, alone bool) store.Claim {
		t.Helper()
		c, err := st.ClaimJob(ctx, id, worker, time.Minute)
		if err != nil || c.Crashes != crashes || c.RunAlone != alone {
			t.Fatalf("claim by %s: %+v %v, want %d crashes, alone %v", worker, c, err, crashes, alone)
		}
		return c
	}
	// The workers' names are this run's own: the database is shared, and
	// a job another test (or an earlier run on a reused cluster) left
	// claimed by the same name would be the worker's too.
	worker := func(n int) string { return fmt.Sprintf("worker-%d-%s", n, ja.ID[:8]) }
	claim(ja.ID, worker(1), 0, false)
	claim(jb.ID, worker(1), 0, false)
	// worker-1 dies; worker-2 takes both, one after the other.
	storetest.ExpireLease(t, st.Pool(), ja.ID)
	storetest.ExpireLease(t, st.Pool(), jb.ID)
	claim(ja.ID, worker(2), 0, true)
	cb := claim(jb.ID, worker(3), 0, true)
	if _, err := st.FinishJob(ctx, store.Finish{JobID: jb.ID, Attempt: cb.Attempt, State: store.JobStateSucceeded, Result: json.RawMessage(`{}`), Script: "x"}); err != nil {
		t.Fatal(err)
	}
	// worker-2, running the bomber's job alone, dies: that is its crash.
	storetest.ExpireLease(t, st.Pool(), ja.ID)
	claim(ja.ID, worker(4), 1, true)
	got, err := st.GetJob(ctx, b.ID, jb.ID)
	if err != nil || got.Crashes != 0 || got.State != store.JobStateSucceeded {
		t.Fatalf("the bystander: %+v %v", got, err)
	}
}

// TestAnAttemptThatDiedIsCountedAndACancelledJobNeverStartsAgain: a lapsed
// lease its worker held counts as a crash (a hand-back does not), and a
// job whose cancellation was asked for while its worker was dead is ended
// cancelled instead of claimed again, its hold released.
func TestAnAttemptThatDiedIsCountedAndACancelledJobNeverStartsAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Shared(t)
	tn, _ := storetest.Tenant(t, st, "crashy", 10_000_000)
	j := submit(t, st, tn.ID, 1)
	// The worker's name is this run's own (see TestADeathIsBlamedOnlyOnTheJobAloneInIt).
	w := "w-" + j.ID[:8]
	claim := func(want int) store.Claim {
		t.Helper()
		c, err := st.ClaimJob(ctx, j.ID, w, time.Minute)
		if err != nil || c.Crashes != want {
			t.Fatalf("claim: %+v %v, want %d crashes", c, err, want)
		}
		return c
	}
	claim(0)
	storetest.ExpireLease(t, st.Pool(), j.ID) // its worker died
	c := claim(1)
	if err := st.ReleaseLease(ctx, j.ID, c.Attempt); err != nil { // a drain hands it back
		t.Fatal(err)
	}
	claim(1)
	storetest.ExpireLease(t, st.Pool(), j.ID)
	claim(2)

	// Cancelled while its worker is dead: never claimed again.
	if _, err := st.RequestCancel(ctx, tn.ID, j.ID); err != nil {
		t.Fatal(err)
	}
	storetest.ExpireLease(t, st.Pool(), j.ID)
	if _, err := st.ClaimJob(ctx, j.ID, w, time.Minute); !errors.Is(err, store.ErrCancelledAbandoned) {
		t.Fatalf("a cancelled job whose worker died was claimed: %v", err)
	}
	if err := st.EndAbandoned(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	got, _ := st.GetJob(ctx, tn.ID, j.ID)
	if got.State != store.JobStateCancelled || got.Attempt != 4 {
		t.Fatalf("job %s after %d attempts, want cancelled after 4", got.State, got.Attempt)
	}
	if _, err := st.ClaimJob(ctx, j.ID, w, time.Minute); !errors.Is(err, store.ErrStale) {
		t.Fatalf("a cancelled job was claimable: %v", err)
	}
	if a := account(t, st, tn.ID); a.Held != 0 {
		t.Fatalf("held %d after the cancel", a.Held)
	}
}
