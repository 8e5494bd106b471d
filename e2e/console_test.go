package e2e

import (
	"bytes"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/worker"
)

// consoleSignIn opens the console in a fresh Chromium context at path,
// signs in with key on the sign-in page it is sent to, and returns the
// page where the sign-in leads.
func consoleSignIn(t *testing.T, s *stack, key, path string) (playwright.BrowserContext, playwright.Page) {
	t.Helper()
	bc := browsertest.Context(t, playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 1280, Height: 900}})
	page, err := bc.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := page.Goto(s.api.URL + path); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.URL(), "/console/login") {
		t.Fatalf("signed out, %s led to %s, want the sign-in page", path, page.URL())
	}
	must(t, page.GetByLabel("API key").Fill(key))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Sign in"}).Click())
	must(t, page.WaitForURL(s.api.URL+path))
	return bc, page
}

// listModel is a scripted model that puts item on the demo app's shopping
// list in two calls: 2,400 + 120 and 2,600 + 90 tokens.
func listModel(t *testing.T, item string) *llmtest.Server {
	t.Helper()
	return llmtest.New(t,
		llmtest.Reply{Content: llmtest.JSON(map[string]any{"status": "continue", "reasoning": "open the list",
			"commands": []map[string]any{{"action": "click", "target": map[string]string{"role": "link", "name": "Shopping list"}}}}),
			PromptTokens: 2400, CompletionTokens: 120},
		llmtest.Reply{Content: llmtest.JSON(map[string]any{"status": "complete", "reasoning": "add it",
			"commands": []map[string]any{
				{"action": "fill", "target": map[string]string{"placeholder": "Add an item"}, "value": item},
				{"action": "press", "target": map[string]string{"placeholder": "Add an item"}, "value": "Enter"},
			}}),
			PromptTokens: 2600, CompletionTokens: 90},
	)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestConsoleFollowsAJobLiveForItsTenantOnly opens a queued job's page in
// Chromium, signed in with the tenant's key, and then starts the worker:
// the state, each step (with its tier, tokens and the picture of the page
// after it) and finally the spec arrive on the open page without a reload.
// The spec's copy button copies it; the jobs list shows the job with its
// tokens; a picture of the job page is written. Another tenant signed in
// reaches neither the job nor its pictures, a form without the session's
// token is refused, and the session cookie is HttpOnly and SameSite=Strict.
func TestConsoleFollowsAJobLiveForItsTenantOnly(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 200*time.Millisecond)
	model := listModel(t, "Coffee beans")
	_, key := s.tenant(t, "consoleco", 3)
	_, otherKey := s.tenant(t, "otherco", 3)
	job := s.submit(t, key, map[string]any{
		"name": "console follows an agent step", "base_url": s.demo + "/",
		"steps": []any{"Put coffee beans on the shopping list", `Verify "Coffee beans" is visible`},
	})
	jobPath := "/console/jobs/" + job.ID

	bc, page := consoleSignIn(t, s, key, jobPath)
	if got, _ := page.Locator("#state").TextContent(); got != "queued" {
		t.Fatalf("the page opened with the job %q, want queued (no worker yet)", got)
	}
	if _, err := page.Evaluate(`() => { window.__notReloaded = true; }`); err != nil {
		t.Fatal(err)
	}
	s.startWorkerWith(t, llm.New(llm.Config{APIKey: "test", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"}), worker.Config{StepShots: true})

	// Everything below arrives over the open page's event stream.
	expect := playwright.NewPlaywrightAssertions(30_000)
	must(t, expect.Locator(page.Locator("#state")).ToHaveText("succeeded"))
	steps := page.Locator("#timeline li.step")
	must(t, expect.Locator(steps).ToHaveCount(2))
	must(t, expect.Locator(steps.Nth(0)).ToContainText("Put coffee beans on the shopping list"))
	must(t, expect.Locator(steps.Nth(0).Locator(".tier")).ToHaveText("agent"))
	must(t, expect.Locator(steps.Nth(0)).ToContainText("5210 tokens"))
	must(t, expect.Locator(steps.Nth(1).Locator(".tier")).ToHaveText("deterministic"))
	// A fast tier's command says which words of the step it carried out.
	must(t, expect.Locator(steps.Nth(1).Locator(".words")).ToHaveText(`“Verify "Coffee beans" is visible”`))
	must(t, expect.Locator(page.Locator("#head")).ToContainText("5000 prompt"))
	must(t, expect.Locator(page.Locator("#spec")).ToContainText("await expect(page.getByText('Coffee beans')"))
	if still, _ := page.Evaluate(`() => window.__notReloaded === true`); still != true {
		t.Fatal("the page was reloaded: the updates did not arrive live")
	}
	s.passSpec(t, key, job.ID)
	// Each step's picture is an image that loaded.
	for i := range 2 {
		img := steps.Nth(i).Locator("img")
		must(t, expect.Locator(img).ToBeVisible())
		loaded, err := img.Evaluate(`(img) => img.complete && img.naturalWidth > 100`, nil)
		if err != nil || loaded != true {
			t.Fatalf("step %d's picture did not load (%v)", i+1, err)
		}
	}

	picture, _ := steps.Nth(0).Locator("img").GetAttribute("src")
	if !strings.HasPrefix(picture, jobPath+"/artifacts/") {
		t.Fatalf("step 1's picture is at %q", picture)
	}

	// The copy button copies the spec as shown.
	must(t, bc.GrantPermissions([]string{"clipboard-read", "clipboard-write"}))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Copy"}).Click())
	must(t, expect.Locator(page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Copied"})).ToBeVisible())
	copied, err := page.Evaluate(`() => navigator.clipboard.readText()`)
	must(t, err)
	shown, _ := page.Locator("#spec").TextContent()
	if copied != shown || !strings.Contains(shown, "test(") {
		t.Fatalf("copied %d characters, the page shows %d", len(copied.(string)), len(shown))
	}

	// The test's own picture of the job page.
	shot, err := page.Screenshot(playwright.PageScreenshotOptions{FullPage: playwright.Bool(true)})
	must(t, err)
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil || img.Bounds().Dx() < 1000 || img.Bounds().Dy() < 600 {
		t.Fatalf("the job page's picture: %v, %v", err, img)
	}
	out := filepath.Join(t.TempDir(), "console-job.png")
	if dir := os.Getenv("WEBPILOT_TEST_ARTIFACTS"); dir != "" {
		out = filepath.Join(dir, "console-job.png")
	}
	must(t, os.WriteFile(out, shot, 0o644))
	t.Logf("the job page: %s (%d bytes)", out, len(shot))

	// The jobs list, filtered to succeeded scenario jobs.
	_, err = page.Goto(s.api.URL + "/console/jobs?state=succeeded&kind=scenario")
	must(t, err)
	row := page.Locator(`tr[data-job="` + job.ID + `"]`)
	must(t, expect.Locator(row).ToContainText("succeeded"))
	must(t, expect.Locator(row).ToContainText("5210"))
	_, err = page.Goto(s.api.URL + "/console/jobs?state=failed")
	must(t, err)
	must(t, expect.Locator(row).ToHaveCount(0))

	// Credits: the job's two model calls and its browser time are in the
	// ledger; the suite holds the test the job stored.
	_, _, browserRows := s.browserTime(t, job.ID)
	_, err = page.Goto(s.api.URL + "/console/credits")
	must(t, err)
	must(t, expect.Locator(page.Locator(`table.ledger a[href="`+jobPath+`"]`)).ToHaveCount(2+browserRows))
	_, err = page.Goto(s.api.URL + "/console/tests")
	must(t, err)
	must(t, expect.Locator(page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "console follows an agent step"})).ToBeVisible())

	// The session cookie.
	cookies, err := bc.Cookies()
	must(t, err)
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite == nil || *cookies[0].SameSite != *playwright.SameSiteAttributeStrict ||
		strings.Contains(cookies[0].Value, key) {
		t.Fatalf("session cookie = %+v, want one HttpOnly SameSite=Strict cookie that is not the key", cookies)
	}
	// A form without the session's token, sent from the page itself.
	status, err := page.Evaluate(`() => fetch('/console/jobs/` + job.ID + `/cancel', {method: 'POST', body: new URLSearchParams({csrf: 'guess'})}).then(r => r.status)`)
	must(t, err)
	if fmt.Sprint(status) != "403" {
		t.Fatalf("a form without the session's token answered %v, want 403", status)
	}

	// Another tenant reaches neither the job nor its pictures.
	_, other := consoleSignIn(t, s, otherKey, "/console/jobs")
	must(t, expect.Locator(other.Locator(`tr[data-job="`+job.ID+`"]`)).ToHaveCount(0))
	res, err := other.Goto(s.api.URL + jobPath)
	must(t, err)
	if res.Status() != http.StatusNotFound {
		t.Fatalf("another tenant opened the job page: %d", res.Status())
	}
	if body, _ := other.Locator("main").TextContent(); strings.Contains(body, "coffee") {
		t.Fatal("another tenant sees the job's steps")
	}
	res, err = other.Goto(s.api.URL + picture)
	must(t, err)
	if res.Status() != http.StatusNotFound {
		t.Fatalf("another tenant fetched the job's picture %s: %d", picture, res.Status())
	}
	// Signed out, a picture's address leads to the sign-in, not the image.
	anon := browsertest.Context(t, playwright.BrowserNewContextOptions{})
	ap, err := anon.NewPage()
	must(t, err)
	_, err = ap.Goto(s.api.URL + picture)
	must(t, err)
	if !strings.Contains(ap.URL(), "/console/login") {
		t.Fatalf("signed out, the picture's address led to %s", ap.URL())
	}
}

// consolePage signs in to the console with key as the sign-in form does
// and returns the status and body of path.
func (s *stack) consolePage(t *testing.T, key, path string) (int, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	req, _ := http.NewRequest("POST", s.api.URL+"/console/login", strings.NewReader(url.Values{"api_key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.api.URL)
	res, err := c.Do(req)
	must(t, err)
	res.Body.Close()
	res, err = c.Get(s.api.URL + path)
	must(t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}
