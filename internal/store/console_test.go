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
