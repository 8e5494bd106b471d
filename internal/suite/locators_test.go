package suite

import (
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// TestFindLocatorSites finds where a page object and a spec build their
// locators, with each literal's exact place in the file as written
// (TypeScript with types, a constructor, regular expressions, options).
func TestFindLocatorSites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		want map[string]string // selector → the literal as written
	}{
		{"suitetest/corpus/shopping/pages/ListPage.ts", map[string]string{
			`internal:role=textbox[name="New item"i]`:     `'New item'`,
			`internal:testid=[data-testid="add-button"s]`: `'add-button'`,
			`#items li`:                             `'#items li'`,
			`#count`:                                `'#count'`,
			`internal:role=button[name="Dismiss"i]`: `'Dismiss'`,
		}},
		{"suitetest/corpus/shopping/tests/list.spec.ts", map[string]string{
			`internal:role=button[name=/delete bread/i]`: `/delete bread/i`,
		}},
		{"suitetest/corpus/shopping/tests/login.spec.js", map[string]string{
			`internal:label="Email"i`:               `'Email'`,
			`internal:label="Password"i`:            `'Password'`,
			`internal:role=button[name="Sign in"i]`: `'Sign in'`,
			`internal:role=checkbox`:                `'checkbox'`,
		}},
		// Selectors kept in an object of constants, used through it.
		{"suitetest/corpus/commonjs/helpers/list.js", map[string]string{
			`#item`:                      `'#item'`,
			`[data-testid="add-button"]`: `'[data-testid="add-button"]'`,
			`#count`:                     `'#count'`,
			`#dismiss-tips`:              `'#dismiss-tips'`,
		}},
		// The page's own selector methods.
		{"suitetest/corpus/commonjs/tests/login.spec.js", map[string]string{
			`#email`:                `'#email'`,
			`button[type="submit"]`: `'button[type="submit"]'`,
		}},
	} {
		src, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		sites, err := FindLocatorSites(tc.file, src)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range sites {
			lit := s.Arg
			if s.Name != nil {
				lit = *s.Name
			}
			got[s.Selector] = string(src[lit.Start:lit.End])
		}
		for sel, want := range tc.want {
			if got[sel] != want {
				t.Errorf("%s: %s is built from %q, want %q (all: %q)", tc.file, sel, got[sel], want, got)
			}
		}
	}
}

// TestAnyNameRoundTripsInItsOwnSpelling: a name may hold any character
// (an icon font's private-use glyph as people copy it from the
// accessibility tree, written as the glyph or as an escape, a no-break
// space, an emoji, right-to-left text, a non-ASCII comment before it on
// the line): each call maps to the selector Playwright records for it and
// to its literal as written, and a rewrite of it is spelled as the file
// spells it (an escape stays an escape).
func TestAnyNameRoundTripsInItsOwnSpelling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		selector  string // as the trace records it
		literal   string // as written
		renamed   string // the element's new name
		rewritten string
	}{
		{"an icon glyph as written", "await page.getByRole('button', { name: '\uF090 Login' }).click();",
			"internal:role=button[name=\"\uF090 Login\"i]", "'\uF090 Login'", "\uF090 Sign in", "'\uF090 Sign in'"},
		{"an icon glyph escaped", `await page.getByRole('button', { name: '\uF090 Login' }).click();`,
			"internal:role=button[name=\"\uF090 Login\"i]", `'\uF090 Login'`, "\uF090 Sign in", `'\uF090 Sign in'`},
		{"lower-case hex, a new glyph", `await page.getByRole('button', { name: '\uf090 Login' }).click();`,
			"internal:role=button[name=\"\uF090 Login\"i]", `'\uf090 Login'`, "\uF08B Log in", `'\uf08b Log in'`},
		{"a regular expression with a glyph", "await page.getByRole('button', { name: /\uF090 Login/i }).click(); // é",
			"internal:role=button[name=/\uF090 Login/i]", "/\uF090 Login/i", "\uF090 Sign in", "/\uF090 Sign in/i"},
		{"a regular expression with an escape", `await page.getByRole('button', { name: /\uF090 Login/ }).click();`,
			`internal:role=button[name=/\uF090 Login/]`, `/\uF090 Login/`, "\uF090 Sign in", `/\uF090 Sign in/`},
		{"a no-break space", "await page.getByText('Total:\u00a0€3').click();",
			"internal:text=\"Total:\u00a0€3\"i", "'Total:\u00a0€3'", "Sum:\u00a0€3", "'Sum:\u00a0€3'"},
		{"a no-break space escaped", `await page.getByText('Total:\u00A0€3').click();`,
			"internal:text=\"Total:\u00a0€3\"i", `'Total:\u00A0€3'`, "Sum:\u00a0€3", `'Sum:\u00A0€3'`},
		{"an emoji after a non-ASCII title", "test('ajoute 🛒 — élément', async ({ page }) => { await page.getByRole('link', { name: '🛒 Panier' }).click(); });",
			"internal:role=link[name=\"🛒 Panier\"i]", "'🛒 Panier'", "🛒 Mon panier", "'🛒 Mon panier'"},
		{"an emoji escaped as a pair", `await page.getByRole('link', { name: "\uD83D\uDED2 Cart" }).click();`,
			"internal:role=link[name=\"🛒 Cart\"i]", `"\uD83D\uDED2 Cart"`, "🛒 Basket", `"\uD83D\uDED2 Basket"`},
		{"an emoji escaped in braces", "await page.getByRole('link', { name: `\\u{1F6D2} Cart` }).click();",
			"internal:role=link[name=\"🛒 Cart\"i]", "`\\u{1F6D2} Cart`", "🛒 Basket", "`\\u{1F6D2} Basket`"},
		{"right-to-left text", "await page.getByLabel('שם משתמש').fill('x');",
			"internal:label=\"שם משתמש\"i", "'שם משתמש'", "שם", "'שם'"},
		{"a new mark no one can see", "await page.getByRole('button', { name: 'Save' }).click();",
			"internal:role=button[name=\"Save\"i]", "'Save'", "Save\u200f now", `'Save\u200F now'`},
		{"a TypeScript page object", "class P { constructor(private page: Page) {} readonly login = this.page.getByRole('button', { name: '\uF090 Login' }); }",
			"internal:role=button[name=\"\uF090 Login\"i]", "'\uF090 Login'", "\uF090 Go", "'\uF090 Go'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file, src := "tests/x.spec.js", tc.src
			switch {
			case strings.HasPrefix(src, "class"):
				file = "pages/p.ts"
			case !strings.HasPrefix(src, "test("):
				src = "test('x', async ({ page }) => {\n  " + src + "\n});\n"
			}
			sites, err := FindLocatorSites(file, []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			var s *LocatorSite
			for i := range sites {
				if sites[i].Selector == tc.selector {
					s = &sites[i]
				}
			}
			if s == nil {
				t.Fatalf("no site builds %q: %+v", tc.selector, sites)
			}
			lit := s.Arg
			if s.Name != nil {
				lit = *s.Name
			}
			if got := src[lit.Start:lit.End]; got != tc.literal {
				t.Fatalf("the literal is %q, want %q", got, tc.literal)
			}
			got, _, why := rewrite(*s, SnapshotElement{}, SnapshotElement{Tag: "button", Text: tc.renamed,
				Attributes: map[string]string{"label": tc.renamed}}, false)
			if got == nil {
				t.Fatalf("not rewritten: %s", why)
			}
			if _, text, _ := rewrite(*s, SnapshotElement{}, SnapshotElement{Tag: "button", Text: tc.renamed, Attributes: map[string]string{"label": tc.renamed}}, false); text != tc.rewritten {
				t.Fatalf("rewritten as %s, want %s", text, tc.rewritten)
			}
			// The rewritten file finds the new name the way Playwright does.
			patched := src[:lit.Start] + tc.rewritten + src[lit.End:]
			again, err := FindLocatorSites(file, []byte(patched))
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(tc.selector, `"`+lit.Value+`"`, `"`+tc.renamed+`"`, 1)
			if lit.Regex {
				want = strings.Replace(tc.selector, tc.literal, tc.rewritten, 1)
			}
			if !slices.ContainsFunc(again, func(s LocatorSite) bool { return s.Selector == want }) {
				t.Errorf("the patched file builds %v, not %q", again, want)
			}
		})
	}
}

// TestAFileNestedTooDeepIsRefusedNotACrash: a project's source of 200,000
// nested "[" (within a file's 2 MiB) once ended the worker with a Go
// stack overflow in esbuild, with every job it held. Its locators are not
// looked for, and the refusal says why.
func TestAFileNestedTooDeepIsRefusedNotACrash(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	src := "const { test } = require('@playwright/test');\nconst a = " + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + ";\n"
	sites, err := FindLocatorSites("tests/deep.spec.js", []byte(src))
	if err == nil || sites != nil || !strings.Contains(err.Error(), "tests/deep.spec.js:2: nests deeper than") {
		t.Fatalf("%d sites, %v", len(sites), err)
	}
}
