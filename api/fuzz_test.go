package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/jobs/natstest"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/outbox"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// fuzzServer is the real API on a real database and queue.
func fuzzServer(f *testing.F) (srv *httptest.Server, key, tenantID string) {
	return fuzzServerWith(f, api.Config{AdminToken: "admin", MaxBody: 64 << 10})
}

func fuzzServerWith(f *testing.F, cfg api.Config) (srv *httptest.Server, key, tenantID string) {
	st := storetest.New(f)
	q := natstest.New(f, 0)
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	sealer, err := jobs.NewSealer(k)
	if err != nil {
		f.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sender := outbox.Start(jobs.NewPublisher(q.JS), st, quiet, outbox.Options{})
	f.Cleanup(sender.Close)
	srv = httptest.NewServer(api.New(cfg, st, sender,
		netguard.New([]string{"127.0.0.1"}), sealer, quiet).Handler())
	f.Cleanup(srv.Close)
	tn, key := storetest.Tenant(f, st, "fuzzed", 1e6)
	return srv, key, tn.ID
}

func post(t *testing.T, url, token string, body []byte) int {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// FuzzSubmitJob: whatever the body, POST /v1/jobs answers 202 or a 4xx,
// never a 5xx.
func FuzzSubmitJob(f *testing.F) {
	srv, key, _ := fuzzServer(f)
	for _, seed := range []string{
		`{"kind":"scenario","scenario":{"name":"x","base_url":"http://127.0.0.1:1/","steps":["Go to /"]}}`,
		`{"kind":"scenario","scenario":{"name":"a\u0000","base_url":"http://127.0.0.1:1/","steps":["Go to /"]}}`,
		`{"kind":"scenario","scenario":{"name":"x","base_url":"http://127.0.0.1:1/","steps":[5,{"colour":1}]}}`,
		`{"kind":"scenario","scenario":{"name":"x","base_url":"http://127.0.0.1:1/","steps":["Wait 99999999999999999999999 s"]}}`,
		`{"kind":"scenario","scenario":{"name":"x","base_url":"http://127.0.0.1:1/","steps":[{"type":"ai_query","method":"extract","text":"x","save_as":"x;y"}]}}`,
		`{"kind":"scenario","scenario":{"name":"\u2028","base_url":"http://[fe80::1%25eth0]/","steps":["Go to javascript:x"]}}`,
		`{"kind":"scenario","scenario":{"name":"x","base_url":"http://127.0.0.1:1/","steps":["Go to /"],"options":{"max_credits":1e300,"allowed_origins":["ftp://x"]}}}`,
		`{"kind":"scenario","scenario":{"name":"x","base_url":"http://127.0.0.1:1/","steps":["x"],"secrets":{"":"","A":""},"data":{"A":"1"}}}`,
		`[]`, `null`, `{"kind":"exploration"}`, `{"kind":"scenario","scenario":null}`, "\x00", `{"kind":"scenario","scenario":{"steps":[{"type":"action","action":"press"}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if code := post(t, srv.URL+"/v1/jobs", key, body); code >= 500 || (code != 202 && code < 400) {
			t.Fatalf("POST /v1/jobs %q answered %d", body, code)
		}
	})
}

// FuzzSuites: whatever the body, the suite and job endpoints answer 2xx
// or a 4xx, never a 5xx.
func FuzzSuites(f *testing.F) {
	srv, key, _ := fuzzServer(f)
	for _, seed := range []struct{ path, body string }{
		{"/v1/suites/run", `{}`},
		{"/v1/suites/run", `{"test_ids":["x","00000000-0000-0000-0000-000000000000"],"tags":["a b"]}`},
		{"/v1/suites/repair", `{"tags":["smoke"],"auto_accept":true,"options":{"max_credits":-1}}`},
		{"/v1/suites/repair", `{"test_ids":null,"secrets":{"":"x"},"sealed_secrets":"y"}`},
		{"/v1/jobs", `{"kind":"suite_repair","suite":{"tags":[1]}}`},
		{"/v1/jobs", `{"kind":"replay","replay":{"test_id":"00000000-0000-0000-0000-000000000000","auto_accept":true}}`},
	} {
		f.Add(seed.path, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		switch path {
		case "/v1/suites/run", "/v1/suites/repair", "/v1/jobs":
		default:
			return
		}
		if code := post(t, srv.URL+path, key, body); code >= 500 || code < 200 {
			t.Fatalf("POST %s %q answered %d", path, body, code)
		}
	})
}

// FuzzAdminAPI: the admin endpoints answer 2xx or 4xx, never a 5xx.
func FuzzAdminAPI(f *testing.F) {
	srv, _, tenantID := fuzzServer(f)
	for _, seed := range []string{
		`{"credits": 1, "idempotency_key": "k"}`, `{"credits": 0.0000001, "idempotency_key": "k"}`,
		`{"credits": 1e308, "idempotency_key": "k"}`, `{"credits": -1, "idempotency_key": ""}`,
		`{"credits": 1, "idempotency_key": "a\u0000b"}`, `{"name": "acme", "max_running": 3}`, `{"name": "\u0000"}`,
		`{"name": "x", "max_running": -5}`, `{"name": ""}`, `{}`, `[`,
	} {
		f.Add([]byte(seed), uint8(0))
		f.Add([]byte(seed), uint8(1))
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		url := srv.URL + "/v1/admin/tenants"
		if which%2 == 1 {
			url += "/" + tenantID + "/credits"
		}
		if code := post(t, url, "admin", body); code >= 500 {
			t.Fatalf("POST %s %q answered %d", url, body, code)
		}
	})
}

// FuzzQueryAndPath: whatever a query or path value holds (NUL, invalid
// UTF-8, escapes), the endpoints that read one answer 2xx or 4xx, never
// a 5xx (NUL and invalid UTF-8 in origin= and artifact names once did).
func FuzzQueryAndPath(f *testing.F) {
	srv, key, _ := fuzzServer(f)
	for _, seed := range []string{"http://127.0.0.1:1", "a\x00b", "\xff\xfe", "%00", "%zz", "x/../y", "\u2028", ""} {
		f.Add(seed, uint8(0))
		f.Add(seed, uint8(1))
		f.Add(seed, uint8(2))
		f.Add(seed, uint8(3))
	}
	f.Fuzz(func(t *testing.T, v string, which uint8) {
		esc := url.QueryEscape(v)
		var method, target string
		switch which % 5 {
		case 0:
			method, target = "GET", "/v1/experiences?origin="+esc
		case 1:
			method, target = "DELETE", "/v1/experiences?origin="+esc
		case 2:
			method, target = "GET", "/v1/step-cache?origin="+esc
		case 3:
			method, target = "DELETE", "/v1/step-cache?origin="+esc
		default:
			method, target = "GET", "/v1/jobs/00000000-0000-0000-0000-000000000000/artifacts/"+url.PathEscape(v)
		}
		req, err := http.NewRequestWithContext(context.Background(), method, srv.URL+target, nil)
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s answered %d", method, target, resp.StatusCode)
		}
	})
}
