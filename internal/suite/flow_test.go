package suite

import (
	"slices"
	"strings"
	"testing"
)

// TestAnOverlayOverASharedPageIsClickedAwayBeforeTheActionItTook: serial
// tests share a page opened in a hook that is not in the failing test's
// trace; the click on the overlay's button goes right before the action
// the overlay took, through the same page expression. With the page's
// navigation in the trace, it follows the navigation instead.
func TestAnOverlayOverASharedPageIsClickedAwayBeforeTheActionItTook(t *testing.T) {
	t.Parallel()
	src := `test.beforeAll(async ({ browser }) => {
  page = await browser.newPage();
  await page.goto('/list');
});

test('deletes one of them', async () => {
  await page.getByRole('button', { name: 'Delete Kiwi' }).click();
});
`
	p := Project{Files: []File{{Path: "tests/delete.spec.js", Content: []byte(src)}}}
	wall := "TimeoutError: locator.click: Timeout 4000ms exceeded.\nCall log:\n  - waiting for getByRole('button', { name: 'Delete Kiwi' })\n" +
		"  - <div class=\"wall\" id=\"cookie-wall\">…</div> intercepts pointer events\n  - retrying click action"
	click := TraceAction{API: "locator.click", Method: "click", File: "tests/delete.spec.js", Line: 7, Column: 59, URL: "http://app/list",
		Selector: `internal:role=button[name="Delete Kiwi"i]`, Error: wall}
	dom := []SnapshotElement{
		{Tag: "main", Path: "html body main", Attributes: map[string]string{}},
		{Tag: "div", Path: "html body div", Attributes: map[string]string{"class": "wall", "id": "cookie-wall"}},
		{Tag: "div", Path: "html body div div", Attributes: map[string]string{"role": "dialog", "aria-label": "Cookies"}},
		{Tag: "p", Path: "html body div div p", Text: "We use cookies.", Attributes: map[string]string{}},
		{Tag: "button", Path: "html body div div button", Text: "Accept cookies", Attributes: map[string]string{}},
		{Tag: "footer", Path: "html body footer", Attributes: map[string]string{}},
		{Tag: "button", Path: "html body footer button", Text: "Close", Attributes: map[string]string{}},
	}
	for _, tc := range []struct {
		name    string
		actions []TraceAction
		want    string
	}{
		{"the page opened elsewhere", []TraceAction{click}, `test.beforeAll(async ({ browser }) => {
  page = await browser.newPage();
  await page.goto('/list');
});

test('deletes one of them', async () => {
  await page.getByRole('button', { name: 'Accept cookies' }).click();
  await page.getByRole('button', { name: 'Delete Kiwi' }).click();
});
`},
		{"the navigation in the trace", []TraceAction{{API: "page.goto", Method: "goto", File: "tests/delete.spec.js", Line: 3, Column: 14, URL: "about:blank"}, click},
			`test.beforeAll(async ({ browser }) => {
  page = await browser.newPage();
  await page.goto('/list');
  await page.getByRole('button', { name: 'Accept cookies' }).click();
});

test('deletes one of them', async () => {
  await page.getByRole('button', { name: 'Delete Kiwi' }).click();
});
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := click
			_, e, why, ok := overlayEdit(p, TestOutcome{Status: "failed", Error: wall, Failure: &f, Actions: tc.actions}, dom, nil)
			if !ok || why != "" {
				t.Fatalf("ok %v: %s", ok, why)
			}
			if got := edited(t, p, e); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
			// The same failure on the patched test (an overlay still
			// there for another reason) never takes the step twice.
			q := Project{Files: []File{{Path: "tests/delete.spec.js", Content: []byte(tc.want)}}}
			g := click
			g.Line++                                                         // below the inserted line
			again := append(slices.Clone(tc.actions[:len(tc.actions)-1]), g) // the navigation, if any, then the click
			_, e, why, ok = overlayEdit(q, TestOutcome{Status: "failed", Error: wall, Failure: &g, Actions: again}, dom, nil)
			if !ok || !strings.Contains(why, "already takes the step") || e.file != "" {
				t.Fatalf("on the patched test: ok %v, edit %+v, why %q", ok, e, why)
			}
		})
	}
}

// TestADialogIsAnsweredWithItsWayOnOrNotAtAll: a modal dialog open on the
// failure's page is answered with the button that lets the test go on
// (Confirm over Cancel, a way on over a plain Close), after the action
// that opened it; when two buttons could be the way on, or there is none,
// nothing is guessed; a dialog that is closed, or not modal, is no
// overlay at all.
func TestADialogIsAnsweredWithItsWayOnOrNotAtAll(t *testing.T) {
	t.Parallel()
	src := `test('adds', async ({ page }) => {
  await page.goto('/list');
  await page.getByTestId('add-button').click();
  await expect(page.getByRole('listitem')).toHaveCount(2);
});
`
	p := Project{Files: []File{{Path: "t.spec.js", Content: []byte(src)}}}
	fail := TraceAction{API: "expect.toHaveCount", Method: "toHaveCount", File: "t.spec.js", Line: 4, Column: 44, URL: "http://app/list",
		Error: "Timed out 2000ms waiting for expect(locator).toHaveCount(expected)"}
	actions := []TraceAction{
		{API: "page.goto", Method: "goto", File: "t.spec.js", Line: 2, Column: 14, URL: "about:blank"},
		{API: "locator.click", Method: "click", File: "t.spec.js", Line: 3, Column: 40, URL: "http://app/list"},
		fail,
	}
	dialog := func(attrs map[string]string, buttons ...string) []SnapshotElement {
		dom := []SnapshotElement{{Tag: "main", Path: "html body main", Attributes: map[string]string{}},
			{Tag: cmpOr(attrs["tag"], "dialog"), Path: "html body dialog", Attributes: attrs}}
		for _, b := range buttons {
			dom = append(dom, SnapshotElement{Tag: "button", Path: "html body dialog form button", Text: b, Attributes: map[string]string{}})
		}
		return dom
	}
	open := map[string]string{"open": "modal"}
	for _, tc := range []struct {
		name    string
		dom     []SnapshotElement
		click   string // the button clicked; "" when none is
		why     string
		overlay bool
	}{
		{"Cancel and Confirm", dialog(open, "Cancel", "Confirm"), "Confirm", "", true},
		{"Close and Yes", dialog(open, "Close", "Yes, add it"), "Yes, add it", "", true},
		{"Cancel and Close", dialog(open, "Cancel", "Close"), "Close", "", true},
		{"one button", dialog(open, "Done"), "Done", "", true},
		{"OK and Continue", dialog(open, "OK", "Continue"), "", "more than one of its buttons", true},
		{"Cancel and Delete", dialog(open, "Cancel", "Delete"), "", "no button to close it", true},
		{"a modal dialog role", dialog(map[string]string{"tag": "div", "role": "alertdialog", "aria-modal": "true"}, "Cancel", "Confirm"), "Confirm", "", true},
		{"a closed dialog", dialog(map[string]string{}, "Cancel", "Confirm"), "", "", false},
		{"a dialog role, not modal", dialog(map[string]string{"tag": "div", "role": "dialog"}, "Cancel", "Confirm"), "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fail
			_, e, why, ok := overlayEdit(p, TestOutcome{Status: "failed", Error: fail.Error, Failure: &f, Actions: actions}, tc.dom, nil)
			if ok != tc.overlay || !strings.Contains(why, tc.why) || (tc.why == "") != (why == "") {
				t.Fatalf("ok %v, why %q; want %v, %q", ok, why, tc.overlay, tc.why)
			}
			if tc.click == "" {
				return
			}
			want := strings.Replace(src, "click();\n", "click();\n  await page.getByRole('button', { name: '"+tc.click+"' }).click();\n", 1)
			if got := edited(t, p, e); got != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestADialogIsAnsweredAfterTheCallThatOpenedIt: the call after which the
// trace's snapshot first shows a modal dialog opened it, and the answer
// goes right after that call, even when a later step closed the dialog
// again (a second Enter taken by its focused Cancel) and the failure's
// page shows none; a key pressed on the page's keyboard is answered
// through that page.
func TestADialogIsAnsweredAfterTheCallThatOpenedIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		actions   []TraceAction
		quiet     []CallSite // calls that open no dialog in a test that passes
		want      string
	}{
		{"a loop, the dialog closed again", `test('adds two', async () => {
  for (const name of ['Kiwi', 'Mango']) {
    await page.locator('#item').fill(name);
    await page.locator('#item').press('Enter');
  }
  await expect(page.locator('#count')).toHaveText('3 items');
});
`, []TraceAction{
			{Method: "fill", File: "t.spec.js", Line: 3, Column: 33},
			{Method: "press", File: "t.spec.js", Line: 4, Column: 33, Dialog: []string{"Cancel", "Confirm"}},
			{Method: "fill", File: "t.spec.js", Line: 3, Column: 33},
			{Method: "press", File: "t.spec.js", Line: 4, Column: 33},
		}, nil, `    await page.locator('#item').press('Enter');
    await page.getByRole('button', { name: 'Confirm' }).click();
  }`},
		{"the page's keyboard", `test('adds', async ({ page }) => {
  await page.goto('/list');
  await page.keyboard.press('Enter');
  await expect(page.locator('#count')).toHaveText('3 items');
});
`, []TraceAction{
			{Method: "goto", File: "t.spec.js", Line: 2, Column: 14},
			{Method: "keyboardPress", File: "t.spec.js", Line: 3, Column: 23, Dialog: []string{"No", "Yes"}},
		}, nil, `  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Yes' }).click();
`},
		{"a helper that opens it only for this test", `const addItem = async (page, name) => {
  await page.getByRole('textbox', { name: 'New item' }).fill(name);
  await page.getByRole('button', { name: 'Add' }).click();
};

test('keeps a list', async ({ page }) => {
  await page.goto('/list');
  await addItem(page, 'Honey');
  await expect(page.locator('#count')).toHaveText('2 items');
});
`, []TraceAction{
			{Method: "goto", File: "t.spec.js", Line: 7, Column: 14},
			{Method: "fill", File: "t.spec.js", Line: 2, Column: 57, Callers: []CallSite{{"t.spec.js", 8, 9}}},
			{Method: "click", File: "t.spec.js", Line: 3, Column: 51, Callers: []CallSite{{"t.spec.js", 8, 9}}, Dialog: []string{"Cancel", "Confirm"}},
		}, []CallSite{{"t.spec.js", 3, 51}}, `  await addItem(page, 'Honey');
  await page.getByRole('button', { name: 'Confirm' }).click();
  await expect`},
		{"a page object's method that opens it only for this test", `test('keeps a list', async ({ page }) => {
  const list = new ListPage(page);
  await list.open();
  await list.add('Honey');
  await expect(page.locator('#count')).toHaveText('2 items');
});
`, []TraceAction{
			{Method: "goto", File: "pages/list.js", Line: 9, Column: 21, Callers: []CallSite{{"t.spec.js", 3, 14}}},
			{Method: "click", File: "pages/list.js", Line: 14, Column: 26, Callers: []CallSite{{"t.spec.js", 4, 14}}, Dialog: []string{"Cancel", "Confirm"}},
		}, []CallSite{{"pages/list.js", 14, 26}}, `  await list.add('Honey');
  await page.getByRole('button', { name: 'Confirm' }).click();
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Project{Files: []File{{Path: "pages/list.js", Content: []byte(ListPageSource)}, {Path: "t.spec.js", Content: []byte(tc.src)}}}
			line := strings.Count(tc.src[:strings.Index(tc.src, "await expect")], "\n") + 1
			fail := TraceAction{Method: "expect", File: "t.spec.js", Line: line, Column: 41, Error: "Expect failed"}
			actions := append(tc.actions, fail)
			quiet := map[CallSite]bool{}
			for _, c := range tc.quiet {
				quiet[c] = true
			}
			_, e, why, ok := overlayEdit(p, TestOutcome{Status: "failed", Failure: &fail, Actions: actions}, nil, quiet)
			if !ok || why != "" {
				t.Fatalf("ok %v: %s", ok, why)
			}
			if e.file != "t.spec.js" {
				t.Fatalf("the answer goes to %s", e.file)
			}
			if got := edited(t, p, e); !strings.Contains(got, tc.want) {
				t.Fatalf("got\n%s\nwant it to hold\n%s", got, tc.want)
			}
		})
	}
}

// ListPageSource is the list's page object, as a customer writes one: a
// page of its own, two locators kept in fields, a method per step (add
// opens the confirmation under the demo app's confirm_add).
const ListPageSource = `class ListPage {
  constructor(page) {
    this.page = page;
    this.input = page.getByRole('textbox', { name: 'New item' });
    this.addButton = page.getByTestId('add-button');
  }

  async open() {
    await this.page.goto('/list');
  }

  async add(name) {
    await this.input.fill(name);
    await this.addButton.click();
  }
}

module.exports = { ListPage };
`

// TestAStepIsTakenOutOnlyWhereTheTestIsKnownToBeOnItsPage: a step whose
// element is gone is tried out only when the failing call ran on the page
// it ran on when the test passed. A loaded runner may write no snapshot
// before the call, and an unknown address is no proof of the page.
func TestAStepIsTakenOutOnlyWhereTheTestIsKnownToBeOnItsPage(t *testing.T) {
	t.Parallel()
	at := func(url string) TraceAction {
		return TraceAction{File: "tests/out.spec.js", Line: 7, Column: 48, Method: "click", URL: url}
	}
	for _, tc := range []struct {
		name, was, now string
		want           bool
	}{
		{"the same page", "http://app/secure", "http://app/secure", true},
		{"the same page, another query and fragment", "http://app/secure?x=1", "http://app/secure/#top", true},
		{"another page", "http://app/secure", "http://app/login", false},
		{"where it is now is not known", "http://app/secure", "", false},
		{"where it was is not known", "", "http://app/secure", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := at(tc.now)
			if got := onItsPage([]TraceAction{at(tc.was)}, &f); got != tc.want {
				t.Errorf("onItsPage(was %q, now %q) = %v, want %v", tc.was, tc.now, got, tc.want)
			}
		})
	}
}
