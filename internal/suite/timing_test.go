package suite

import (
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
		{"not a retrying assertion", `expect(n).toBe(2);`, "", "not a retrying assertion"},
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
			got, err := applyEdits(p, map[string][]edit{"a.spec.ts": {e}})
			if err != nil {
				t.Fatal(err)
			}
			if want := "test('t', async () => {\n  " + tc.want + "\n});\n"; string(got.Files[0].Content) != want {
				t.Fatalf("got\n%s\nwant\n%s", got.Files[0].Content, want)
			}
			if ch.Old != "2000 ms" || ch.New != "10000 ms" {
				t.Errorf("change %+v", ch)
			}
		})
	}
}
