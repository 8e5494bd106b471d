package jssource_test

import (
	"errors"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/jssource"
)

// TestASourceNestedDeeperThanAnySuiteIsRefusedUnparsed: a project's file
// of 200,000 nested "[" (400 KB, within a project file's 2 MiB) once took
// the worker down with a Go stack overflow in esbuild, which nothing can
// recover. It is refused with the line where it went too deep, whatever
// its extension, before any parser sees it.
func TestASourceNestedDeeperThanAnySuiteIsRefusedUnparsed(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	r := strings.Repeat
	for _, tc := range []struct{ name, file, src string }{
		{"brackets in JavaScript", "tests/deep.spec.js", "const a = " + r("[", 200000) + r("]", 200000) + ";\n"},
		{"braces in TypeScript", "pages/Deep.ts", "\n\nconst a = " + r("{a:", 100000) + "1" + r("}", 100000) + ";\n"},
		{"arrows in TSX", "deep.tsx", r("(()=>", 40000) + "1" + r(")", 40000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jssource.Parse(tc.file, tc.src, jssource.Options{})
			var ne *jssource.NestingError
			var je *jssource.Error
			if !errors.As(err, &ne) || !errors.As(err, &je) || je.File != tc.file || len(je.Problems) != 1 || je.Problems[0].Line != ne.Line ||
				!strings.Contains(err.Error(), "nests deeper than 200 levels") {
				t.Fatalf("not refused for its nesting: %v", err)
			}
		})
	}
}

// TestASourceIsParsedWithItsOwnPositions: TypeScript is stripped, and a
// syntax error names its line in the file as written.
func TestASourceIsParsedWithItsOwnPositions(t *testing.T) {
	t.Parallel()
	src := "import { test } from '@playwright/test';\n\ntype U = { name: string };\nconst u: U = { name: 'ada' };\ntest('t', async ({ page }) => {\n  await page.getByLabel('Name').fill(u.name);\n});\n"
	s, err := jssource.Parse("tests/a.spec.ts", src, jssource.Options{})
	if err != nil || s.Program == nil || len(s.Map) == 0 || strings.Contains(s.Code, "type U") {
		t.Fatalf("%v\n%s", err, s.Code)
	}
	_, err = jssource.Parse("tests/b.spec.js", "const a = 1;\n\nconst b = ;\n", jssource.Options{})
	var je *jssource.Error
	if !errors.As(err, &je) || je.Problems[0].Line != 3 || !strings.HasPrefix(je.Problems[0].Message, "syntax: ") {
		t.Fatalf("%v", err)
	}
}
