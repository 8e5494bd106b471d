package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/webpilot/webpilot/internal/store/storetest"
)

// TestTheStepCacheIsATenantsOwn: an entry is read back by its tenant only,
// replacing it keeps one entry, use is counted, and clearing one origin or
// all of a tenant's entries leaves the other tenant's alone.
func TestTheStepCacheIsATenantsOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.InTx(t)
	a, _ := storetest.Tenant(t, st, "cache-a", 10)
	b, _ := storetest.Tenant(t, st, "cache-b", 10)
	const app, other = "http://shop.test", "http://blog.test"
	put := func(tenant, origin, step, entries string) {
		t.Helper()
		if err := st.PutStepCacheEntry(ctx, tenant, origin, "/", step, json.RawMessage(entries)); err != nil {
			t.Fatal(err)
		}
	}
	put(a.ID, app, "buy the cheapest fruit", `[{"command":{"action":"click"}}]`)
	put(a.ID, app, "buy the cheapest fruit", `[{"command":{"action":"dblclick"}}]`) // replaced
	put(a.ID, other, "read the newest post", `[]`)
	put(b.ID, app, "buy the cheapest fruit", `[{"command":{"action":"hover"}}]`)

	got, ok, err := st.StepCacheEntry(ctx, a.ID, app, "/", "buy the cheapest fruit")
	if err != nil || !ok || string(got) != `[{"command": {"action": "dblclick"}}]` {
		t.Fatalf("tenant a reads %s (found %v, %v), want its replaced entry", got, ok, err)
	}
	if _, ok, _ := st.StepCacheEntry(ctx, b.ID, other, "/", "read the newest post"); ok {
		t.Fatal("tenant b reads tenant a's entry")
	}
	list, err := st.StepCache(ctx, a.ID, "", 100)
	if err != nil || len(list) != 2 {
		t.Fatalf("tenant a lists %d entries (%v), want 2", len(list), err)
	}
	for _, e := range list {
		if e.Origin == app && (e.Hits != 1 || e.UsedAt == nil) {
			t.Errorf("the used entry shows %d hits", e.Hits)
		}
	}

	if n, err := st.ClearStepCache(ctx, a.ID, app); err != nil || n != 1 {
		t.Fatalf("clearing tenant a's %s entries deleted %d (%v), want 1", app, n, err)
	}
	if _, ok, _ := st.StepCacheEntry(ctx, a.ID, other, "/", "read the newest post"); !ok {
		t.Fatal("clearing one origin deleted another's entry")
	}
	if n, _ := st.ClearStepCache(ctx, a.ID, ""); n != 1 {
		t.Fatalf("clearing all of tenant a's entries deleted %d, want 1", n)
	}
	if _, ok, _ := st.StepCacheEntry(ctx, b.ID, app, "/", "buy the cheapest fruit"); !ok {
		t.Fatal("tenant a's clear deleted tenant b's entry")
	}
}
