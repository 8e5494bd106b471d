package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/store"
)

// TestSubmitRefusesWhatOnlyTheWorkerCaught: host-relative and backslash
// navigations to a refused host, a javascript: login address, keys in the
// wrong case and a replay missing a secret its test types are each a 400
// naming the field, at submit (each once got through to the worker).
func TestSubmitRefusesWhatOnlyTheWorkerCaught(t *testing.T) {
	t.Parallel()
	base, st, key := abuseServer(t, api.Config{}, api.DefaultServerTimeouts())
	scenarioWith := func(steps string) string {
		return `{"kind":"scenario","scenario":{"name":"x","base_url":"http://127.0.0.1:1/","steps":[` + steps + `]}}`
	}
	for _, tc := range []struct{ name, body, field, says string }{
		{"protocol-relative", scenarioWith(`"Go to //169.254.169.254/latest/meta-data"`), "scenario.steps[0].text", "169.254.169.254"},
		{"backslashes", scenarioWith(`"Go to \\\\169.254.169.254\\latest"`), "scenario.steps[0].text", "169.254.169.254"},
		{"slash and backslash", scenarioWith(`"Open /\\169.254.169.254/x"`), "scenario.steps[0].text", "169.254.169.254"},
		{"navigate action", scenarioWith(`{"type":"action","action":"navigate","value":"\\\\169.254.169.254/x"}`), "scenario.steps[0].value", "169.254.169.254"},
		{"javascript: login", `{"kind":"exploration","exploration":{"base_url":"http://127.0.0.1:1/","goal":"g","secrets":{"USERNAME":"user","PASSWORD":"pass-word"},
			"login":{"url":"javascript:alert(1)"}}}`, "exploration.login.url", "must be a path or an http(s) URL"},
		{"keys in another case", `{"kind":"scenario","scenario":{"name":"x","base_url":"http://127.0.0.1:1/","STEPS":["Go to /"]}}`, "scenario.STEPS", `did you mean \"steps\"`},
		{"a kind in another case", `{"KIND":"scenario","scenario":{"name":"x","base_url":"http://127.0.0.1:1/","steps":["Go to /"]}}`, "KIND", `did you mean \"kind\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := postBody(t, base+"/v1/jobs", key, []byte(tc.body))
			if code != http.StatusBadRequest || !strings.Contains(body, `"field": "`+tc.field+`"`) || !strings.Contains(body, tc.says) {
				t.Fatalf("%d %s", code, body)
			}
		})
	}
	t.Run("an empty body", func(t *testing.T) {
		if code, body := postBody(t, base+"/v1/jobs", key, nil); code != http.StatusBadRequest || !strings.Contains(body, `"error": "empty body"`) {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("a replay missing a secret", func(t *testing.T) {
		tn, err := st.Authenticate(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		sc, _ := json.Marshal(map[string]any{"name": "sign in", "base_url": "http://127.0.0.1:1/",
			"data": map[string]string{"USER": "ann"}, "steps": []string{`Fill "User" with "{{USER}}"`, `Fill "Password" with "{{PW}}"`}})
		tests, err := st.ImportTests(context.Background(), tn.ID, []store.ImportedTest{{Name: "sign in", Scenario: sc,
			Script: "test('sign in', async () => {});", Manifest: json.RawMessage(`[{"entries":[{"command":{"action":"fill","value":"{{PW}}"}}]}]`)}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		replay := func(secrets string) (int, string) {
			return postBody(t, base+"/v1/jobs", key, []byte(fmt.Sprintf(`{"kind":"replay","replay":{"test_id":%q%s}}`, tests[0].ID, secrets)))
		}
		if code, body := replay(""); code != http.StatusBadRequest || !strings.Contains(body, `"field": "replay.secrets"`) || !strings.Contains(body, "give PW as a secret") {
			t.Fatalf("without PW: %d %s", code, body)
		}
		if code, body := postBody(t, base+"/v1/suites/run", key, []byte(`{}`)); code != http.StatusBadRequest || !strings.Contains(body, `"field": "suite.secrets"`) {
			t.Fatalf("a suite run without PW: %d %s", code, body)
		}
		if code, body := replay(`,"secrets":{"PW":"hunter2"}`); code != http.StatusAccepted {
			t.Fatalf("with PW: %d %s", code, body)
		}
	})
}
