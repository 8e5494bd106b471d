package apitest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/api/apitest"
	"github.com/webpilot/webpilot/internal/jobs"
)

// TestTheDocumentIsServedAsOpenAPI31 reads /v1/openapi.json as a client
// would: it loads and validates as OpenAPI 3.1, documents every endpoint the
// CLI and the console use, and takes its vocabulary from the code (the job
// kinds a submission may name are jobs.Kinds).
func TestTheDocumentIsServedAsOpenAPI31(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(api.New(api.Config{}, nil, nil, nil, nil, nil).Handler())
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /v1/openapi.json: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("the served document is not valid OpenAPI 3.1: %v", err)
	}
	for _, op := range []struct{ method, path string }{
		{"POST", "/v1/jobs"}, {"GET", "/v1/jobs"}, {"GET", "/v1/jobs/{id}"}, {"GET", "/v1/jobs/{id}/events"},
		{"GET", "/v1/jobs/{id}/history"}, {"GET", "/v1/jobs/{id}/findings"}, {"GET", "/v1/tests"},
		{"POST", "/v1/suites/repair"}, {"POST", "/v1/admin/tenants/{id}/credits"}, {"GET", "/readyz"}, {"GET", "/metrics"},
	} {
		item := doc.Paths.Find(op.path)
		if item == nil || item.GetOperation(op.method) == nil {
			t.Errorf("%s %s is not documented", op.method, op.path)
			continue
		}
		if item.GetOperation(op.method).Responses.Default() == nil {
			t.Errorf("%s %s does not document its errors", op.method, op.path)
		}
	}
	body := doc.Paths.Find("/v1/jobs").Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	kind := body.Properties["kind"].Value
	var kinds, want []string
	for _, k := range kind.Enum {
		kinds = append(kinds, k.(string))
	}
	for _, k := range jobs.Kinds {
		want = append(want, string(k))
	}
	if !slices.Equal(kinds, want) {
		t.Errorf("a submission's kind may be %v, want %v", kinds, want)
	}
	if ap := body.AdditionalProperties.Has; ap == nil || *ap {
		t.Error("a submission must not allow unknown fields: the API rejects them")
	}
}

// quiet keeps a contract's violations from failing the test: this test
// reads them itself.
type quiet struct{ testing.TB }

func (quiet) Cleanup(func()) {}

// TestTheContractCatchesADrift: a handler that answers what the document
// does not say, or accepts what it rejects, is reported; one that keeps to
// it is not.
func TestTheContractCatchesADrift(t *testing.T) {
	t.Parallel()
	job := api.JobView{ID: "j1", Kind: "scenario", State: "queued"}
	for _, tc := range []struct {
		name, method, path, body string
		answer                   func(w http.ResponseWriter)
		violation                string // "" when the exchange keeps to the document
	}{
		{"a documented answer", "GET", "/v1/jobs/j1", "", func(w http.ResponseWriter) { writeJSON(w, 200, job) }, ""},
		{"a documented error", "GET", "/v1/jobs/nope", "", func(w http.ResponseWriter) {
			writeJSON(w, 404, api.ErrorBody{Error: "job not found"})
		}, ""},
		{"a required field missing", "GET", "/v1/jobs/j1", "", func(w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"kind": "scenario", "state": "queued"})
		}, "does not match the document"},
		{"a field of the wrong type", "GET", "/v1/credits", "", func(w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"tenant_id": "t", "balance_credits": "12", "held_credits": 0, "available_credits": 0, "balance_micro": 0, "held_micro": 0})
		}, "does not match the document"},
		{"an undocumented status", "GET", "/v1/jobs/j1", "", func(w http.ResponseWriter) { writeJSON(w, 201, job) }, "does not match the document"},
		{"an error that is not an ErrorBody", "GET", "/v1/jobs/j1", "", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(500)
			_, _ = io.WriteString(w, "boom")
		}, "does not match the document"},
		{"an unknown field accepted", "POST", "/v1/admin/tenants", `{"name":"acme","colour":"red"}`, func(w http.ResponseWriter) {
			writeJSON(w, 201, api.TenantCreated{APIKey: "k"})
		}, "the document rejects the request"},
		{"an unknown field rejected", "POST", "/v1/admin/tenants", `{"name":"acme","colour":"red"}`, func(w http.ResponseWriter) {
			writeJSON(w, 400, api.ErrorBody{Error: "invalid request"})
		}, ""},
		{"an undocumented route answered", "GET", "/v1/secret", "", func(w http.ResponseWriter) { writeJSON(w, 200, job) }, "not in the document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := apitest.NewContract(quiet{t}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tc.answer(w) }))
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			c.ServeHTTP(httptest.NewRecorder(), req)
			got := c.Violations()
			switch {
			case tc.violation == "" && len(got) > 0:
				t.Errorf("reported %q", got)
			case tc.violation != "" && (len(got) != 1 || !strings.Contains(got[0], tc.violation)):
				t.Errorf("reported %q, want one violation saying %q", got, tc.violation)
			}
			if c.Checked() != 1 {
				t.Errorf("checked %d exchanges, want 1", c.Checked())
			}
		})
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
