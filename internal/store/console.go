package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ConsoleSession is a signed-in console: its tenant and the token its forms
// must carry.
type ConsoleSession struct {
	Tenant    Tenant
	CSRF      string
	ExpiresAt time.Time
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// CreateConsoleSession signs a tenant in to the console for ttl. The token
// is returned once, for the cookie; only its hash is kept.
func (s *Store) CreateConsoleSession(ctx context.Context, tenantID string, ttl time.Duration) (token string, err error) {
	token = randomToken()
	_, err = s.db.Exec(ctx, `INSERT INTO console_sessions (token_hash, tenant_id, csrf, expires_at)
		VALUES ($1, $2, $3, now() + $4::interval)`, tokenHash(token), tenantID, randomToken(), ttl)
	if err != nil {
		return "", fmt.Errorf("create console session: %w", err)
	}
	return token, nil
}

// ConsoleSession returns the unexpired session a cookie's token names.
func (s *Store) ConsoleSession(ctx context.Context, token string) (ConsoleSession, error) {
	var sess ConsoleSession
	t := &sess.Tenant
	err := s.db.QueryRow(ctx, `SELECT t.id::text, t.name, t.max_running, t.max_run_seconds, t.created_at, c.csrf, c.expires_at
		FROM console_sessions c JOIN tenants t ON t.id = c.tenant_id
		WHERE c.token_hash = $1 AND c.expires_at > now()`, tokenHash(token)).
		Scan(&t.ID, &t.Name, &t.MaxRunning, &t.MaxRunSeconds, &t.CreatedAt, &sess.CSRF, &sess.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return sess, ErrNotFound
	}
	if err != nil {
		return sess, fmt.Errorf("console session: %w", err)
	}
	return sess, nil
}

// DeleteConsoleSession signs a console out.
func (s *Store) DeleteConsoleSession(ctx context.Context, token string) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM console_sessions WHERE token_hash = $1`, tokenHash(token)); err != nil {
		return fmt.Errorf("delete console session: %w", err)
	}
	return nil
}

// PruneConsoleSessions deletes expired sessions.
func (s *Store) PruneConsoleSessions(ctx context.Context) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM console_sessions WHERE expires_at <= now()`)
	if err != nil {
		return 0, fmt.Errorf("prune console sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}

// PruneArtifacts deletes artifacts older than retention.
func (s *Store) PruneArtifacts(ctx context.Context, retention time.Duration) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM artifacts WHERE created_at < now() - $1::interval`, retention)
	if err != nil {
		return 0, fmt.Errorf("prune artifacts: %w", err)
	}
	return tag.RowsAffected(), nil
}

// usageColumns sums token_usage rows into a UsageTotals ($2 is BrowserTime).
const usageColumns = `count(*) FILTER (WHERE model <> $2), COALESCE(sum(prompt_tokens), 0), COALESCE(sum(cached_tokens), 0),
	COALESCE(sum(completion_tokens), 0), COALESCE(sum(credits), 0)::bigint,
	COALESCE(sum(seconds) FILTER (WHERE model = $2), 0), COALESCE(sum(credits) FILTER (WHERE model = $2), 0)::bigint`

func (u *UsageTotals) fields() []any {
	return []any{&u.Calls, &u.PromptTokens, &u.CachedTokens, &u.CompletionTokens, &u.CreditsMicro, &u.BrowserSeconds, &u.BrowserCreditsMicro}
}

// JobsUsage sums the usage (model calls and browser time) of each of the
// jobs, by job id (jobs that charged nothing are absent).
func (s *Store) JobsUsage(ctx context.Context, ids []string) (map[string]UsageTotals, error) {
	rows, err := s.db.Query(ctx, `SELECT job_id::text, `+usageColumns+`
		FROM token_usage WHERE job_id = ANY($1::uuid[]) GROUP BY job_id`, ids, BrowserTime)
	if err != nil {
		return nil, fmt.Errorf("jobs usage: %w", err)
	}
	out := map[string]UsageTotals{}
	var id string
	var u UsageTotals
	_, err = pgx.ForEachRow(rows, append([]any{&id}, u.fields()...), func() error {
		out[id] = u
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("jobs usage: %w", err)
	}
	return out, nil
}
