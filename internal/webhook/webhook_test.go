package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
	"github.com/webpilot/webpilot/internal/webhook"
)

func TestASignatureHoldsOnlyForItsBodyItsSecretAndItsWindow(t *testing.T) {
	t.Parallel()
	body := []byte(`{"event":"job.finished"}`)
	at := time.Unix(1_800_000_000, 0)
	sig := webhook.Sign("whsec_a", at, body)
	for _, tc := range []struct {
		name   string
		secret string
		header string
		body   string
		now    time.Time
		want   error
	}{
		{"as sent", "whsec_a", sig, string(body), at.Add(30 * time.Second), nil},
		{"a changed body", "whsec_a", sig, `{"event":"job.finished "}`, at, webhook.ErrBadSignature},
		{"another webhook's secret", "whsec_b", sig, string(body), at, webhook.ErrBadSignature},
		{"replayed six minutes later", "whsec_a", sig, string(body), at.Add(6 * time.Minute), webhook.ErrOutsideWindow},
		{"from the future", "whsec_a", sig, string(body), at.Add(-6 * time.Minute), webhook.ErrOutsideWindow},
		{"its timestamp moved", "whsec_a", strings.Replace(sig, "t=1800000000", "t=1800000100", 1), string(body), at, webhook.ErrBadSignature},
		{"no header", "whsec_a", "", string(body), at, webhook.ErrNoSignature},
		{"a rotated secret's second signature", "whsec_a", webhook.Sign("old", at, body) + "," + strings.Split(sig, ",")[1], string(body), at, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := webhook.Verify(tc.secret, tc.header, []byte(tc.body), webhook.Tolerance, tc.now); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// receiver records what it is sent and answers each request with the next
// status of its script (the last one repeated).
type receiver struct {
	mu     sync.Mutex
	script []int
	got    []*http.Request
	bodies [][]byte
	srv    *httptest.Server
}

func newReceiver(t *testing.T, script ...int) *receiver {
	rc := &receiver{script: script}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		status := rc.script[min(len(rc.got), len(rc.script)-1)]
		rc.got, rc.bodies = append(rc.got, r), append(rc.bodies, b)
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

func (rc *receiver) requests() ([]*http.Request, [][]byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*http.Request{}, rc.got...), append([][]byte{}, rc.bodies...)
}

// TestADeliveryIsSignedRetriedAfterA500AndListed: a job's end reaches the
// tenant's receiver signed with the webhook's own secret; a 500 brings the
// same delivery back after its backoff, and both attempts are listed.
// Without the receiver's host allowed, the egress guard refuses the
// connection and the receiver hears nothing.
func TestADeliveryIsSignedRetriedAfterA500AndListed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	tn, _ := storetest.Tenant(t, st, "hooks", 5)
	sealer, err := jobs.NewSealer([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	rc := newReceiver(t, 500, 204)
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	sealed, err := sealer.Seal([]byte(secret), id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateWebhook(ctx, store.NewWebhook{ID: id, TenantID: tn.ID, URL: rc.srv.URL + "/hooks/webpilot",
		Events: []store.WebhookEvent{store.EventJobFinished}, SecretSealed: sealed}); err != nil {
		t.Fatal(err)
	}
	j, err := st.SubmitJob(ctx, store.NewJob{TenantID: tn.ID, Kind: "scenario", Input: json.RawMessage(`{}`), Hold: 1, Subject: "jobs.scenario"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RequestCancel(ctx, tn.ID, j.ID); err != nil {
		t.Fatal(err)
	}

	allowed := netguard.New([]string{"127.0.0.1"})
	d := webhook.NewDeliverer(st, sealer, allowed.Dial, nil, webhook.Options{FirstRetry: 300 * time.Millisecond})
	if n := d.Once(ctx); n != 1 {
		t.Fatalf("first pass tried %d deliveries, want 1", n)
	}
	if n := d.Once(ctx); n != 0 {
		t.Fatalf("a delivery was retried before its backoff: %d", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for rc.count() < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		d.Once(ctx)
	}
	reqs, bodies := rc.requests()
	if len(reqs) != 2 {
		t.Fatalf("the receiver got %d requests, want the first and its retry", len(reqs))
	}
	for i, r := range reqs {
		if r.URL.Path != "/hooks/webpilot" || r.Header.Get(webhook.EventHeader) != "job.finished" || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("request %d: %s %v", i, r.URL.Path, r.Header)
		}
		if err := webhook.Verify(secret, r.Header.Get(webhook.SignatureHeader), bodies[i], webhook.Tolerance, time.Now()); err != nil {
			t.Fatalf("request %d's signature: %v", i, err)
		}
		// The same request replayed after the window is refused.
		if err := webhook.Verify(secret, r.Header.Get(webhook.SignatureHeader), bodies[i], webhook.Tolerance, time.Now().Add(10*time.Minute)); !errors.Is(err, webhook.ErrOutsideWindow) {
			t.Fatalf("a replay was taken: %v", err)
		}
	}
	var p store.EventPayload
	if err := json.Unmarshal(bodies[1], &p); err != nil {
		t.Fatal(err)
	}
	if string(bodies[0]) != string(bodies[1]) || p.ID != reqs[0].Header.Get(webhook.DeliveryHeader) || p.Job.ID != j.ID || p.Job.State != store.JobStateCancelled {
		t.Fatalf("the retry is not the same delivery: %s / %s", bodies[0], bodies[1])
	}
	ds, err := st.Deliveries(ctx, tn.ID, id, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].State != store.DeliveryDelivered || len(ds[0].Attempts) != 2 || ds[0].Attempts[0].Status != 500 ||
		!strings.Contains(ds[0].Attempts[0].Error, "500") || ds[0].Attempts[1].Status != 204 {
		t.Fatalf("the deliveries list: %+v", ds)
	}

	// The guard, with no host allowed: loopback is refused where the
	// connection is made, and the attempt says so.
	guarded := webhook.NewDeliverer(st, sealer, netguard.New(nil).Dial, nil, webhook.Options{})
	j2, err := st.SubmitJob(ctx, store.NewJob{TenantID: tn.ID, Kind: "scenario", Input: json.RawMessage(`{}`), Hold: 1, Subject: "jobs.scenario"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RequestCancel(ctx, tn.ID, j2.ID); err != nil {
		t.Fatal(err)
	}
	if n := guarded.Once(ctx); n != 1 {
		t.Fatalf("guarded pass tried %d", n)
	}
	if reqs, _ := rc.requests(); len(reqs) != 2 {
		t.Fatalf("the guard let a request through to loopback")
	}
	ds, _ = st.Deliveries(ctx, tn.ID, id, 10)
	if ds[0].JobID != j2.ID || ds[0].State != store.DeliveryPending || len(ds[0].Attempts) != 1 || !strings.Contains(ds[0].Attempts[0].Error, "loopback") {
		t.Fatalf("the refused delivery: %+v", ds[0])
	}
}
