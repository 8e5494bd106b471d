package suite_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/suite"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// TestAFailureThatDoesNotRepeatIsFlakyNotHealed: a test that failed in
// the repair's first run (its button came late, as on a loaded machine)
// and passed when run again, with nothing it runs rewritten, is flaky:
// not healed with the reason its failure was given, and kept out of the
// patch; the drift beside it is healed and verified as ever. The first
// run runs each test once whatever the config's retries: a test the
// config retries is run once more on its own when its failure could be
// flakiness, and a renamed test id, plain drift, is not (it runs in the
// first run and in the trial only); a test the config does not retry is
// told flaky by the trial.
func TestAFailureThatDoesNotRepeatIsFlakyNotHealed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, retries, why string
	}{
		{"the config retries on CI", "process.env.CI ? 2 : 0", "then passed when run again with nothing changed"},
		{"the config does not retry", "0", "then passed in a later run with nothing it runs rewritten"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// The status page shows its Start button from its second load on;
			// /visit counts the list test's runs.
			var loads, visits atomic.Int32
			status := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				button := ""
				switch r.URL.Path {
				case "/":
					if loads.Add(1) > 1 {
						button = `<button onclick="document.querySelector('#out').textContent='done'">Start</button>`
					}
				case "/visit":
					visits.Add(1)
				default:
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, `<!doctype html><title>Status</title><h1>Status</h1>%s<p id="out"></p>`, button)
			}))
			t.Cleanup(status.Close)
			b := setup(t, status.URL)
			list := strings.Replace(listAddsTest, "await page.goto('/list');", "await page.goto(process.env.STATUS_URL + '/visit');\n  await page.goto('/list');", 1)
			p, err := suite.NewProject(map[string][]byte{
				"playwright.config.js": []byte("module.exports = { testDir: './tests', timeout: 20000, retries: " + c.retries +
					", expect: { timeout: 2000 }, use: { baseURL: process.env.BASE_URL, actionTimeout: 3000 } };\n"),
				"tests/a-status.spec.js": []byte("const { test, expect } = require('@playwright/test');\n" +
					"test('starts the job', async ({ page }) => {\n  await page.goto(process.env.STATUS_URL);\n" +
					"  await page.getByRole('button', { name: 'Start' }).click();\n  await expect(page.locator('#out')).toHaveText('done');\n});\n"),
				"tests/b-list.spec.js": []byte(list),
			})
			if err != nil {
				t.Fatal(err)
			}
			o := b.repairOptions(t, nil)
			o.Env["STATUS_URL"] = status.URL
			prints := map[string][]suite.TraceAction{}
			rep := b.run(t, p, suite.RunOptions{Files: []string{"tests/b-list.spec.js"}, Trace: true, Env: o.Env})
			for i := range rep.Tests {
				tc := &rep.Tests[i]
				if err := tc.Evidence(); err != nil || tc.Status != "passed" {
					t.Fatalf("as written: %s %v %s", tc.Status, err, tc.Error)
				}
				prints[tc.ID] = tc.Actions
			}
			if err := b.app.SetVariant(demoapp.RenamedIDs); err != nil {
				t.Fatal(err)
			}
			visits.Store(0)
			got, err := b.runner.Repair(context.Background(), p, prints, o)
			if err != nil {
				t.Fatal(err)
			}
			if n := loads.Load(); n < 2 {
				t.Fatalf("the status page was loaded %d times: the flaky test never ran past its failures: %+v", n, got.Tests)
			}
			byTitle := map[string]suite.RepairedTest{}
			for _, tc := range got.Tests {
				byTitle[tc.Title] = tc
			}
			if s := byTitle["starts the job"]; s.Verdict != orchestrator.VerdictFlaky || !strings.Contains(s.Reason, c.why) ||
				!strings.Contains(s.Reason, "click at tests/a-status.spec.js:4") {
				t.Errorf("the test whose failure did not repeat: %s (%s)", s.Verdict, s.Reason)
			}
			if l := byTitle["adds an item"]; l.Verdict != orchestrator.VerdictHealed || !got.Verified {
				t.Fatalf("the drifted test: %s (%s), verified %v", l.Verdict, l.Reason, got.Verified)
			}
			// Its renamed test id failed it in the first run, once, and the
			// trial passed it: two runs, where a retry made three.
			if n := visits.Load(); n != 2 {
				t.Errorf("the drifted test ran %d times in the repair, want 2 (the first run, once, and the trial)", n)
			}
			if len(got.Changes) != 1 || got.Changes[0].File != "tests/b-list.spec.js" || strings.Contains(got.Diff, "a-status.spec.js") {
				t.Errorf("changes %+v\n%s", got.Changes, got.Diff)
			}
		})
	}
}
