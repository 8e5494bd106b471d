package suite

import (
	"maps"
	"slices"
	"testing"
)

// TestWhatAModuleExportsAndKeepsPrivate reads the names a module exports
// in each module system and the members its classes keep to themselves.
func TestWhatAModuleExportsAndKeepsPrivate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src      string
		exports, privs []string
	}{
		{"ESM declarations", "export class ListPage {}\nexport default function helper() {}\nexport abstract class Base {}\nclass Hidden {}",
			[]string{"Base", "ListPage", "helper"}, nil},
		{"ESM list", "const test = base.extend({});\nexport { test, expect as check };", []string{"as", "check", "expect", "test"}, nil},
		{"CommonJS", "module.exports = { LoginPage, ListPage };\nexports.test = base.extend({});", []string{"ListPage", "LoginPage", "test"}, nil},
		{"CommonJS one", "module.exports = ListPage;", []string{"ListPage"}, nil},
		{"TypeScript modifiers", "export class P {\n  private readonly field: Locator;\n  protected get counter() { return x }\n  readonly addButton: Locator;\n  private override save(): void {}\n}",
			[]string{"P"}, []string{"counter", "field", "save"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := slices.Sorted(maps.Keys(exported([]byte(c.src))))
			if !slices.Equal(got, c.exports) {
				t.Errorf("exported %v, want %v", got, c.exports)
			}
			privs := slices.Sorted(maps.Keys(privateMembers([]byte(c.src))))
			if !slices.Equal(privs, c.privs) && (len(privs) > 0 || len(c.privs) > 0) {
				t.Errorf("private %v, want %v", privs, c.privs)
			}
		})
	}
}
