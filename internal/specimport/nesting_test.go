package specimport_test

import (
	"errors"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/specimport"
)

// deepInputs are inputs that nest a recursive-descent parser once per few
// bytes; each once ended the process (a Go stack overflow cannot be
// recovered) or held it for up to a minute and gigabytes.
func deepInputs() map[string]string {
	r := strings.Repeat
	return map[string]string{
		"200,000 unary !":       "test('x', async ({ page }) => { const a = " + r("!", 200000) + "'x'; });",
		"40,000 nested arrows":  r("(()=>", 40000) + "1" + r(")", 40000),
		"parentheses":           r("(", 100000) + r(")", 100000),
		"brackets":              r("[", 100000) + r("]", 100000),
		"braces":                r("{", 100000) + r("}", 100000),
		"templates":             r("`${", 40000) + r("}`", 40000),
		"ternaries":             "a=" + r("a?a:", 50000) + "a;",
		"assignments":           r("a=", 100000) + "a;",
		"spaced minus":          "a=" + r("- ", 100000) + "1",
		"typeof":                "a=" + r("typeof ", 30000) + "1",
		"new":                   "a=" + r("new ", 50000) + "A",
		"member chain":          "a" + r(".b", 100000),
		"call chain":            "a" + r("()", 100000),
		"index chain":           "a" + r("[0]", 60000),
		"tagged templates":      "a" + r("``", 100000),
		"if chain":              r("if(a)", 40000) + ";",
		"else-if chain":         "if(a)x;" + r("else if(a)x;", 20000),
		"curried arrows":        "f=" + r("a=>", 60000) + "a",
		"exponents":             "a=" + r("a**", 60000) + "a",
		"keyof":                 "type T = " + r("keyof ", 30000) + "X;",
		"if, return, function":  r(r("if(a)", 150)+"return function(){", 200) + r("}", 200),
		"lines between !":       "a=" + r("!\n", 100000) + "1",
		"statements in arrows":  r("()=>{if(a)if(a)if(a)return ", 5000) + "1" + r("}", 5000),
		"unary behind a regex?": "x = a.return /" + r("!", 100000) + "/ 1",
	}
}

func TestDeepInputIsRefusedBeforeAnyParser(t *testing.T) {
	// A parser reached with any of these would now overflow this stack
	// quickly rather than after a gigabyte: the pre-scan must stop them.
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	for name, src := range deepInputs() {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := specimport.Parse("deep.spec.ts", src, specimport.Options{})
			var ie *specimport.Error
			if !errors.As(err, &ie) || !strings.Contains(ie.Problems[0].Message, "nests deeper than") {
				t.Fatalf("not refused for its nesting: %v", err)
			}
			if d := time.Since(start); d > 200*time.Millisecond {
				t.Errorf("refusing it took %s", d)
			}
		})
	}
}

func TestTooLargeAFileIsRefusedUnread(t *testing.T) {
	t.Parallel()
	src := "test('x', async ({ page }) => {});\n" + strings.Repeat("// padding\n", specimport.MaxFileBytes/11+1)
	_, err := specimport.Parse("big.spec.ts", src, specimport.Options{})
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a %d-byte file: %v", len(src), err)
	}
}

// TestRealStylesAreNotRefusedForNesting: the bound leaves the way people
// write suites alone, however long: no-semicolon style, page objects,
// long data tables, else-if ladders, long concatenations, chained
// locators, TypeScript types and regular expressions holding brackets.
func TestRealStylesAreNotRefusedForNesting(t *testing.T) {
	t.Parallel()
	r := strings.Repeat
	styles := map[string]string{
		"no semicolons, 400 lines": "import { test, expect } from '@playwright/test'\n\ntest('long', async ({ page }) => {\n" +
			r("  await page.getByRole('button', { name: 'Next' }).click()\n  await expect(page.locator('.step')).toHaveText(/Step \\d+/)\n", 200) + "})\n",
		"page object": `const { expect } = require('@playwright/test')
class LoginPage {
  constructor(page) {
    this.page = page
    this.user = page.locator('[data-test="username"]')
    this.pass = page.getByPlaceholder('Password')
  }
  async login(u, p) {
    await this.user.fill(u)
    await this.pass.fill(p)
    await this.page.getByRole('button', { name: /log ?in/i }).click()
  }
}
module.exports = { LoginPage }
`,
		"data table and loop": "const rows: Array<{ name: string; price: number }> = [\n" + r("  { name: 'Item (large) [x]', price: 10.5 },\n", 2000) + "];\nfor (const row of rows) {\n  test(`buys ${row.name}`, async ({ page }) => {\n    await page.goto(`/item/${encodeURIComponent(row.name)}?q=${row.price * 2}`);\n  });\n}\n",
		"else-if ladder":      "function pick(x: string): number {\n  if (x === 'a') { return 1; }\n" + r("  else if (x === 'b' && x !== 'c' || x.length > 3) { return 2; }\n", 30) + "  else { return 0; }\n}\n",
		"long concatenation":  "const s = 'a'" + r(" + 'b'", 150) + ";\n",
		"locator chain":       "await page.locator('#main').locator('section').filter({ hasText: /Sale/ }).getByRole('listitem').nth(2).getByRole('button', { name: 'Add' }).first().click();\n",
		"regex with brackets": "await expect(page).toHaveURL(/\\/(inventory|cart)\\.html(\\?.*)?$/);\nconst re = /[({[]/g;\nconst t = a / b / c;\n",
		"hooks and describe":  "test.describe('cart', () => {\n  test.describe.configure({ mode: 'serial' });\n  test.beforeEach(async ({ page }) => { await page.goto('/'); });\n  test.afterEach(async ({ page }, testInfo) => { if (testInfo.status !== testInfo.expectedStatus) { await page.screenshot({ path: `${testInfo.title}.png` }); } });\n" + r("  test('t', async ({ page }) => { await test.step('s', async () => { await expect(page.getByText('x'), 'message').toBeVisible(); }); });\n", 200) + "});\n",
		"fixtures":            "type F = { admin: Page };\nexport const it = base.extend<F>({\n  admin: async ({ browser }, use) => {\n    const ctx = await browser.newContext({ storageState: 'admin.json' });\n    await use(await ctx.newPage());\n    await ctx.close();\n  },\n});\n",
	}
	for name, src := range styles {
		t.Run(name, func(t *testing.T) {
			_, err := specimport.Parse("style.spec.ts", src, specimport.Options{})
			if err != nil && strings.Contains(err.Error(), "nests deeper than") {
				t.Fatalf("refused for nesting: %v", err)
			}
		})
	}
}

// TestARefusalStaysSmall: a file with thousands of problems on one long
// line is refused with its first problems, each quoting the line's start,
// and a count of the rest (it once answered about a gigabyte).
func TestARefusalStaysSmall(t *testing.T) {
	t.Parallel()
	src := "test('t', async ({ page }) => {" + strings.Repeat("await page.getByRole('button', { name: /x/i }).click();", 4000) + "});"
	_, err := specimport.Parse("long.spec.ts", src, specimport.Options{})
	var ie *specimport.Error
	if !errors.As(err, &ie) {
		t.Fatalf("not refused: %v", err)
	}
	size := 0
	for _, p := range ie.Problems {
		size += len(p.Code) + len(p.Message)
	}
	if len(ie.Problems) != 21 || size > 10_000 || ie.Problems[20].Message != "and 3980 more problems" {
		t.Fatalf("%d problems, %d bytes, last %q", len(ie.Problems), size, ie.Problems[len(ie.Problems)-1].Message)
	}
}
