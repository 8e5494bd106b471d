package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/webhook"
)

// MaxWebhooks is how many webhooks a tenant may hold at once.
const MaxWebhooks = 20

// WebhookRequest makes a webhook.
type WebhookRequest struct {
	// URL receives the events: https (or http) to an address the egress
	// guard allows, as any address a job reaches.
	URL string `json:"url"`
	// Events are what it is sent: job.finished, project.repaired,
	// regression.found (at least one).
	Events []store.WebhookEvent `json:"events"`
}

// WebhookCreated is a new webhook with its signing secret, shown this once.
type WebhookCreated struct {
	store.Webhook
	// Secret signs every delivery (Webpilot-Signature); keep it: it is
	// never shown again.
	Secret string `json:"secret"`
}

// WebhookList is a tenant's webhooks.
type WebhookList struct {
	Webhooks []store.Webhook `json:"webhooks"`
}

// DeliveryList is a webhook's deliveries, newest first, with every attempt.
type DeliveryList struct {
	Deliveries []store.Delivery `json:"deliveries"`
}

func eventNames() []string {
	var out []string
	for _, e := range store.WebhookEvents() {
		out = append(out, string(e))
	}
	return out
}

// validate names each bad field of a webhook request.
func (req WebhookRequest) validate(urls scenario.URLPolicy) []scenario.FieldError {
	var errs []scenario.FieldError
	u, err := url.Parse(req.URL)
	switch {
	case strings.TrimSpace(req.URL) == "":
		errs = append(errs, scenario.FieldError{Field: "url", Message: "is required"})
	case len(req.URL) > 2048:
		errs = append(errs, scenario.FieldError{Field: "url", Message: "must be at most 2048 characters"})
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		errs = append(errs, scenario.FieldError{Field: "url", Message: "must be an absolute http(s) URL"})
	case u.User != nil:
		errs = append(errs, scenario.FieldError{Field: "url", Message: "must not hold a user name or password: deliveries are signed instead"})
	default:
		if err := urls.CheckURL(req.URL); err != nil {
			errs = append(errs, scenario.FieldError{Field: "url", Message: "is not reachable from webpilot: " + err.Error()})
		}
	}
	if len(req.Events) == 0 {
		errs = append(errs, scenario.FieldError{Field: "events", Message: "is required: one or more of " + strings.Join(eventNames(), ", ")})
	}
	for i, e := range req.Events {
		switch {
		case !e.Valid():
			errs = append(errs, scenario.FieldError{Field: fmt.Sprintf("events[%d]", i), Message: fmt.Sprintf("must be one of %s, got %q", strings.Join(eventNames(), ", "), e)})
		case slices.Contains(req.Events[:i], e):
			errs = append(errs, scenario.FieldError{Field: fmt.Sprintf("events[%d]", i), Message: fmt.Sprintf("%q is listed twice", e)})
		}
	}
	return errs
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) {
	var req WebhookRequest
	if !s.decode(w, r, &req) {
		return
	}
	if errs := req.validate(s.urls); len(errs) > 0 {
		writeError(w, http.StatusBadRequest, "invalid webhook", errs)
		return
	}
	t := tenantFrom(r.Context())
	have, err := s.store.Webhooks(r.Context(), t.ID)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if len(have) >= MaxWebhooks {
		writeError(w, http.StatusConflict, fmt.Sprintf("a tenant holds at most %d webhooks: delete one first", MaxWebhooks), nil)
		return
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	id := uuid.NewString()
	sealed, err := s.sealer.Seal([]byte(secret), id)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	hook, err := s.store.CreateWebhook(r.Context(), store.NewWebhook{ID: id, TenantID: t.ID, URL: req.URL, Events: req.Events, SecretSealed: sealed})
	if err != nil {
		s.internal(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/webhooks/"+id)
	writeJSON(w, http.StatusCreated, WebhookCreated{Webhook: hook, Secret: secret})
}

func (s *Server) webhooks(w http.ResponseWriter, r *http.Request) {
	hooks, err := s.store.Webhooks(r.Context(), tenantFrom(r.Context()).ID)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, WebhookList{Webhooks: append([]store.Webhook{}, hooks...)})
}

func (s *Server) webhook(w http.ResponseWriter, r *http.Request) {
	hook, err := s.store.GetWebhook(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("id"))
	if !s.found(w, r, err, "webhook not found") {
		return
	}
	writeJSON(w, http.StatusOK, hook)
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	err := s.store.DeleteWebhook(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("id"))
	if !s.found(w, r, err, "webhook not found") {
		return
	}
	writeJSON(w, http.StatusOK, Deleted{Deleted: 1})
}

func (s *Server) deliveries(w http.ResponseWriter, r *http.Request) {
	limit, ok := limitParam(w, r, 50, 200)
	if !ok {
		return
	}
	ds, err := s.store.Deliveries(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("id"), limit)
	if !s.found(w, r, err, "webhook not found") {
		return
	}
	writeJSON(w, http.StatusOK, DeliveryList{Deliveries: ds})
}
