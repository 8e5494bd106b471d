package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/store"
)

func postBody(t testing.TB, url, key string, body []byte) (int, string) {
	t.Helper()
	return send(t, http.MethodPost, url, key, body)
}

// send makes one request with the tenant's key and answers its status and
// body.
func send(t testing.TB, method, url, key string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTheRetiredImportSaysWhereToGo: POST /v1/tests/import, which stored
// straight-line specs as scenarios, is retired for projects; whatever it
// is sent, it answers 410 naming the upload of a project, through the API
// and the CLI, and stores nothing.
func TestTheRetiredImportSaysWhereToGo(t *testing.T) {
	t.Parallel()
	base, st, key := abuseServer(t, api.Config{}, api.DefaultServerTimeouts())
	for _, body := range []string{`{"files":[{"name":"a.spec.ts","content":"test('x', async ({ page }) => { await page.goto('/'); });"}]}`, `{}`, `x`} {
		code, got := postBody(t, base+"/v1/tests/import", key, []byte(body))
		if code != http.StatusGone || !strings.Contains(got, "POST /v1/projects/{name}") || !strings.Contains(got, "webpilot project upload") {
			t.Fatalf("%s: %d %s", body, code, got)
		}
	}
	tn, err := st.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if tests, err := st.Tests(context.Background(), tn.ID); err != nil || len(tests) != 0 {
		t.Fatalf("stored %d tests (%v)", len(tests), err)
	}
}

// storedTests stores n tests for the key's tenant, as a generated test is
// stored.
func storedTests(t *testing.T, st *store.Store, key, prefix string, n int) {
	t.Helper()
	tn, err := st.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var list []store.ImportedTest
	for i := range n {
		name := fmt.Sprintf("%s %d", prefix, i)
		sc, _ := json.Marshal(map[string]any{"name": name, "base_url": "http://127.0.0.1:1/", "steps": []string{`Click "Go"`}})
		list = append(list, store.ImportedTest{Name: name, Scenario: sc, Script: "test('" + name + "', async () => {});",
			Manifest: json.RawMessage(`[{"entries":[{"command":{"action":"click"}}]}]`)})
	}
	if _, err := st.ImportTests(context.Background(), tn.ID, list, 0); err != nil {
		t.Fatal(err)
	}
}

// TestBulkJobsAreBounded: a bulk job's fan-out has a limit that answers a
// clear 400, and a suite run's budget bounds how many tests it may run (it
// once made 8,488 children on one credit).
func TestBulkJobsAreBounded(t *testing.T) {
	t.Parallel()
	base, st, key := abuseServer(t, api.Config{MaxBulkTests: 2}, api.DefaultServerTimeouts())
	storedTests(t, st, key, "s", 3)
	code, body := postBody(t, base+"/v1/suites/run", key, []byte(`{}`))
	if code != http.StatusBadRequest || !strings.Contains(body, "selects 3 tests; one bulk job runs at most 2") {
		t.Fatalf("fan-out: %d %s", code, body)
	}
	base, st, key = abuseServer(t, api.Config{}, api.DefaultServerTimeouts())
	storedTests(t, st, key, "s", 3)
	code, body = postBody(t, base+"/v1/suites/run", key, []byte(`{"options":{"max_credits":0.02}}`))
	if code != http.StatusBadRequest || !strings.Contains(body, `"field": "suite.options.max_credits"`) || !strings.Contains(body, "0.02 credits cover at most 2 tests") {
		t.Fatalf("budget: %d %s", code, body)
	}
	if code, body := postBody(t, base+"/v1/suites/run", key, []byte(`{"options":{"max_credits":0.03}}`)); code != http.StatusAccepted {
		t.Fatalf("a budget that covers them: %d %s", code, body)
	}
}

// TestStoredTestsAsAProjectNameTheBadField: POST /v1/tests/project picks
// tests by the same rules as a suite's run, its fields named at the top
// of its body; a bad request writes no project.
func TestStoredTestsAsAProjectNameTheBadField(t *testing.T) {
	t.Parallel()
	base, st, key := abuseServer(t, api.Config{}, api.DefaultServerTimeouts())
	const id = "00000000-0000-0000-0000-000000000001"
	for _, c := range []struct{ body, field, says string }{
		{`{"project":"a b"}`, `"project"`, "a project's name"},
		{`{"test_ids":["` + id + `"],"tags":["x"]}`, `"tags"`, "not both"},
		{`{"test_ids":["x"]}`, `"test_ids[0]"`, "a UUID"},
		{`{"test_ids":["` + id + `","` + id + `"]}`, `"test_ids[1]"`, "listed twice"},
		{`{"tags":["a b"]}`, `"tags[0]"`, ""},
		{`{"test_ids":["` + id + `"]}`, `"test_ids"`, "not tests of yours"},
	} {
		code, got := postBody(t, base+"/v1/tests/project", key, []byte(c.body))
		if code != http.StatusBadRequest || !strings.Contains(got, `"field": `+c.field+",") || !strings.Contains(got, c.says) {
			t.Errorf("%s: %d %s", c.body, code, got)
		}
	}
	tn, err := st.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := st.Projects(context.Background(), tn.ID); err != nil || len(list) != 0 {
		t.Fatalf("%d projects (%v)", len(list), err)
	}
}
