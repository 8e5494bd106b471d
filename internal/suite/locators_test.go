package suite

import (
	"os"
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
