// Package storetest gives each test its own freshly migrated database on the
// throwaway PostgreSQL cluster that make test starts (DATABASE_URL).
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/webpilot/webpilot/internal/store"
)

// URL creates an empty, migrated database and returns its URL; it is
// dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		t.Fatal("storetest: DATABASE_URL is not set (run the tests with make test)")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("storetest: connect: %v", err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "wptest_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("storetest: create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("storetest: parse DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	// Tests open many stores at once: pgx's own default pool size keeps
	// them within the test server's connections.
	q := u.Query()
	q.Set("pool_max_conns", strconv.Itoa(max(4, runtime.NumCPU())))
	u.RawQuery = q.Encode()
	st, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatalf("storetest: open: %v", err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatalf("storetest: migrate: %v", err)
	}
	return u.String()
}

// New returns a store on a fresh database.
func New(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), URL(t))
	if err != nil {
		t.Fatalf("storetest: open: %v", err)
	}
	t.Cleanup(st.Close)
	return st
}

// Tenant creates a tenant holding credits (in credits) and returns it with its API key.
func Tenant(t testing.TB, st *store.Store, name string, credits float64) (store.Tenant, string) {
	t.Helper()
	ctx := context.Background()
	tn, key, err := st.CreateTenant(ctx, name, 0)
	if err != nil {
		t.Fatalf("storetest: create tenant: %v", err)
	}
	if credits > 0 {
		if _, err := st.Grant(ctx, tn.ID, int64(credits*store.MicroCredits), "initial-"+tn.ID); err != nil {
			t.Fatalf("storetest: grant: %v", err)
		}
	}
	return tn, key
}
