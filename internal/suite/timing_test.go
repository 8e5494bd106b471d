package suite

import (
	"fmt"
	"strings"
	"testing"
)

// TestATimingHealChangesOnlyTheTimeout: the assertion the trace names
// (its matcher's line and column) gets a longer timeout and nothing else
// changes, whatever its options look like.
func TestATimingHealChangesOnlyTheTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, line, want, err string
	}{
		{"no options", `await expect(count).toHaveText('2 items');`, `await expect(count).toHaveText('2 items', { timeout: 10000 });`, ""},
		{"no arguments", `await expect(row).toBeVisible();`, `await expect(row).toBeVisible({ timeout: 10000 });`, ""},
		{"negated", `await expect(row).not.toBeVisible();`, `await expect(row).not.toBeVisible({ timeout: 10000 });`, ""},
		{"a message and soft", `await expect.soft(count, 'the counter').toHaveText(/^2 items?$/);`,
			`await expect.soft(count, 'the counter').toHaveText(/^2 items?$/, { timeout: 10000 });`, ""},
		{"a timeout already", `await expect(box).toHaveAttribute('aria-busy', 'false', { timeout: 1500 });`,
			`await expect(box).toHaveAttribute('aria-busy', 'false', { timeout: 10000 });`, ""},
		{"other options", `await expect(list).toHaveText(['a', 'b'], { useInnerText: true });`,
			`await expect(list).toHaveText(['a', 'b'], { useInnerText: true, timeout: 10000 });`, ""},
		{"spread options", `await expect(list).toHaveCount(2, { ...opts });`, `await expect(list).toHaveCount(2, { ...opts, timeout: 10000 });`, ""},
		{"empty options", `await expect(list).toHaveCount(2, {});`, `await expect(list).toHaveCount(2, { timeout: 10000 });`, ""},
		{"brackets in strings and regexes", `await expect(x).toHaveText(/a\/(b)[)]/, { timeout: 2000 });`,
			`await expect(x).toHaveText(/a\/(b)[)]/, { timeout: 10000 });`, ""},
		{"a template", "await expect(x).toHaveText(`${n}) items, ${m}`);", "await expect(x).toHaveText(`${n}) items, ${m}`, { timeout: 10000 });", ""},
		{"a trailing comma", "await expect(x).toHaveText(\n  'long',\n);", "await expect(x).toHaveText(\n  'long', { timeout: 10000 },\n);", ""},
		{"a variable timeout", `await expect(x).toHaveText('a', { timeout });`, "", "a variable"},
		{"options in a variable", `await expect(x).toHaveText('a', opts);`, "", "not written where"},
		{"not a retrying assertion", `expect(n).toBe(2);`, "", "neither a retrying assertion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := "test('t', async () => {\n  " + tc.line + "\n});\n"
			// The trace's call site is the matcher's name.
			names := []string{"toHaveText", "toBeVisible", "toHaveAttribute", "toHaveCount", "toBe("}
			col := -1
			for _, n := range names {
				if i := strings.LastIndex(tc.line, "."+n); i >= 0 {
					col = i + 2 + 2 // the dot, 1-based, the two spaces of indent
					break
				}
			}
			p := Project{Files: []File{{Path: "a.spec.ts", Content: []byte(src)}}}
			f := &TraceAction{File: "a.spec.ts", Line: 2, Column: col, Error: "Timed out 2000ms waiting for expect(locator).toHaveText(expected)"}
			e, ch, err := timingEdit(p, f, "")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := edited(t, p, e), "test('t', async () => {\n  "+tc.want+"\n});\n"; got != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
			if ch.Old != "2000 ms" || ch.New != "10000 ms" {
				t.Errorf("change %+v", ch)
			}
		})
	}
}

// TestAnActionThatTimedOutWaitsLonger: an action that gave up waiting for
// its element (the app slower than the test's actionTimeout) gets its own
// longer timeout, in its own options.
func TestAnActionThatTimedOutWaitsLonger(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, line, method, want string }{
		{"a click", "await this.row(name).getByRole('button', { name: `Delete ${name}` }).click();", "click",
			"await this.row(name).getByRole('button', { name: `Delete ${name}` }).click({ timeout: 20000 });"},
		{"a fill", "await page.getByLabel('Item').fill('Milk');", "fill", "await page.getByLabel('Item').fill('Milk', { timeout: 20000 });"},
		{"a click with options", "await page.locator('#add').click({ force: true });", "click",
			"await page.locator('#add').click({ force: true, timeout: 20000 });"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := "test('t', async () => {\n  " + tc.line + "\n});\n"
			col := strings.LastIndex(tc.line, "."+tc.method+"(") + 2 + 2
			p := Project{Files: []File{{Path: "a.spec.ts", Content: []byte(src)}}}
			f := &TraceAction{API: "locator." + tc.method, Method: tc.method, File: "a.spec.ts", Line: 2, Column: col,
				Error: "TimeoutError: locator." + tc.method + ": Timeout 4000ms exceeded.\nCall log:\n  - waiting for locator('#add')"}
			e, ch, err := timingEdit(p, f, "")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := edited(t, p, e), "test('t', async () => {\n  "+tc.want+"\n});\n"; got != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
			if ch.Old != "4000 ms" || ch.New != "20000 ms" {
				t.Errorf("change %+v", ch)
			}
		})
	}
}

// TestATestThatRanOutOfTimeGetsLonger: a test whose every step waited
// within its own timeout but which ran out of the test's (several slow
// additions) gets three times as long, by a setTimeout first in its body
// through the test object it was declared with, and nothing else changes.
func TestATestThatRanOutOfTimeGetsLonger(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, want, err string }{
		{"an arrow with fixtures", "test('adds', async ({ page }) => {\n    await page.goto('/');\n});\n",
			"test('adds', async ({ page }) => {\n    test.setTimeout(45000);\n    await page.goto('/');\n});\n", ""},
		{"a function and another test object", "it.only('adds', async function ({ page }) {\n\tawait page.goto('/');\n});\n",
			"it.only('adds', async function ({ page }) {\n\tit.setTimeout(45000);\n\tawait page.goto('/');\n});\n", ""},
		{"details and numeric separators", "const t = 30_000;\ntest('adds', { tag: '@slow' }, async ({ page }) => {\n  await page.goto('/');\n});\n",
			"const t = 30_000;\ntest('adds', { tag: '@slow' }, async ({ page }) => {\n  test.setTimeout(45_000);\n  await page.goto('/');\n});\n", ""},
		{"an expression body", "test('adds', async ({ page }) => page.goto('/'));\n", "", "no block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Project{Files: []File{{Path: "a.spec.ts", Content: []byte(tc.src)}}}
			line := 1 + strings.Count(tc.src[:strings.Index(tc.src, "('adds'")], "\n")
			to := TestOutcome{File: "a.spec.ts", Line: line, Column: 1, Status: "failed", Error: "Test timeout of 15000ms exceeded."}
			e, ch, err := testTimeoutEdit(p, to)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := edited(t, p, e); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
			if ch.Old != "15000 ms" || ch.New != "45000 ms" || ch.Line != line {
				t.Errorf("change %+v", ch)
			}
		})
	}
}

// TestALongerWaitThatOutlastsItsTestGivesTheTestLongerWithIt: a call
// whose longer wait cannot end within the test's own time (its project's
// timeout) takes the test's longer timeout in the same trial, three times
// the project's; one that ends within it, or a test of unknown time, does
// not. (A regression's trial waited the call's longer wait, ran out of
// the test's time, and took a second trial to wait it again.)
func TestALongerWaitThatOutlastsItsTestGivesTheTestLongerWithIt(t *testing.T) {
	t.Parallel()
	src := "test('adds', async ({ page }) => {\n  await expect(page.locator('#count')).toHaveText('2 items');\n});\n"
	p := Project{Files: []File{{Path: "a.spec.ts", Content: []byte(src)}}}
	f := &TraceAction{File: "a.spec.ts", Line: 2, Column: 40, Method: "toHaveText"}
	for _, tc := range []struct {
		name     string
		waited   string // the assertion's wait, in its error
		testMS   int    // the project's timeout
		outlasts bool
	}{
		{"a 5 s wait made 25 s in a test of 20 s", "5000", 20000, true},
		{"a 5 s wait made 25 s in a test of 25 s", "5000", 25000, true},
		{"a 2 s wait made 10 s in a test of 30 s", "2000", 30000, false},
		{"a test whose time is not known", "5000", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			to := TestOutcome{File: "a.spec.ts", Line: 1, Column: 1, Status: "failed", TimeoutMS: tc.testMS,
				Error: "Error: Timed out " + tc.waited + "ms waiting for expect(locator).toHaveText(expected)"}
			_, ch, err := timingEdit(p, f, to.Error)
			if err != nil {
				t.Fatal(err)
			}
			if got := outlasts(ch, to); got != tc.outlasts {
				t.Fatalf("outlasts(%s, a test of %d ms) = %v", ch.New, tc.testMS, got)
			}
			if !tc.outlasts {
				return
			}
			e, tch, err := testTimeoutLonger(p, to, to.TimeoutMS)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("test('adds', async ({ page }) => {\n  test.setTimeout(%d);\n", 3*tc.testMS)
			if got := edited(t, p, e); !strings.HasPrefix(got, want) {
				t.Fatalf("got\n%s\nwant it to begin\n%s", got, want)
			}
			if tch.Old != fmt.Sprintf("%d ms", tc.testMS) || tch.New != fmt.Sprintf("%d ms", 3*tc.testMS) {
				t.Errorf("change %+v", tch)
			}
		})
	}
}

// edited is the one-file project p's file after edit e.
func edited(t *testing.T, p Project, e edit) string {
	t.Helper()
	got, err := applyEdits(p, map[string][]edit{e.file: {e}})
	if err != nil {
		t.Fatal(err)
	}
	f, ok := got.File(e.file)
	if !ok {
		t.Fatalf("no file %s", e.file)
	}
	return string(f.Content)
}

// TestALongerWaitIsWrittenAsTheFileWritesNumbers: a file that writes
// 5_000 gets 22_500, never 22_000 for 22500.
func TestALongerWaitIsWrittenAsTheFileWritesNumbers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src  string
		ms   int
		want string
	}{
		{"{ timeout: 5000 }", 22500, "22500"},
		{"{ timeout: 5_000 }", 22500, "22_500"},
		{"{ timeout: 5_000 }", 10000, "10_000"},
		{"{ timeout: 5_000 }", 120000, "120_000"},
		{"{ timeout: 5_000 }", 1500000, "1_500_000"},
		{"{ timeout: 5_000 }", 900, "900"},
	} {
		if got := msLiteral([]byte(tc.src), tc.ms); got != tc.want {
			t.Errorf("%d in a file with %q: %q, want %q", tc.ms, tc.src, got, tc.want)
		}
	}
}
