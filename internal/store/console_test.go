package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// TestArtifactsAreKeptForTheRetentionPeriod: the sweep deletes a job's
// files older than the retention and keeps the rest.
func TestArtifactsAreKeptForTheRetentionPeriod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, tx := storetest.InTx(t)
	tn, _ := storetest.Tenant(t, st, "acme", 5)
	j := submit(t, st, tn.ID, 1_000_000)
	for _, name := range []string{"step-1-old.jpg", "step-2-new.jpg"} {
		if err := st.AddArtifact(ctx, j.ID, "step", name, []byte{0xff, 0xd8}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE artifacts SET created_at = now() - interval '31 days' WHERE name = 'step-1-old.jpg'`); err != nil {
		t.Fatal(err)
	}
	n, err := st.PruneArtifacts(ctx, 30*24*time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want 1", n, err)
	}
	if _, _, err := st.Artifact(ctx, tn.ID, j.ID, "step-1-old.jpg"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the old picture is still served (%v)", err)
	}
	if _, content, err := st.Artifact(ctx, tn.ID, j.ID, "step-2-new.jpg"); err != nil || len(content) != 2 {
		t.Fatalf("the new picture is gone (%v)", err)
	}
}

// TestABulkJobsUsageHoldsItsChildren: a project repair's model calls and
// browser time are its file jobs', charged to its hold; its usage counts
// them (its page said "0 calls" and "browser time 0.0 s" beside a charge).
func TestABulkJobsUsageHoldsItsChildren(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	tn, _ := storetest.Tenant(t, st, "acme", 10)
	submit := func() store.Job {
		j, err := st.SubmitJob(ctx, store.NewJob{TenantID: tn.ID, Kind: "project_repair", Input: []byte(`{}`), Hold: 1, Subject: "jobs.project_repair." + tn.ID})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	parent, child, other := submit(), submit(), submit()
	exec := func(sql string, args ...any) {
		if _, err := st.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`UPDATE jobs SET parent_id = $1 WHERE id = $2`, parent.ID, child.ID)
	use := `INSERT INTO token_usage (job_id, attempt, seq, model, prompt_tokens, cached_tokens, completion_tokens, credits, seconds) VALUES ($1, 1, $2, $3, $4, 0, $5, $6, $7)`
	exec(use, parent.ID, 1, store.BrowserTime, 0, 0, 100, 2.0)
	exec(use, child.ID, 1, "gpt-4o-mini", 1500, 20, 300, 0.0)
	exec(use, child.ID, 2, store.BrowserTime, 0, 0, 900, 18.0)
	exec(use, other.ID, 1, "gpt-4o-mini", 999, 9, 999, 0.0)
	u, err := st.JobUsage(ctx, parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Calls != 1 || u.PromptTokens != 1500 || u.BrowserSeconds != 20 || u.CreditsMicro != 1300 || u.BrowserCreditsMicro != 1000 {
		t.Fatalf("%+v", u)
	}
	if j, err := st.GetJob(ctx, tn.ID, child.ID); err != nil || j.ParentID != parent.ID {
		t.Fatalf("the child's parent: %q %v", j.ParentID, err)
	}
}
