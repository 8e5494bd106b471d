package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Tenant is a customer account.
type Tenant struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	MaxRunning int    `json:"max_running"`
	// MaxRunSeconds bounds any one run of the tenant's own tests, below the
	// deployment's ceiling (0: the deployment's).
	MaxRunSeconds int       `json:"max_run_seconds"`
	CreatedAt     time.Time `json:"created_at"`
}

// NewTenant is what a tenant is created with.
type NewTenant struct {
	Name string
	// MaxRunning bounds its jobs running at once (0: 4).
	MaxRunning int
	// MaxRunSeconds bounds any one run of its own tests (0: the
	// deployment's ceiling).
	MaxRunSeconds int
}

const apiKeyPrefix = "wp_"

// CreateTenant creates a tenant and its credit account and returns its API
// key. Only a hash of the key is stored, so this is the one time it is seen.
func (s *Store) CreateTenant(ctx context.Context, name string, maxRunning int) (Tenant, string, error) {
	return s.CreateTenantWith(ctx, NewTenant{Name: name, MaxRunning: maxRunning})
}

// CreateTenantWith is CreateTenant with the tenant's plan's limits.
func (s *Store) CreateTenantWith(ctx context.Context, nt NewTenant) (Tenant, string, error) {
	name, maxRunning := nt.Name, nt.MaxRunning
	if maxRunning <= 0 {
		maxRunning = 4
	}
	id := uuid.New()
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return Tenant{}, "", fmt.Errorf("generate api key: %w", err)
	}
	secretText := base64.RawURLEncoding.EncodeToString(secret)
	key := apiKeyPrefix + strings.ReplaceAll(id.String(), "-", "") + "_" + secretText
	hash := sha256.Sum256([]byte(secretText))

	t := Tenant{ID: id.String(), Name: name, MaxRunning: maxRunning, MaxRunSeconds: max(nt.MaxRunSeconds, 0)}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx,
			`INSERT INTO tenants (id, name, api_key_hash, max_running, max_run_seconds) VALUES ($1, $2, $3, $4, $5) RETURNING created_at`,
			t.ID, name, hash[:], maxRunning, t.MaxRunSeconds).Scan(&t.CreatedAt); err != nil {
			return fmt.Errorf("insert tenant: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO credit_accounts (tenant_id) VALUES ($1)`, t.ID); err != nil {
			return fmt.Errorf("insert credit account: %w", err)
		}
		return nil
	})
	if err != nil {
		return Tenant{}, "", err
	}
	return t, key, nil
}

// Authenticate returns the tenant an API key belongs to, or ErrNotFound.
// The key's secret part is compared by hash in constant time.
func (s *Store) Authenticate(ctx context.Context, apiKey string) (Tenant, error) {
	rest, ok := strings.CutPrefix(apiKey, apiKeyPrefix)
	if !ok {
		return Tenant{}, ErrNotFound
	}
	idHex, secret, ok := strings.Cut(rest, "_")
	if !ok {
		return Tenant{}, ErrNotFound
	}
	id, err := uuid.Parse(idHex)
	if err != nil {
		return Tenant{}, ErrNotFound
	}
	var t Tenant
	var stored []byte
	err = s.db.QueryRow(ctx,
		`SELECT id::text, name, max_running, max_run_seconds, created_at, api_key_hash FROM tenants WHERE id = $1`, id).
		Scan(&t.ID, &t.Name, &t.MaxRunning, &t.MaxRunSeconds, &t.CreatedAt, &stored)
	if errors.Is(err, pgx.ErrNoRows) {
		return Tenant{}, ErrNotFound
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("look up tenant: %w", err)
	}
	got := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(got[:], stored) != 1 {
		return Tenant{}, ErrNotFound
	}
	return t, nil
}

// GetTenant returns a tenant by id.
func (s *Store) GetTenant(ctx context.Context, id string) (Tenant, error) {
	if _, err := uuid.Parse(id); err != nil {
		return Tenant{}, ErrNotFound
	}
	var t Tenant
	err := s.db.QueryRow(ctx, `SELECT id::text, name, max_running, max_run_seconds, created_at FROM tenants WHERE id = $1`, id).
		Scan(&t.ID, &t.Name, &t.MaxRunning, &t.MaxRunSeconds, &t.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Tenant{}, ErrNotFound
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("get tenant: %w", err)
	}
	return t, nil
}
