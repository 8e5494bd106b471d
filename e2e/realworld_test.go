package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
	"github.com/webpilot/webpilot/internal/testslot"
)

// TestARealWorldSuiteIsRepairedInCIAndReadInTheConsole is a team's CI step
// on a suite written as public suites are (page objects behind fixtures,
// two files, a reporter and traces of its own) against an app built like
// public practice apps: staging renamed a few controls and refuses valid
// sign-ins, the release still passes. The CLI uploads the checkout,
// repairs it against the release as its baseline, writes the patch for
// the drift, and fails naming each regression; the console, in Chromium,
// shows the same verdicts on the project's page, the repair's and each
// file's, and what each charged.
func TestARealWorldSuiteIsRepairedInCIAndReadInTheConsole(t *testing.T) {
	// Long tier: about 4 minutes alone and 6 in make test, which it took
	// past its time; TestCLIUploadsAndRepairsAProject walks the same pages
	// for the shopping corpus there.
	testslot.Long(t)
	t.Parallel()
	bin := buildCmd(t, "webpilot")
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	release, staging := demoapp.NewPractice(), demoapp.NewPractice()
	staging.Set(demoapp.PracticeDrift, demoapp.PracticeRejectsLogin)
	rs, ss := httptest.NewServer(release), httptest.NewServer(staging)
	t.Cleanup(rs.Close)
	t.Cleanup(ss.Close)
	_, key := s.tenant(t, "practice-co", 20)

	p, err := suitetest.RealWorldProject("pom-fixtures")
	must(t, err)
	checkout := filepath.Join(t.TempDir(), "pom-fixtures")
	must(t, p.WriteTo(checkout))
	work := t.TempDir()
	cmd := exec.Command(bin, "project", "repair", checkout, "--base-url", ss.URL, "--baseline-url", rs.URL)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "WEBPILOT_API="+s.api.URL, "WEBPILOT_API_KEY="+key)
	b, err := cmd.CombinedOutput()
	out := string(b)
	t.Logf("the CI step printed:\n%s", out)
	if err == nil || !strings.Contains(out, "uploaded "+checkout+" as project pom-fixtures") ||
		!strings.Contains(out, "0 passed, 2 healed, 3 app regressions, 0 unrepairable, 0 not run") ||
		!strings.Contains(out, "3 app regressions: the app no longer does") {
		t.Fatalf("project repair DIR: %v\n%s", err, out)
	}
	for _, title := range []string{"user can sign in", "user can sign out again", "wrong password is refused"} {
		if !regexp.MustCompile(`(?m)^  app regression: tests/auth\.spec\.ts > ` + regexp.QuoteMeta(title) + `: \S`).MatchString(out) {
			t.Errorf("the CI step does not name %q as an app regression with its reason", title)
		}
	}
	// The drift is healed where the page object defines the locator, and
	// git takes the patch.
	patch := filepath.Join(work, "webpilot.patch")
	diff, err := os.ReadFile(patch)
	if err != nil || !strings.Contains(string(diff), "+++ b/pages/DropdownPage.ts") || strings.Count(string(diff), "+++ ") != 1 {
		t.Fatalf("webpilot.patch (%v):\n%s", err, diff)
	}
	apply := exec.Command("git", "apply", "--check", patch)
	apply.Dir = checkout
	if b, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("git apply --check: %v\n%s", err, b)
	}
	id := regexp.MustCompile(`submitted project_repair (\S+)`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no job id in:\n%s", out)
	}
	var repair api.JobView
	s.mustJSON(t, "GET", "/v1/jobs/"+id[1], key, nil, http.StatusOK, &repair)
	if repair.State != "failed" || repair.ChargedCredits <= 0 || repair.ChargedCredits > repair.HoldCredits {
		t.Fatalf("the repair: %s %q, charged %v of %v held", repair.State, repair.Error, repair.ChargedCredits, repair.HoldCredits)
	}

	// The console says the same, and what it cost.
	_, pg := consoleSignIn(t, s, key, "/console/projects")
	text := func(want ...string) string { t.Helper(); return mainShows(t, pg, want...) }
	text("pom-fixtures")
	must(t, pg.GetByRole("link", playwright.PageGetByRoleOptions{Name: "pom-fixtures", Exact: playwright.Bool(true)}).First().Click())
	must(t, pg.WaitForURL(s.api.URL+"/console/projects/pom-fixtures"))
	// Each test's row links the repair that judged it.
	for _, row := range []struct{ title, verdict string }{
		{"user can sign in", "app_regression"}, {"user can sign out again", "app_regression"}, {"wrong password is refused", "app_regression"},
		{"selects Option 1", "healed"}, {"selects Option 2", "healed"},
	} {
		tr := pg.Locator("tr", playwright.PageLocatorOptions{HasText: row.title})
		if got, err := tr.Locator(`a[href="/console/jobs/` + repair.ID + `"]`).InnerText(); err != nil || got != row.verdict {
			t.Errorf("the project's row of %q links the repair as %q (%v), want %q", row.title, got, err, row.verdict)
		}
	}
	must(t, pg.Locator(`a[href="/console/jobs/`+repair.ID+`"]`).First().Click())
	must(t, pg.WaitForURL(s.api.URL+"/console/jobs/"+repair.ID))
	// The repair's page: what it charged, that it resumed as its files'
	// jobs ended (not that it failed once), each verdict with its
	// evidence (a regression says where the page was), and the patch.
	text("Repair of pom-fixtures", fmt.Sprintf("%v charged of %v held", repair.ChargedCredits, repair.HoldCredits),
		"tests/auth.spec.ts › user can sign in\tapp_regression", "when the test passed, this call ran at "+rs.URL+"/secure",
		"tests/dropdown.spec.ts › dropdown › selects Option 1\thealed", "+    return this.page.locator('#dropdown-list');")
	if repair.Attempt > 1 {
		text(fmt.Sprintf("resumed %d time(s) as its files' jobs ended", repair.Attempt-1))
	}
	var children []store.ChildReport
	if repair.Suite != nil {
		children = repair.Suite.Children
	}
	for _, c := range children {
		if _, err := pg.Goto(s.api.URL + "/console/jobs/" + c.JobID); err != nil {
			t.Fatal(err)
		}
		body := text("charged to the hold of its parent job")
		t.Logf("a file's page:\n%s", body)
		for _, never := range []string{"0 calls", "browser time 0.0 s", "0/0", "charged of 0 held"} {
			if strings.Contains(body, never) {
				t.Errorf("%s shows %q", pg.URL(), never)
			}
		}
	}
}
