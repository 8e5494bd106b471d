package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/sandbox"
)

// runDir makes a directory a run's user can reach (t.TempDir's parent is
// 0700).
func runDir(t *testing.T, name string) string {
	t.Helper()
	base, err := os.MkdirTemp("", "sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newSandbox(t *testing.T, lim sandbox.Limits) *sandbox.Sandbox {
	t.Helper()
	s, err := sandbox.New(sandbox.Config{Runner: browsertest.RunnerDir(), Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// probeResult is what testdata/probe.js reports.
type probeResult struct {
	Env             []string `json:"env"`
	InitEnviron     *string  `json:"init_environ"`
	HostSecret      *string  `json:"host_secret"`
	OtherRun        *string  `json:"other_run"`
	Root            []string `json:"work_dir_listing"`
	Passwd          *string  `json:"passwd"`
	Group           *string  `json:"group"`
	User            string   `json:"user"`
	WriteUsr        bool     `json:"write_usr"`
	WriteEtc        bool     `json:"write_etc"`
	WriteRunner     bool     `json:"write_runner"`
	WriteTmpPrivate bool     `json:"write_tmp_private"`
	WriteWork       bool     `json:"write_work"`
	Canary          bool     `json:"canary"`
	Proxy           string   `json:"proxy"`
	Fork            struct {
		Started int  `json:"started"`
		Refused bool `json:"refused"`
	} `json:"fork"`
}

// hostAccounts says whether an /etc/passwd or /etc/group a run read names
// any account but the run's own and nobody's.
func hostAccounts(file *string) bool {
	if file == nil {
		return false
	}
	for line := range strings.Lines(*file) {
		name, _, _ := strings.Cut(line, ":")
		if name = strings.TrimSpace(name); name != "" && name != "sandbox" && name != "nobody" && name != "nogroup" {
			return true
		}
	}
	return false
}

// TestAHostileSuiteGetsNothing runs code that tries every way out a
// hostile suite might: the worker's environment, the sandbox's PID 1
// environment, the worker's data directory, another run's files, NATS,
// Postgres or any loopback service, writing outside its directory, a
// fork bomb, and the host's accounts (/etc/passwd, /etc/group). Each gets
// nothing; the one way out, the job's egress proxy, works.
func TestAHostileSuiteGetsNothing(t *testing.T) {
	const secret = "sealing-key-0123456789abcdef"
	t.Setenv("WEBPILOT_SECRET_KEY", secret) // the worker's own environment
	t.Setenv("DATABASE_URL", "postgres://worker:"+secret+"@127.0.0.1/db")

	dataDir := runDir(t, "data")
	secretFile := filepath.Join(dataDir, "secret.key")
	if err := os.WriteFile(secretFile, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	other := runDir(t, "other-run")
	otherFile := filepath.Join(other, "spec.ts")
	if err := os.WriteFile(otherFile, []byte("another tenant's test"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A loopback service standing for NATS, Postgres and the rest.
	var hits atomic.Int32
	canary, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = canary.Close() })
	go func() {
		for {
			c, err := canary.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			_ = c.Close()
		}
	}()
	// The job's egress proxy (here one that answers every request).
	var proxied atomic.Value
	proxy := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Store(r.URL.String())
		fmt.Fprint(w, "via the egress proxy")
	})}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = proxy.Serve(pl) }()
	t.Cleanup(func() { _ = proxy.Close() })

	dir := runDir(t, "run")
	probe, err := os.ReadFile("testdata/probe.js")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "probe.js"), probe, 0o644); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("webpilot-escape-%d", time.Now().UnixNano())
	s := newSandbox(t, sandbox.Limits{Procs: 64, Wall: time.Minute})
	var out bytes.Buffer
	res, err := s.Run(context.Background(), sandbox.Run{Dir: dir, Egress: pl.Addr().String(), Stdout: &out, Stderr: &out,
		Env:  map[string]string{"GIVEN": "1"},
		Args: []string{"/usr/bin/node", "probe.js", fmt.Sprint(canary.Addr().(*net.TCPAddr).Port), secretFile, otherFile, marker}})
	if err != nil {
		t.Fatal(err)
	}
	_, line, ok := strings.Cut(out.String(), "PROBE ")
	if !ok || res.ExitCode != 0 {
		t.Fatalf("the probe did not report (exit %d):\n%s", res.ExitCode, out.String())
	}
	var p probeResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(line)), &p); err != nil {
		t.Fatalf("probe output: %v\n%s", err, line)
	}
	escapes := map[string]bool{
		"the worker's environment":         slices.ContainsFunc(p.Env, func(k string) bool { return k != "PATH" && k != "HOME" && k != "PWD" && k != "GIVEN" }),
		"PID 1's environment":              p.InitEnviron != nil && (strings.Contains(*p.InitEnviron, secret) || strings.Contains(*p.InitEnviron, "DATABASE_URL")),
		"the worker's data directory":      p.HostSecret != nil,
		"another run's files":              p.OtherRun != nil,
		"a loopback service (NATS, PG, …)": p.Canary || hits.Load() > 0,
		"writing /usr":                     p.WriteUsr,
		"writing /etc":                     p.WriteEtc,
		"writing the runner":               p.WriteRunner,
		"a fork bomb":                      !p.Fork.Refused || p.Fork.Started >= 64,
		"the host's accounts":              hostAccounts(p.Passwd) || hostAccounts(p.Group),
	}
	for what, got := range escapes {
		if got {
			t.Errorf("the sandbox let %s through: %+v", what, p)
		}
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), marker)); err == nil {
		t.Error("a file written in the sandbox's /tmp appeared in the host's")
	}
	if p.User != "sandbox" {
		t.Errorf("the run's user has no name of its own: %q", p.User)
	}
	if !p.WriteWork || !p.WriteTmpPrivate {
		t.Errorf("the run could not write its own directory or /tmp: %+v", p)
	}
	if p.Proxy != "via the egress proxy" || proxied.Load() != "http://app.test/through-proxy" {
		t.Errorf("the egress proxy was not reachable: %q (proxy saw %v)", p.Proxy, proxied.Load())
	}
	for _, d := range p.Root {
		if d == "root" || d == "home" || d == "var" || d == "srv" || d == "opt" {
			t.Errorf("the sandbox's root shows the host's /%s: %v", d, p.Root)
		}
	}
}

// TestARunIsBoundedInTime: a run past its wall time is killed, whatever
// it started.
// TestARunnerBehindAPrivateDirectoryStillRuns: a checkout in a directory
// only its owner may enter (root's 0700 home) holds the runner; a root
// worker's runs, each under a uid of its own, still reach a runner (a
// copy every uid enters) and read it.
func TestARunnerBehindAPrivateDirectoryStillRuns(t *testing.T) {
	// Not in parallel: its run's uid is not to be another test's while
	// that one counts its processes against its limit.
	if os.Geteuid() != 0 {
		t.Skip("runs share the worker's uid unless it is root: a private directory of its own is no obstacle")
	}
	home := filepath.Join(t.TempDir(), "root-home")
	checkout := filepath.Join(home, "webpilot", ".cache", "pwtest")
	if err := os.MkdirAll(filepath.Dir(checkout), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", browsertest.RunnerDir(), checkout).CombinedOutput(); err != nil {
		t.Fatalf("copy the runner: %v: %s", err, out)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := sandbox.New(sandbox.Config{Runner: checkout})
	if err != nil {
		t.Fatal(err)
	}
	dir := runDir(t, "run")
	res, err := s.Run(context.Background(), sandbox.Run{Dir: dir, Args: []string{"/bin/sh", "-c",
		"cat " + sandbox.RunnerDir + "/node_modules/@playwright/test/package.json > " + sandbox.WorkDir + "/seen.json"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("the run: %+v %v", res, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "seen.json"))
	if err != nil || !strings.Contains(string(b), `"name": "@playwright/test"`) {
		t.Fatalf("the run read %q (%v), want the runner's package.json", b, err)
	}
	if s.Runner() == checkout {
		t.Fatalf("the runs bind %s, which their users cannot reach", checkout)
	}
}

// TestWhatADeadWorkersRunLeftRunningIsReaped: a worker killed during a
// run leaves the run's processes behind under the run's uid (nothing else
// ends them); the next run that leases the uid kills them first, so they
// neither go on using the machine nor count against its process limit.
func TestWhatADeadWorkersRunLeftRunningIsReaped(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs get their own host uid only when the worker is root")
	}
	const first = 63000 // a range of its own: the lease tries first+1 first
	orphan := exec.Command("sleep", "300")
	orphan.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: first + 1, Gid: first + 1}}
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orphan.Process.Kill() })
	ended := make(chan error, 1)
	go func() { ended <- orphan.Wait() }()
	s, err := sandbox.New(sandbox.Config{Runner: browsertest.RunnerDir(), FirstUID: first})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.Run(context.Background(), sandbox.Run{Dir: runDir(t, "run"), Args: []string{"/bin/true"}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("the run: %+v %v", res, err)
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the process a dead worker's run left under the uid is still running after the next run leased it")
	}
}

func TestARunIsBoundedInTime(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, sandbox.Limits{Wall: 2 * time.Second})
	start := time.Now()
	res, err := s.Run(context.Background(), sandbox.Run{Dir: runDir(t, "run"),
		Args: []string{"/bin/sh", "-c", "sleep 60 & sleep 60"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Limit != "time" || time.Since(start) > 15*time.Second {
		t.Fatalf("result %+v after %s, want the time limit at about 2 s", res, time.Since(start))
	}
}

// TestRunsOfDifferentWorkersDoNotShareTheProcessLimit runs two workers'
// sandboxes (two Sandbox values, as two worker processes on one host have)
// at once, each run holding most of its process limit: each gets all of
// its own, where runs sharing a host uid would share one limit and one of
// them could not start a process (or Chromium a thread).
func TestRunsOfDifferentWorkersDoNotShareTheProcessLimit(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("runs get their own host uid only when the worker is root")
	}
	const procs, held = 40, 25
	script := fmt.Sprintf(`n=0; for i in $(seq %d); do sleep 4 & n=$((n+1)); done; echo started $n; wait`, held)
	type outcome struct {
		res sandbox.Result
		out string
		err error
	}
	done := make(chan outcome, 2)
	for i := range 2 {
		s := newSandbox(t, sandbox.Limits{Procs: procs})
		dir := runDir(t, fmt.Sprintf("worker-%d", i))
		go func() {
			var out bytes.Buffer
			res, err := s.Run(context.Background(), sandbox.Run{Dir: dir,
				Args: []string{"/bin/sh", "-c", script}, Stdout: &out, Stderr: &out})
			done <- outcome{res, out.String(), err}
		}()
	}
	for range 2 {
		o := <-done
		if o.err != nil || o.res.ExitCode != 0 || !strings.Contains(o.out, fmt.Sprintf("started %d", held)) {
			t.Errorf("a run holding %d of its %d processes: %+v, %v, output %q", held, procs, o.res, o.err, o.out)
		}
	}
}

// TestARunYieldsToTheWorker: a run's processes are scheduled RunNice
// below the worker's own (they yield it the CPU); with EqualPriority, at
// the caller's.
func TestARunYieldsToTheWorker(t *testing.T) {
	t.Parallel()
	own := syscallNice(t)
	for _, c := range []struct {
		equal bool
		want  int
	}{{false, own + sandbox.RunNice}, {true, own}} {
		s, err := sandbox.New(sandbox.Config{Runner: browsertest.RunnerDir(), EqualPriority: c.equal})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		dir := runDir(t, "nice")
		res, err := s.Run(context.Background(), sandbox.Run{Dir: dir, Stdout: &out, Stderr: &out,
			Args: []string{"/usr/bin/node", "-e", "const s = require('fs').readFileSync('/proc/self/stat', 'utf8'); console.log(s.slice(s.lastIndexOf(')') + 2).split(' ')[16])"}})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%v %+v: %s", err, res, out.String())
		}
		if got := strings.TrimSpace(out.String()); got != strconv.Itoa(c.want) {
			t.Errorf("equal priority %v: the run's nice is %s, want %d", c.equal, got, c.want)
		}
	}
}

// syscallNice is this process's nice value.
func syscallNice(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	n, err := strconv.Atoi(strings.Fields(s[strings.LastIndexByte(s, ')')+2:])[16])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
