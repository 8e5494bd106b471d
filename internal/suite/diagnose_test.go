package suite

import (
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// TestAMiscountIsNeverAMissingElement: an assertion that found its
// elements holding something else (a count of 2 where 3 were expected)
// is an app regression to report (or a wait to try), never a locator to
// re-find, though the runner's call log says it was "waiting for" the
// locator; one that found nothing is a missing element.
func TestAMiscountIsNeverAMissingElement(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, err string
		verdict   orchestrator.Verdict
	}{
		{"a count", "Error: expect(locator).toHaveCount(expected) failed\n\nLocator: getByRole('listitem')\nExpected: 3\nReceived: 2\nCall log:\n  - waiting for getByRole('listitem')", orchestrator.VerdictRegression},
		{"a text", "Error: expect(locator).toHaveText(expected) failed\n\nExpected string: \"3 items\"\nReceived string: \"2 items\"\nCall log:\n  - waiting for locator('#count')", orchestrator.VerdictRegression},
		{"nothing found", "Error: expect(locator).toBeVisible() failed\n\nLocator: locator('#gone')\nExpected: visible\nReceived: <element(s) not found>\nCall log:\n  - waiting for locator('#gone')", orchestrator.VerdictUnrepairable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &TraceAction{API: "expect", Method: "expect", Selector: "internal:role=listitem", Error: tc.err}
			_, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: tc.err, Failure: f}, nil, nil, nil)
			if verdict != tc.verdict {
				t.Fatalf("verdict %q (%s), want %q", verdict, why, tc.verdict)
			}
		})
	}
}

// TestAnItemTheAppNeverAddedIsARegression: a test looks for the list item
// holding "Honey"; the app never added it, and the element most like the
// one it found before is another item. That is the app's doing, never a
// locator to rewrite.
func TestAnItemTheAppNeverAddedIsARegression(t *testing.T) {
	t.Parallel()
	li := func(text, id string) SnapshotElement {
		return SnapshotElement{Tag: "li", Text: text, Path: "html/body/main/ul/li", Attributes: map[string]string{"class": "item", "id": id}}
	}
	before := &SnapshotElement{Tag: "li", Text: "Honey", Path: "html/body/main/ul/li", Attributes: map[string]string{"class": "item", "id": "item-2"}}
	dom := []SnapshotElement{li("Bread", "item-2"), {Tag: "h1", Text: "Shopping list", Path: "html/body/main/h1", Attributes: map[string]string{}}}
	f := &TraceAction{API: "expect", Method: "expect", File: "tests/list.spec.ts", Line: 12, Column: 5,
		Selector: `internal:role=listitem >> internal:has-text="Honey"i`,
		Error:    "Error: expect(locator).toBeVisible() failed\n\nReceived: <element(s) not found>\nCall log:\n  - waiting for getByRole('listitem').filter({ hasText: 'Honey' })"}
	passing := []TraceAction{{API: "expect", Method: "expect", File: "tests/list.spec.ts", Line: 12, Column: 5, Selector: f.Selector, Target: before}}
	_, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: f.Error, Failure: f}, passing, dom, nil)
	if verdict != orchestrator.VerdictRegression || !strings.Contains(why, "Honey") {
		t.Fatalf("verdict %q (%s), want a regression naming Honey", verdict, why)
	}
}

// TestATestSkippedForARegressionWaitsOnIt: a test the runner skipped
// because another failed is blocked by an app regression of its own file
// (a serial neighbour) first, else of another file (a setup project), and
// by nothing when no failing test is a regression.
func TestATestSkippedForARegressionWaitsOnIt(t *testing.T) {
	t.Parallel()
	setup := &RepairedTest{ID: "s", File: "tests/setup.ts", Title: "signs in", Verdict: orchestrator.VerdictRegression}
	count := &RepairedTest{ID: "c", File: "tests/list.spec.ts", Title: "counts", Verdict: orchestrator.VerdictRegression}
	gone := &RepairedTest{ID: "g", File: "tests/list.spec.ts", Title: "finds it", Verdict: orchestrator.VerdictUnrepairable}
	adds := &RepairedTest{ID: "a", File: "tests/list.spec.ts", Title: "adds", Verdict: "skipped"}
	other := &RepairedTest{ID: "o", File: "tests/other.spec.ts", Title: "other", Verdict: "skipped"}
	all := func(ts ...*RepairedTest) (map[string]*RepairedTest, []string) {
		m := map[string]*RepairedTest{}
		var order []string
		for _, t := range ts {
			m[t.ID] = t
			order = append(order, t.ID)
		}
		return m, order
	}
	for _, tc := range []struct {
		name  string
		tests []*RepairedTest
		of    *RepairedTest
		want  *RepairedTest
	}{
		{"its serial neighbour", []*RepairedTest{setup, gone, count, adds, other}, adds, count},
		{"a setup project", []*RepairedTest{setup, gone, count, adds, other}, other, setup},
		{"no regression", []*RepairedTest{gone, adds}, adds, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, order := all(tc.tests...)
			if got := blockedBy(tc.of, m, order); got != tc.want {
				t.Fatalf("blocked by %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestAnEntryTheAppLostIsARegression: the test entered "Apples" (in a
// fixture), then clicks the button "Delete Apples", which is not there;
// the page shows "Apples" nowhere, so the app lost the entry: a regression
// (a longer wait is tried next), never the nearest "Delete Bread". When
// the page still shows "Apples", the button was reworded: not this rule.
func TestAnEntryTheAppLostIsARegression(t *testing.T) {
	t.Parallel()
	before := &SnapshotElement{Tag: "button", Text: "Delete Apples", Path: "html body main ul li button", Attributes: map[string]string{"class": "del"}}
	f := &TraceAction{API: "locator.click", Method: "click", File: "tests/seeded.spec.ts", Line: 19, Column: 70,
		Selector: `internal:role=button[name="Delete Apples"i]`,
		Error:    "TimeoutError: locator.click: Timeout 4000ms exceeded.\nCall log:\n  - waiting for getByRole('button', { name: 'Delete Apples' })"}
	actions := []TraceAction{
		{API: "page.goto", Method: "goto", File: "support/options.ts", Line: 18},
		{API: "locator.fill", Method: "fill", File: "support/options.ts", Line: 20, Typed: "Apples",
			Target: &SnapshotElement{Tag: "input", Attributes: map[string]string{"type": "text"}}},
		{API: "locator.press", Method: "press", File: "support/options.ts", Line: 21},
		*f,
	}
	passing := []TraceAction{{API: "locator.click", Method: "click", File: f.File, Line: f.Line, Column: f.Column, Selector: f.Selector, Target: before}}
	page := func(items ...string) []SnapshotElement {
		out := []SnapshotElement{{Tag: "input", Attributes: map[string]string{"type": "text"}}}
		for _, it := range items {
			out = append(out, SnapshotElement{Tag: "li", Text: it + " " + strings.Replace(before.Text, "Apples", it, 1), Path: "html body main ul li", Attributes: map[string]string{}},
				SnapshotElement{Tag: "button", Text: strings.Replace(before.Text, "Apples", it, 1), Path: before.Path, Attributes: map[string]string{"class": "del"}})
		}
		return out
	}
	// With a record of the button, and with none (a suite red on
	// arrival): the locator's own name holds the entry.
	for _, record := range [][]TraceAction{passing, nil} {
		_, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: f.Error, Failure: f, Actions: actions}, record, page("Bread"), nil)
		if verdict != orchestrator.VerdictRegression || !strings.Contains(why, `"Apples"`) || !strings.Contains(why, "support/options.ts:20") {
			t.Fatalf("recorded %d: verdict %q (%s), want a regression naming the entry and where it was made", len(record), verdict, why)
		}
		// Reworded: "Remove Apples" is on the page; the entry is not lost.
		reworded := page("Bread", "Apples")
		for i := range reworded {
			reworded[i].Text = strings.ReplaceAll(reworded[i].Text, "Delete", "Remove")
		}
		if _, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: f.Error, Failure: f, Actions: actions}, record, reworded, nil); strings.Contains(why, "shows it nowhere") {
			t.Fatalf("recorded %d: verdict %q (%s): the entry is on the page", len(record), verdict, why)
		}
	}
	// With no record, a locator that does not name the entry (a test id)
	// is left to the agent.
	byID := *f
	byID.Selector = `internal:testid=[data-testid="delete"s]`
	if _, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: f.Error, Failure: &byID, Actions: actions}, nil, page("Bread"), nil); why != reasonNoRecord {
		t.Fatalf("verdict %q (%s), want %q", verdict, why, reasonNoRecord)
	}
}

// TestAWrongValueTheTestReadIsARegression: the test read the counter and
// checked the number itself; the read found its element, so the value is
// the app's, never a locator to re-find.
func TestAWrongValueTheTestReadIsARegression(t *testing.T) {
	t.Parallel()
	msg := "Error: the counter\n\nexpect(received).toBe(expected) // Object.is equality\n\nExpected: 1\nReceived: 2"
	f := &TraceAction{API: "locator.textContent", Method: "textContent", File: "tests/regex.spec.js", Line: 8, Column: 51,
		Selector: `[aria-live="polite"]`, Read: true, Error: msg}
	_, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: msg, Failure: f}, nil, nil, nil)
	if verdict != orchestrator.VerdictRegression || !strings.Contains(why, "expected 1, received 2") || !strings.Contains(why, "tests/regex.spec.js:8") {
		t.Fatalf("verdict %q (%s)", verdict, why)
	}
}

// TestAHealRewritesTheLiteralTheCallUsed: two tests each write
// page.fill('#password', …); the second's call fails on the renamed field.
// Its own line's literal is the one rewritten, not the first test's (which
// left the second test failing on its own literal, and the agent, asked
// once a call, never asked again).
func TestAHealRewritesTheLiteralTheCallUsed(t *testing.T) {
	t.Parallel()
	src := "const { test } = require('@playwright/test');\n" +
		"test('refuses', async ({ page }) => {\n  await page.fill('#password', 'nope');\n});\n" +
		"test('signs in', async ({ page }) => {\n  await page.fill('#password', process.env.E2E_PASSWORD);\n});\n"
	p, err := NewProject(map[string][]byte{"playwright.config.js": []byte("module.exports = {};\n"), "tests/login.spec.js": []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	sites, err := projectSites(p)
	if err != nil {
		t.Fatal(err)
	}
	f := &TraceAction{API: "page.fill", Method: "fill", Selector: "#password", File: "tests/login.spec.js", Line: 6, Column: 14}
	cand := SnapshotElement{Tag: "input", Attributes: map[string]string{"id": "user-password", "type": "password"}}
	ch, e, verdict, why := healAt(f, 0, oldFromSite, cand, sites, false)
	if verdict != "" {
		t.Fatalf("%s: %s", verdict, why)
	}
	if ch.Line != 6 || ch.New != "'#user-password'" || !strings.Contains(src[e.start:e.end], "#password") || strings.Count(src[:e.start], "\n") != 5 {
		t.Fatalf("change %+v, edit at line %d", ch, 1+strings.Count(src[:e.start], "\n"))
	}
}

// TestALaterCallThatDriftedTooIsHealedInTheSameTrial: a test failed on
// its field's renamed id; the button it clicks next (recorded by a
// passing run) is on the failure's page already with a renamed test id,
// and the test id it names is on it nowhere: it is healed with the field,
// in the page object's idiom, instead of failing the trial in turn. A
// button that still carries its test id, one not on the page yet, one
// that carries none now, and a locator by role and name (which can name
// an element only in some states) are left to their own failures.
func TestALaterCallThatDriftedTooIsHealedInTheSameTrial(t *testing.T) {
	t.Parallel()
	src := "exports.Legacy = class Legacy {\n  constructor(page) {\n    this.page = page;\n    this.input = page.locator('#item');\n" +
		"    this.submit = page.getByTestId('add-button');\n    this.title = page.getByRole('heading', { name: 'List' });\n  }\n\n" +
		"  async add(name) {\n    await this.input.fill(name);\n    await this.submit.click();\n    await this.title.click();\n  }\n};\n"
	p, err := NewProject(map[string][]byte{"playwright.config.js": []byte("module.exports = {};\n"), "pages/legacy.js": []byte(src),
		"tests/a.spec.js": []byte("const { test } = require('@playwright/test');\nconst { Legacy } = require('../pages/legacy');\n" +
			"test('adds', async ({ page }) => {\n  await new Legacy(page).add('Tea');\n});\n")})
	if err != nil {
		t.Fatal(err)
	}
	sites, err := projectSites(p)
	if err != nil {
		t.Fatal(err)
	}
	input := SnapshotElement{Tag: "input", Attributes: map[string]string{"id": "item", "name": "item"}, Path: "html/body/form/input"}
	button := SnapshotElement{Tag: "button", Attributes: map[string]string{"data-testid": "add-button", "type": "submit"}, Text: "Add", Path: "html/body/form/button"}
	heading := SnapshotElement{Tag: "h1", Text: "List", Path: "html/body/h1"}
	prints := []TraceAction{
		{API: "locator.fill", Method: "fill", Selector: "#item", File: "pages/legacy.js", Line: 10, Column: 21, Target: &input},
		{API: "locator.click", Method: "click", Selector: `internal:testid=[data-testid="add-button"s]`, File: "pages/legacy.js", Line: 11, Column: 23, Target: &button},
		{API: "locator.click", Method: "click", Selector: `internal:role=heading[name="List"i]`, File: "pages/legacy.js", Line: 12, Column: 22, Target: &heading},
	}
	failing := prints[0]
	failing.Target, failing.Error = nil, "locator.fill: Timeout 3000ms exceeded."
	test := TestOutcome{File: "tests/a.spec.js", Status: "failed", Failure: &failing}
	renamed := SnapshotElement{Tag: "input", Attributes: map[string]string{"id": "entry", "name": "item"}, Path: "html/body/form/input"}
	with := func(b SnapshotElement) []SnapshotElement {
		return []SnapshotElement{renamed, b, {Tag: "h2", Text: "Lists", Path: "html/body/h2"}}
	}
	for _, tc := range []struct {
		name string
		dom  []SnapshotElement
		want string // the button's new test id; "" for none
	}{
		{"the button's test id renamed", with(SnapshotElement{Tag: "button", Attributes: map[string]string{"data-testid": "add-entry-btn", "type": "submit"}, Text: "Add", Path: "html/body/form/button"}), "'add-entry-btn'"},
		{"the button as it was", with(button), ""},
		{"the button without a test id now", with(SnapshotElement{Tag: "button", Attributes: map[string]string{"type": "submit"}, Text: "Add", Path: "html/body/form/button"}), ""},
		{"the button not on the page yet", []SnapshotElement{renamed}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := aheadHeals(test, prints, tc.dom, sites)
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("healed %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d heals: %+v", len(got), got)
			}
			ch, e := got[0].ch, got[0].e
			if ch.File != "pages/legacy.js" || ch.Line != 5 || ch.Old != "add-button" || ch.New != tc.want || src[e.start:e.end] != "'add-button'" {
				t.Fatalf("change %+v, edit %q", ch, src[e.start:e.end])
			}
		})
	}
}

// TestALocatorInsideAnExpectFindsItsElement: expect(locator).toBeVisible()
// checks that an element is there; a control's name or label in its
// locator is how it is found, and a reworded control is drift healed as
// any locator is. The content an assertion checks (a getByText, a
// heading's name) is what the app shows, and a change of it is a
// regression, never rewritten.
func TestALocatorInsideAnExpectFindsItsElement(t *testing.T) {
	t.Parallel()
	src := "import { test, expect } from '@playwright/test';\n" +
		"test('adds', async ({ page }) => {\n" +
		"  await expect(page.getByRole('button', { name: /Add Element/i })).toBeVisible();\n" +
		"  await expect(page.getByLabel('Username')).toBeVisible();\n" +
		"  await expect(page.getByRole('heading', { name: 'Add/Remove Elements' })).toBeVisible();\n" +
		"  await expect(page.getByText('You logged into a secure area!')).toBeVisible();\n" +
		"});\n"
	sites := sitesOf(t, "tests/add.spec.ts", src)
	el := func(tag, text string, attrs map[string]string) SnapshotElement {
		if attrs == nil {
			attrs = map[string]string{}
		}
		return SnapshotElement{Tag: tag, Text: text, Path: "html body div " + tag, Attributes: attrs}
	}
	for _, tc := range []struct {
		name, selector string
		line, col      int
		before, after  SnapshotElement
		verdict        orchestrator.Verdict
		new            string
	}{
		{"a reworded button", `internal:role=button[name=/Add Element/i]`, 3, 16,
			el("button", "Add Element", map[string]string{"onclick": "addElement()"}),
			el("button", "Add New Element", map[string]string{"onclick": "addElement()"}), "", "/Add New Element/i"},
		{"a relabelled field", `internal:label="Username"i`, 4, 16,
			el("input", "", map[string]string{"id": "username", "name": "username", "type": "text", "label": "Username"}),
			el("input", "", map[string]string{"id": "user-name", "name": "username", "type": "text", "label": "User name"}), "", "'User name'"},
		{"a heading that reads otherwise", `internal:role=heading[name="Add/Remove Elements"i]`, 5, 16,
			el("h3", "Add/Remove Elements", nil), el("h3", "Add or Remove", nil), orchestrator.VerdictRegression, ""},
		{"a message that reads otherwise", `internal:text="You logged into a secure area!"i`, 6, 16,
			el("div", "You logged into a secure area!", map[string]string{"id": "flash", "class": "flash success"}),
			el("div", "Your username is invalid!", map[string]string{"id": "flash", "class": "flash error"}), orchestrator.VerdictRegression, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := "Error: expect(locator).toBeVisible() failed\n\nExpected: visible\nReceived: <element(s) not found>\nCall log:\n  - waiting for " + tc.selector
			f := &TraceAction{API: "expect.toBeVisible", Method: "expect", Expect: "to.be.visible", Selector: tc.selector,
				File: "tests/add.spec.ts", Line: tc.line, Column: tc.col, Error: msg}
			passing := []TraceAction{{API: "expect.toBeVisible", Method: "expect", Selector: tc.selector, File: f.File, Line: f.Line, Column: f.Column, Target: &tc.before}}
			dom := []SnapshotElement{el("h1", "Welcome to the-internet", nil), tc.after, el("a", "Elemental Selenium", map[string]string{"href": "http://elementalselenium.com/"})}
			ch, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: msg, Failure: f}, passing, dom, sites)
			if verdict != tc.verdict || ch.New != tc.new {
				t.Fatalf("verdict %q (%s), change %+v; want %q %s", verdict, why, ch, tc.verdict, tc.new)
			}
		})
	}
}

// TestAContainersRenamedIDIsDrift: a CSS locator reaches its element
// through a container's id (#checkboxes input), and the app renamed the
// form's id: the checkboxes are there as they were, two alike. The id is
// rewritten where the locator is written, in the selector's own form (a
// tag before the id kept), never read as a regression; so is a select's
// id where the runner marked the option a selectOption chose, and the
// options are about as like it. Where no container
// carries an id like the old one, the element being there as it was
// (twice) is no regression either: which one was meant cannot be told.
func TestAContainersRenamedIDIsDrift(t *testing.T) {
	t.Parallel()
	src := "const { test, expect } = require('@playwright/test');\n" +
		"test('ticks', async ({ page }) => {\n" +
		"  await page.locator('#checkboxes input').first().check();\n" +
		"  expect(await page.isChecked('form#checkboxes input:nth-of-type(2)')).toBe(true);\n" +
		"  await page.locator('.first-box').check();\n" +
		"  await page.locator('#dropdown').selectOption('1');\n" +
		"});\n"
	sites := sitesOf(t, "tests/boxes.spec.js", src)
	el := func(tag, path string, attrs map[string]string) SnapshotElement {
		if attrs == nil {
			attrs = map[string]string{}
		}
		return SnapshotElement{Tag: tag, Path: path, Attributes: attrs}
	}
	options := func(tag, path string, attrs map[string]string) SnapshotElement {
		e := el(tag, path, attrs)
		e.Text = "Please select an option Option 1 Option 2"
		return e
	}
	option := func(text, value string) SnapshotElement {
		e := el("option", "html body div div div select option", map[string]string{"value": value})
		e.Text = text
		return e
	}
	box := func() SnapshotElement {
		return el("input", "html body div div div form input", map[string]string{"type": "checkbox"})
	}
	dom := []SnapshotElement{el("html", "html", nil), el("body", "html body", nil), el("div", "html body div", map[string]string{"class": "row"}),
		el("div", "html body div div", map[string]string{"id": "content"}), el("div", "html body div div div", map[string]string{"class": "example"}),
		el("h3", "html body div div div h3", nil), el("form", "html body div div div form", map[string]string{"id": "checkbox-form"}),
		box(), box(), options("select", "html body div div div select", map[string]string{"id": "dropdown-list"}),
		option("Please select an option", ""), option("Option 1", "1"), option("Option 2", "2"), el("footer", "html body footer", nil)}
	for _, tc := range []struct {
		name, selector, method string
		line, col              int
		verdict                orchestrator.Verdict
		new                    string
	}{
		{"a locator", "#checkboxes input >> nth=0", "check", 3, 22, "", "'#checkbox-form input'"},
		{"a selector string with its tag", "form#checkboxes input:nth-of-type(2)", "isChecked", 4, 30, "", "'form#checkbox-form input:nth-of-type(2)'"},
		{"a class no container explains", ".first-box", "check", 5, 22, orchestrator.VerdictUnrepairable, ""},
		{"a select's id, its option marked", "#dropdown", "selectOption", 6, 31, "", "'#dropdown-list'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := "Error: locator." + tc.method + ": Timeout 5000ms exceeded.\nCall log:\n  - waiting for locator('" + tc.selector + "')"
			f := &TraceAction{API: "locator." + tc.method, Method: tc.method, Selector: tc.selector, File: "tests/boxes.spec.js", Line: tc.line, Column: tc.col, Error: msg}
			before := box()
			if tc.method == "selectOption" {
				// The runner marks the option a selectOption chose.
				before = el("option", "html body div div div select option", map[string]string{"value": "1"})
				before.Text = "Option 1"
			}
			passing := []TraceAction{{API: f.API, Method: f.Method, Selector: f.Selector, File: f.File, Line: f.Line, Column: f.Column, Target: &before}}
			ch, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: msg, Failure: f}, passing, dom, sites)
			if verdict != tc.verdict || ch.New != tc.new {
				t.Fatalf("verdict %q (%s), change %+v; want %q %s", verdict, why, ch, tc.verdict, tc.new)
			}
		})
	}
}

// TestAnIconGlyphTheMarkupDoesNotHoldIsKept: a login button's name, as
// copied from the accessibility tree, starts with an icon font's glyph
// that CSS draws (::before); the trace's snapshot of the markup reads
// "Login" alone. Reworded to "Log in", the name is rewritten with the
// glyph kept, as the file writes it (the glyph itself, or its escape):
// without it an exact name finds nothing. So it is when no run recorded
// the button and the agent named it.
func TestAnIconGlyphTheMarkupDoesNotHoldIsKept(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ literal, want string }{
		{"'\uF090 Login'", "'\uF090 Log in'"},
		{`'\uF090 Login'`, `'\uF090 Log in'`},
		{"' Login'", "' Log in'"},
	} {
		t.Run(tc.literal, func(t *testing.T) {
			src := "const { test } = require('@playwright/test');\ntest('logs in', async ({ page }) => {\n" +
				"  await page.getByRole('button', { name: " + tc.literal + ", exact: true }).click();\n});\n"
			p, err := NewProject(map[string][]byte{"playwright.config.js": []byte("module.exports = {};\n"), "tests/login.spec.js": []byte(src)})
			if err != nil {
				t.Fatal(err)
			}
			sites, err := projectSites(p)
			if err != nil || len(sites) != 1 {
				t.Fatalf("%v %+v", err, sites)
			}
			f := &TraceAction{API: "locator.click", Method: "click", Selector: sites[0].Selector, File: "tests/login.spec.js", Line: 3, Column: 50,
				Error: "Error: locator.click: Timeout 5000ms exceeded.\nCall log:\n  - waiting for getByRole('button', { name: 'x' })"}
			button := func(text string) SnapshotElement {
				return SnapshotElement{Tag: "button", Text: text, Path: "html body div form button", Attributes: map[string]string{"type": "submit", "class": "radius"}}
			}
			before := button("Login")
			passing := []TraceAction{{API: f.API, Method: f.Method, Selector: f.Selector, File: f.File, Line: f.Line, Column: f.Column, Target: &before}}
			dom := []SnapshotElement{{Tag: "h2", Text: "Login Page", Path: "html body div h2", Attributes: map[string]string{}}, button("Log in")}
			ch, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: f.Error, Failure: f}, passing, dom, sites)
			if verdict != "" || ch.New != tc.want {
				t.Fatalf("verdict %q (%s), change %+v; want %s", verdict, why, ch, tc.want)
			}
			// With nothing recorded, the agent names the button: what the
			// literal holds beside the name the markup shows is kept too.
			ch, _, verdict, why = healAt(f, 0, oldFromSite, button("Log in"), sites, false)
			if verdict != "" || ch.New != tc.want {
				t.Fatalf("the agent's element: verdict %q (%s), change %+v; want %s", verdict, why, ch, tc.want)
			}
		})
	}
}

// TestACallMovedByAnEarlierHealOnItsLineKeepsItsRecord: an earlier trial
// rewrote the call's literal (Sign in → Log on), and the call failed
// again: its column and selector are not the ones the passing run
// recorded, and the one call of its method on that line is still the
// record of its element.
func TestACallMovedByAnEarlierHealOnItsLineKeepsItsRecord(t *testing.T) {
	t.Parallel()
	src := "const { test } = require('@playwright/test');\ntest('logs in', async ({ page }) => {\n" +
		"  await page.getByRole('button', { name: 'Log on' }).click();\n});\n"
	sites := sitesOf(t, "tests/login.spec.js", src)
	sel := `internal:role=button[name="Log on"i]`
	f := &TraceAction{API: "locator.click", Method: "click", Selector: sel, File: "tests/login.spec.js", Line: 3, Column: 61,
		Error: "Error: locator.click: Timeout 5000ms exceeded.\nCall log:\n  - waiting for getByRole('button')"}
	before := SnapshotElement{Tag: "button", Text: "Sign in", Path: "html body form button", Attributes: map[string]string{"type": "submit"}}
	passing := []TraceAction{{API: f.API, Method: f.Method, Selector: `internal:role=button[name="Sign in"i]`,
		File: f.File, Line: 3, Column: 74, Target: &before}}
	dom := []SnapshotElement{{Tag: "form", Path: "html body form", Attributes: map[string]string{}},
		{Tag: "button", Text: "Log in", Path: "html body form button", Attributes: map[string]string{"type": "submit"}}}
	ch, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: f.Error, Failure: f}, passing, dom, sites)
	if verdict != "" || ch.New != "'Log in'" {
		t.Fatalf("verdict %q (%s), change %+v", verdict, why, ch)
	}
}

// TestAPageThatIsNotWhereTheTestChecksIsARegression: a check of where
// the page is (toHaveURL, waitForURL) or what it is called (toHaveTitle)
// names no element; when it fails after the test's steps did what they
// did, the app went elsewhere: a regression with the page's address, never
// "not on an element" left unrepaired.
func TestAPageThatIsNotWhereTheTestChecksIsARegression(t *testing.T) {
	t.Parallel()
	for _, f := range []TraceAction{
		{API: "page.waitForURL", Method: "waitForEventInfo", File: "tests/auth.setup.ts", Line: 9, URL: "http://app.test/login?flash=invalid_user",
			Error: "TimeoutError: page.waitForURL: Timeout 30000ms exceeded."},
		{API: "expect.toHaveURL", Method: "expect", Expect: "to.have.url", File: "tests/login.spec.ts", Line: 20, URL: "http://app.test/login?flash=invalid_user",
			Error: "Error: Timed out 5000ms waiting for expect(page).toHaveURL(expected)"},
	} {
		t.Run(f.Method+f.Expect, func(t *testing.T) {
			_, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: f.Error, Failure: &f}, nil, nil, nil)
			if verdict != orchestrator.VerdictRegression || !strings.Contains(why, "/login?flash=invalid_user") {
				t.Fatalf("verdict %q (%s)", verdict, why)
			}
		})
	}
}

// sitesOf lists the locator sites of a project of one spec file (and a
// config of the file's kind).
func sitesOf(t *testing.T, file, src string) []LocatorSite {
	t.Helper()
	config := map[bool]string{true: "playwright.config.ts", false: "playwright.config.js"}[strings.HasSuffix(file, ".ts")]
	p, err := NewProject(map[string][]byte{config: []byte("module.exports = {};\n"), file: []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	sites, err := projectSites(p)
	if err != nil {
		t.Fatal(err)
	}
	return sites
}

// TestAFlashMessageTheAppNoLongerShowsIsARegression: a legacy suite waits
// for the success message after signing in (page.waitForSelector, for
// which the runner marks no element); the app refused the sign-in and
// shows its error message in the same place instead. The message the test
// waits for is gone: the app's doing, never a locator to rewrite.
func TestAFlashMessageTheAppNoLongerShowsIsARegression(t *testing.T) {
	t.Parallel()
	flash := func(kind, text string) SnapshotElement {
		return SnapshotElement{Tag: "div", Text: text + " ×", Path: "html body div div div",
			Attributes: map[string]string{"class": "flash " + kind, "id": "flash"}}
	}
	ok := flash("success", "You logged into a secure area!")
	dom := []SnapshotElement{
		{Tag: "div", Path: "html body div div", Attributes: map[string]string{"id": "flash-messages", "class": "large-12 columns"}},
		flash("error", "Your password is invalid!"),
		{Tag: "h2", Text: "Login Page", Path: "html body div div h2", Attributes: map[string]string{}},
		{Tag: "input", Path: "html body div div form div input", Attributes: map[string]string{"id": "user-name", "name": "username", "type": "text"}},
		{Tag: "button", Text: "Log in", Path: "html body div div form button", Attributes: map[string]string{"type": "submit", "class": "radius"}},
	}
	wait := TraceAction{API: "page.waitForSelector", Method: "waitForSelector", File: "test/login.test.js", Line: 11, Column: 16,
		Selector: ".flash.success", URL: "http://practice/login?flash=invalid_password",
		Error: "TimeoutError: page.waitForSelector: Timeout 5000ms exceeded.\nCall log:\n  - waiting for locator('.flash.success') to be visible"}
	passing := wait
	passing.Error, passing.URL, passing.Target = "", "http://practice/secure?flash=signed_in", &ok
	sites, err := FindLocatorSites("test/login.test.js", []byte("const { test } = require('@playwright/test');\n"+
		strings.Repeat("\n", 8)+"test('logs in', async ({ page }) => {\n    await page.waitForSelector('.flash.success');\n});\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: wait.Error, Failure: &wait}, []TraceAction{passing}, dom, sites)
	if verdict != orchestrator.VerdictRegression || !strings.Contains(why, "Your password is invalid!") ||
		!strings.Contains(why, "the page was at http://practice/login?flash=invalid_password; when the test passed, this call ran at http://practice/secure?flash=signed_in") {
		t.Fatalf("verdict %q (%s), want a regression naming what the page shows", verdict, why)
	}
	// The same message under another class is the app's restyling, not a
	// change of state: never a regression.
	dom[1] = SnapshotElement{Tag: "div", Text: "You logged into a secure area! ×", Path: "html body div div div",
		Attributes: map[string]string{"class": "alert alert-success", "id": "flash"}}
	if _, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: wait.Error, Failure: &wait}, []TraceAction{passing}, dom, sites); verdict == orchestrator.VerdictRegression {
		t.Fatalf("restyled: verdict %q (%s)", verdict, why)
	}
}

// TestAChainedLocatorIsHealedWhereItNamesItsElement: a locator chained
// from its container (page.getByRole('form').getByRole('button', …)) and
// picked by position (.first()) names its element in its last part; the
// heal stopped at the first part (the form, named by its role alone) and
// called the reworded button unrepairable. The part that names the
// element is rewritten; the container's is never given its element's
// name.
func TestAChainedLocatorIsHealedWhereItNamesItsElement(t *testing.T) {
	t.Parallel()
	src := "import { test } from '@playwright/test';\n" +
		"test('signs in', async ({ page }) => {\n" +
		"  await page.getByRole('form').getByRole('button', { name: 'Login' }).first().click();\n" +
		"  await page.getByRole('dialog', { name: 'Cart' }).getByRole('button', { name: 'Checkout' }).click();\n" +
		"});\n"
	sites := sitesOf(t, "tests/login.spec.ts", src)
	button := func(text string) SnapshotElement {
		return SnapshotElement{Tag: "button", Text: text, Path: "html body form button", Attributes: map[string]string{"type": "submit"}}
	}
	for _, tc := range []struct {
		name, selector string
		line, col      int
		before, after  SnapshotElement
		verdict        orchestrator.Verdict
		new            string
	}{
		{"the button reworded", `internal:role=form >> internal:role=button[name="Login"i] >> nth=0`, 3, 78,
			button("Login"), button("Log in"), "", "'Log in'"},
		{"the dialog renamed, the button as it was", `internal:role=dialog[name="Cart"i] >> internal:role=button[name="Checkout"i]`, 4, 95,
			button("Checkout"), button("Checkout"), orchestrator.VerdictUnrepairable, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := "TimeoutError: locator.click: Timeout 5000ms exceeded.\nCall log:\n  - waiting for " + tc.selector
			f := &TraceAction{API: "locator.click", Method: "click", Selector: tc.selector, File: "tests/login.spec.ts", Line: tc.line, Column: tc.col, Error: msg}
			passing := []TraceAction{{API: "locator.click", Method: "click", Selector: tc.selector, File: f.File, Line: f.Line, Column: f.Column, Target: &tc.before}}
			dom := []SnapshotElement{{Tag: "form", Path: "html body form", Attributes: map[string]string{}}, tc.after,
				{Tag: "a", Text: "Home", Path: "html body a", Attributes: map[string]string{"href": "/"}}}
			ch, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: msg, Failure: f}, passing, dom, sites)
			if verdict != tc.verdict || ch.New != tc.new || tc.new != "" && ch.Selector != `internal:role=button[name="`+tc.before.Text+`"i]` {
				t.Fatalf("verdict %q (%s), change %+v; want %q %s", verdict, why, ch, tc.verdict, tc.new)
			}
		})
	}
}

// TestTheLiteralHealedIsTheFailingTestsOwn: two tests each write the same
// locator, the second as a variable above a loop that clicks it. Its
// failing click is healed in its own literal, not in the first test's
// (which the agent's rounds then found already rewritten, and refused
// the test), whether the element comes from a record or the agent.
func TestTheLiteralHealedIsTheFailingTestsOwn(t *testing.T) {
	t.Parallel()
	src := `const { test, expect } = require('@playwright/test');

test('the add button is there', async ({ page }) => {
  await expect(page.getByRole('button', { name: /Add Element/i })).toBeVisible();
});

test('adds five', async ({ page }) => {
  const add = page.getByRole('button', { name: /Add Element/i });
  for (let i = 0; i < 5; i++) {
    await add.click();
  }
});
`
	sites := sitesOf(t, "specs/add.test.js", src)
	f := &TraceAction{API: "locator.click", Method: "click", Selector: sites[0].Selector, File: "specs/add.test.js", Line: 10, Column: 15,
		Error: "Error: locator.click: Timeout 5000ms exceeded.\nCall log:\n  - waiting for getByRole('button', { name: /Add Element/i })"}
	button := SnapshotElement{Tag: "button", Text: "Add New Element", Path: "html body div button", Attributes: map[string]string{"onclick": "addElement()"}}
	was := SnapshotElement{Tag: "button", Text: "Add Element", Path: "html body div button", Attributes: map[string]string{"onclick": "addElement()"}}
	test := TestOutcome{Status: "failed", File: "specs/add.test.js", Line: 7, Error: f.Error, Failure: f}
	passing := []TraceAction{{API: f.API, Method: f.Method, Selector: f.Selector, File: f.File, Line: f.Line, Column: f.Column, Target: &was}}
	for name, heal := range map[string]func() (Change, orchestrator.Verdict, string){
		"recorded": func() (Change, orchestrator.Verdict, string) {
			ch, _, v, why := diagnose(test, passing, []SnapshotElement{button}, sites)
			return ch, v, why
		},
		"the agent's": func() (Change, orchestrator.Verdict, string) {
			ch, _, v, why := healAt(f, declaredAt(test, f), oldFromSite, button, sites, false)
			return ch, v, why
		},
	} {
		t.Run(name, func(t *testing.T) {
			ch, verdict, why := heal()
			if verdict != "" || ch.Line != 8 || ch.New != "/Add New Element/i" {
				t.Fatalf("verdict %q (%s), change %+v; want line 8 rewritten", verdict, why, ch)
			}
		})
	}
}
