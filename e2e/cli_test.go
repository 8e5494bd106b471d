package e2e

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
	"github.com/webpilot/webpilot/internal/webhook"
)

// demoPassword is the demo app's password (demoapp.Password).
const demoPassword = "s3cret-pass"

func TestCLISubmitsATextScenarioAndFollowsItLive(t *testing.T) {
	t.Parallel()
	bin := buildCmd(t, "webpilot")
	s := newStack(t, 10*time.Second, 300*time.Millisecond)
	s.startWorker(t, nil)
	cli := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), append([]string{"WEBPILOT_API=" + s.api.URL, "WEBPILOT_ADMIN_TOKEN=" + adminToken}, env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := cli(nil, "tenant", "create", "cli-co")
	if err != nil {
		t.Fatalf("tenant create: %v\n%s", err, out)
	}
	id := regexp.MustCompile(`tenant_id: (\S+)`).FindStringSubmatch(out)
	key := regexp.MustCompile(`api_key: (\S+)`).FindStringSubmatch(out)
	if id == nil || key == nil {
		t.Fatalf("tenant create printed:\n%s", out)
	}
	if out, err := cli(nil, "credits", "grant", id[1], "3"); err != nil || !strings.Contains(out, "balance 3.000000") {
		t.Fatalf("credits grant: %v\n%s", err, out)
	}
	tenant := []string{"WEBPILOT_API_KEY=" + key[1]}

	file := filepath.Join(t.TempDir(), "list.txt")
	scenarioText := "# keep the shopping list\nbase: " + s.demo + "/list\nFill \"New item\" with \"Oat milk\"\nClick \"Add\"\nVerify \"Oat milk\" is visible\n"
	if err := os.WriteFile(file, []byte(scenarioText), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = cli(tenant, "submit", file, "--watch")
	if err != nil {
		t.Fatalf("submit --watch: %v\n%s", err, out)
	}
	for _, want := range []string{"submitted job", "(3 steps, 2.00 credits held)", "] running", "✓ step 1", "✓ step 3",
		`Verify "Oat milk" is visible`, "succeeded: 3/3 steps, 0 LLM tokens, cost 0.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("watch output lacks %q:\n%s", want, out)
		}
	}
	// No model call: what it cost is its browser time.
	if m := regexp.MustCompile(`0 LLM tokens, cost (\d+\.\d+) credits`).FindStringSubmatch(out); m == nil || m[1] == "0.000000" {
		t.Errorf("the summary does not charge the browser time:\n%s", out)
	}
	job := regexp.MustCompile(`submitted job (\S+)`).FindStringSubmatch(out)[1]
	spec, err := cli(tenant, "script", job)
	if err != nil || !strings.Contains(spec, "test('list', async ({ page }) => {") || !strings.Contains(browsertest.Untimed(spec), ".fill('Oat milk');") {
		t.Fatalf("script: %v\n%s", err, spec)
	}

	// A text scenario's secret comes from the environment, is typed into the
	// field, and is stored only sealed: the spec reads process.env.
	login := filepath.Join(t.TempDir(), "login.txt")
	_ = os.WriteFile(login, []byte("base: "+s.demo+"/login\nFill \"Email\" with \"demo@webpilot.test\"\nFill \"Password\" with \"{{PASSWORD}}\"\nClick \"Sign in\"\nVerify \"Welcome back\" is visible\n"), 0o644)
	out, err = cli(append(tenant, "DEMO_PW="+demoPassword), "submit", login, "--secret", "PASSWORD=env:DEMO_PW", "--watch")
	if err != nil || !strings.Contains(out, "succeeded: 4/4 steps") {
		t.Fatalf("submit with a secret: %v\n%s", err, out)
	}
	secretJob := regexp.MustCompile(`submitted job (\S+)`).FindStringSubmatch(out)[1]
	spec, _ = cli(tenant, "script", secretJob)
	if !strings.Contains(spec, "process.env.PASSWORD") || strings.Contains(spec, demoPassword) {
		t.Fatalf("the spec does not read the secret from the environment:\n%s", spec)
	}
	if n := s.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND input::text LIKE '%' || $2 || '%'`, secretJob, demoPassword); n != 0 {
		t.Fatal("the secret is stored in the clear")
	}
	if out, err := cli(tenant, "submit", login, "--secret", "PASSWORD=hunter2"); err == nil || !strings.Contains(out, "env:VAR or file:PATH") {
		t.Fatalf("an inline secret was accepted: %v\n%s", err, out)
	}

	// Bad input is refused with the field named, and the CLI exits non-zero.
	bad := filepath.Join(t.TempDir(), "bad.json")
	_ = os.WriteFile(bad, []byte(`{"name": "x", "base_url": "ftp://example.com/", "steps": []}`), 0o644)
	out, err = cli(tenant, "submit", bad)
	if err == nil || !strings.Contains(out, "scenario.base_url") || !strings.Contains(out, "scenario.steps") {
		t.Fatalf("bad scenario: %v\n%s", err, out)
	}
	if out, err := cli([]string{"WEBPILOT_API_KEY=wp_nope"}, "job", job); err == nil || !strings.Contains(out, "invalid API key (HTTP 401)") {
		t.Fatalf("wrong key: %v\n%s", err, out)
	}

	// Ordinary habits: help anywhere exits 0, flags go before or after
	// arguments, every listing has --json.
	for _, args := range [][]string{{"--help"}, {"submit", "--help"}, {"help", "suite", "repair"}, {"credits", "grant", "-h"}} {
		if out, err := cli(nil, args...); err != nil || !strings.Contains(out, "Usage:") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	if out, err := cli(nil, "version"); err != nil || !strings.HasPrefix(out, "webpilot ") {
		t.Errorf("version: %v %q", err, out)
	}
	if out, err := cli(nil, "completion", "bash"); err != nil || !strings.Contains(out, "bash completion") {
		t.Errorf("completion: %v", err)
	}
	out, err = cli(nil, "tenant", "create", "--max-running", "3", "acme")
	acme := regexp.MustCompile(`tenant_id: (\S+)`).FindStringSubmatch(out)
	if err != nil || acme == nil || s.count(t, `SELECT count(*) FROM tenants WHERE id = $1 AND name = 'acme' AND max_running = 3`, acme[1]) != 1 {
		t.Fatalf("tenant create --max-running 3 acme: %v\n%s", err, out)
	}
	// The same grant sent twice under one key is applied once.
	for range 2 {
		if out, err := cli(nil, "credits", "grant", "--key", "invoice-7", acme[1], "2.5"); err != nil || !strings.Contains(out, "balance 2.500000") {
			t.Fatalf("credits grant --key: %v\n%s", err, out)
		}
	}
	out, err = cli(tenant, "jobs", "--json", "--limit", "10")
	var page struct {
		Jobs []struct{ ID, State string }
	}
	if err != nil || json.Unmarshal([]byte(out), &page) != nil || len(page.Jobs) != 2 {
		t.Fatalf("jobs --json: %v\n%s", err, out)
	}
	if out, err := cli(tenant, "jobs"); err != nil || !strings.Contains(out, job) || !strings.Contains(out, "succeeded") {
		t.Errorf("jobs: %v\n%s", err, out)
	}
	if out, err := cli(tenant, "history", job); err != nil || !strings.Contains(out, `step 2    command      ok       click role="button" name="Add"`) || !strings.Contains(out, "3 entries") {
		t.Errorf("history: %v\n%s", err, out)
	}
	out, err = cli(tenant, "--json", "history", job)
	var hist struct{ History []struct{ Kind string } }
	if err != nil || json.Unmarshal([]byte(out), &hist) != nil || len(hist.History) == 0 {
		t.Errorf("history --json: %v\n%s", err, out)
	}
	if out, err := cli(tenant, "tests", "--json"); err != nil || !json.Valid([]byte(out)) {
		t.Errorf("tests --json: %v\n%s", err, out)
	}
	// Following with --json prints one object per event, the job last.
	out, err = cli(tenant, "watch", "--json", job)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last struct{ ID, State string }
	if err != nil || json.Unmarshal([]byte(lines[len(lines)-1]), &last) != nil || last.ID != job || last.State != "succeeded" {
		t.Errorf("watch --json: %v\n%s", err, out)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("watch --json printed a line that is not JSON: %q", l)
		}
	}
	if out, err := cli(append(tenant, "WEBPILOT_API=http://127.0.0.1:1"), "jobs"); err == nil || !strings.Contains(out, "start it") || !strings.Contains(out, "WEBPILOT_API") {
		t.Errorf("no dispatcher: %v\n%s", err, out)
	}
}

// TestCLIRunsAndRepairsASuite replays a drifted suite from the CLI (it
// fails, test by test), repairs it (healed at 0 tokens, a proposed version),
// and shows, diffs and accepts the proposal.
func TestCLIRunsAndRepairsASuite(t *testing.T) {
	t.Parallel()
	bin := buildCmd(t, "webpilot")
	s := newStack(t, 10*time.Second, 0)
	s.startWorker(t, nil)
	_, key := s.tenant(t, "cli-suite", 10)
	for _, st := range suiteTests[:3] {
		gen := s.submit(t, key, map[string]any{"name": st.name, "base_url": s.demo + "/list", "tags": []string{"list"}, "steps": st.steps})
		if v := s.wait(t, key, gen.ID, 60*time.Second); v.State != "succeeded" {
			t.Fatalf("generating %s: %s %s", st.name, v.State, v.Error)
		}
	}
	cli := s.cliAs(bin, key)
	if err := s.app.SetVariant(demoapp.RenamedIDs); err != nil {
		t.Fatal(err)
	}
	out, err := cli("suite", "run", "--tag", "list", "--watch")
	if err == nil {
		t.Fatalf("a suite run with a failing test exited 0:\n%s", out)
	}
	for _, want := range []string{"submitted suite_run", "✗ failed", "step 2 failed (unknown)", "no element matches testid=\"add-button\"",
		"✓ passed          bread", "succeeded: 3/3 tests (1 passed, 2 failed), 0 LLM tokens", "2 of 3 tests fail"} {
		if !strings.Contains(out, want) {
			t.Errorf("suite run output lacks %q:\n%s", want, out)
		}
	}
	out, err = cli("suite", "repair", "--tag", "list", "--watch")
	if err != nil {
		t.Fatalf("suite repair: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`✎ healed\s+add\s+0 tokens\s+v2 proposed`).FindString(out)
	if m == "" || !strings.Contains(out, "succeeded: 3/3 tests (1 passed, 2 healed), 0 LLM tokens") {
		t.Fatalf("suite repair output:\n%s", out)
	}
	list, err := cli("test", "list")
	id := regexp.MustCompile(`(?m)^(\S+)\s+v1\s+healed\s+add\b`).FindStringSubmatch(list)
	if err != nil || id == nil {
		t.Fatalf("test list: %v\n%s", err, list)
	}
	if out, err := cli("test", "show", id[1]); err != nil || !strings.Contains(out, "v2   proposed") || !strings.Contains(out, "v1   accepted") {
		t.Fatalf("test show: %v\n%s", err, out)
	}
	if out, err := cli("test", "diff", id[1], "2"); err != nil || !strings.Contains(out, "+  await page.getByTestId('add-entry-btn').click();") {
		t.Fatalf("test diff: %v\n%s", err, out)
	}
	if out, err := cli("test", "accept", id[1], "2"); err != nil || !strings.Contains(out, "version 2: accepted") {
		t.Fatalf("test accept: %v\n%s", err, out)
	}
	if out, err := cli("test", "accept", id[1], "2"); err == nil || !strings.Contains(out, "409") {
		t.Fatalf("accepting twice: %v\n%s", err, out)
	}
}

// TestCLIUploadsAndRepairsAProject: a customer's project directory — with
// a lockfile whose dotenv its config loads — is uploaded by the CLI as it
// is, listed by the runner, and, the app's wording having drifted before
// any run on webpilot, `project repair --baseline-url --patch --watch`
// shows its progress and leaves a verified patch git apply takes, after
// which the project's own runner passes again; a regression leaves none.
func TestCLIUploadsAndRepairsAProject(t *testing.T) {
	// Not parallel: one of the package's longest tests, run first,
	// before the parallel tests resume, so that make test does not end on
	// it alone.
	bin := buildCmd(t, "webpilot")
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	_, key := s.tenant(t, "cli-project", 10)
	cli := s.cliAs(bin, key, "ACME_E2E_PASSWORD="+demoapp.Password)
	dir := t.TempDir()
	p, err := suitetest.Project("dotenv")
	must(t, err)
	must(t, p.WriteTo(dir))
	// What a checkout carries and an upload leaves out.
	must(t, os.MkdirAll(filepath.Join(dir, "node_modules", "dotenv"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "node_modules", "dotenv", "index.js"), []byte("module.exports = {}"), 0o644))

	out, err := cli("project", "upload", "acme-e2e", dir, "--watch")
	if err != nil || !strings.Contains(out, "project acme-e2e version") ||
		!strings.Contains(out, "tests/session.spec.js:5 [chromium] session › signs in with the user from .env.e2e") {
		t.Fatalf("upload: %v\n%s", err, out)
	}
	if out, err := cli("project", "list"); err != nil || !regexp.MustCompile(`acme-e2e\s+\w{12}\s+\d+ files\s+5 tests`).MatchString(out) {
		t.Fatalf("project list: %v\n%s", err, out)
	}

	// The team's CI hears of what the repairs find through a webhook whose
	// receiver is down for its first request.
	hooks := newHookReceiver(t, 500)
	out, err = cli("webhook", "add", hooks.srv.URL+"/ci/webpilot", "--event", "job.finished", "--event", "project.repaired", "--event", "regression.found")
	m := regexp.MustCompile(`webhook (\S+): .*\nsigning secret \(shown once, keep it\): (whsec_\S+)`).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("webhook add: %v\n%s", err, out)
	}
	hookID, secret := m[1], m[2]
	if out, err := cli("webhook", "list"); err != nil || !strings.Contains(out, hookID) || strings.Contains(out, secret) {
		t.Fatalf("webhook list (the secret is never shown again): %v\n%s", err, out)
	}

	// The suite is red on arrival: the app's wording drifted before any
	// run on webpilot. The repair learns the elements the tests act on from
	// the release where they still pass, and shows how far it is as it goes.
	if err := s.app.SetVariant(demoapp.Reworded); err != nil {
		t.Fatal(err)
	}
	release := httptest.NewServer(demoapp.New(demoapp.Options{}))
	t.Cleanup(release.Close)
	patch := filepath.Join(t.TempDir(), "fix.diff")
	out, err = cli("project", "repair", "acme-e2e", "--base-url", s.demo, "--baseline-url", release.URL,
		"--secret", "E2E_PASSWORD=env:ACME_E2E_PASSWORD", "--patch", patch, "--watch")
	if err != nil || !strings.Contains(out, "wrote the verified patch") {
		t.Fatalf("project repair --baseline-url --patch: %v\n%s", err, out)
	}
	repairID := regexp.MustCompile(`submitted project_repair (\S+)`).FindStringSubmatch(out)
	if repairID == nil {
		t.Fatalf("no job id in:\n%s", out)
	}
	repaired := hooks.await(t, secret, store.EventProjectRepaired, repairID[1])
	if repaired.Job.Project != "acme-e2e" || repaired.Job.Proposed == "" || repaired.Job.Healed == 0 || repaired.Job.Regressions != 0 {
		t.Fatalf("project.repaired says %+v", repaired.Job)
	}
	hooks.await(t, secret, store.EventJobFinished, repairID[1])
	// The receiver's 500 was retried, and the CLI lists both attempts.
	if out, err := cli("webhook", "deliveries", hookID); err != nil || !strings.Contains(out, "attempt 1 at") ||
		!strings.Contains(out, "the receiver answered 500") || !strings.Contains(out, "attempt 2 at") || !strings.Contains(out, "HTTP 204") {
		t.Fatalf("webhook deliveries: %v\n%s", err, out)
	}
	for _, phase := range []string{"evidence: ", "baseline: "} {
		if !regexp.MustCompile(regexp.QuoteMeta(phase) + `\d+/\d+ tests ended`).MatchString(out) {
			t.Errorf("the watched repair never showed its %q progress:\n%s", phase, out)
		}
	}
	// Its three files were repaired each on its own, and merged into the
	// one patch.
	if !regexp.MustCompile(`tests/\S+\.spec\.js (evidence|baseline): .*; files [0-2]/3 repaired`).MatchString(out) {
		t.Errorf("the watched repair never showed its files' progress:\n%s", out)
	}
	var merged suite.ProjectRepairResult
	if v := s.waitEnd(t, key, repairID[1], time.Minute); json.Unmarshal(v.Project, &merged) != nil || merged.Files != 3 || !merged.Repair.Verified ||
		len(merged.Repair.Tests) != 5 || merged.BrowserSeconds <= 0 {
		t.Errorf("the repair's result: %s", v.Project)
	}
	diff, err := os.ReadFile(patch)
	must(t, err)
	if !strings.Contains(string(diff), "+++ b/support/session.js") || !strings.Contains(string(diff), "Log in") {
		t.Fatalf("the patch:\n%s", diff)
	}
	// The customer applies it to their checkout, and their own run passes.
	apply := exec.Command("git", "apply", patch)
	apply.Dir = dir
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s", err, out)
	}
	must(t, os.RemoveAll(filepath.Join(dir, "node_modules")))
	files := map[string][]byte{}
	must(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)], err = os.ReadFile(path)
		return err
	}))
	fixed, err := suite.NewProject(files)
	must(t, err)
	browsers := t.TempDir()
	must(t, suitetest.BrowsersPath(browsers, browsertest.RunnerDir()))
	rep, err := suitetest.Outside(context.Background(), fixed, t.TempDir(), browsertest.RunnerDir(), browsers,
		map[string]string{"BASE_URL": s.demo, "E2E_PASSWORD": demoapp.Password}, []string{"chromium"})
	must(t, err)
	for _, o := range rep.Tests {
		if o.Status != "passed" {
			t.Errorf("after git apply, %s %s: %s %s", o.File, o.Title(), o.Status, o.Error)
		}
	}
	if len(rep.Tests) != 5 {
		t.Errorf("after git apply, %d tests ran, want 5", len(rep.Tests))
	}

	// A run as written passes on the app as it was, and keeps each call's
	// target element.
	if err := s.app.SetVariant(); err != nil {
		t.Fatal(err)
	}
	out, err = cli("project", "run", "acme-e2e", "--base-url", s.demo, "--secret", "E2E_PASSWORD=env:ACME_E2E_PASSWORD", "--watch")
	if err != nil || !strings.Contains(out, "submitted project_run") || !strings.Contains(out, "succeeded: 5 tests in 3 files (5 passed), run in 2 parts") {
		t.Fatalf("project run: %v\n%s", err, out)
	}

	// A regression leaves no patch, and says why: the CI step (upload the
	// checkout, repair it) fails, and the team's webhook hears of it.
	if err := s.app.SetVariant(demoapp.WrongCount); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	checkout := filepath.Join(t.TempDir(), "acme-e2e")
	must(t, p.WriteTo(checkout)) // the suite as it was: it passed on this app before its count broke
	out, err = func() (string, error) {
		cmd := exec.Command(bin, "project", "repair", checkout, "--base-url", s.demo, "--secret", "E2E_PASSWORD=env:ACME_E2E_PASSWORD",
			"--junit", "results/junit.xml", "--html", "results/playwright-report")
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "WEBPILOT_API="+s.api.URL, "WEBPILOT_API_KEY="+key, "ACME_E2E_PASSWORD="+demoapp.Password)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}()
	if err == nil || !strings.Contains(out, "uploaded "+checkout+" as project acme-e2e") || !regexp.MustCompile(`[1-9]\d* app regressions: the app no longer does`).MatchString(out) ||
		!strings.Contains(out, "app regression: ") {
		t.Fatalf("project repair DIR under a regression: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(work, "webpilot.patch")); !os.IsNotExist(err) {
		t.Fatalf("a patch file was written for a regression (%v)", err)
	}
	// With the runner's reports asked for, the step ran the project first
	// (the reports are that run's) and the repair followed that run.
	var ju junitReport
	raw, err := os.ReadFile(filepath.Join(work, "results", "junit.xml"))
	if err != nil || xml.Unmarshal(raw, &ju) != nil || ju.Tests != 5 || ju.Failures == 0 || !strings.Contains(out, "submitted project_run") {
		t.Errorf("the CI step's junit report (%v): %+v\n%s", err, ju, out)
	}
	if _, err := os.Stat(filepath.Join(work, "results", "playwright-report", "index.html")); err != nil {
		t.Errorf("the CI step's html report: %v", err)
	}
	regressed := regexp.MustCompile(`submitted project_repair (\S+)`).FindStringSubmatch(out)
	if regressed == nil {
		t.Fatalf("no job id in:\n%s", out)
	}
	if found := hooks.await(t, secret, store.EventRegressionFound, regressed[1]); found.Job.Regressions == 0 {
		t.Fatalf("regression.found says %+v", found.Job)
	}
}

// hookReceiver is a team's endpoint for webhooks: it answers its script's
// statuses in turn (then 204) and keeps what it was sent.
type hookReceiver struct {
	mu     sync.Mutex
	script []int
	got    []hookRequest
	srv    *httptest.Server
}

type hookRequest struct {
	header http.Header
	body   []byte
	status int
}

func newHookReceiver(t *testing.T, script ...int) *hookReceiver {
	h := &hookReceiver{script: script}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		status := http.StatusNoContent
		if n := len(h.got); n < len(h.script) {
			status = h.script[n]
		}
		h.got = append(h.got, hookRequest{r.Header.Clone(), b, status})
		h.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// await waits (up to a minute) for event of job to be delivered, checks its signature
// with secret as a receiver must, that a replay of it later is refused,
// and answers what it said.
func (h *hookReceiver) await(t *testing.T, secret string, event store.WebhookEvent, jobID string) store.EventPayload {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		got := append([]hookRequest{}, h.got...)
		h.mu.Unlock()
		for _, r := range got {
			var p store.EventPayload
			if r.status >= 300 || json.Unmarshal(r.body, &p) != nil || p.Event != event || p.Job.ID != jobID {
				continue
			}
			sig := r.header.Get(webhook.SignatureHeader)
			if err := webhook.Verify(secret, sig, r.body, webhook.Tolerance, time.Now()); err != nil {
				t.Fatalf("%s: the signature does not verify: %v", event, err)
			}
			if err := webhook.Verify(secret, sig, r.body, webhook.Tolerance, time.Now().Add(time.Hour)); !errors.Is(err, webhook.ErrOutsideWindow) {
				t.Fatalf("%s: a replay an hour later was taken: %v", event, err)
			}
			if r.header.Get(webhook.EventHeader) != string(event) || r.header.Get(webhook.DeliveryHeader) != p.ID {
				t.Fatalf("%s: headers %v", event, r.header)
			}
			return p
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no %s of job %s reached the receiver", event, jobID)
	return store.EventPayload{}
}

// cliAs is the CLI binary bin run as the holder of key against the
// stack's API, with env added; it answers what the command printed.
func (s *stack) cliAs(bin, key string, env ...string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(append(os.Environ(), "WEBPILOT_API="+s.api.URL, "WEBPILOT_API_KEY="+key), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}
