package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// WebhookEvent names what a webhook is sent for.
type WebhookEvent string

// The events a tenant's webhooks can ask for. Each is raised once, in the
// transaction that ends a job its tenant submitted (a bulk job's children
// raise none: their parent's end does).
const (
	// EventJobFinished: any job the tenant submitted ended, in any terminal
	// state.
	EventJobFinished WebhookEvent = "job.finished"
	// EventProjectRepaired: a project repair ended with a verified patched
	// version proposed (it may still have flagged other tests).
	EventProjectRepaired WebhookEvent = "project.repaired"
	// EventRegressionFound: a repair (of a test, a suite or a project)
	// ended with at least one test flagged as an app regression.
	EventRegressionFound WebhookEvent = "regression.found"
)

// WebhookEvents lists every event, in the order the docs give them.
func WebhookEvents() []WebhookEvent {
	return []WebhookEvent{EventJobFinished, EventProjectRepaired, EventRegressionFound}
}

// Valid reports whether e is one of WebhookEvents.
func (e WebhookEvent) Valid() bool {
	for _, v := range WebhookEvents() {
		if e == v {
			return true
		}
	}
	return false
}

// DeliveryState is where a webhook delivery stands.
type DeliveryState string

// A delivery is pending until an answer in 2xx (delivered) or until its
// attempts run out (failed); a deleted webhook's pending deliveries are
// dropped.
const (
	DeliveryPending   DeliveryState = "pending"
	DeliveryDelivered DeliveryState = "delivered"
	DeliveryFailed    DeliveryState = "failed"
	DeliveryDropped   DeliveryState = "dropped"
)

// Webhook is a tenant's endpoint for its events. Its signing secret is
// never part of it: it is sealed in the store and shown once, when made.
type Webhook struct {
	ID        string         `json:"id"`
	URL       string         `json:"url"`
	Events    []WebhookEvent `json:"events"`
	CreatedAt time.Time      `json:"created_at"`
}

// NewWebhook is a webhook to store, its secret already sealed to ID.
type NewWebhook struct {
	ID           string
	TenantID     string
	URL          string
	Events       []WebhookEvent
	SecretSealed string
}

// CreateWebhook stores a tenant's webhook.
func (s *Store) CreateWebhook(ctx context.Context, n NewWebhook) (Webhook, error) {
	w := Webhook{ID: n.ID, URL: n.URL, Events: n.Events}
	err := s.db.QueryRow(ctx,
		`INSERT INTO webhooks (id, tenant_id, url, events, secret_sealed) VALUES ($1, $2, $3, $4, $5) RETURNING created_at`,
		n.ID, n.TenantID, n.URL, eventStrings(n.Events), n.SecretSealed).Scan(&w.CreatedAt)
	if err != nil {
		return Webhook{}, fmt.Errorf("create webhook: %w", err)
	}
	return w, nil
}

func eventStrings(es []WebhookEvent) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e)
	}
	return out
}

func scanWebhook(r pgx.CollectableRow) (Webhook, error) {
	var w Webhook
	var events []string
	if err := r.Scan(&w.ID, &w.URL, &events, &w.CreatedAt); err != nil {
		return Webhook{}, err
	}
	for _, e := range events {
		w.Events = append(w.Events, WebhookEvent(e))
	}
	return w, nil
}

// Webhooks lists a tenant's webhooks, oldest first.
func (s *Store) Webhooks(ctx context.Context, tenantID string) ([]Webhook, error) {
	rows, err := s.db.Query(ctx,
		`SELECT id::text, url, events, created_at FROM webhooks WHERE tenant_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanWebhook)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	return out, nil
}

// GetWebhook is one of a tenant's webhooks; ErrNotFound for another
// tenant's or a deleted one.
func (s *Store) GetWebhook(ctx context.Context, tenantID, id string) (Webhook, error) {
	if _, err := uuid.Parse(id); err != nil {
		return Webhook{}, ErrNotFound
	}
	rows, err := s.db.Query(ctx,
		`SELECT id::text, url, events, created_at FROM webhooks WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tenantID, id)
	if err != nil {
		return Webhook{}, fmt.Errorf("get webhook: %w", err)
	}
	w, err := pgx.CollectExactlyOneRow(rows, scanWebhook)
	if errors.Is(err, pgx.ErrNoRows) {
		return Webhook{}, ErrNotFound
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("get webhook: %w", err)
	}
	return w, nil
}

// DeleteWebhook stops a tenant's webhook: nothing more is raised for it
// and its pending deliveries are dropped. Its deliveries stay listed.
func (s *Store) DeleteWebhook(ctx context.Context, tenantID, id string) error {
	if _, err := uuid.Parse(id); err != nil {
		return ErrNotFound
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE webhooks SET deleted_at = now() WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tenantID, id)
		if err != nil {
			return fmt.Errorf("delete webhook: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		_, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET state = 'dropped' WHERE webhook_id = $1 AND state = 'pending'`, id)
		return err
	})
}

// EventPayload is the body of a webhook delivery.
type EventPayload struct {
	// ID is the delivery's id, the same on every attempt: a receiver that
	// has seen it has seen the event.
	ID        string       `json:"id"`
	Event     WebhookEvent `json:"event"`
	CreatedAt time.Time    `json:"created_at"`
	Job       EventJob     `json:"job"`
}

// EventJob is what an event says of its job; the rest is at GET
// /v1/jobs/{id}.
type EventJob struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	State   JobState `json:"state"`
	Verdict string   `json:"verdict,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Project and Version name a project job's project; Proposed is the
	// version a repair proposed.
	Project  string `json:"project,omitempty"`
	Version  string `json:"version,omitempty"`
	Proposed string `json:"proposed,omitempty"`
	// Healed and Regressions count a repair's tests by what it found.
	Healed      int `json:"healed,omitempty"`
	Regressions int `json:"regressions,omitempty"`
}

// ended is a job as end left it, what its events are made of.
type ended struct {
	id, tenantID, kind string
	topLevel           bool
	state              JobState
	verdict, reason    string
	result             []byte
}

// eventsOf are the events a job's end raises, with what they say of it.
func eventsOf(e ended) ([]WebhookEvent, EventJob) {
	job := EventJob{ID: e.id, Kind: e.kind, State: e.state, Verdict: e.verdict, Error: e.reason}
	var r struct {
		Project  string         `json:"project"`
		Version  string         `json:"version"`
		Proposed string         `json:"proposed"`
		Verdicts map[string]int `json:"verdicts"` // a bulk repair's
		Report   struct {
			Tests []struct {
				Verdict string `json:"verdict"`
			} `json:"tests"`
		} `json:"report"` // a project repair's
	}
	if len(e.result) > 0 {
		_ = json.Unmarshal(e.result, &r)
	}
	job.Project, job.Version, job.Proposed = r.Project, r.Version, r.Proposed
	count := func(v string) int {
		n := r.Verdicts[v]
		for _, t := range r.Report.Tests {
			if t.Verdict == v {
				n++
			}
		}
		if n == 0 && e.verdict == v && e.kind == "repair" {
			n = 1
		}
		return n
	}
	events := []WebhookEvent{EventJobFinished}
	switch e.kind {
	case "repair", "suite_repair", "project_repair":
		job.Healed, job.Regressions = count("healed"), count("app_regression")
		// A repair that found a regression fails with it, its report kept.
		if job.Regressions > 0 {
			events = append(events, EventRegressionFound)
		}
		if e.kind == "project_repair" && job.Proposed != "" {
			events = append(events, EventProjectRepaired)
		}
	}
	return events, job
}

// raiseEvents writes, in the transaction that ended them, a delivery for
// each of the tenant's webhooks that asks for an event these jobs raise.
func raiseEvents(ctx context.Context, tx pgx.Tx, jobs []ended) error {
	for _, j := range jobs {
		if !j.topLevel {
			continue
		}
		rows, err := tx.Query(ctx, `SELECT id::text, events FROM webhooks WHERE tenant_id = $1 AND deleted_at IS NULL`, j.tenantID)
		if err != nil {
			return fmt.Errorf("raise events of %s: %w", j.id, err)
		}
		type hook struct {
			id     string
			events []string
		}
		hooks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (hook, error) {
			var h hook
			return h, r.Scan(&h.id, &h.events)
		})
		if err != nil {
			return fmt.Errorf("raise events of %s: %w", j.id, err)
		}
		if len(hooks) == 0 {
			continue
		}
		events, job := eventsOf(j)
		now := time.Now().UTC().Truncate(time.Millisecond)
		for _, h := range hooks {
			for _, e := range events {
				if !contains(h.events, string(e)) {
					continue
				}
				p := EventPayload{ID: uuid.NewString(), Event: e, CreatedAt: now, Job: job}
				body, err := json.Marshal(p)
				if err != nil {
					return err
				}
				if _, err := tx.Exec(ctx,
					`INSERT INTO webhook_deliveries (id, webhook_id, tenant_id, event, job_id, payload) VALUES ($1, $2, $3, $4, $5, $6)`,
					p.ID, h.id, j.tenantID, e, j.id, body); err != nil {
					return fmt.Errorf("raise %s of %s: %w", e, j.id, err)
				}
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// DueDelivery is a delivery claimed for an attempt.
type DueDelivery struct {
	ID           string
	WebhookID    string
	URL          string
	SecretSealed string
	Event        WebhookEvent
	Payload      []byte
	// Attempt is this attempt's number, from 1.
	Attempt int
}

// ClaimDeliveries takes up to n pending deliveries that are due, moving
// each one's next attempt lease ahead: one that is not recorded by then
// (its sender died) is sent again.
func (s *Store) ClaimDeliveries(ctx context.Context, n int, lease time.Duration) ([]DueDelivery, error) {
	rows, err := s.db.Query(ctx,
		`UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = now() + $2::interval
		 FROM webhooks w
		 WHERE d.id IN (SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= now()
		                ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
		   AND w.id = d.webhook_id
		 RETURNING d.id::text, d.webhook_id::text, w.url, w.secret_sealed, d.event, d.payload::text, d.attempts`,
		n, lease.String())
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DueDelivery, error) {
		var d DueDelivery
		var payload string
		err := r.Scan(&d.ID, &d.WebhookID, &d.URL, &d.SecretSealed, &d.Event, &payload, &d.Attempt)
		d.Payload = []byte(payload)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return out, nil
}

// Attempt is one try at a delivery: the receiver's status (0: none) or
// the error that kept it from answering.
type Attempt struct {
	N          int       `json:"n"`
	At         time.Time `json:"at"`
	Status     int       `json:"status,omitempty"`
	Error      string    `json:"error,omitempty"`
	DurationMS int       `json:"duration_ms"`
}

// AttemptResult is what came of an attempt and what follows it.
type AttemptResult struct {
	DeliveryID string
	Attempt
	// Delivered: the receiver answered 2xx. Otherwise RetryIn is when to
	// try again, or GiveUp ends the delivery failed.
	Delivered bool
	RetryIn   time.Duration
	GiveUp    bool
}

// RecordAttempt writes an attempt and moves its delivery on. An attempt
// already recorded (a claim that outlived its lease) changes nothing.
func (s *Store) RecordAttempt(ctx context.Context, a AttemptResult) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx,
			`INSERT INTO webhook_attempts (delivery_id, n, status, error, duration_ms) VALUES ($1, $2, $3, NULLIF($4, ''), $5)
			 ON CONFLICT DO NOTHING`, a.DeliveryID, a.N, a.Status, a.Error, a.DurationMS)
		if err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		switch {
		case a.Delivered:
			_, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET state = 'delivered', delivered_at = now() WHERE id = $1 AND state = 'pending'`, a.DeliveryID)
		case a.GiveUp:
			_, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET state = 'failed' WHERE id = $1 AND state = 'pending'`, a.DeliveryID)
		default:
			_, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = now() + $2::interval WHERE id = $1 AND state = 'pending'`,
				a.DeliveryID, a.RetryIn.String())
		}
		if err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		return nil
	})
}

// Delivery is one event sent to a webhook, with its attempts.
type Delivery struct {
	ID          string          `json:"id"`
	Event       WebhookEvent    `json:"event"`
	JobID       string          `json:"job_id,omitempty"`
	State       DeliveryState   `json:"state"`
	CreatedAt   time.Time       `json:"created_at"`
	DeliveredAt *time.Time      `json:"delivered_at,omitempty"`
	NextAttempt *time.Time      `json:"next_attempt_at,omitempty"`
	Payload     json.RawMessage `json:"payload"`
	Attempts    []Attempt       `json:"attempts"`
}

// Deliveries lists a tenant's webhook's deliveries, newest first (at most
// limit), each with every attempt.
func (s *Store) Deliveries(ctx context.Context, tenantID, webhookID string, limit int) ([]Delivery, error) {
	if _, err := uuid.Parse(webhookID); err != nil {
		return nil, ErrNotFound
	}
	var exists bool
	if err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks WHERE tenant_id = $1 AND id = $2)`, tenantID, webhookID).Scan(&exists); err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	if !exists {
		return nil, ErrNotFound
	}
	rows, err := s.db.Query(ctx,
		`SELECT d.id::text, d.event, COALESCE(d.job_id::text, ''), d.state, d.created_at, d.delivered_at,
		   CASE WHEN d.state = 'pending' THEN d.next_attempt_at END, d.payload::text,
		   COALESCE((SELECT json_agg(json_build_object('n', a.n, 'at', a.at, 'status', a.status, 'error', COALESCE(a.error, ''),
		       'duration_ms', a.duration_ms) ORDER BY a.n) FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]')::text
		 FROM webhook_deliveries d WHERE d.webhook_id = $1 ORDER BY d.created_at DESC, d.id LIMIT $2`, webhookID, limit)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Delivery, error) {
		var d Delivery
		var payload, attempts string
		if err := r.Scan(&d.ID, &d.Event, &d.JobID, &d.State, &d.CreatedAt, &d.DeliveredAt, &d.NextAttempt, &payload, &attempts); err != nil {
			return d, err
		}
		d.Payload = json.RawMessage(payload)
		return d, json.Unmarshal([]byte(attempts), &d.Attempts)
	})
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	if out == nil {
		out = []Delivery{}
	}
	return out, nil
}
