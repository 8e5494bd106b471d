package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/netguard/netguardtest"
)

// TestEgressBlockIsInTheJobsReport: a page whose image redirects to a host
// the job may not reach; the canary is never hit and the job's step report
// and history say what was blocked.
func TestEgressBlockIsInTheJobsReport(t *testing.T) {
	t.Parallel()
	canary := netguardtest.NewCanary(t)
	forbidden := strings.Replace(canary.URL, "127.0.0.1", "localhost", 1) + "/pixel"
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/img" || r.URL.Path == "/start" {
			http.Redirect(w, r, forbidden, http.StatusFound)
			return
		}
		fmt.Fprint(w, `<!doctype html><html><head><title>Hello</title></head><body><h1>Hello</h1><img src="/img" alt="tracker"></body></html>`)
	}))
	t.Cleanup(app.Close)
	s := newStack(t, 5*time.Second, 0)
	s.startWorker(t, nil)
	_, key := s.tenant(t, "guarded", 5)
	job := s.submit(t, key, map[string]any{"name": "guarded", "base_url": app.URL + "/", "steps": []any{"Wait 300ms", `Verify "Hello" is visible`}})
	// The spec runs after the canary is read: @playwright/test has no egress guard.
	v := s.waitEnd(t, key, job.ID, 30*time.Second)
	if v.State != "succeeded" {
		t.Fatalf("job ended %s: %s", v.State, v.Error)
	}
	if canary.Hits() != 0 {
		t.Fatal("the canary was reached")
	}
	s.passSpec(t, key, job.ID)
	var steps []struct{ Blocked []string }
	_ = json.Unmarshal(v.Steps, &steps)
	var all []string
	for _, st := range steps {
		all = append(all, st.Blocked...)
	}
	if !strings.Contains(strings.Join(all, " "), "localhost") {
		t.Fatalf("the step report does not show the block: %+v", steps)
	}
	if n := s.count(t, `SELECT count(*) FROM history WHERE job_id = $1 AND kind = 'blocked' AND target LIKE '%localhost%'`, job.ID); n == 0 {
		t.Fatal("the history does not show the block")
	}
	// A start URL that redirects where the job may not go fails the job,
	// and the refusal is in the job's blocked list and history, not only
	// in its error.
	hits := canary.Hits() // the first spec's run under @playwright/test reached it
	start := s.submit(t, key, map[string]any{"name": "redirected", "base_url": app.URL + "/start", "steps": []any{`Verify "Hello" is visible`}})
	v = s.waitEnd(t, key, start.ID, 30*time.Second)
	if v.State != "failed" || !strings.Contains(strings.Join(v.Blocked, " "), "localhost") {
		t.Fatalf("job ended %s (%s), blocked %q", v.State, v.Error, v.Blocked)
	}
	if n := s.count(t, `SELECT count(*) FROM history WHERE job_id = $1 AND kind = 'blocked' AND target LIKE '%localhost%'`, start.ID); n == 0 {
		t.Fatal("the history does not show the start URL's block")
	}
	if canary.Hits() != hits {
		t.Fatal("the canary was reached by the redirected job")
	}
}
