package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// ended is what a terminal transition leaves on a job row.
type ended struct {
	state    store.JobState
	errText  string
	leased   bool
	finished bool
}

func endedRow(t *testing.T, tx pgx.Tx, id string) ended {
	t.Helper()
	var e ended
	var errText *string
	if err := tx.QueryRow(context.Background(),
		`SELECT state, error, lease_until IS NOT NULL, finished_at IS NOT NULL FROM jobs WHERE id = $1`, id).
		Scan(&e.state, &errText, &e.leased, &e.finished); err != nil {
		t.Fatal(err)
	}
	if errText != nil {
		e.errText = *errText
	}
	return e
}

// TestEveryEndingStampsTheJob: however a job ends, it is in a terminal
// state with its lease cleared, its end time stamped and its reason kept.
func TestEveryEndingStampsTheJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// run ends a job of tenant's and returns its id.
		run  func(t *testing.T, st *store.Store, tx pgx.Tx, tenantID string) string
		want ended
	}{{
		name: "an attempt finishes it",
		run: func(t *testing.T, st *store.Store, _ pgx.Tx, tenantID string) string {
			j := submit(t, st, tenantID, 1)
			c, err := st.ClaimJob(ctx, j.ID, "w", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.FinishJob(ctx, store.Finish{JobID: j.ID, Attempt: c.Attempt, State: store.JobStateFailed,
				Result: json.RawMessage(`{}`), Error: "step 2 failed"}); err != nil {
				t.Fatal(err)
			}
			return j.ID
		},
		want: ended{state: store.JobStateFailed, errText: "step 2 failed", finished: true},
	}, {
		name: "its tenant cancels it before it starts",
		run: func(t *testing.T, st *store.Store, _ pgx.Tx, tenantID string) string {
			j := submit(t, st, tenantID, 1)
			if _, err := st.RequestCancel(ctx, tenantID, j.ID); err != nil {
				t.Fatal(err)
			}
			return j.ID
		},
		want: ended{state: store.JobStateCancelled, errText: "cancelled before it started", finished: true},
	}, {
		name: "its deliveries run out after its attempt's lease lapsed",
		run: func(t *testing.T, st *store.Store, tx pgx.Tx, tenantID string) string {
			j := submit(t, st, tenantID, 1)
			if _, err := st.ClaimJob(ctx, j.ID, "w", time.Minute); err != nil {
				t.Fatal(err)
			}
			storetest.ExpireLease(t, tx, j.ID)
			if err := st.FailUndeliverable(ctx, j.ID, "gave up after 5 deliveries"); err != nil {
				t.Fatal(err)
			}
			return j.ID
		},
		want: ended{state: store.JobStateFailed, errText: "gave up after 5 deliveries", finished: true},
	}, {
		name: "its deliveries run out while an attempt holds it: it runs on",
		run: func(t *testing.T, st *store.Store, _ pgx.Tx, tenantID string) string {
			j := submit(t, st, tenantID, 1)
			if _, err := st.ClaimJob(ctx, j.ID, "w", time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := st.FailUndeliverable(ctx, j.ID, "gave up"); err != nil {
				t.Fatal(err)
			}
			return j.ID
		},
		want: ended{state: store.JobStateRunning, leased: true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, tx := storetest.InTx(t)
			tn, _ := storetest.Tenant(t, st, "ends", 5)
			id := tc.run(t, st, tx, tn.ID)
			if got := endedRow(t, tx, id); got != tc.want {
				t.Fatalf("the job is left %+v, want %+v", got, tc.want)
			}
			if a := account(t, st, tn.ID); tc.want.finished && a.Held != 0 {
				t.Fatalf("an ended job still holds %d", a.Held)
			}
		})
	}
}
