package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

func hook(t *testing.T, st *store.Store, tenantID string, events ...store.WebhookEvent) store.Webhook {
	t.Helper()
	w, err := st.CreateWebhook(context.Background(), store.NewWebhook{ID: uuid.NewString(), TenantID: tenantID,
		URL: "https://hooks.example/in", Events: events, SecretSealed: "sealed"})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func deliveries(t *testing.T, st *store.Store, tenantID, hookID string) []store.Delivery {
	t.Helper()
	ds, err := st.Deliveries(context.Background(), tenantID, hookID, 50)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func events(ds []store.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, string(d.Event)+" "+d.JobID[:8])
	}
	slices.Sort(out)
	return out
}

// finishAs runs a submitted job's one attempt to state with result.
func finishAs(t *testing.T, st *store.Store, tenantID, kind string, state store.JobState, result string) string {
	t.Helper()
	ctx := context.Background()
	j, err := st.SubmitJob(ctx, store.NewJob{TenantID: tenantID, Kind: kind, Input: json.RawMessage(`{}`), Hold: 1, Subject: "jobs." + kind})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.ClaimJob(ctx, j.ID, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.FinishJob(ctx, store.Finish{JobID: j.ID, Attempt: c.Attempt, State: state, Result: json.RawMessage(result)}); err != nil {
		t.Fatal(err)
	}
	return j.ID
}

// TestAJobsEndRaisesItsTenantsEventsOnce: the end of a job its tenant
// submitted writes one delivery per event each of that tenant's webhooks
// asks for (a repair's regressions and proposal are events of their own),
// and none for another tenant's webhooks or a deleted one.
func TestAJobsEndRaisesItsTenantsEventsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.InTx(t)
	a, _ := storetest.Tenant(t, st, "a", 5)
	b, _ := storetest.Tenant(t, st, "b", 5)
	all := hook(t, st, a.ID, store.EventJobFinished, store.EventProjectRepaired, store.EventRegressionFound)
	onlyRegressions := hook(t, st, a.ID, store.EventRegressionFound)
	other := hook(t, st, b.ID, store.EventJobFinished)

	failed := finishAs(t, st, a.ID, "scenario", store.JobStateFailed, `{}`)
	// A repair that healed two tests and flagged one: it fails with the
	// regression, and proposes the patch of the two.
	repaired := finishAs(t, st, a.ID, "project_repair", store.JobStateFailed,
		`{"project":"shop","version":"v1","proposed":"v2","report":{"tests":[{"verdict":"healed"},{"verdict":"healed"},{"verdict":"app_regression"}]}}`)
	clean := finishAs(t, st, a.ID, "project_repair", store.JobStateSucceeded, `{"project":"shop","report":{"tests":[{"verdict":"passed"}]}}`)
	cancelled := submit(t, st, a.ID, 1)
	if _, err := st.RequestCancel(ctx, a.ID, cancelled.ID); err != nil {
		t.Fatal(err)
	}

	want := []string{
		"job.finished " + cancelled.ID[:8], "job.finished " + clean[:8], "job.finished " + failed[:8], "job.finished " + repaired[:8],
		"project.repaired " + repaired[:8], "regression.found " + repaired[:8],
	}
	slices.Sort(want)
	if got := events(deliveries(t, st, a.ID, all.ID)); !slices.Equal(got, want) {
		t.Fatalf("the webhook for every event got %q, want %q", got, want)
	}
	if got := events(deliveries(t, st, a.ID, onlyRegressions.ID)); !slices.Equal(got, []string{"regression.found " + repaired[:8]}) {
		t.Fatalf("the webhook for regressions got %q", got)
	}
	if got := deliveries(t, st, b.ID, other.ID); len(got) != 0 {
		t.Fatalf("another tenant's webhook got %d deliveries", len(got))
	}
	for _, d := range deliveries(t, st, a.ID, all.ID) {
		var p store.EventPayload
		if err := json.Unmarshal(d.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p.ID != d.ID || p.Event != d.Event || p.Job.ID != d.JobID || d.State != store.DeliveryPending {
			t.Fatalf("delivery %+v carries %+v", d, p)
		}
		if p.Job.ID == repaired && (p.Job.Healed != 2 || p.Job.Regressions != 1 || p.Job.Proposed != "v2" || p.Job.Project != "shop") {
			t.Fatalf("the repair's event says %+v", p.Job)
		}
	}

	// Another tenant cannot read or delete a's webhook.
	if _, err := st.Deliveries(ctx, b.ID, all.ID, 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another tenant's deliveries: %v", err)
	}
	if err := st.DeleteWebhook(ctx, b.ID, all.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another tenant's delete: %v", err)
	}
	// Deleted, a webhook gets nothing more, and its pending deliveries are
	// dropped, still listed.
	if err := st.DeleteWebhook(ctx, a.ID, all.ID); err != nil {
		t.Fatal(err)
	}
	finishAs(t, st, a.ID, "scenario", store.JobStateSucceeded, `{}`)
	ds := deliveries(t, st, a.ID, all.ID)
	if len(ds) != len(want) {
		t.Fatalf("a deleted webhook has %d deliveries, want %d", len(ds), len(want))
	}
	for _, d := range ds {
		if d.State != store.DeliveryDropped {
			t.Fatalf("a deleted webhook's delivery is %s", d.State)
		}
	}
}

// TestADeliveryIsClaimedRetriedAndSettledOnce: a claimed delivery is not
// claimed again while its attempt runs; a failed attempt brings it back
// when its retry is due, with the next attempt's number; an answer in 2xx
// ends it; and every attempt is listed.
func TestADeliveryIsClaimedRetriedAndSettledOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.InTx(t)
	a, _ := storetest.Tenant(t, st, "a", 5)
	h := hook(t, st, a.ID, store.EventJobFinished)
	finishAs(t, st, a.ID, "scenario", store.JobStateSucceeded, `{}`)

	claim := func() []store.DueDelivery {
		t.Helper()
		due, err := st.ClaimDeliveries(ctx, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return due
	}
	first := claim()
	if len(first) != 1 || first[0].Attempt != 1 || first[0].URL != "https://hooks.example/in" || first[0].SecretSealed != "sealed" {
		t.Fatalf("first claim: %+v", first)
	}
	if again := claim(); len(again) != 0 {
		t.Fatalf("a claimed delivery was claimed again: %+v", again)
	}
	if err := st.RecordAttempt(ctx, store.AttemptResult{DeliveryID: first[0].ID, Attempt: store.Attempt{N: 1, Status: 500,
		Error: "the receiver answered 500", DurationMS: 12}, RetryIn: 0}); err != nil {
		t.Fatal(err)
	}
	second := claim()
	if len(second) != 1 || second[0].Attempt != 2 || second[0].ID != first[0].ID {
		t.Fatalf("the retry: %+v", second)
	}
	ok := store.AttemptResult{DeliveryID: second[0].ID, Attempt: store.Attempt{N: 2, Status: 204}, Delivered: true}
	for range 2 { // recorded twice (a claim that outlived its lease): once
		if err := st.RecordAttempt(ctx, ok); err != nil {
			t.Fatal(err)
		}
	}
	if more := claim(); len(more) != 0 {
		t.Fatalf("a delivered delivery was claimed: %+v", more)
	}
	ds := deliveries(t, st, a.ID, h.ID)
	if len(ds) != 1 || ds[0].State != store.DeliveryDelivered || ds[0].DeliveredAt == nil || len(ds[0].Attempts) != 2 ||
		ds[0].Attempts[0].Status != 500 || ds[0].Attempts[0].Error == "" || ds[0].Attempts[1].Status != 204 {
		t.Fatalf("deliveries: %+v", ds)
	}
}
