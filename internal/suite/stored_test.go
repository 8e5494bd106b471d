package suite

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// TestStoredTestsAreWrittenAsAProject names each test's file after it,
// apart where two names meet, keeps its manifest beside it, and leaves
// out a test with no passing version.
func TestStoredTestsAreWrittenAsAProject(t *testing.T) {
	t.Parallel()
	spec := "import { test } from '@playwright/test';\ntest('x', async () => {});\n"
	p, where, err := StoredTestsProject([]StoredTest{
		{ID: "11111111-2222-3333-4444-555555555555", Name: "Checkout: as a guest!", Script: spec, Manifest: []byte(`[{"step":0}]`)},
		{ID: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", Name: "checkout as a guest", Script: spec},
		{ID: "99999999-2222-3333-4444-555555555555", Name: "never passed"},
		{ID: "77777777-2222-3333-4444-555555555555", Name: "¡¿", Script: spec},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"11111111-2222-3333-4444-555555555555": "tests/checkout-as-a-guest.spec.ts",
		"aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee": "tests/checkout-as-a-guest-aaaaaaaa.spec.ts",
		"77777777-2222-3333-4444-555555555555": "tests/test.spec.ts",
	}
	if len(where) != len(want) {
		t.Fatalf("written %v, want %v", where, want)
	}
	for id, file := range want {
		if where[id] != file {
			t.Errorf("test %s written to %q, want %q", id, where[id], file)
		}
		if f, ok := p.File(file); !ok || string(f.Content) != spec {
			t.Errorf("%s does not hold the test's spec", file)
		}
	}
	if f, ok := p.File("tests/checkout-as-a-guest.steps.json"); !ok || string(f.Content) != `[{"step":0}]` {
		t.Error("the manifest is not beside its spec")
	}
	if _, ok := p.File("tests/checkout-as-a-guest-aaaaaaaa.steps.json"); ok {
		t.Error("a test without a manifest got one")
	}
	if !IsStoredTestsProject(p) {
		t.Error("the written project is not recognised as one of stored tests")
	}
	own, err := NewProject(map[string][]byte{"playwright.config.ts": []byte("export default {};\n"), "tests/a.spec.ts": []byte(spec)})
	if err != nil || IsStoredTestsProject(own) {
		t.Errorf("a customer's project taken for one of stored tests (%v)", err)
	}
	var pe *ProjectError
	if _, _, err := StoredTestsProject([]StoredTest{{ID: "x", Name: "never passed"}}); !errors.As(err, &pe) {
		t.Errorf("no test to write: %v, want a ProjectError", err)
	}
}

// TestAnAcceptedRepairOfStoredTestsIsWrittenBackToThem: a version of a
// project of stored tests whose specs' locator literals were rewritten
// gives each test its new spec and a manifest whose commands and recorded
// elements name the new literals; a spec changed in any other way, or
// whose manifest does not name the literal, is left as it was and says
// why.
func TestAnAcceptedRepairOfStoredTestsIsWrittenBackToThem(t *testing.T) {
	t.Parallel()
	spec := func(testID, name, count string) string {
		return "import { test, expect } from '@playwright/test';\n\ntest('adds', async ({ page }) => {\n" +
			"  await page.goto('http://shop.test/list');\n" +
			"  await page.getByTestId(" + testID + ").click();\n" +
			"  await page.getByRole('button', { name: " + name + " }).click();\n" +
			"  await expect(page.locator(" + count + ")).toHaveText('2 items');\n});\n"
	}
	manifest := `[{"step":0,"goal":"Click Add","entries":[{"command":{"action":"click","target":{"role":"button","name":"Add"}},` +
		`"element":{"tag":"button","test_id":"add-button","attributes":{"data-testid":"add-button","class":"primary"},"path":"","locator":{"test_id":"add-button"}}}]},` +
		`{"step":1,"goal":"Click Save","entries":[{"command":{"action":"click","target":{"role":"button","name":"Save"}},"element":{"tag":"button","name":"Save","path":"","locator":{"role":"button","name":"Save"}}}]},` +
		`{"step":2,"goal":"Check the count","entries":[{"command":{"action":"verify","target":{"css":"#count"},"value":"2 items","assert":"text_equals"}}]}]`
	ids := []string{"11111111-2222-3333-4444-555555555555", "22222222-2222-3333-4444-555555555555", "33333333-2222-3333-4444-555555555555", "44444444-2222-3333-4444-555555555555"}
	old := spec("'add-button'", "'Save'", "'#count'")
	stored := []StoredTest{
		{ID: ids[0], Name: "renamed", Script: old, Manifest: []byte(manifest)},
		{ID: ids[1], Name: "a step added", Script: old, Manifest: []byte(manifest)},
		{ID: ids[2], Name: "untouched", Script: old, Manifest: []byte(manifest)},
		{ID: ids[3], Name: "manifest elsewhere", Script: old, Manifest: []byte(strings.ReplaceAll(manifest, `"#count"`, `"#total"`))},
	}
	parent, where, err := StoredTestsProject(stored)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range parent.Files {
		files[f.Path] = f.Content
	}
	renamed := spec(`"add-entry-btn"`, "'Save list'", "'#total-count'")
	files[where[ids[0]]] = []byte(renamed)
	files[where[ids[1]]] = []byte(strings.Replace(old, "  await page.getByRole", "  await page.getByLabel('Quantity').fill('2');\n  await page.getByRole", 1))
	files[where[ids[3]]] = []byte(spec("'add-button'", "'Save'", "'#total-count'"))
	accepted, err := NewProject(files)
	if err != nil {
		t.Fatal(err)
	}
	updates, skips, err := StoredTestUpdates(parent, accepted)
	if err != nil {
		t.Fatal(err)
	}
	if len(updates) != 1 || updates[0].TestID != ids[0] || updates[0].Script != renamed || len(updates[0].Changes) != 3 {
		t.Fatalf("updates %+v", updates)
	}
	var steps []orchestrator.ManifestStep
	if err := json.Unmarshal(updates[0].Manifest, &steps); err != nil {
		t.Fatal(err)
	}
	add, save, count := steps[0].Entries[0], steps[1].Entries[0], steps[2].Entries[0]
	// The Add step's command names the button by role, its element by
	// test id (the spec's line is written from the element's locator).
	if add.Command.Target.Name != "Add" || add.Element.TestID != "add-entry-btn" || add.Element.Locator.TestID != "add-entry-btn" ||
		add.Element.Attributes["data-testid"] != "add-entry-btn" || add.Element.Attributes["class"] != "primary" {
		t.Errorf("the Add button's step: %+v %+v", add.Command, add.Element)
	}
	if save.Command.Target.Name != "Save list" || save.Command.Target.Role != "button" || save.Element.Name != "Save list" {
		t.Errorf("the Save button's step: %+v %+v", save.Command, save.Element)
	}
	if count.Command.Target.CSS != "#total-count" || count.Command.Value != "2 items" {
		t.Errorf("the count's step: %+v", count.Command)
	}
	why := map[string]string{}
	for _, s := range skips {
		why[s.TestID] = s.Reason
	}
	if len(skips) != 2 || !strings.Contains(why[ids[1]], "steps changed") || !strings.Contains(why[ids[3]], `no step of its manifest names locator "#count"`) {
		t.Errorf("skips %+v", skips)
	}
	// An index naming a file that is no stored test's spec (a project
	// crafted to look like one) is refused for that file, not read.
	files[storedIndex] = []byte(`{"a.js": "` + ids[0] + `"}`)
	files["a.js"] = []byte("page.locator('#a');\n")
	crafted, _ := NewProject(files)
	files["a.js"] = []byte("page.locator('#b');\n")
	craftedNext, _ := NewProject(files)
	if ups, skips, err := StoredTestUpdates(crafted, craftedNext); err != nil || len(ups) != 0 || len(skips) != 1 || !strings.Contains(skips[0].Reason, "not a stored test's spec") {
		t.Errorf("a crafted index: %+v %+v (%v)", ups, skips, err)
	}
	// A project written before the index: nothing is written back.
	delete(files, storedIndex)
	bare, _ := NewProject(files)
	var pe *ProjectError
	if _, _, err := StoredTestUpdates(parent, bare); !errors.As(err, &pe) {
		t.Errorf("no index: %v", err)
	}
}
