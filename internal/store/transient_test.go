package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/webpilot/webpilot/internal/store"
)

// TestTransientIsAnAllowList: only outages and passing conflicts of the
// database are retried; every domain outcome and every error nobody named
// is final (a version conflict was once retried as if the database were
// down, because Transient listed what is not transient).
func TestTransientIsAnAllowList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"a version conflict", fmt.Errorf("decide version 3: %w", store.ErrConflict), false},
		{"not found", store.ErrNotFound, false},
		{"fenced", fmt.Errorf("write: %w", store.ErrFenced), false},
		{"a full suite", &store.SuiteFullError{Tests: 6, Max: 5}, false},
		{"a unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"an unknown table", &pgconn.PgError{Code: "42P01"}, false},
		{"a bug of ours", errors.New("decode checkpoint: unexpected end of JSON input"), false},
		{"a cancelled request", fmt.Errorf("query: %w", context.Canceled), false},
		{"a serialization failure", &pgconn.PgError{Code: "40001"}, true},
		{"a deadlock", &pgconn.PgError{Code: "40P01"}, true},
		{"a lost connection", &pgconn.PgError{Code: "08006"}, true},
		{"an admin shutdown", fmt.Errorf("claim: %w", &pgconn.PgError{Code: "57P01"}), true},
		{"the server starting", &pgconn.PgError{Code: "57P03"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"a refused dial", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"a reset connection", fmt.Errorf("receive: %w", syscall.ECONNRESET), true},
		{"a connection cut mid-answer", fmt.Errorf("receive message failed: %w", io.ErrUnexpectedEOF), true},
		{"a timeout", fmt.Errorf("query: %w", context.DeadlineExceeded), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := store.Transient(tc.err); got != tc.want {
				t.Fatalf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
