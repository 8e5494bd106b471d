package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/jobs/natstest"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/outbox"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

func get(t *testing.T, url, token string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestReadyzFollowsPostgres: /readyz fails, naming Postgres, while the
// database is down and recovers with it; /healthz stays cheap and up.
func TestReadyzFollowsPostgres(t *testing.T) {
	t.Parallel()
	cluster, err := storetest.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Remove)
	st, err := store.Open(context.Background(), cluster.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	sealer, _ := jobs.NewSealer(make([]byte, 32))
	srv := httptest.NewServer(api.New(api.Config{Ready: []api.ReadyCheck{{Name: "postgres", Check: st.Ping}}}, st, nil,
		netguard.New([]string{"127.0.0.1"}), sealer, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	t.Cleanup(srv.Close)
	readyz := func() (int, map[string]string) {
		code, _, body := get(t, srv.URL+"/readyz", "")
		var v struct {
			Checks map[string]string `json:"checks"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("/readyz answered %d with %q", code, body)
		}
		return code, v.Checks
	}
	if code, checks := readyz(); code != http.StatusOK || checks["postgres"] != "ok" {
		t.Fatalf("with Postgres up: %d %v", code, checks)
	}
	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	if code, checks := readyz(); code != http.StatusServiceUnavailable || checks["postgres"] == "ok" || checks["postgres"] == "" {
		t.Fatalf("with Postgres down: %d %v, want 503 saying why", code, checks)
	}
	if code, _, _ := get(t, srv.URL+"/healthz", ""); code != http.StatusOK {
		t.Fatalf("/healthz with Postgres down: %d", code)
	}
	if err := cluster.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, checks := readyz()
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Postgres is back but /readyz still answers %d %v", code, checks)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestMetricsCountWhatTheAPIDid: /metrics shows submissions by kind and
// outcome and requests by route (the pattern, never the raw path), and
// every answer carries a request id, the caller's own when it sent one.
func TestMetricsCountWhatTheAPIDid(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	q := natstest.New(t, 30*time.Second)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sender := outbox.Start(jobs.NewPublisher(q.JS), st, quiet, outbox.Options{})
	t.Cleanup(sender.Close)
	sealer, _ := jobs.NewSealer(make([]byte, 32))
	srv := httptest.NewServer(api.New(api.Config{}, st, sender, netguard.New([]string{"127.0.0.1"}), sealer, quiet).Handler())
	t.Cleanup(srv.Close)
	_, key := storetest.Tenant(t, st, "metered", 100)

	ok := `{"kind":"scenario","scenario":{"name":"x","base_url":"http://127.0.0.1:1/","steps":["Go to /"]}}`
	bad := `{"kind":"scenario","scenario":{"name":"x","base_url":"http://127.0.0.1:1/","steps":[]}}`
	var id string
	for _, body := range []string{ok, ok, bad} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/jobs", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var j struct {
			ID string `json:"id"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&j)
		resp.Body.Close()
		if resp.StatusCode == http.StatusAccepted {
			id = j.ID
		}
		if resp.Header.Get("X-Request-Id") == "" {
			t.Fatal("an answer without X-Request-Id")
		}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/jobs/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-Request-Id", "trace-42.a")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-Id"); got != "trace-42.a" {
		t.Fatalf("the caller's request id came back as %q", got)
	}

	code, hdr, body := get(t, srv.URL+"/metrics", "")
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", code, hdr.Get("Content-Type"))
	}
	for _, want := range []string{
		`webpilot_submissions_total{kind="scenario",outcome="accepted"} 2`,
		`webpilot_submissions_total{kind="scenario",outcome="invalid"} 1`,
		`webpilot_http_requests_total{code="202",method="POST",route="POST /v1/jobs"} 2`,
		`webpilot_http_requests_total{code="200",method="GET",route="GET /v1/jobs/{id}"} 1`,
		`webpilot_http_request_duration_seconds_count{route="POST /v1/jobs"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, id) {
		t.Error("a job id became a label")
	}
}
