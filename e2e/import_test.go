package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/testslot"
)

// TestImportedSpecsReplayPassAndHeal imports a folder of specs written the
// way Playwright's codegen and people write them (through the CLI), replays
// them at 0 tokens (they pass, under the replay and under @playwright/test,
// and their fingerprints are captured), then repairs them after the demo
// app drifted: healed by re-location, with no model at all. A file with
// unsupported constructs is refused by line and stores nothing.
func TestImportedSpecsReplayPassAndHeal(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	bin := buildCmd(t, "webpilot")
	s := newStack(t, 10*time.Second, 0)
	s.startWorker(t, nil)
	// The repair holds one job's hold a test (10 credits for 5), on top of
	// the browser time the replays before it were charged.
	_, key := s.tenant(t, "importer", 11)
	cli := s.cliAs(bin, key)
	files, _ := filepath.Glob("../internal/specimport/testdata/specs/*.spec.ts")
	out, err := cli(append(append([]string{"import"}, files...), "--base", s.demo, "--tag", "imported")...)
	if err != nil || !strings.Contains(out, "5 tests imported from 3 files") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	var list struct{ Tests []api.TestView }
	s.mustJSON(t, "GET", "/v1/tests", key, nil, http.StatusOK, &list)
	if len(list.Tests) != 5 {
		t.Fatalf("%d tests stored", len(list.Tests))
	}

	// Replay: every imported test passes, at 0 tokens.
	var run api.JobView
	s.mustJSON(t, "POST", "/v1/suites/run", key, map[string]any{"tags": []string{"imported"}}, http.StatusAccepted, &run)
	v := s.waitEnd(t, key, run.ID, 2*time.Minute)
	if v.State != "succeeded" || v.Suite == nil || v.Suite.Verdicts["passed"] != 5 || v.Suite.Tokens != 0 {
		t.Fatalf("replay of the imported suite: %s %s %+v", v.State, v.Error, v.Suite)
	}
	for _, tc := range list.Tests {
		var full api.TestView
		s.mustJSON(t, "GET", "/v1/tests/"+tc.ID, key, nil, http.StatusOK, &full)
		var manifest []orchestrator.ManifestStep
		if err := json.Unmarshal(full.Manifest, &manifest); err != nil {
			t.Fatal(err)
		}
		prints := 0
		for _, st := range manifest {
			for _, e := range st.Entries {
				if e.Element != nil {
					prints++
				}
			}
		}
		if prints == 0 {
			t.Errorf("%s: no fingerprint captured by its first passing replay", full.Name)
		}
		if full.Version != 1 {
			t.Errorf("%s: capturing fingerprints made version %d", full.Name, full.Version)
		}
		browsertest.MustPassSpecTwice(t, full.Script, nil)
	}

	// Drift: healed from the captured fingerprints, no model configured.
	if err := s.app.SetVariant(demoapp.RenamedIDs); err != nil {
		t.Fatal(err)
	}
	var rep api.JobView
	s.mustJSON(t, "POST", "/v1/suites/repair", key, map[string]any{"tags": []string{"imported"}}, http.StatusAccepted, &rep)
	v = s.waitEnd(t, key, rep.ID, 3*time.Minute)
	if v.State != "succeeded" || v.Suite == nil || v.Suite.Verdicts["healed"] == 0 || v.Suite.Verdicts["healed"]+v.Suite.Verdicts["passed"] != 5 || v.Suite.Tokens != 0 {
		t.Fatalf("repair of the imported suite: %s %s %+v", v.State, v.Error, v.Suite)
	}

	// Unsupported constructs: a 400 naming each line; nothing stored.
	bad, _ := os.ReadFile("../internal/specimport/testdata/unsupported/mixed.spec.ts")
	code, body := s.call(t, "POST", "/v1/tests/import", key, mustJSONBody(t, map[string]any{"files": []any{
		map[string]string{"name": "mixed.spec.ts", "content": string(bad)}}}))
	for _, want := range []string{"files[0] (mixed.spec.ts) line 5", "line 7", "waitForTimeout", "line 8", "line 11", "regular expression", "line 13"} {
		if code != http.StatusBadRequest || !strings.Contains(string(body), want) {
			t.Errorf("unsupported import (%d) lacks %q: %s", code, want, body)
		}
	}
	s.mustJSON(t, "GET", "/v1/tests", key, nil, http.StatusOK, &list)
	if len(list.Tests) != 5 {
		t.Errorf("a refused import stored tests: %d", len(list.Tests))
	}
	if out, err := cli("import", "../internal/specimport/testdata/unsupported/mixed.spec.ts"); err == nil || !strings.Contains(out, "line 8") {
		t.Errorf("CLI import of unsupported constructs: %v\n%s", err, out)
	}
}

func mustJSONBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
