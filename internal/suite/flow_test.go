package suite

import (
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
			_, e, why, ok := overlayEdit(p, TestOutcome{Status: "failed", Error: wall, Failure: &f, Actions: tc.actions}, dom)
			if !ok || why != "" {
				t.Fatalf("ok %v: %s", ok, why)
			}
			if got := edited(t, p, e); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
