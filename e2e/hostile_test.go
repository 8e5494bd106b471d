package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
)

// residentMB reads a process's resident memory now and at its peak.
func residentMB(t *testing.T, pid int) (now, peak int) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		kb, _ := strconv.Atoi(f[0])
		switch k {
		case "VmRSS":
			now = kb >> 10
		case "VmHWM":
			peak = kb >> 10
		}
	}
	return now, peak
}

// dispatcherProcess starts cmd/dispatcher as a real process on the stack's
// database and queue, the way the README starts it, and answers its URL.
func (s *stack) dispatcherProcess(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	bin := buildCmd(t, "dispatcher")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := l.Addr().String()
	_ = l.Close()
	cmd := exec.Command(bin)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "DATABASE_URL="+s.dbURL, "NATS_URL="+s.queue.Server.ClientURL(),
		"WEBPILOT_NATS_TOKEN="+s.queue.Token, "WEBPILOT_SECRET_KEY="+s.sealKey, "WEBPILOT_ALLOW_HOSTS=127.0.0.1",
		"WEBPILOT_ADDR="+addr, "WEBPILOT_DATA_DIR="+t.TempDir())
	logf, err := os.Create(filepath.Join(t.TempDir(), "dispatcher.log"))
	must(t, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	must(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("dispatcher log:\n%s", b)
		}
	})
	url := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; {
		if r, err := http.Get(url + "/healthz"); err == nil {
			_ = r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dispatcher did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return cmd, url
}

// TestAZipBombIsRefusedWithoutTheDispatchersMemory posts a 4 MB zip of
// 2,000 entries of 2 MiB of zeros (4 GB inflated) to a dispatcher started
// as the README starts it: a 400 naming the limit within 5 s, with its
// resident memory grown by less than 100 MB (it took 5.5 GB and 51 s).
func TestAZipBombIsRefusedWithoutTheDispatchersMemory(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 0)
	_, key := s.tenant(t, "bomber", 5)
	cmd, url := s.dispatcherProcess(t)
	archive, err := suitetest.ZipBomb(2000, 2<<20)
	must(t, err)
	body, err := json.Marshal(map[string]any{"archive": archive})
	must(t, err)
	before, _ := residentMB(t, cmd.Process.Pid)
	req, _ := http.NewRequest("POST", url+"/v1/projects/bomb", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	took := time.Since(start)
	var answer struct {
		Error  string `json:"error"`
		Fields []struct {
			Field, Message string
		} `json:"fields"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	_ = resp.Body.Close()
	_, peak := residentMB(t, cmd.Process.Pid)
	t.Logf("%d KB bomb: %d in %s; dispatcher resident %d MB before, %d MB at its peak", len(body)>>10, resp.StatusCode, took, before, peak)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(answer.Error, "more than") {
		t.Fatalf("answer %d %+v, want a 400 naming the limit", resp.StatusCode, answer)
	}
	if took > 5*time.Second {
		t.Errorf("the 400 took %s", took)
	}
	if peak-before >= 100 {
		t.Errorf("the dispatcher's resident memory grew by %d MB", peak-before)
	}
}

// TestASecretAProjectRunIsGivenIsNeverShownOrStored: a customer's test
// that fails with the secret it was given in its expectation, its page's
// console and its own output (toHaveText(process.env.PASSWORD)) put the
// value into the job's report, its row and the API's answer. Every form
// of it is redacted to its placeholder, as scenario jobs' are.
func TestASecretAProjectRunIsGivenIsNeverShownOrStored(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	_, key := s.tenant(t, "leaky", 5)
	const secret = "Tr0ub4dor&3-horse"
	files := map[string]string{
		"playwright.config.js": "module.exports = { testDir: 'tests', use: { actionTimeout: 2000 }, expect: { timeout: 1000 } };\n",
		"tests/secret.spec.js": `const { test, expect } = require('@playwright/test');
test('signs in', async ({ page }) => {
  await page.goto('/login');
  await page.getByLabel('Password').fill(process.env.PASSWORD);
});
test('shows the password', async ({ page }) => {
  await page.goto('/login');
  console.log('typing ' + process.env.PASSWORD);
  await page.evaluate((p) => console.error('the page saw ' + p), process.env.PASSWORD);
  await page.getByLabel('Password').fill(process.env.PASSWORD);
  await expect(page.locator('h1')).toHaveText(process.env.PASSWORD);
});
`,
	}
	s.uploadListed(t, key, "leaky", files)
	var job api.JobView
	s.mustJSON(t, "POST", "/v1/projects/leaky/run", key, map[string]any{"base_url": s.demo,
		"secrets": map[string]string{"PASSWORD": secret}}, http.StatusAccepted, &job)
	v := s.waitEnd(t, key, job.ID, 4*time.Minute)
	if v.Suite == nil || len(v.Suite.Children) != 1 {
		t.Fatalf("run: %s %s %+v", v.State, v.Error, v.Suite)
	}
	_, child := s.call(t, "GET", "/v1/jobs/"+v.Suite.Children[0].JobID, key, nil)
	_, parent := s.call(t, "GET", "/v1/jobs/"+job.ID, key, nil)
	if !strings.Contains(string(child), "{{PASSWORD}}") || !strings.Contains(string(child), "toHaveText") {
		t.Fatalf("the child's report does not show the failure with the placeholder:\n%s", child)
	}
	escaped, _ := json.Marshal(secret)
	for _, form := range []string{secret, strings.Trim(string(escaped), `"`), "Tr0ub4dor"} {
		for what, text := range map[string]string{"the child's answer": string(child), "the run's answer": string(parent)} {
			if strings.Contains(text, form) {
				t.Errorf("%s shows the secret (%q):\n%s", what, form, text)
			}
		}
		if n := s.count(t, `SELECT count(*) FROM jobs WHERE result::text LIKE '%' || $1 || '%' OR error LIKE '%' || $1 || '%'`, form); n > 0 {
			t.Errorf("%d job rows hold the secret (%q)", n, form)
		}
		if n := s.count(t, `SELECT count(*) FROM project_versions WHERE fingerprints::text LIKE '%' || $1 || '%'`, form); n > 0 {
			t.Errorf("the project's fingerprints hold the secret (%q)", form)
		}
	}
}

// runningChild waits for the run's child to be running under attempt n and
// answers its id.
func (s *stack) runningChild(t *testing.T, parentID string, attempt int) string {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var id string
		err := s.store.Pool().QueryRow(context.Background(),
			`SELECT id::text FROM jobs WHERE parent_id = $1 AND state = 'running' AND attempt = $2 AND worker_id IS NOT NULL`, parentID, attempt).Scan(&id)
		if err == nil {
			return id
		}
	}
	t.Fatalf("no child of %s ran under attempt %d", parentID, attempt)
	return ""
}

// TestAHostileProjectCannotTakeTheWorkerDownNorComeBack runs worker
// processes as the README starts them against projects built to hurt them.
//   - A 300-byte project whose config replaces the runner's report with a
//     link to /dev/zero at exit grew the worker by 100 MB/s until the host
//     killed it, and the job came back to the next worker: its listing now
//     fails within 60 s naming the report, the worker stays small and
//     serves the next upload.
//   - A project file job whose worker dies under it twice is failed with
//     the reason, not delivered to a third.
//   - A run cancelled while its worker was dead is never started again.
func TestAHostileProjectCannotTakeTheWorkerDownNorComeBack(t *testing.T) {
	t.Parallel()
	bin := buildWorker(t)
	s := newStack(t, 2*time.Second, 0)
	model := llmtest.New(t)
	_, key := s.tenant(t, "mallory", 5)
	worker := s.workerProcess(t, bin, "w-1", model)

	zero := map[string]string{
		"playwright.config.js": `const fs = require('fs');
module.exports = {};
process.on('exit', () => { const r = '/work/.webpilot/report.json'; if (fs.existsSync(r)) { fs.rmSync(r); fs.symlinkSync('/dev/zero', r); } });
`,
		"a.spec.js": "require('@playwright/test').test('t', () => {});\n",
	}
	var up api.ProjectView
	start := time.Now()
	s.mustJSON(t, "POST", "/v1/projects/zero", key, map[string]any{"files": zero}, http.StatusCreated, &up)
	lj := s.waitEnd(t, key, up.ListJob, 2*time.Minute)
	took := time.Since(start)
	_, peak := residentMB(t, worker.Process.Pid)
	t.Logf("the /dev/zero project's listing: %s in %s (%s); the worker's peak resident memory %d MB", lj.State, took, lj.Error, peak)
	if lj.State != "failed" || !strings.Contains(lj.Error, "report.json") || lj.Attempt != 1 {
		t.Fatalf("listing %s after %d attempts: %q, want failed naming the report", lj.State, lj.Attempt, lj.Error)
	}
	if took > 60*time.Second {
		t.Errorf("the listing took %s to fail", took)
	}
	if peak >= 300 {
		t.Errorf("the worker's resident memory reached %d MB", peak)
	}

	// The same worker serves the next upload: a project whose one test
	// waits until it is stopped.
	slow := map[string]string{
		"playwright.config.js": "module.exports = { timeout: 0 };\n",
		"slow.spec.js":         "require('@playwright/test').test('waits', () => new Promise((r) => setTimeout(r, 600000)));\n",
	}
	s.mustJSON(t, "POST", "/v1/projects/slow", key, map[string]any{"files": slow}, http.StatusCreated, &up)
	if lj := s.waitEnd(t, key, up.ListJob, 2*time.Minute); lj.State != "succeeded" {
		t.Fatalf("the next listing: %s %s", lj.State, lj.Error)
	}

	// Its run's worker dies under it twice: failed, not delivered again.
	var run api.JobView
	s.mustJSON(t, "POST", "/v1/projects/slow/run", key, map[string]any{"base_url": s.demo}, http.StatusAccepted, &run)
	child := s.runningChild(t, run.ID, 1)
	s.killWorker(t, worker, child)
	worker = s.workerProcess(t, bin, "w-2", model)
	s.runningChild(t, run.ID, 2)
	s.killWorker(t, worker, child)
	worker = s.workerProcess(t, bin, "w-3", model)
	cv := s.waitEnd(t, key, child, 90*time.Second)
	if cv.State != "failed" || cv.Attempt != 3 || !strings.Contains(cv.Error, "worker died while running it 2 times") {
		t.Fatalf("the child that killed two workers: %s after %d attempts: %q", cv.State, cv.Attempt, cv.Error)
	}
	if rv := s.waitEnd(t, key, run.ID, 30*time.Second); rv.Suite == nil || len(rv.Suite.Children) != 1 ||
		!strings.Contains(rv.Suite.Children[0].Error, "worker died while running it") {
		t.Fatalf("its run (%s) does not say why its file failed: %+v", rv.State, rv.Suite)
	}

	// A run cancelled while its worker is dead never starts again.
	s.mustJSON(t, "POST", "/v1/projects/slow/run", key, map[string]any{"base_url": s.demo}, http.StatusAccepted, &run)
	child = s.runningChild(t, run.ID, 1)
	s.killWorker(t, worker, child)
	s.mustJSON(t, "POST", "/v1/jobs/"+run.ID+"/cancel", key, nil, http.StatusAccepted, nil)
	s.workerProcess(t, bin, "w-4", model)
	if rv := s.waitEnd(t, key, run.ID, 90*time.Second); rv.State != "cancelled" {
		t.Fatalf("the cancelled run ended %s: %s", rv.State, rv.Error)
	}
	cv = s.waitEnd(t, key, child, 10*time.Second)
	if cv.State != "cancelled" || cv.Attempt != 1 {
		t.Fatalf("its child: %s after %d attempts (%s), want cancelled and never started again", cv.State, cv.Attempt, cv.Error)
	}
}

// TestAProjectRunIsChargedItsBrowserTime: a project run held a browser
// and the runner for minutes and charged 0 credits. Each file's run is now
// charged its seconds at the documented price, out of the run's hold, in
// the ledger; a run whose max_credits cannot cover a file's browser time
// starts none of them and spends nothing.
func TestAProjectRunIsChargedItsBrowserTime(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	tenantID, key := s.tenant(t, "metered", 5)
	files := map[string]string{
		"playwright.config.js": "module.exports = {};\n",
		"tests/a.spec.js":      "const { test, expect } = require('@playwright/test');\ntest('opens the list', async ({ page }) => { await page.goto('/list'); await expect(page.locator('h1')).toBeVisible(); });\n",
		"tests/b.spec.js":      "const { test } = require('@playwright/test');\ntest('waits', async () => { await new Promise((r) => setTimeout(r, 1500)); });\n",
	}
	s.uploadListed(t, key, "metered", files)
	before := s.account(t, tenantID)
	var run api.JobView
	s.mustJSON(t, "POST", "/v1/projects/metered/run", key, map[string]any{"base_url": s.demo}, http.StatusAccepted, &run)
	v := s.waitEnd(t, key, run.ID, 3*time.Minute)
	if v.Suite == nil || len(v.Suite.Children) != 2 {
		t.Fatalf("run: %s %s %+v", v.State, v.Error, v.Suite)
	}
	var total int64
	for _, c := range v.Suite.Children {
		var cv api.JobView
		s.mustJSON(t, "GET", "/v1/jobs/"+c.JobID, key, nil, http.StatusOK, &cv)
		var fr struct {
			BrowserSeconds float64 `json:"browser_seconds"`
			CreditsMicro   int64   `json:"credits_micro"`
		}
		must(t, json.Unmarshal(cv.Project, &fr))
		want := int64(math.Ceil(fr.BrowserSeconds * jobs.BrowserSecondMicro))
		if fr.BrowserSeconds < 0.5 || fr.CreditsMicro != want || c.CreditsMicro != want {
			t.Errorf("%s: %.2f s charged %d (its line says %d), want %d", c.TestName, fr.BrowserSeconds, fr.CreditsMicro, c.CreditsMicro, want)
		}
		if n := s.count(t, `SELECT count(*) FROM credit_entries WHERE job_id = $1 AND reason LIKE 'browser time%' AND amount = $2`, c.JobID, -want); n != 1 {
			t.Errorf("%s: %d ledger entries of its browser time", c.TestName, n)
		}
		total += want
	}
	if a := s.account(t, tenantID); a.Balance != before.Balance-total || a.Held != 0 {
		t.Errorf("account %+v after the run, want balance %d and nothing held", a, before.Balance-total)
	}

	// A budget that cannot cover a file's browser time starts no file.
	s.mustJSON(t, "POST", "/v1/projects/metered/run", key, map[string]any{"base_url": s.demo, "max_credits": 0.01}, http.StatusAccepted, &run)
	v = s.waitEnd(t, key, run.ID, 2*time.Minute)
	if v.Suite == nil || v.Suite.States["budget_exhausted"] != 2 {
		t.Fatalf("the run within 0.01 credits: %s %+v", v.State, v.Suite)
	}
	for _, c := range v.Suite.Children {
		var cv api.JobView
		s.mustJSON(t, "GET", "/v1/jobs/"+c.JobID, key, nil, http.StatusOK, &cv)
		if strings.Contains(string(cv.Project), `"tests"`) {
			t.Errorf("%s ran over budget: %s", c.TestName, cv.Project)
		}
	}
	if a := s.account(t, tenantID); a.Balance != before.Balance-total || a.Held != 0 {
		t.Errorf("the run over budget spent: %+v", a)
	}
}
