package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

func TestProjectVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.InTx(t)
	acme, _ := storetest.Tenant(t, st, "acme", 1)
	other, _ := storetest.Tenant(t, st, "other", 1)
	v1 := store.ProjectVersion{Project: "shop-e2e", Digest: strings.Repeat("a", 64), Files: 4, Bytes: 900}
	v2 := store.ProjectVersion{Project: "shop-e2e", Digest: strings.Repeat("b", 64), Files: 5, Bytes: 950}

	t.Run("an upload is the project's current version, once however often it comes", func(t *testing.T) {
		if _, created, err := st.SaveProjectVersion(ctx, acme.ID, v1, []byte("tgz1")); err != nil || !created {
			t.Fatalf("first upload: created %v, %v", created, err)
		}
		if _, created, err := st.SaveProjectVersion(ctx, acme.ID, v2, []byte("tgz2")); err != nil || !created {
			t.Fatalf("second upload: created %v, %v", created, err)
		}
		again, created, err := st.SaveProjectVersion(ctx, acme.ID, v1, []byte("tgz1"))
		if err != nil || created || !again.Current {
			t.Fatalf("the first content again: created %v, current %v, %v", created, again.Current, err)
		}
		cur, err := st.ProjectVersion(ctx, acme.ID, "shop-e2e", "")
		if err != nil || cur.Digest != v1.Digest || cur.Files != 4 {
			t.Fatalf("current = %+v, %v", cur, err)
		}
		if old, err := st.ProjectVersion(ctx, acme.ID, "shop-e2e", v2.Digest); err != nil || old.Current {
			t.Fatalf("the second version: %+v, %v", old, err)
		}
	})
	t.Run("the runner's listing is kept with the version", func(t *testing.T) {
		tests := json.RawMessage(`[{"file":"cart.spec.ts","titles":["adds"]}]`)
		if err := st.SetProjectTests(ctx, acme.ID, v1.Digest, tests, nil); err != nil {
			t.Fatal(err)
		}
		cur, _ := st.ProjectVersion(ctx, acme.ID, "shop-e2e", "")
		if cur.ListedAt == nil || !strings.Contains(string(cur.Tests), "cart.spec.ts") {
			t.Fatalf("listing not kept: %+v", cur)
		}
		if b, err := st.ProjectArchive(ctx, acme.ID, v1.Digest); err != nil || string(b) != "tgz1" {
			t.Fatalf("archive %q, %v", b, err)
		}
	})
	t.Run("the same files under a second name are a project of their own", func(t *testing.T) {
		copyOf := v1
		copyOf.Project = "shop-copy"
		saved, created, err := st.SaveProjectVersion(ctx, acme.ID, copyOf, []byte("tgz1"))
		if err != nil || !created || !saved.Current || saved.Project != "shop-copy" {
			t.Fatalf("the same content as another project: %+v created %v, %v", saved, created, err)
		}
		if saved.ListedAt == nil || !strings.Contains(string(saved.Tests), "cart.spec.ts") {
			t.Errorf("the listing of the same files was not carried over: %+v", saved)
		}
		list, err := st.Projects(ctx, acme.ID)
		if err != nil || len(list) != 2 || list[0].Project != "shop-copy" || list[1].Project != "shop-e2e" {
			t.Fatalf("projects %+v, %v", list, err)
		}
		for _, name := range []string{"shop-e2e", "shop-copy"} {
			if cur, err := st.ProjectVersion(ctx, acme.ID, name, ""); err != nil || cur.Project != name || cur.Digest != v1.Digest {
				t.Errorf("%s's current version: %+v, %v", name, cur, err)
			}
		}
	})
	t.Run("another tenant sees none of it", func(t *testing.T) {
		if _, err := st.ProjectVersion(ctx, other.ID, "shop-e2e", ""); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant read the project: %v", err)
		}
		if _, err := st.ProjectArchive(ctx, other.ID, v1.Digest); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant read the archive: %v", err)
		}
		if list, err := st.Projects(ctx, other.ID); err != nil || len(list) != 0 {
			t.Fatalf("another tenant lists %v, %v", list, err)
		}
	})
}
