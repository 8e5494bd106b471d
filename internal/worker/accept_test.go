package worker

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
	"github.com/webpilot/webpilot/internal/suite"
)

// TestARepairAcceptedAtOnceWritesItsStoredTestsBack: a verified repair of a
// project of stored tests with auto_accept becomes the project's current
// version as a person's Accept makes it, and the stored test it healed
// takes the healed spec and a manifest naming the new test id.
func TestARepairAcceptedAtOnceWritesItsStoredTestsBack(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	tn, _ := storetest.Tenant(t, st, "acme", 10)
	const script = "import { test } from '@playwright/test';\n\ntest('add', async ({ page }) => {\n  await page.getByTestId('add-button').click();\n});\n"
	manifest := `[{"step":1,"goal":"Click Add","entries":[{"command":{"action":"click","target":{"role":"button","name":"Add"}},` +
		`"element":{"tag":"button","path":"","test_id":"add-button","locator":{"test_id":"add-button"}}}]}]`
	list, err := st.ImportTests(ctx, tn.ID, []store.ImportedTest{{Name: "add", Scenario: json.RawMessage(`{"name":"add"}`), Script: script, Manifest: json.RawMessage(manifest)}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, where, err := suite.StoredTestsProject([]suite.StoredTest{{ID: list[0].ID, Name: "add", Script: script, Manifest: json.RawMessage(manifest)}})
	if err != nil {
		t.Fatal(err)
	}
	archive, err := p.Archive()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.SaveProjectVersion(ctx, tn.ID, store.ProjectVersion{Project: "generated", Digest: p.Digest(), Files: len(p.Files), Bytes: p.Size()}, archive); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range p.Files {
		files[f.Path] = f.Content
	}
	files[where[list[0].ID]] = []byte(strings.Replace(script, "add-button", "add-entry-btn", 1))
	patched, err := suite.NewProject(files)
	if err != nil {
		t.Fatal(err)
	}
	w := &Worker{store: st}
	out := w.concludeRepair(ctx, store.Claim{TenantID: tn.ID}, jobs.ProjectRequest{Name: "generated", Version: p.Digest(), AutoAccept: true},
		suite.RepairReport{Verified: true, Patched: &patched}, suite.ProjectRepairResult{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if out.State != store.JobStateSucceeded {
		t.Fatalf("the repair ended %s: %s", out.State, out.Error)
	}
	var res suite.ProjectRepairResult
	if err := json.Unmarshal(out.Result, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Accepted || res.Proposed != patched.Digest() || res.StoredTests == nil || len(res.StoredTests.Tests) != 1 || res.StoredTests.Tests[0].Version != 2 {
		t.Fatalf("result: %+v", res)
	}
	if v, err := st.ProjectVersion(ctx, tn.ID, "generated", patched.Digest()); err != nil || !v.Current || v.Parent != p.Digest() {
		t.Errorf("the patched version: %+v (%v)", v, err)
	}
	got, err := st.GetTest(ctx, tn.ID, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || !strings.Contains(got.Script, "'add-entry-btn'") || !strings.Contains(string(got.Manifest), `"add-entry-btn"`) || strings.Contains(string(got.Manifest), `"add-button"`) {
		t.Errorf("the stored test: version %d, manifest %s\n%s", got.Version, got.Manifest, got.Script)
	}
}
