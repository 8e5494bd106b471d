// Package store is webpilot's PostgreSQL persistence: tenants, the credit
// ledger, jobs and their outbox, history, usage, experiences and extracted
// data. Every write made on behalf of a running job is fenced by the job's
// attempt number so that a zombie worker cannot overwrite a newer attempt.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/webpilot/webpilot/internal/migrations"
)

var (
	// ErrNotFound means the row does not exist or belongs to another tenant.
	ErrNotFound = errors.New("not found")
	// ErrInsufficientCredits means the tenant's available balance cannot cover a hold.
	ErrInsufficientCredits = errors.New("insufficient credits")
	// ErrStale means a job can no longer be claimed: it is finished or gone.
	ErrStale = errors.New("job is not claimable")
	// ErrLeased means another attempt holds a live lease; the job may be
	// claimable once it lapses (see LeasedError).
	ErrLeased = errors.New("job is leased by a running attempt")
	// ErrFenced means a write carried an attempt that is no longer the job's current one.
	ErrFenced = errors.New("attempt is no longer current")
	// ErrTenantBusy means the tenant already runs as many jobs as it may,
	// or as many as its fair share while another tenant's job waits.
	ErrTenantBusy = errors.New("tenant is at its running-jobs limit or its share")
	// ErrCancelledAbandoned means the job's tenant asked to cancel it and
	// its last attempt stopped without ending it: it is never started
	// again, and the claimer ends it cancelled (EndAbandoned).
	ErrCancelledAbandoned = errors.New("job was cancelled and its last attempt stopped")
)

// defaultMaxConns is the pool size when the database URL sets none
// (pool_max_conns).
const defaultMaxConns = 16

// Store keeps webpilot's state in PostgreSQL.
type Store struct {
	pool *pgxpool.Pool // nil for a Store inside a transaction (FromTx)
	db   executor      // what queries run on: the pool, or that transaction
}

// executor runs queries and opens transactions: a pool, or a transaction
// (whose Begin opens a savepoint).
type executor interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Begin(ctx context.Context) (pgx.Tx, error)
}

// FromTx returns a Store whose every operation runs inside tx, its own
// transactions as savepoints: a test rolls tx back to leave nothing behind.
// Inside one transaction now() does not move and nothing runs
// concurrently, so a behaviour that needs either takes a pooled Store.
// Close, Pool, Migrate and Listen need a pool and are not for it.
func FromTx(tx pgx.Tx) *Store { return &Store{db: tx} }

// Open connects to databaseURL and checks the connection.
func Open(ctx context.Context, databaseURL string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if !strings.Contains(databaseURL, "pool_max_conns") {
		// pgx's default (the CPU count, at least 4) queues a busy
		// dispatcher's submissions behind each other's round trips; the
		// work is short, so more connections hide latency, not add load.
		cfg.MaxConns = max(cfg.MaxConns, defaultMaxConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping postgres: %w", err)
	}
	return &Store{pool: pool, db: pool}, nil
}

// Close releases the pool.
func (s *Store) Close() { s.pool.Close() }

// Pool exposes the pool for tests and benchmarks that read tables directly.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Migrate applies every pending migration.
func (s *Store) Migrate(ctx context.Context) error {
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	return migrate(ctx, db)
}

func migrate(ctx context.Context, db *sql.DB) error {
	// A session lock lets a dispatcher and workers start together safely.
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// inTx runs fn in a transaction, committing on success.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.db, fn)
}

// lockRunningAttempt locks the job row and checks that attempt is still the
// current one of a running job.
func lockRunningAttempt(ctx context.Context, tx pgx.Tx, jobID string, attempt int) (tenantID string, err error) {
	var cur int
	var state JobState
	err = tx.QueryRow(ctx, `SELECT tenant_id::text, attempt, state FROM jobs WHERE id = $1 FOR UPDATE`, jobID).
		Scan(&tenantID, &cur, &state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("lock job %s: %w", jobID, err)
	}
	if cur != attempt || state != "running" {
		return "", fmt.Errorf("job %s attempt %d (current %d, %s): %w", jobID, attempt, cur, state, ErrFenced)
	}
	return tenantID, nil
}

// isUniqueViolation reports a unique constraint violation.
func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23505"
}

// Transient reports whether err is an outage or a passing conflict of the
// database, so the same operation may succeed if retried. It is an allow
// list: a server error of a transient class (connection exception,
// insufficient resources, shutdown or start, serialization failure,
// deadlock, lock not available), a connection that could not be made or
// was cut (refused, reset, closed, cut mid-answer), or a timeout. Every
// other error, domain outcomes (not found, conflict, fenced, no credits)
// and errors nobody named included, is final.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case strings.HasPrefix(pg.Code, "08"), // connection exception
			strings.HasPrefix(pg.Code, "53"),                           // insufficient resources (too many connections)
			pg.Code == "57P01", pg.Code == "57P02", pg.Code == "57P03", // shutdown, crash, cannot connect now
			pg.Code == "40001", pg.Code == "40P01", pg.Code == "55P03": // serialization, deadlock, lock not available
			return true
		}
		return false
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connect), errors.As(err, &netErr),
		errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err), pgconn.SafeToRetry(err),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if s.pool == nil {
		_, err := s.db.Exec(ctx, "SELECT 1")
		return err
	}
	return s.pool.Ping(ctx)
}

// OpenMigrated opens url and applies pending migrations, as both the
// dispatcher and the workers do at start. While the database cannot be
// reached it waits (logging why, backing off to 5 s) until ctx ends, so a
// process started before Postgres, or during an outage, comes up with it.
func OpenMigrated(ctx context.Context, url string, log *slog.Logger) (*Store, error) {
	if url == "" {
		return nil, errors.New("no database URL (DATABASE_URL)")
	}
	delay := 250 * time.Millisecond
	for {
		st, err := Open(ctx, url)
		if err == nil {
			if err = st.Migrate(ctx); err == nil {
				return st, nil
			}
			st.Close()
		}
		if !Transient(err) || ctx.Err() != nil {
			return nil, err
		}
		if log != nil {
			log.Warn("waiting for PostgreSQL", "err", err, "retry_in", delay)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (waiting for PostgreSQL: %v)", ctx.Err(), err)
		case <-time.After(delay):
		}
		delay = min(delay*2, 5*time.Second)
	}
}
