package specimport_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/specimport"
)

func parseFile(t *testing.T, path string, o specimport.Options) ([]specimport.Test, error) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return specimport.Parse(filepath.Base(path), string(b), o)
}

func TestImportReadsLocatorsActionsAndAssertions(t *testing.T) {
	t.Parallel()
	tests, err := parseFile(t, "testdata/specs/list.spec.ts", specimport.Options{BaseURL: "http://127.0.0.1:9999"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 2 || tests[0].Name != "shopping list › adds an item" || tests[1].Name != "shopping list › starts with bread" {
		t.Fatalf("tests: %+v", tests)
	}
	add := tests[0]
	if add.Scenario.BaseURL != "http://127.0.0.1:9999/list" || len(add.Manifest) != 5 {
		t.Fatalf("the beforeEach goto is not where the test starts: %q, %d steps", add.Scenario.BaseURL, len(add.Manifest))
	}
	first := add.Manifest[0].Entries[0].Command
	if first.Action != browser.ActionFill || first.Target.Label != "New item" || first.Value != "Eggs" {
		t.Fatalf("fill: %+v", first)
	}
	if c := add.Manifest[2].Entries[0].Command; c.Assert != browser.AssertIsVisible || c.Target.Role != "listitem" || c.Target.HasText != "Eggs" {
		t.Fatalf("filtered visibility: %+v", c)
	}
	if c := add.Manifest[3].Entries[0].Command; c.Assert != browser.AssertCountEquals || c.Value != "2" {
		t.Fatalf("count: %+v", c)
	}
	for _, want := range []string{"test.use({ baseURL: 'http://127.0.0.1:9999' });", "await page.goto('/list');",
		"await page.getByLabel('New item').fill('Eggs');", "await page.getByTestId('add-button').click();",
		"await expect(page.getByRole('listitem').filter({ hasText: 'Eggs' })).toBeVisible();",
		"await expect(page.getByRole('listitem')).toHaveCount(2);", "await expect(page.locator('#count')).toHaveText('2 items');"} {
		if !strings.Contains(add.Script, want) {
			t.Errorf("spec lacks %q:\n%s", want, add.Script)
		}
	}
	for _, tc := range tests {
		if strings.ContainsRune(tc.Name+tc.Script+tc.Scenario.BaseURL, 0) {
			t.Fatalf("%q: text did not survive the parser intact", tc.Name)
		}
	}
	if c := tests[1].Manifest[0].Entries[0].Command; c.Assert != browser.AssertTitleEquals || c.Value != "Shopping list · Acme" {
		t.Fatalf("title: %+v", c)
	}
	bread := tests[1].Script
	for _, want := range []string{"await expect(page).toHaveTitle('Shopping list · Acme');",
		"await expect(page.getByRole('listitem').first()).toContainText('Bread');",
		"await expect(page.getByRole('listitem').last()).toContainText('Bread');",
		"await expect(page.locator('#items').getByRole('button', { name: 'Delete Bread', exact: true })).toBeEnabled();"} {
		if !strings.Contains(bread, want) {
			t.Errorf("spec lacks %q:\n%s", want, bread)
		}
	}

	// Codegen's absolute URLs move to the base URL given.
	cg, err := parseFile(t, "testdata/specs/codegen.spec.ts", specimport.Options{BaseURL: "http://127.0.0.1:9999"})
	if err != nil || cg[0].Scenario.BaseURL != "http://127.0.0.1:9999/list" {
		t.Fatalf("codegen: %v %+v", err, cg)
	}
}

func TestImportNamesEveryUnsupportedLine(t *testing.T) {
	t.Parallel()
	_, err := parseFile(t, "testdata/unsupported/mixed.spec.ts", specimport.Options{})
	var ie *specimport.Error
	if !errors.As(err, &ie) {
		t.Fatalf("want an import error, got %v", err)
	}
	got := map[int]string{}
	for _, p := range ie.Problems {
		got[p.Line] += p.Message + " | " + p.Code
	}
	want := map[int]string{5: "no variables", 6: "not a literal string", 7: "waitForTimeout", 8: "no variables, conditions or loops",
		11: "regular expression", 12: "toHaveScreenshot", 13: "options of click()"}
	for line, sub := range want {
		if !strings.Contains(got[line], sub) {
			t.Errorf("line %d: got %q, want it to mention %q", line, got[line], sub)
		}
	}
	if len(got) != len(want) {
		t.Errorf("problems on lines %v, want exactly %d lines", got, len(want))
	}
	for name, src := range map[string]string{
		"syntax":  "test('x', async ({ page }) => {\n  await page.goto('/a'\n});\n",
		"no test": "import { test } from '@playwright/test';\n",
		"fixture": "test('x', async ({ page, context }) => {\n  await page.goto('https://a.example/');\n});\n",
	} {
		if _, err := specimport.Parse(name+".spec.ts", src, specimport.Options{}); !errors.As(err, &ie) || ie.Problems[0].Line == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// An assertion in a form the importer cannot read is named, never dropped.
func TestImportNamesAnAssertionItCannotRead(t *testing.T) {
	t.Parallel()
	src := "test('x', async ({ page }) => {\n  await page.goto('https://a.example/');\n  await expect(page).resolves.toHaveTitle('A');\n  await page.getByText('B').click();\n});\n"
	_, err := specimport.Parse("chained.spec.ts", src, specimport.Options{})
	var ie *specimport.Error
	if !errors.As(err, &ie) || len(ie.Problems) != 1 || ie.Problems[0].Line != 3 {
		t.Fatalf("want one problem on line 3, got %v", err)
	}
}

func TestImportReadsFrameChains(t *testing.T) {
	t.Parallel()
	src := `test('frames', async ({ page }) => {
  await page.goto('https://a.example/frames');
  await page.frameLocator('#editor').getByRole('button', { name: 'Bold' }).click();
  await expect(page.locator('#outer').contentFrame().locator('#inner').contentFrame().getByText('Saved')).toBeVisible();
});
`
	tests, err := specimport.Parse("frames.spec.ts", src, specimport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := tests[0].Manifest
	if f := m[0].Entries[0].Command.Target.Frames; len(f) != 1 || f[0] != "#editor" {
		t.Fatalf("frameLocator: %v", f)
	}
	if f := m[1].Entries[0].Command.Target.Frames; len(f) != 2 || f[0] != "#outer" || f[1] != "#inner" {
		t.Fatalf("contentFrame chain: %v", f)
	}
	for _, want := range []string{"page.locator('#editor').contentFrame().getByRole('button', { name: 'Bold' }).click();",
		"page.locator('#outer').contentFrame().locator('#inner').contentFrame().getByText('Saved')"} {
		if !strings.Contains(tests[0].Script, want) {
			t.Errorf("spec lacks %q:\n%s", want, tests[0].Script)
		}
	}
}

// TestEveryMatcherReadsBackToItsAssertion: the importer reads each matcher
// of the shared table (orchestrator.Matchers, which the emitter writes
// from) back into the assertion it stands for.
func TestEveryMatcherReadsBackToItsAssertion(t *testing.T) {
	t.Parallel()
	for _, m := range orchestrator.Matchers {
		arg := ""
		switch m.Arg {
		case orchestrator.ArgText:
			arg = "'abc'"
		case orchestrator.ArgCount:
			arg = "3"
		}
		not := ""
		if m.Not {
			not = ".not"
		}
		src := fmt.Sprintf("test('t', async ({ page }) => {\n  await page.goto('http://127.0.0.1:1/');\n  await expect(page.getByTestId('x'))%s.%s(%s);\n});\n", not, m.Name, arg)
		tests, err := specimport.Parse("m.spec.ts", src, specimport.Options{})
		if err != nil {
			t.Fatalf("%s%s: %v", not, m.Name, err)
		}
		if c := tests[0].Manifest[0].Entries[0].Command; c.Assert != m.Assert {
			t.Errorf("%s%s read as %q, want %q", not, m.Name, c.Assert, m.Assert)
		}
	}
}
