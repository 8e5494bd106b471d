package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/e2e/chaos"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/store/storetest"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
)

// sandboxBench attacks a dispatcher and a worker, started as the README
// starts them, the way a hostile tenant would, through the API: projects
// whose own config replaces what the worker reads after a run (a link to
// /dev/zero, to the worker's environment, a FIFO, a trace out of the run),
// an archive bomb, a secret a failing test shows, runs past their memory
// and files budgets, and the hostile corpus project's probes of the
// sandbox's walls and the kernel. A probe that gets anything is an escape;
// the processes' peak resident memory is read at the end.
func sandboxBench(ctx context.Context) error {
	st, err := startProcStack(ctx)
	if err != nil {
		return err
	}
	defer st.close()
	fmt.Println("Sandbox: a hostile tenant against a dispatcher and a worker process")
	fmt.Printf("  %-58s %12s\n", "probe", "result")
	probes, escapes, kills := 0, 0, 0
	record := func(name string, escaped error) {
		probes++
		result := "held"
		if escaped != nil {
			escapes++
			result = "ESCAPED: " + escaped.Error()
		}
		fmt.Printf("  %-58s %s\n", name, result)
	}
	leftBehind := func(hook string) map[string]string {
		return map[string]string{
			"playwright.config.js": "const fs = require('fs');\nconst { execSync } = require('child_process');\nmodule.exports = {};\n" +
				"const report = '/work/.webpilot/report.json';\nprocess.on('exit', () => { if (fs.existsSync(report)) { fs.rmSync(report); " + hook + " } });\n",
			"a.spec.js": "require('@playwright/test').test('t', () => {});\n",
		}
	}
	// Item 1 and 2: what the worker reads after a run.
	for _, c := range []struct{ name, hook string }{
		{"the report replaced by a link to /dev/zero", "fs.symlinkSync('/dev/zero', report);"},
		{"the report replaced by a link to the worker's environ", "fs.symlinkSync('/proc/self/environ', report);"},
		{"the report replaced by a FIFO", "execSync('mkfifo ' + report);"},
	} {
		record(c.name, st.listFailsNaming(ctx, leftBehind(c.hook), "report.json", time.Minute))
	}
	fakeTrace := "fs.writeFileSync('/work/t.zip', ''); fs.rmSync('/work/t.zip'); fs.symlinkSync('/proc/self/environ', '/work/t.zip'); " +
		"fs.writeFileSync(report, JSON.stringify({ suites: [{ title: 'a.spec.js', file: 'a.spec.js', specs: [{ title: 't', file: 'a.spec.js', line: 1, column: 1, " +
		"tests: [{ projectName: '', status: 'unexpected', results: [{ status: 'failed', duration: 1, errors: [{ message: 'x' }], " +
		"attachments: [{ name: 'trace', path: '/work/t.zip' }] }] }] }] }] }));"
	record("a trace attachment linked to the worker's environ", st.runShowsNothing(ctx, leftBehind(fakeTrace), nil, []string{"PATH=", "WEBPILOT_"}))
	// Item 3: an archive bomb at the dispatcher.
	record("a 4 MB zip of 4 GB of zeros", st.bombRefused(ctx))
	// Item 5: a secret a failing test shows.
	const secret = "Tr0ub4dor&3-horse"
	leaky := map[string]string{
		"playwright.config.js": "module.exports = { expect: { timeout: 500 } };\n",
		"a.spec.js": "const { test, expect } = require('@playwright/test');\ntest('shows it', async ({ page }) => {\n" +
			"  console.log(process.env.PASSWORD);\n  await page.goto('/login');\n  await expect(page.locator('h1')).toHaveText(process.env.PASSWORD);\n});\n",
	}
	record("a secret in a failing test's error and output", st.runShowsNothing(ctx, leaky, map[string]string{"PASSWORD": secret}, []string{secret, "Tr0ub4dor"}))
	// Item 6: the run's totals.
	for _, c := range []struct{ name, body, limit string }{
		{"3 GiB in two processes (the budget is 2 GiB)", `const held = []; const grow = () => { held.push(Buffer.alloc(32 << 20, 1)); if (held.length < 48) setTimeout(grow, 25); }; grow(); await new Promise((r) => setTimeout(r, 60000));`, "memory"},
		{"12,000 files in /tmp (the budget is 10,000)", `for (let i = 0; i < 6000; i++) fs.writeFileSync('/tmp/f-' + process.pid + '-' + i, ''); await new Promise((r) => setTimeout(r, 60000));`, "files"},
	} {
		err := st.stoppedAt(ctx, c.body, c.limit)
		if err == nil {
			kills++
		}
		record(c.name, err)
	}
	// The fourth pass: what a run or an upload says about itself, amplified.
	record("a traces upload of 4,000,000 empty events (12 KB zipped)", st.tracesAnswered(ctx, emptyEvents(4_000_000), nil))
	record("a traces upload whose report holds 1,000,000 empty tests", st.tracesAnswered(ctx, nil, millionTests()))
	bomb, err := suitetest.ZipBomb(800, 2<<20) // 1.7 MB: a project's file may have 2 MiB
	if err != nil {
		return err
	}
	bombed := "fs.writeFileSync(report, JSON.stringify({ suites: [{ title: 'a.spec.js', file: 'a.spec.js', specs: [{ title: 't', file: 'a.spec.js', line: 1, column: 1, " +
		"tests: [{ projectName: '', status: 'unexpected', results: [{ status: 'failed', duration: 1, errors: [{ message: 'x' }], " +
		"attachments: [{ name: 'trace', path: '/work/bomb.zip' }] }] }] }] }] }));"
	record("a report whose trace is an uploaded zip of 1.6 GB", st.runShowsNothingOf(ctx, leftBehind(bombed), map[string][]byte{"bomb.zip": bomb}))
	record("a source file of 200,000 nested brackets, repaired", st.repairSurvives(ctx, map[string]string{
		"playwright.config.js": "module.exports = { timeout: 5000 };\n",
		"a.spec.js":            "const { test, expect } = require('@playwright/test');\ntest('t', async ({ page }) => { await page.goto('/'); await expect(page.locator('#nowhere')).toBeVisible({ timeout: 500 }); });\n",
		"deep.js":              "module.exports = " + strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000) + ";\n",
	}))
	// Item 7 and the walls: the hostile corpus project, test by test.
	names, failed, err := st.hostileCorpus(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		record("corpus: "+n, failed[n])
	}
	if st.worker.ProcessState != nil || st.dispatcher.ProcessState != nil {
		record("the worker and the dispatcher outlive it all", errors.New("a process died"))
	}
	workerMB, dispatcherMB := peakMB(st.worker.Process.Pid), peakMB(st.dispatcher.Process.Pid)
	fmt.Printf("  %-58s %9d MB\n", "worker's peak resident memory", workerMB)
	fmt.Printf("  %-58s %9d MB\n", "dispatcher's peak resident memory", dispatcherMB)
	fmt.Printf("bench sandbox: probes=%d escapes=%d worker_max_rss_mb=%d dispatcher_max_rss_mb=%d budget_kills=%d\n\n",
		probes, escapes, workerMB, dispatcherMB, kills)
	return nil
}

// procStack is PostgreSQL, NATS, a demo app, and a dispatcher and a worker
// process started as the README starts them.
type procStack struct {
	pg                 *storetest.Cluster
	nats               interface{ Shutdown() }
	natsDir, dir, base string
	demo               *httptest.Server
	key                string
	dispatcher, worker *exec.Cmd
	// more are the workers after the first (startProcStackWith).
	more []*exec.Cmd
}

func startProcStack(ctx context.Context) (*procStack, error) {
	return startProcStackWith(ctx, 1)
}

// startProcStackWith starts the stack with workers worker processes.
func startProcStackWith(ctx context.Context, workers int) (*procStack, error) {
	s := &procStack{}
	ok := false
	defer func() {
		if !ok {
			s.close()
		}
	}()
	var err error
	if s.dir, err = os.MkdirTemp("", "webpilot-bench-sandbox-"); err != nil {
		return nil, err
	}
	cache := filepath.Dir(browsertest.DriverDir())
	dispatcherBin, err := chaos.Build(ctx, s.dir, "dispatcher", cache)
	if err != nil {
		return nil, err
	}
	workerBin, err := chaos.Build(ctx, s.dir, "worker", cache)
	if err != nil {
		return nil, err
	}
	if s.pg, err = storetest.StartCluster(); err != nil {
		return nil, err
	}
	natsPort, err := storetest.FreePort()
	if err != nil {
		return nil, err
	}
	token := jobs.NewToken()
	s.natsDir = filepath.Join(s.dir, "nats")
	ns, err := jobs.StartEmbedded(s.natsDir, natsPort, token)
	if err != nil {
		return nil, err
	}
	s.nats = ns
	s.demo = httptest.NewServer(demoapp.Handler(demoapp.Options{}))
	apiPort, err := storetest.FreePort()
	if err != nil {
		return nil, err
	}
	s.base = fmt.Sprintf("http://127.0.0.1:%d", apiPort)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	common := []string{"DATABASE_URL=" + s.pg.URL, fmt.Sprintf("NATS_URL=nats://127.0.0.1:%d", natsPort), "WEBPILOT_NATS_TOKEN=" + token,
		"WEBPILOT_SECRET_KEY=" + base64.StdEncoding.EncodeToString(key), "WEBPILOT_ALLOW_HOSTS=127.0.0.1", "WEBPILOT_LOG_FORMAT=text"}
	start := func(bin, name string, env ...string) (*exec.Cmd, error) {
		cmd := exec.Command(bin)
		cmd.Dir = s.dir
		cmd.Env = append(append(os.Environ(), common...), env...)
		logf, err := os.Create(filepath.Join(s.dir, name+".log"))
		if err != nil {
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		return cmd, cmd.Start()
	}
	if s.dispatcher, err = start(dispatcherBin, "dispatcher", fmt.Sprintf("WEBPILOT_ADDR=127.0.0.1:%d", apiPort),
		"WEBPILOT_ADMIN_TOKEN=bench", "WEBPILOT_DATA_DIR="+filepath.Join(s.dir, "d")); err != nil {
		return nil, err
	}
	go func() { _ = s.dispatcher.Wait() }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if r, err := http.Get(s.base + "/healthz"); err == nil {
			_ = r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			return nil, errors.New("the dispatcher did not start")
		}
	}
	if s.worker, err = start(workerBin, "worker", "WEBPILOT_WORKER_ID=bench-worker", "WEBPILOT_DATA_DIR="+filepath.Join(s.dir, "w"),
		"WEBPILOT_STEP_SCREENSHOTS=false"); err != nil {
		return nil, err
	}
	go func() { _ = s.worker.Wait() }()
	for i := 2; i <= workers; i++ {
		w, err := start(workerBin, fmt.Sprintf("worker-%d", i), fmt.Sprintf("WEBPILOT_WORKER_ID=bench-worker-%d", i),
			"WEBPILOT_DATA_DIR="+filepath.Join(s.dir, fmt.Sprintf("w%d", i)), "WEBPILOT_STEP_SCREENSHOTS=false")
		if err != nil {
			return nil, err
		}
		go func() { _ = w.Wait() }()
		s.more = append(s.more, w)
	}
	var t struct {
		Tenant struct{ ID string }
		APIKey string `json:"api_key"`
	}
	if err := s.call(ctx, "POST", "/v1/admin/tenants", "bench", map[string]any{"name": "mallory"}, http.StatusCreated, &t); err != nil {
		return nil, err
	}
	if err := s.call(ctx, "POST", "/v1/admin/tenants/"+t.Tenant.ID+"/credits", "bench",
		map[string]any{"credits": 100, "idempotency_key": "initial"}, 0, nil); err != nil {
		return nil, err
	}
	s.key = t.APIKey
	ok = true
	return s, nil
}

func (s *procStack) close() {
	for _, p := range append([]*exec.Cmd{s.worker, s.dispatcher}, s.more...) {
		if p != nil && p.Process != nil {
			_ = p.Process.Kill()
		}
	}
	if s.demo != nil {
		s.demo.Close()
	}
	if s.nats != nil {
		s.nats.Shutdown()
	}
	if s.pg != nil {
		s.pg.Remove()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// call makes an API call; want 0 takes any 2xx.
func (s *procStack) call(ctx context.Context, method, path, token string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if (want != 0 && resp.StatusCode != want) || (want == 0 && resp.StatusCode/100 != 2) {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// wait polls a job until it ends or timeout passes.
func (s *procStack) wait(ctx context.Context, id string, timeout time.Duration) (api.JobView, json.RawMessage, error) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var raw json.RawMessage
		if err := s.call(ctx, "GET", "/v1/jobs/"+id, s.key, nil, http.StatusOK, &raw); err != nil {
			return api.JobView{}, nil, err
		}
		var v api.JobView
		_ = json.Unmarshal(raw, &v)
		switch v.State {
		case "succeeded", "failed", "cancelled", "budget_exhausted":
			return v, raw, nil
		}
	}
	return api.JobView{}, nil, fmt.Errorf("job %s did not end within %s", id, timeout)
}

var uploads int

// upload uploads files as a new project and answers its name and listing.
func (s *procStack) upload(ctx context.Context, files map[string]string) (string, api.ProjectView, error) {
	uploads++
	name := fmt.Sprintf("probe-%d", uploads)
	var up api.ProjectView
	err := s.call(ctx, "POST", "/v1/projects/"+name, s.key, map[string]any{"files": files}, http.StatusCreated, &up)
	return name, up, err
}

// runProject uploads files, waits for their listing and runs them with
// secrets, answering the run's view when it ended.
func (s *procStack) runProject(ctx context.Context, files, secrets map[string]string, timeout time.Duration) (api.JobView, json.RawMessage, error) {
	name, up, err := s.upload(ctx, files)
	if err != nil {
		return api.JobView{}, nil, err
	}
	if _, _, err := s.wait(ctx, up.ListJob, 2*time.Minute); err != nil {
		return api.JobView{}, nil, err
	}
	var run api.JobView
	if err := s.call(ctx, "POST", "/v1/projects/"+name+"/run", s.key, map[string]any{"base_url": s.demo.URL, "secrets": secrets},
		http.StatusAccepted, &run); err != nil {
		return api.JobView{}, nil, err
	}
	return s.wait(ctx, run.ID, timeout)
}

// listFailsNaming: the project's listing fails within timeout with an
// error naming what.
func (s *procStack) listFailsNaming(ctx context.Context, files map[string]string, what string, timeout time.Duration) error {
	_, up, err := s.upload(ctx, files)
	if err != nil {
		return err
	}
	v, _, err := s.wait(ctx, up.ListJob, timeout)
	switch {
	case err != nil:
		return err
	case v.State != "failed" || !strings.Contains(v.Error, what) || v.Attempt != 1:
		return fmt.Errorf("the listing ended %s after %d attempts: %.120s", v.State, v.Attempt, v.Error)
	}
	return nil
}

// runShowsNothing runs the project with secrets: nothing the API answers
// of the run or its children holds any of leaks.
func (s *procStack) runShowsNothing(ctx context.Context, files, secrets map[string]string, leaks []string) error {
	v, raw, err := s.runProject(ctx, files, secrets, 3*time.Minute)
	if err != nil {
		return err
	}
	texts := []string{string(raw)}
	if v.Suite != nil {
		for _, c := range v.Suite.Children {
			var child json.RawMessage
			if err := s.call(ctx, "GET", "/v1/jobs/"+c.JobID, s.key, nil, http.StatusOK, &child); err != nil {
				return err
			}
			texts = append(texts, string(child))
		}
	}
	for _, t := range texts {
		for _, l := range leaks {
			if strings.Contains(t, l) {
				return fmt.Errorf("the API shows %q", l)
			}
		}
	}
	return nil
}

// bombRefused posts a zip of 2,000 entries of 2 MiB zeros: a 400 within 5 s.
func (s *procStack) bombRefused(ctx context.Context) error {
	archive, err := suitetest.ZipBomb(2000, 2<<20)
	if err != nil {
		return err
	}
	start := time.Now()
	err = s.call(ctx, "POST", "/v1/projects/bomb", s.key, map[string]any{"archive": archive}, http.StatusBadRequest, nil)
	if took := time.Since(start); err == nil && took > 5*time.Second {
		return fmt.Errorf("the 400 took %s", took.Round(time.Millisecond))
	}
	return err
}

// stoppedAt runs a project whose one test does body (with fs at hand) in
// two processes: the run must be stopped at its limit and say so.
func (s *procStack) stoppedAt(ctx context.Context, body, limit string) error {
	files := map[string]string{
		"playwright.config.js": "module.exports = { timeout: 120000 };\n",
		"hog.js":               "const fs = require('fs');\n(async () => { " + body + " })();\n",
		"a.spec.js": "const { test } = require('@playwright/test');\nconst { spawn } = require('child_process');\n" +
			"test('hogs', async () => {\n  const kids = [1, 2].map(() => spawn(process.execPath, ['hog.js'], { stdio: 'inherit' }));\n" +
			"  await Promise.all(kids.map((k) => new Promise((r) => k.on('exit', r))));\n});\n",
	}
	v, _, err := s.runProject(ctx, files, nil, 3*time.Minute)
	if err != nil {
		return err
	}
	if v.Suite == nil || len(v.Suite.Children) != 1 {
		return fmt.Errorf("the run ended %s: %s", v.State, v.Error)
	}
	var child struct {
		api.JobView
		Project struct {
			Limit string `json:"limit"`
		} `json:"project"`
	}
	if err := s.call(ctx, "GET", "/v1/jobs/"+v.Suite.Children[0].JobID, s.key, nil, http.StatusOK, &child); err != nil {
		return err
	}
	if child.State != "failed" || !strings.Contains(child.Error, limit+" limit") {
		return fmt.Errorf("the run ended %s (limit %q): %.160s", child.State, child.Project.Limit, child.Error)
	}
	return nil
}

// hostileCorpus runs the hostile corpus project through the API with a
// loopback service, a data directory and another run's files to reach
// for, and answers its tests and the ones that failed (an escape each).
func (s *procStack) hostileCorpus(ctx context.Context) ([]string, map[string]error, error) {
	raw, err := suitetest.Files(suitetest.Hostile)
	if err != nil {
		return nil, nil, err
	}
	files := map[string]string{}
	for k, v := range raw {
		files[k] = string(v)
	}
	canary, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer canary.Close()
	data := filepath.Join(s.dir, "data")
	_ = os.MkdirAll(data, 0o755)
	secret, other := filepath.Join(data, "secret.key"), filepath.Join(data, "other-run.spec.ts")
	_ = os.WriteFile(secret, []byte("sealing key"), 0o644)
	_ = os.WriteFile(other, []byte("another tenant's test"), 0o644)
	pgPort := s.pg.URL[strings.LastIndex(s.pg.URL, ":")+1:]
	pgPort, _, _ = strings.Cut(pgPort, "/")
	ports := []string{strconv.Itoa(canary.Addr().(*net.TCPAddr).Port), pgPort}
	v, _, err := s.runProject(ctx, files, map[string]string{"PROBE_SECRET_FILE": secret, "PROBE_OTHER_RUN": other,
		"PROBE_PORTS": strings.Join(ports, ",")}, 5*time.Minute)
	if err != nil {
		return nil, nil, err
	}
	if v.Suite == nil {
		return nil, nil, fmt.Errorf("the hostile project's run: %s %s", v.State, v.Error)
	}
	var names []string
	failed := map[string]error{}
	for _, c := range v.Suite.Children {
		var child struct {
			Project struct {
				Tests []struct {
					Titles []string `json:"titles"`
					Status string   `json:"status"`
					Error  string   `json:"error"`
				} `json:"tests"`
			} `json:"project"`
		}
		if err := s.call(ctx, "GET", "/v1/jobs/"+c.JobID, s.key, nil, http.StatusOK, &child); err != nil {
			return nil, nil, err
		}
		for _, t := range child.Project.Tests {
			n := strings.Join(t.Titles, " › ")
			names = append(names, n)
			if t.Status != "passed" {
				first, _, _ := strings.Cut(t.Error, "\n")
				failed[n] = errors.New(first)
			}
		}
	}
	if len(names) == 0 {
		return nil, nil, errors.New("the hostile project ran no probe")
	}
	return names, failed, nil
}

// peakMB is a process's peak resident memory.
func peakMB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.Fields(rest)[0])
			return kb >> 10
		}
	}
	return -1
}

// emptyEvents is a trace.zip whose trace holds n events of two bytes
// each ({}), compressed to a few kilobytes.
func emptyEvents(n int) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("test.trace")
	_, _ = w.Write([]byte(`{"type":"context-options","version":7}` + "\n"))
	w, _ = zw.Create("0-trace.trace")
	line := []byte("{}\n")
	for range n {
		_, _ = w.Write(line)
	}
	_ = zw.Close()
	return b.Bytes()
}

// millionTests is a runner's JSON report of 1,000,000 empty tests (3 MB,
// a few kilobytes zipped).
func millionTests() []byte {
	return []byte(`{"config":{"rootDir":"/ci"},"suites":[{"title":"a.spec.js","file":"a.spec.js","specs":[{"title":"t","tests":[` +
		strings.Repeat("{},", 999_999) + `{}]}]}]}`)
}

// tracesAnswered uploads a project of one test, waits for its listing,
// then uploads a customer's run of it: a report (the one given, else one
// whose passing test names the trace) and the trace. The dispatcher must
// answer, 200 or 400, within 20 s.
func (s *procStack) tracesAnswered(ctx context.Context, trace, report []byte) error {
	name, up, err := s.upload(ctx, map[string]string{"playwright.config.js": "module.exports = {};\n",
		"a.spec.js": "require('@playwright/test').test('t', async () => {});\n"})
	if err != nil {
		return err
	}
	if up.ListJob != "" { // else the same files were listed for another probe
		if _, _, err := s.wait(ctx, up.ListJob, 2*time.Minute); err != nil {
			return err
		}
	}
	if report == nil {
		report = []byte(`{"config":{"rootDir":"/ci"},"suites":[{"title":"a.spec.js","file":"a.spec.js","specs":[{"title":"t","file":"a.spec.js","line":1,"column":1,` +
			`"tests":[{"projectName":"","status":"expected","results":[{"status":"passed","attachments":[{"name":"trace","path":"/ci/test-results/t/trace.zip"}]}]}]}]}]}`)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("results.json")
	_, _ = w.Write(report)
	if trace != nil {
		w, _ = zw.Create("test-results/t/trace.zip")
		_, _ = w.Write(trace)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	start := time.Now()
	err = s.call(ctx, "POST", "/v1/projects/"+name+"/traces", s.key, api.ProjectTraces{Archive: b.Bytes()}, http.StatusOK, nil)
	if err != nil {
		err = s.call(ctx, "POST", "/v1/projects/"+name+"/traces", s.key, api.ProjectTraces{Archive: b.Bytes()}, http.StatusBadRequest, nil)
	}
	if took := time.Since(start); err == nil && took > 20*time.Second {
		return fmt.Errorf("the answer took %s", took.Round(time.Millisecond))
	}
	return err
}

// runShowsNothingOf is runShowsNothing of a project uploaded as an
// archive, with binary files beside its text ones: the run ends, and the
// worker with it.
func (s *procStack) runShowsNothingOf(ctx context.Context, files map[string]string, binary map[string][]byte) error {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for n, c := range files {
		w, _ := zw.Create(n)
		_, _ = w.Write([]byte(c))
	}
	for n, c := range binary {
		w, _ := zw.Create(n)
		_, _ = w.Write(c)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	uploads++
	name := fmt.Sprintf("probe-%d", uploads)
	var up api.ProjectView
	if err := s.call(ctx, "POST", "/v1/projects/"+name, s.key, map[string]any{"archive": b.Bytes()}, http.StatusCreated, &up); err != nil {
		return err
	}
	if _, _, err := s.wait(ctx, up.ListJob, 2*time.Minute); err != nil {
		return err
	}
	var run api.JobView
	if err := s.call(ctx, "POST", "/v1/projects/"+name+"/run", s.key, map[string]any{"base_url": s.demo.URL}, http.StatusAccepted, &run); err != nil {
		return err
	}
	if _, _, err := s.wait(ctx, run.ID, 3*time.Minute); err != nil {
		return err
	}
	if s.worker.ProcessState != nil {
		return errors.New("the worker died")
	}
	return nil
}

// repairSurvives uploads files and repairs them from nothing recorded:
// the repair ends (any way but with its worker), and the worker is alive.
func (s *procStack) repairSurvives(ctx context.Context, files map[string]string) error {
	name, up, err := s.upload(ctx, files)
	if err != nil {
		return err
	}
	if _, _, err := s.wait(ctx, up.ListJob, 2*time.Minute); err != nil {
		return err
	}
	var rep api.JobView
	if err := s.call(ctx, "POST", "/v1/projects/"+name+"/repair", s.key, map[string]any{"base_url": s.demo.URL}, http.StatusAccepted, &rep); err != nil {
		return err
	}
	v, _, err := s.wait(ctx, rep.ID, 5*time.Minute)
	switch {
	case err != nil:
		return err
	case s.worker.ProcessState != nil:
		return errors.New("the worker died")
	case strings.Contains(v.Error, "died"):
		return fmt.Errorf("the repair ended %s: %.120s", v.State, v.Error)
	}
	return nil
}
