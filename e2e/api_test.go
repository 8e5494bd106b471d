package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestBadInputAndIsolation(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 0)
	_, key := s.tenant(t, "a", 5)
	poorID, poorKey := s.tenant(t, "poor", 0)
	_, otherKey := s.tenant(t, "b", 5)
	valid := func(mod func(sc map[string]any)) []byte {
		sc := map[string]any{"name": "x", "base_url": "http://127.0.0.1:1/", "steps": []any{"Go to /"}}
		if mod != nil {
			mod(sc)
		}
		b, _ := json.Marshal(map[string]any{"kind": "scenario", "scenario": sc})
		return b
	}
	cases := []struct {
		name      string
		key       string
		body      []byte
		wantCode  int
		wantField string
	}{
		{"malformed JSON", key, []byte(`{"kind": "scenario",`), 400, "body"},
		{"wrong type", key, []byte(`{"kind": 7}`), 400, "kind"},
		{"unknown field", key, []byte(`{"kind": "scenario", "colour": "red"}`), 400, "colour"},
		{"unknown kind", key, []byte(`{"kind": "teleport"}`), 400, "kind"},
		{"exploration without its input", key, []byte(`{"kind": "exploration"}`), 400, "exploration"},
		{"missing steps", key, valid(func(sc map[string]any) { delete(sc, "steps") }), 400, "scenario.steps"},
		{"non-http URL", key, valid(func(sc map[string]any) { sc["base_url"] = "file:///etc/passwd" }), 400, "scenario.base_url"},
		{"metadata address", key, valid(func(sc map[string]any) { sc["base_url"] = "http://169.254.169.254/" }), 400, "scenario.base_url"},
		{"bad step", key, valid(func(sc map[string]any) { sc["steps"] = []any{map[string]any{"type": "action", "action": "fly"}} }), 400, "scenario.steps[0].action"},
		{"oversized body", key, valid(func(sc map[string]any) { sc["name"] = strings.Repeat("x", 70<<10) }), 413, ""},
		{"NUL in a step", key, valid(func(sc map[string]any) { sc["steps"] = []any{"Go to /", "Click \"a\x00b\""} }), 400, "scenario.steps[1]"},
		{"NUL in a data key", key, valid(func(sc map[string]any) { sc["data"] = map[string]any{"A\x00": "x"} }), 400, "scenario.data.A\x00"},
		{"step of the wrong type", key, valid(func(sc map[string]any) { sc["steps"] = []any{"Go to /", 5} }), 400, "scenario.steps[1]"},
		{"unknown field in a step", key, valid(func(sc map[string]any) {
			sc["steps"] = []any{map[string]any{"type": "action", "action": "click", "target": map[string]any{"text": "x"}, "colour": "red"}}
		}), 400, "scenario.steps[0]"},
		{"press without a key", key, valid(func(sc map[string]any) { sc["steps"] = []any{map[string]any{"type": "action", "action": "press"}} }), 400, "scenario.steps[0].value"},
		{"non-numeric wait", key, valid(func(sc map[string]any) {
			sc["steps"] = []any{map[string]any{"type": "action", "action": "wait", "value": "soon"}}
		}), 400, "scenario.steps[0].value"},
		{"overflowing wait", key, valid(func(sc map[string]any) { sc["steps"] = []any{"Wait 99999999999999999999999 s"} }), 400, "scenario.steps[0].text"},
		{"save_as that is code", key, valid(func(sc map[string]any) {
			sc["steps"] = []any{map[string]any{"type": "ai_query", "method": "extract", "text": "x", "save_as": "x; require('child_process')"}}
		}), 400, "scenario.steps[0].save_as"},
		{"URL to metadata in a step", key, valid(func(sc map[string]any) { sc["steps"] = []any{"Go to http://169.254.169.254/latest"} }), 400, "scenario.steps[0].text"},
		{"javascript in a step", key, valid(func(sc map[string]any) { sc["steps"] = []any{"Open javascript:alert(1)"} }), 400, "scenario.steps[0].text"},
		{"secret in a URL", key, valid(func(sc map[string]any) {
			sc["secrets"] = map[string]any{"PW": "pass-word"}
			sc["steps"] = []any{"Go to /login?pw={{PW}}"}
		}), 400, "scenario.steps[0]"},
		{"a secret too short to take out", key, valid(func(sc map[string]any) {
			sc["secrets"] = map[string]any{"PIN": "1"}
			sc["steps"] = []any{`Fill "PIN" with "{{PIN}}"`}
		}), 400, "scenario.secrets.PIN"},
		{"no key", "", valid(nil), 401, ""},
		{"wrong key", key + "x", valid(nil), 401, ""},
		{"not enough credits", poorKey, valid(nil), 402, ""},
	}
	for _, tc := range cases {
		code, body := s.call(t, "POST", "/v1/jobs", tc.key, tc.body)
		if code != tc.wantCode {
			t.Errorf("%s: status %d, want %d: %s", tc.name, code, tc.wantCode, body)
			continue
		}
		var e struct {
			Error  string
			Fields []struct{ Field, Message string }
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
			t.Errorf("%s: error body is not clear JSON: %s", tc.name, body)
		}
		if tc.wantField != "" && (len(e.Fields) == 0 || e.Fields[0].Field != tc.wantField) {
			t.Errorf("%s: fields %+v, want %s", tc.name, e.Fields, tc.wantField)
		}
	}
	// The refused submissions queued nothing and held nothing.
	if n := s.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs recorded by refused submissions", n)
	}
	if s.queue.Pending(t) != 0 {
		t.Fatal("a refused submission was published")
	}
	if a := s.account(t, poorID); a.Held != 0 {
		t.Fatalf("402 left a hold: %+v", a)
	}

	// Another tenant's job answers 404 everywhere.
	job := s.submit(t, key, map[string]any{"name": "x", "base_url": s.demo + "/", "steps": []any{"Go to /"}})
	for _, p := range []string{"/v1/jobs/" + job.ID, "/v1/jobs/" + job.ID + "/script", "/v1/jobs/" + job.ID + "/history"} {
		if code, _ := s.call(t, "GET", p, otherKey, nil); code != http.StatusNotFound {
			t.Errorf("GET %s as another tenant = %d, want 404", p, code)
		}
	}
	if code, _ := s.call(t, "POST", "/v1/jobs/"+job.ID+"/cancel", otherKey, nil); code != http.StatusNotFound {
		t.Errorf("cancel as another tenant = %d, want 404", code)
	}
	if code, _ := s.call(t, "GET", "/v1/jobs/not-a-uuid", key, nil); code != http.StatusNotFound {
		t.Errorf("malformed id = %d, want 404", code)
	}
	var list struct{ Jobs []struct{ ID string } }
	s.mustJSON(t, "GET", "/v1/jobs", otherKey, nil, 200, &list)
	if len(list.Jobs) != 0 {
		t.Fatalf("another tenant lists %d jobs", len(list.Jobs))
	}
	// Admin endpoints need the admin token, not a tenant key.
	if code, _ := s.call(t, "POST", "/v1/admin/tenants", key, []byte(`{"name":"x"}`)); code != http.StatusUnauthorized {
		t.Errorf("tenant key on admin API = %d", code)
	}
	// The queued job can be cancelled by its owner, releasing the hold.
	var v struct{ State string }
	s.mustJSON(t, "POST", "/v1/jobs/"+job.ID+"/cancel", key, nil, http.StatusAccepted, &v)
	if v.State != "cancelled" {
		t.Fatalf("queued job after cancel: %s", v.State)
	}
}

func TestListPaginates(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 0)
	_, key := s.tenant(t, "lister", 20)
	ids := map[string]bool{}
	for range 5 {
		ids[s.submit(t, key, map[string]any{"name": "x", "base_url": s.demo + "/", "steps": []any{"Go to /"}}).ID] = true
	}
	seen := map[string]bool{}
	path := "/v1/jobs?limit=2"
	for pages := 0; path != ""; pages++ {
		var page struct {
			Jobs []struct{ ID string }
			Next string
		}
		s.mustJSON(t, "GET", path, key, nil, 200, &page)
		for _, j := range page.Jobs {
			if seen[j.ID] {
				t.Fatalf("job %s listed twice", j.ID)
			}
			seen[j.ID] = true
		}
		path = ""
		if page.Next != "" {
			path = "/v1/jobs?limit=2&after=" + page.Next
		}
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
	}
	if len(seen) != 5 {
		t.Fatalf("listed %d of 5 jobs", len(seen))
	}
	if code, _ := s.call(t, "GET", "/v1/jobs?limit=0", key, nil); code != 400 {
		t.Fatalf("limit=0 accepted")
	}
}

func TestAdminGrantRefusesWhatItCannotRecord(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 0)
	id, _ := s.tenant(t, "granted", 0)
	for _, c := range []struct {
		name  string
		body  string
		field string
	}{
		{"rounds to zero", `{"credits": 0.0000001, "idempotency_key": "a"}`, "credits"},
		{"unbounded key", `{"credits": 1, "idempotency_key": "` + strings.Repeat("k", 4096) + `"}`, "idempotency_key"},
		{"NUL in the key", `{"credits": 1, "idempotency_key": "a\u0000b"}`, "idempotency_key"},
	} {
		code, body := s.call(t, "POST", "/v1/admin/tenants/"+id+"/credits", adminToken, []byte(c.body))
		if code != http.StatusBadRequest || !strings.Contains(string(body), `"field": "`+c.field+`"`) {
			t.Errorf("%s: %d %s", c.name, code, body)
		}
	}
	if a := s.account(t, id); a.Balance != 0 {
		t.Fatalf("refused grants changed the balance: %+v", a)
	}
}
