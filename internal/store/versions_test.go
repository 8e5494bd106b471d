package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// TestScriptsAreAcceptedOnlyOverTheScriptTheyWereMadeFrom: an accepted
// project version's specs become their tests' next versions only where a
// test's script is still the one the project was written from; another
// tenant's test, or one repaired since, is named stale and left alone,
// and accepting the same update twice writes it once.
func TestScriptsAreAcceptedOnlyOverTheScriptTheyWereMadeFrom(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	acme, _ := storetest.Tenant(t, st, "acme", 10)
	other, _ := storetest.Tenant(t, st, "other", 10)
	imported := func(tenantID, name string) store.Test {
		list, err := st.ImportTests(ctx, tenantID, []store.ImportedTest{{Name: name, Scenario: json.RawMessage(`{"name":"` + name + `"}`),
			Script: "page.getByTestId('add-button')", Manifest: json.RawMessage(`[{"step":0}]`)}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return list[0]
	}
	mine, theirs := imported(acme.ID, "add"), imported(other.ID, "add")
	const was = "page.getByTestId('add-button')"
	up := func(id, from string) store.ScriptUpdate {
		return store.ScriptUpdate{TestID: id, From: from, Script: "page.getByTestId('add-entry-btn')", Manifest: json.RawMessage(`[{"step":1}]`),
			Verdict: "healed", Summary: "locators rewritten", Changes: json.RawMessage(`[]`)}
	}
	made, stale, err := st.AcceptScripts(ctx, acme.ID, []store.ScriptUpdate{up(mine.ID, was), up(theirs.ID, was)})
	if err != nil {
		t.Fatal(err)
	}
	if len(made) != 1 || made[mine.ID] != 2 || len(stale) != 1 || stale[0] != theirs.ID {
		t.Fatalf("made %v, stale %v", made, stale)
	}
	got, err := st.GetTest(ctx, acme.ID, mine.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || got.Script != "page.getByTestId('add-entry-btn')" || string(got.Manifest) != `[{"step": 1}]` {
		t.Errorf("the test after: version %d, %q, %s", got.Version, got.Script, got.Manifest)
	}
	v, err := st.GetTestVersion(ctx, acme.ID, mine.ID, 2)
	if err != nil || v.Status != store.VersionAccepted || v.Verdict != "healed" || v.DecidedAt == nil {
		t.Errorf("version 2: %+v (%v)", v, err)
	}
	if t2, _ := st.GetTest(ctx, other.ID, theirs.ID); t2.Version != 1 {
		t.Errorf("another tenant's test moved to version %d", t2.Version)
	}
	made, stale, err = st.AcceptScripts(ctx, acme.ID, []store.ScriptUpdate{up(mine.ID, was)})
	if err != nil || len(made) != 0 || len(stale) != 1 {
		t.Errorf("accepted twice: made %v, stale %v (%v)", made, stale, err)
	}
}
