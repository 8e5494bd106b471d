package suite_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
)

// TestAProjectRunsFilesMergeIntoTheRunnersOwnReports: each file's run
// leaves the runner's blob report and its failing test's trace; merged by
// the runner, they are one junit XML whose counts are the runs' verdicts
// and one html report; with the secret a test typed taken out of the
// blobs, it is in neither.
func TestAProjectRunsFilesMergeIntoTheRunnersOwnReports(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const config = "module.exports = { testDir: './tests', use: { baseURL: process.env.BASE_URL }, projects: [{ name: 'chromium' }] };\n"
	p, err := suite.NewProject(map[string][]byte{"playwright.config.js": []byte(config),
		"tests/login.spec.js": []byte(`const { test, expect } = require('@playwright/test');
test('signs in', async ({ page }) => {
  await page.setContent('<label>Password <input id="pw"></label>');
  await page.getByLabel('Password').fill(process.env.E2E_PASSWORD);
  await expect(page.getByLabel('Password')).toHaveValue(process.env.E2E_PASSWORD);
});
`),
		"tests/cart.spec.js": []byte(`const { test, expect } = require('@playwright/test');
test('shows the cart', async ({ page }) => {
  await page.setContent('<h1>Cart</h1>');
  await expect(page.getByRole('heading')).toHaveText('Cart');
});
test('shows the total', async ({ page }) => {
  await page.setContent('<h1>Cart</h1>');
  await expect(page.getByRole('heading')).toHaveText('Total', { timeout: 500 });
});
`)})
	if err != nil {
		t.Fatal(err)
	}
	redact := func(s string) string { return strings.ReplaceAll(s, demoapp.Password, "[secret]") }
	var blobs [][]byte
	traces := 0
	for _, f := range []string{"tests/cart.spec.js", "tests/login.spec.js"} {
		rep := b.run(t, p, suite.RunOptions{Files: []string{f}, Trace: true, Blob: true})
		if len(rep.Blob) == 0 || rep.BlobProblem != "" {
			t.Fatalf("%s left no blob report: %s %v", f, rep.BlobProblem, rep.Errors)
		}
		for _, tc := range rep.Tests {
			if (len(tc.TraceZip) > 0) != (tc.Status == "failed") {
				t.Errorf("%s (%s) kept a trace of %d bytes", tc.Title(), tc.Status, len(tc.TraceZip))
			}
			if len(tc.TraceZip) > 0 {
				traces++
			}
		}
		if f == "tests/login.spec.js" && !suitetest.ZipHolds(t, rep.Blob, demoapp.Password) {
			t.Errorf("the blob of %s does not hold what the test typed: the check below proves nothing", f)
		}
		clean, err := suite.RedactZip(rep.Blob, redact)
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, clean)
	}
	if traces != 1 {
		t.Errorf("%d failing traces kept, want 1", traces)
	}
	rep, err := b.runner.MergeReports(context.Background(), blobs)
	if err != nil {
		t.Fatal(err)
	}
	var ju struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(rep.JUnit, &ju); err != nil || ju.Tests != 3 || ju.Failures != 1 {
		t.Errorf("junit: %+v (%v)\n%.600s", ju, err, rep.JUnit)
	}
	if !strings.Contains(string(rep.JUnit), `name="shows the total"`) {
		t.Errorf("junit names no failing case:\n%.600s", rep.JUnit)
	}
	zr, err := zip.NewReader(bytes.NewReader(rep.HTML), int64(len(rep.HTML)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zr.Open("index.html"); err != nil {
		t.Errorf("the html report has no index.html: %v", err)
	}
	if suitetest.ZipHolds(t, rep.HTML, demoapp.Password) || strings.Contains(string(rep.JUnit), demoapp.Password) {
		t.Error("the merged reports hold the secret")
	}
}
