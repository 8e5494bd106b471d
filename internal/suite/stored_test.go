package suite

import (
	"errors"
	"testing"
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
