package suite

import (
	"strings"
	"testing"
)

// TestAStatementTheAgentWroteIsTakenBackWithTheLinesBelowIt: a statement
// written before a call moves the edits below it down; taken back, it
// leaves the file as it was with the others where they are.
func TestAStatementTheAgentWroteIsTakenBackWithTheLinesBelowIt(t *testing.T) {
	t.Parallel()
	src := "async add(name) {\n  await this.newItem.fill(name);\n  await this.addButton.click();\n  await expect(this.count).toHaveText('1');\n}\n"
	p := Project{Files: []File{{Path: "pages/List.ts", Content: []byte(src)}}}
	start := strings.Index(src, "  await this.addButton")
	ins := agentEdit{file: "pages/List.ts", line: 3, text: "  await this.page.getByLabel('Quantity').fill('2');\n"}
	lit := agentEdit{file: "pages/List.ts", line: 4, orig: "'#count'", text: "'#total'"}
	made := map[string][]agentEdit{"a": {ins}, "b": {lit}}
	flowAt := map[CallSite]flowStep{{File: "pages/List.ts", Line: 3, Column: 3}: {ins: ins}}
	cur, err := applyEdits(p, map[string][]edit{"pages/List.ts": {{file: "pages/List.ts", start: start, end: start, text: ins.text}}})
	if err != nil {
		t.Fatal(err)
	}
	// The literal edit, as if it had been made on the line below.
	cur.Files[0].Content = []byte(strings.Replace(string(cur.Files[0].Content), "toHaveText('1')", "toHaveText('1') // '#total'", 1))
	shiftBelow(made, flowAt, []agentEdit{ins})
	if made["a"][0].line != 3 || made["b"][0].line != 5 {
		t.Fatalf("after the statement: %+v", made)
	}
	back, err := takeBack(cur, []agentEdit{made["b"][0], made["a"][0]})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(src, "toHaveText('1')", "toHaveText('1') // '#count'", 1)
	if got := string(back.Files[0].Content); got != want {
		t.Fatalf("taken back:\n%s\nwant:\n%s", got, want)
	}
}

// TestOnlyAFieldAndAPlainValueAreWritten: the agent's answer names an
// element of the page that is a field, with a value that fits it.
func TestOnlyAFieldAndAPlainValueAreWritten(t *testing.T) {
	t.Parallel()
	dom := []SnapshotElement{
		{Tag: "form", Path: "html body form"},
		{Tag: "input", Path: "html body form input", Attributes: map[string]string{"id": "qty", "type": "number", "required": "", "label": "Quantity"}},
		{Tag: "button", Path: "html body form button", Text: "Add", Attributes: map[string]string{"type": "submit"}},
		{Tag: "select", Path: "html body form select", Attributes: map[string]string{"id": "unit"}},
		{Tag: "option", Path: "html body form select option", Text: "kg", Attributes: map[string]string{"value": "kg"}},
		{Tag: "input", Path: "html body form input", Attributes: map[string]string{"id": "note", "required": ""}, Filled: true},
	}
	if got := requiredEmpty(dom); len(got) != 1 || got[0] != 1 {
		t.Errorf("required and empty: %v", got)
	}
	for _, tc := range []struct{ ref, value, why string }{
		{"e2", "2", ""},
		{"e4", "kg", ""},
		{"e4", "lb", "is no option"},
		{"e3", "x", "no field to fill"},
		{"e9", "x", "no element of the page"},
		{"e2", "2\n'); process.exit(", "not a plain value"},
	} {
		_, why := flowFillOf(dom, tc.ref, tc.value)
		if (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
			t.Errorf("%s %q: %q, want %q", tc.ref, tc.value, why, tc.why)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{"page.getByRole('button')", ".getByLabel(\"Quantity\")"},
		{"page.locator('#add')", ".locator(\"#qty\")"},
	} {
		if got := fieldLocator([]byte(tc.src), dom[1], `"`); got != tc.want {
			t.Errorf("in %s: %s, want %s", tc.src, got, tc.want)
		}
	}
	if got := quoteJS("it's\n", "'"); got != `'it\'s\n'` {
		t.Errorf("quoted %s", got)
	}
}

// TestALiteralRewrittenTwiceIsTakenBackToWhatWasWritten: one round wrote
// the agent's first element into a literal, a later round rewrote it
// again; taking both back ended the repair with "the agent's edit is not
// where it was made". The later is taken back first, and the file is as
// it was written.
func TestALiteralRewrittenTwiceIsTakenBackToWhatWasWritten(t *testing.T) {
	t.Parallel()
	src := "test('logs in', async ({ page }) => {\n  await page.getByRole('button', { name: 'Login' }).click();\n});\n"
	cur := strings.Replace(src, "'Login'", "'Sign in'", 1)
	p := Project{Files: []File{{Path: "tests/login.spec.js", Content: []byte(cur)}}}
	first := agentEdit{file: "tests/login.spec.js", line: 2, orig: "'Login'", text: "'Log in'"}
	second := agentEdit{file: "tests/login.spec.js", line: 2, orig: "'Log in'", text: "'Sign in'"}
	back, err := takeBack(p, []agentEdit{first, second})
	if err != nil || string(back.Files[0].Content) != src {
		t.Fatalf("%v\n%s", err, back.Files)
	}
}
