package api

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
)

// TenantRequest is the body of POST /v1/admin/tenants.
type TenantRequest struct {
	Name string `json:"name"`
	// MaxRunning bounds the tenant's jobs running at once (0: the default, 4).
	MaxRunning int `json:"max_running,omitempty"`
	// MaxRunSeconds bounds any one run of the tenant's own tests (a file's
	// run, a repair's trial), below the deployment's ceiling (0: the
	// deployment's). A file whose tests need longer ends with what finished
	// and names the tests it did not reach.
	MaxRunSeconds int `json:"max_run_seconds,omitempty"`
}

// Bounds of a tenant's run ceiling: the runner needs a minute to start,
// and no plan runs one file for more than a day.
const (
	minTenantRunSeconds = 60
	maxTenantRunSeconds = 24 * 3600
)

// TenantCreated answers a tenant's creation with its API key, shown once.
type TenantCreated struct {
	Tenant store.Tenant `json:"tenant"`
	APIKey string       `json:"api_key"`
	Note   string       `json:"note"`
}

// GrantRequest is the body of POST /v1/admin/tenants/{id}/credits.
type GrantRequest struct {
	Credits float64 `json:"credits"`
	// IdempotencyKey makes a retried grant apply once.
	IdempotencyKey string `json:"idempotency_key"`
}

// AccountView is a tenant's credit account and, where asked, its ledger.
type AccountView struct {
	TenantID         string  `json:"tenant_id"`
	BalanceCredits   float64 `json:"balance_credits"`
	HeldCredits      float64 `json:"held_credits"`
	AvailableCredits float64 `json:"available_credits"`
	BalanceMicro     int64   `json:"balance_micro"`
	HeldMicro        int64   `json:"held_micro"`
	// Ledger is the latest movements, newest first (absent when none or
	// not asked for).
	Ledger []LedgerEntry `json:"ledger,omitempty"`
}

// LedgerEntry is one credit movement: a grant, a hold, a charge, a release.
type LedgerEntry struct {
	ID      int64   `json:"id"`
	JobID   *string `json:"job_id,omitempty"`
	Credits float64 `json:"credits"`
	Reason  string  `json:"reason"`
	At      string  `json:"at"`
}

func (s *Server) createTenant(w http.ResponseWriter, r *http.Request) {
	var req TenantRequest
	if !s.decode(w, r, &req) {
		return
	}
	var fe []scenario.FieldError
	if strings.TrimSpace(req.Name) == "" {
		fe = append(fe, scenario.FieldError{Field: "name", Message: "is required"})
	}
	if req.MaxRunning < 0 || req.MaxRunning > 1000 {
		fe = append(fe, scenario.FieldError{Field: "max_running", Message: "must be between 0 (default) and 1000"})
	}
	if req.MaxRunSeconds != 0 && (req.MaxRunSeconds < minTenantRunSeconds || req.MaxRunSeconds > maxTenantRunSeconds) {
		fe = append(fe, scenario.FieldError{Field: "max_run_seconds",
			Message: fmt.Sprintf("must be 0 (the deployment's ceiling) or between %d and %d", minTenantRunSeconds, maxTenantRunSeconds)})
	}
	if len(fe) > 0 {
		writeError(w, http.StatusBadRequest, "invalid tenant", fe)
		return
	}
	t, key, err := s.store.CreateTenantWith(r.Context(), store.NewTenant{Name: strings.TrimSpace(req.Name), MaxRunning: req.MaxRunning,
		MaxRunSeconds: req.MaxRunSeconds})
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, TenantCreated{Tenant: t, APIKey: key, Note: "store the API key now: only its hash is kept"})
}

func (s *Server) grant(w http.ResponseWriter, r *http.Request) {
	var req GrantRequest
	if !s.decode(w, r, &req) {
		return
	}
	var fe []scenario.FieldError
	if req.Credits <= 0 || req.Credits > 1e9 || math.IsNaN(req.Credits) || math.Round(req.Credits*store.MicroCredits) < 1 {
		fe = append(fe, scenario.FieldError{Field: "credits", Message: "must be at least 0.000001 (one micro-credit) and at most 1e9"})
	}
	if strings.TrimSpace(req.IdempotencyKey) == "" {
		fe = append(fe, scenario.FieldError{Field: "idempotency_key", Message: "is required so a retried grant is not applied twice"})
	} else if len(req.IdempotencyKey) > maxIdempotencyKey {
		fe = append(fe, scenario.FieldError{Field: "idempotency_key", Message: fmt.Sprintf("must be at most %d bytes", maxIdempotencyKey)})
	}
	if len(fe) > 0 {
		writeError(w, http.StatusBadRequest, "invalid grant", fe)
		return
	}
	id := r.PathValue("id")
	if _, err := s.store.GetTenant(r.Context(), id); errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "tenant not found", nil)
		return
	}
	acct, err := s.store.Grant(r.Context(), id, int64(math.Round(req.Credits*store.MicroCredits)), req.IdempotencyKey)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, accountView(acct, nil))
}

func (s *Server) account(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	acct, err := s.store.Account(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "tenant not found", nil)
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	ledger, err := s.store.Ledger(r.Context(), id, 100)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, accountView(acct, ledger))
}

func (s *Server) credits(w http.ResponseWriter, r *http.Request) {
	t := tenantFrom(r.Context())
	acct, err := s.store.Account(r.Context(), t.ID)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	ledger, err := s.store.Ledger(r.Context(), t.ID, 50)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, accountView(acct, ledger))
}

func accountView(a store.Account, ledger []store.Entry) AccountView {
	out := AccountView{TenantID: a.TenantID, BalanceCredits: credits(a.Balance), HeldCredits: credits(a.Held),
		AvailableCredits: credits(a.Available), BalanceMicro: a.Balance, HeldMicro: a.Held}
	for _, e := range ledger {
		out.Ledger = append(out.Ledger, LedgerEntry{ID: e.ID, JobID: e.JobID, Credits: credits(e.Amount), Reason: e.Reason,
			At: e.CreatedAt.Format("2006-01-02T15:04:05Z07:00")})
	}
	return out
}
