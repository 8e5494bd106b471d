// Package storetest gives tests a store on the throwaway PostgreSQL cluster
// that make test starts (DATABASE_URL): a transaction rolled back when the
// test ends (InTx), a database the test binary shares, its tests kept apart
// by tenant (Shared), or a database of the test's own (New).
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/webpilot/webpilot/internal/store"
)

// URL creates an empty, migrated database and returns its URL; it is
// dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	u, drop, err := createDatabase(context.Background())
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(drop)
	return u
}

// createDatabase creates and migrates a database named at random; drop
// deletes it.
func createDatabase(ctx context.Context) (dbURL string, drop func(), err error) {
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		return "", nil, errors.New("DATABASE_URL is not set (run the tests with make test)")
	}
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("connect: %w", err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "wptest_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	drop = func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	u.Path = "/" + name
	// Tests open many stores at once: pgx's own default pool size keeps
	// them within the test server's connections.
	q := u.Query()
	q.Set("pool_max_conns", strconv.Itoa(max(4, runtime.NumCPU())))
	u.RawQuery = q.Encode()
	st, err := store.Open(ctx, u.String())
	if err != nil {
		drop()
		return "", nil, fmt.Errorf("open: %w", err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		drop()
		return "", nil, fmt.Errorf("migrate: %w", err)
	}
	return u.String(), drop, nil
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

var shared struct {
	once sync.Once
	st   *store.Store
	err  error
}

// Shared returns a pooled store on one migrated database that every test
// of the binary uses; tests keep apart by creating their own tenants. It is
// never dropped: the cluster is a throwaway one.
func Shared(t testing.TB) *store.Store {
	t.Helper()
	shared.once.Do(func() {
		u, _, err := createDatabase(context.Background())
		if err != nil {
			shared.err = err
			return
		}
		shared.st, shared.err = store.Open(context.Background(), u)
	})
	if shared.err != nil {
		t.Fatalf("storetest: shared database: %v", shared.err)
	}
	return shared.st
}

// InTx returns a store whose every operation runs in one transaction on the
// shared database, and that transaction, for reading tables directly. The
// transaction is rolled back when the test ends: nothing it wrote remains.
// In it now() stands still and nothing runs concurrently (see
// store.FromTx).
func InTx(t testing.TB) (*store.Store, pgx.Tx) {
	t.Helper()
	tx, err := Shared(t).Pool().Begin(context.Background())
	if err != nil {
		t.Fatalf("storetest: begin: %v", err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return store.FromTx(tx), tx
}

// Execer runs a statement: a pool or a transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// ExpireLease makes a running job's lease lapse now, as if its worker had
// died long enough ago, so a test need not sleep through a lease.
func ExpireLease(t testing.TB, db Execer, jobID string) {
	t.Helper()
	if _, err := db.Exec(context.Background(),
		`UPDATE jobs SET lease_until = now() - interval '1 second' WHERE id = $1 AND state = 'running'`, jobID); err != nil {
		t.Fatalf("storetest: expire lease: %v", err)
	}
}
