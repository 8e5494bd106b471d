package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/api"
)

// TestSubmitWithIdempotencyKeyCreatesOneJob retries a submission the way a
// client does after a timeout: the same key returns the first job and
// places no second hold; the key reused for another request is refused.
func TestSubmitWithIdempotencyKeyCreatesOneJob(t *testing.T) {
	t.Parallel()
	s := newStack(t, 5*time.Second, 0)
	tenantID, key := s.tenant(t, "retrier", 5)
	_, otherKey := s.tenant(t, "other", 5)
	body, _ := json.Marshal(map[string]any{"kind": "scenario", "scenario": map[string]any{
		"name": "once", "base_url": s.demo + "/", "steps": []any{`Verify "Shopping list" is visible`}}})
	hdr := map[string]string{"Idempotency-Key": "order-42"}

	var first, again api.JobView
	code, b := s.callWith(t, "POST", "/v1/jobs", key, body, hdr)
	if code != http.StatusAccepted || json.Unmarshal(b, &first) != nil {
		t.Fatalf("first submit: %d %s", code, b)
	}
	code, b = s.callWith(t, "POST", "/v1/jobs", key, body, hdr)
	if code != http.StatusAccepted || json.Unmarshal(b, &again) != nil || again.ID != first.ID {
		t.Fatalf("retried submit: %d %s (first job %s)", code, b, first.ID)
	}
	if n := s.count(t, `SELECT count(*) FROM jobs WHERE tenant_id = $1`, tenantID); n != 1 {
		t.Fatalf("%d jobs after a retried submit", n)
	}
	if a := s.account(t, tenantID); a.Held != 2_000_000 {
		t.Fatalf("held %d after a retried submit, want one hold of 2 credits", a.Held)
	}
	// Another tenant's key space is its own.
	if code, b := s.callWith(t, "POST", "/v1/jobs", otherKey, body, hdr); code != http.StatusAccepted || strings.Contains(string(b), first.ID) {
		t.Fatalf("another tenant's submit with the same key: %d %s", code, b)
	}
	// The same key for a different request is a conflict, and creates nothing.
	other := strings.Replace(string(body), "once", "twice", 1)
	if code, b := s.callWith(t, "POST", "/v1/jobs", key, []byte(other), hdr); code != http.StatusConflict {
		t.Fatalf("key reused for another request: %d %s", code, b)
	}
	for _, bad := range []string{strings.Repeat("k", 256), "has space", "tab\tkey"} {
		code, b := s.callWith(t, "POST", "/v1/jobs", key, body, map[string]string{"Idempotency-Key": bad})
		if code != http.StatusBadRequest || !strings.Contains(string(b), "Idempotency-Key") {
			t.Fatalf("bad key %q: %d %s", bad, code, b)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM jobs WHERE tenant_id = $1`, tenantID); n != 1 {
		t.Fatalf("%d jobs after refused submits", n)
	}
}
