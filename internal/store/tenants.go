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
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	MaxRunning int       `json:"max_running"`
	CreatedAt  time.Time `json:"created_at"`
}

const apiKeyPrefix = "wp_"

// CreateTenant creates a tenant and its credit account and returns its API
// key. Only a hash of the key is stored, so this is the one time it is seen.
func (s *Store) CreateTenant(ctx context.Context, name string, maxRunning int) (Tenant, string, error) {
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

	t := Tenant{ID: id.String(), Name: name, MaxRunning: maxRunning}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx,
			`INSERT INTO tenants (id, name, api_key_hash, max_running) VALUES ($1, $2, $3, $4) RETURNING created_at`,
			t.ID, name, hash[:], maxRunning).Scan(&t.CreatedAt); err != nil {
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
		`SELECT id::text, name, max_running, created_at, api_key_hash FROM tenants WHERE id = $1`, id).
		Scan(&t.ID, &t.Name, &t.MaxRunning, &t.CreatedAt, &stored)
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
	err := s.db.QueryRow(ctx, `SELECT id::text, name, max_running, created_at FROM tenants WHERE id = $1`, id).
		Scan(&t.ID, &t.Name, &t.MaxRunning, &t.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Tenant{}, ErrNotFound
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("get tenant: %w", err)
	}
	return t, nil
}
