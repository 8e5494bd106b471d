package outbox_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/jobs/natstest"
	"github.com/webpilot/webpilot/internal/outbox"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

func submit(t *testing.T, st *store.Store, tenantID string, n int) []store.OutboxItem {
	t.Helper()
	var items []store.OutboxItem
	for range n {
		subject := jobs.Subject(jobs.KindScenario, tenantID)
		j, err := st.SubmitJob(context.Background(), store.NewJob{TenantID: tenantID, Kind: string(jobs.KindScenario),
			Input: json.RawMessage(`{}`), Hold: 1, Subject: subject})
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, store.OutboxItem{JobID: j.ID, Subject: subject})
	}
	return items
}

func unsent(t *testing.T, st *store.Store) []string {
	t.Helper()
	left, err := st.Unpublished(context.Background(), 0, 0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range left {
		ids = append(ids, it.JobID)
	}
	slices.Sort(ids)
	return ids
}

// TestSenderPublishesEveryJobAndMarksIt: every message handed over reaches
// the stream once and its outbox row is confirmed, including those still
// queued when the sender is closed.
func TestSenderPublishesEveryJobAndMarksIt(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	q := natstest.New(t, 30*time.Second)
	tn, _ := storetest.Tenant(t, st, "sender", 1000)
	items := submit(t, st, tn.ID, 300)
	s := outbox.Start(jobs.NewPublisher(q.JS), st, slog.New(slog.NewTextHandler(io.Discard, nil)), outbox.Options{Batch: 64})
	for _, it := range items {
		if !s.Send(it) {
			t.Fatalf("job %s was refused with room in the buffer", it.JobID)
		}
	}
	s.Close()
	if s.Send(items[0]) {
		t.Fatal("a closed sender accepted a message")
	}
	if left := unsent(t, st); len(left) != 0 {
		t.Fatalf("%d of %d jobs were not confirmed as published", len(left), len(items))
	}
	info, err := q.Consumer.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.NumPending != uint64(len(items)) {
		t.Fatalf("the stream holds %d messages for %d jobs", info.NumPending, len(items))
	}
}

// TestPublishConfirmsOnlyWhatTheStreamStored: a publish the stream does not
// acknowledge (here, a subject no stream listens on) stays unsent for the
// reconciler, while the rest of the batch is confirmed.
func TestPublishConfirmsOnlyWhatTheStreamStored(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	q := natstest.New(t, 30*time.Second)
	tn, _ := storetest.Tenant(t, st, "partial", 1000)
	items := submit(t, st, tn.ID, 6)
	lost := []string{items[1].JobID, items[4].JobID}
	slices.Sort(lost)
	for i := range items {
		if slices.Contains(lost, items[i].JobID) {
			items[i].Subject = "nowhere." + items[i].JobID
		}
	}
	n, err := outbox.Publish(context.Background(), jobs.NewPublisher(q.JS), st, items)
	if err == nil {
		t.Fatal("two publishes failed and Publish reported no error")
	}
	if n != 4 {
		t.Fatalf("confirmed %d publishes, want 4", n)
	}
	if left := unsent(t, st); !slices.Equal(left, lost) {
		t.Fatalf("unsent after the batch: %v, want exactly the two lost ones %v", left, lost)
	}
}
