package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

func del(t *testing.T, url, token string) (int, string) {
	t.Helper()
	return send(t, http.MethodDelete, url, token, nil)
}

// TestAWebhookIsCheckedShownOnceAndTheTenantsOwn: a bad webhook is a 400
// naming each field (an address the egress guard refuses included); a
// good one answers its secret once; no other tenant can see, list or
// delete it.
func TestAWebhookIsCheckedShownOnceAndTheTenantsOwn(t *testing.T) {
	t.Parallel()
	base, st, key := abuseServer(t, api.Config{}, api.DefaultServerTimeouts())
	_, otherKey := storetest.Tenant(t, st, "other", 1)
	for _, tc := range []struct{ name, body, field, says string }{
		{"no url", `{"events":["job.finished"]}`, "url", "is required"},
		{"not http", `{"url":"ftp://hooks.example/x","events":["job.finished"]}`, "url", "absolute http(s) URL"},
		{"a relative url", `{"url":"/hooks","events":["job.finished"]}`, "url", "absolute http(s) URL"},
		{"credentials in it", `{"url":"https://u:p@hooks.example/x","events":["job.finished"]}`, "url", "must not hold a user name"},
		{"cloud metadata", `{"url":"http://169.254.169.254/latest","events":["job.finished"]}`, "url", "not reachable from webpilot"},
		{"a private address", `{"url":"http://10.1.2.3/hook","events":["job.finished"]}`, "url", "private"},
		{"no events", `{"url":"http://127.0.0.1:9/hook"}`, "events", "job.finished, project.repaired, regression.found"},
		{"an unknown event", `{"url":"http://127.0.0.1:9/hook","events":["job.finished","job.started"]}`, "events[1]", `got \"job.started\"`},
		{"an event twice", `{"url":"http://127.0.0.1:9/hook","events":["job.finished","job.finished"]}`, "events[1]", "listed twice"},
		{"an unknown field", `{"url":"http://127.0.0.1:9/hook","events":["job.finished"],"secret":"mine"}`, "secret", "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := postBody(t, base+"/v1/webhooks", key, []byte(tc.body))
			if code != http.StatusBadRequest || !strings.Contains(body, `"field": "`+tc.field+`"`) || !strings.Contains(body, tc.says) {
				t.Fatalf("%d %s", code, body)
			}
		})
	}

	code, body := postBody(t, base+"/v1/webhooks", key, []byte(`{"url":"http://127.0.0.1:9/hook","events":["project.repaired","regression.found"]}`))
	var made api.WebhookCreated
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &made) != nil || !strings.HasPrefix(made.Secret, "whsec_") || len(made.Events) != 2 {
		t.Fatalf("create: %d %s", code, body)
	}
	for _, path := range []string{"/v1/webhooks", "/v1/webhooks/" + made.ID} {
		code, _, body := get(t, base+path, key)
		if code != http.StatusOK || !strings.Contains(body, made.ID) || strings.Contains(body, made.Secret) {
			t.Fatalf("GET %s (never the secret again): %d %s", path, code, body)
		}
	}
	if code, _, body := get(t, base+"/v1/webhooks/"+made.ID+"/deliveries?limit=0", key); code != http.StatusBadRequest || !strings.Contains(body, `"field": "limit"`) {
		t.Fatalf("limit=0: %d %s", code, body)
	}
	// Another tenant.
	if code, _, body := get(t, base+"/v1/webhooks", otherKey); code != http.StatusOK || strings.Contains(body, made.ID) {
		t.Fatalf("another tenant's list: %d %s", code, body)
	}
	for _, path := range []string{"/v1/webhooks/" + made.ID, "/v1/webhooks/" + made.ID + "/deliveries", "/v1/webhooks/not-an-id"} {
		if code, _, body := get(t, base+path, otherKey); code != http.StatusNotFound {
			t.Fatalf("another tenant's GET %s: %d %s", path, code, body)
		}
	}
	if code, body := del(t, base+"/v1/webhooks/"+made.ID, otherKey); code != http.StatusNotFound {
		t.Fatalf("another tenant's DELETE: %d %s", code, body)
	}
	if code, body := del(t, base+"/v1/webhooks/"+made.ID, key); code != http.StatusOK {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if code, _, _ := get(t, base+"/v1/webhooks/"+made.ID, key); code != http.StatusNotFound {
		t.Fatalf("a deleted webhook answers %d", code)
	}
	if code, _, _ := get(t, base+"/v1/webhooks/"+made.ID+"/deliveries", key); code != http.StatusOK {
		t.Fatalf("a deleted webhook's deliveries answer %d", code)
	}
}
