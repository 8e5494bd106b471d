package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/sandbox"
	"github.com/webpilot/webpilot/internal/testslot"
)

// memAvailable is the host's available memory, bytes.
func memAvailable(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no MemAvailable")
	return 0
}

// twice runs a node script in two processes at once.
const twice = `const { spawn } = require('child_process');
if (process.argv[2] === 'child') { %s } else {
  for (const i of [1, 2]) spawn(process.execPath, [__filename, 'child'], { stdio: 'inherit' });
}
`

func script(body string) string { return strings.Replace(twice, "%s", body, 1) }

// TestARunIsBoundedAsAWhole: each process had its limits, but two of them
// took 7.2 GB together (here two try for 4 GiB), 4 GB went into the run's directory, 20,000 files
// and unbounded CPU all went through. The run is now stopped at the first
// budget its processes pass together, and says which.
func TestARunIsBoundedAsAWhole(t *testing.T) {
	t.Parallel()
	// Gigabytes filled page by page: on a busy machine the filling, not
	// the watchdog, took 44 s of the memory case's 30.
	testslot.Take(t)
	for _, c := range []struct {
		name   string
		lim    sandbox.Limits
		body   string
		limit  string
		within time.Duration
	}{
		// Each 32 MiB filled is a "+" on stdout: on a loaded machine the
		// filling alone took over 30 s, so the memory case's bound is from
		// the last one, the watchdog's own delay.
		{"four GiB in two processes", sandbox.Limits{}, `const held = [];
  const grow = () => { held.push(Buffer.alloc(32 << 20, 1)); process.stdout.write('+'); if (held.length < 64) setTimeout(grow, 25); else setTimeout(() => {}, 60000); };
  grow();`, "memory", 10 * time.Second},
		{"a directory filled", sandbox.Limits{Disk: 64 << 20}, `const fs = require('fs');
  for (let i = 0; i < 100; i++) fs.writeFileSync('/work/fill-' + process.pid + '-' + i, Buffer.alloc(1 << 20, 1));
  setTimeout(() => {}, 60000);`, "disk", 20 * time.Second},
		// Deleted but held open, a file is in no directory the walk reads:
		// 3 GB went that way, not stopped.
		{"a file deleted but held open", sandbox.Limits{Disk: 64 << 20}, `const fs = require('fs');
  const name = '/work/held-' + process.pid; const fd = fs.openSync(name, 'w'); fs.unlinkSync(name);
  for (let i = 0; i < 100; i++) fs.writeSync(fd, Buffer.alloc(1 << 20, 1));
  setTimeout(() => {}, 60000);`, "disk", 20 * time.Second},
		{"files by the thousand", sandbox.Limits{Files: 500}, `const fs = require('fs');
  for (let i = 0; i < 2000; i++) fs.writeFileSync('/tmp/f-' + process.pid + '-' + i, '');
  setTimeout(() => {}, 60000);`, "files", 20 * time.Second},
		{"CPU in two processes", sandbox.Limits{TotalCPU: 2 * time.Second}, `for (;;) {}`, "cpu", 20 * time.Second},
		// Short-lived processes, each reaped and gone before a sample sees
		// it: their time is their reapers' (cutime), all in the run.
		{"CPU in processes gone before a sample", sandbox.Limits{TotalCPU: 3 * time.Second}, `const { spawnSync } = require('child_process');
  for (let i = 0; i < 200; i++) spawnSync('/bin/sh', ['-c', '(' + process.execPath + ' -e "const e = Date.now() + 150; while (Date.now() < e) {}" &) ; exit 0']);
  setTimeout(() => {}, 60000);`, "cpu", 40 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := runDir(t, "budget")
			if err := os.WriteFile(dir+"/run.js", []byte(script(c.body)), 0o644); err != nil {
				t.Fatal(err)
			}
			c.lim.Wall = time.Minute
			s := newSandbox(t, c.lim)
			before := memAvailable(t)
			lowest := before
			var mu sync.Mutex
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond):
						a := memAvailable(t)
						mu.Lock()
						lowest = min(lowest, a)
						mu.Unlock()
					}
				}
			}()
			out := &stamped{}
			start := time.Now()
			res, err := s.Run(context.Background(), sandbox.Run{Dir: dir, Stdout: out, Stderr: out,
				Args: []string{"/usr/bin/node", "run.js"}})
			took := time.Since(start)
			if last := out.last(); c.limit == "memory" && !last.IsZero() {
				took = time.Since(last)
			}
			close(stop)
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s after %s (%s); peak memory %d MiB; the host's available memory fell by %d MiB at most",
				res.Limit, took.Round(time.Millisecond), res.Reason, res.PeakMemory>>20, (before-lowest)>>20)
			if res.Limit != c.limit || res.Reason == "" {
				t.Fatalf("the run ended %+v (exit %d), want stopped at its %s budget:\n%s", res, res.ExitCode, c.limit, out.String())
			}
			if took > c.within {
				t.Errorf("stopped after %s", took)
			}
			if c.limit == "memory" {
				budget := int64(sandbox.DefaultMemoryBudget)
				// (Measured every 100 ms: a sample may land a little past
				// the budget on a busy machine.)
				if res.PeakMemory > budget+budget/16 {
					t.Errorf("the run held %d MiB, over its %d MiB budget", res.PeakMemory>>20, budget>>20)
				}
				// The host's available memory moves with everything else
				// the machine runs (other tests, a bench beside them: 985
				// MiB once): half of the 2 GiB more that the run would
				// have taken unbounded (4 GiB) is left for that, so a cap
				// that counted one of the two processes still fails here.
				if fell := before - lowest; fell > budget+(4<<30-budget)/2 {
					t.Errorf("the host's available memory fell by %d MiB, more than the %d MiB budget", fell>>20, budget>>20)
				}
			}
		})
	}
}

// stamped keeps a run's output and when its last "+" came.
type stamped struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	plus time.Time
}

func (s *stamped) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Contains(p, []byte("+")) {
		s.plus = time.Now()
	}
	return s.buf.Write(p)
}

func (s *stamped) last() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.plus
}

func (s *stamped) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// TestPagesProcessesShareCountOnce: a browser's processes share most of
// their pages (its libraries), which each one's resident size counts in
// full. Under load, a run whose processes started at once was stopped at
// "1.2 GiB of a 2 GiB budget" from resident sizes and their growth. Eight
// node processes, 320 MB resident together and 80 MB in their own
// shares, run to their end within a 256 MiB budget.
func TestPagesProcessesShareCountOnce(t *testing.T) {
	t.Parallel()
	dir := runDir(t, "shared")
	body := `const { spawn } = require('child_process');
if (process.argv[2] === 'child') { setTimeout(() => {}, 3000); } else {
  for (let i = 0; i < 8; i++) spawn(process.execPath, [__filename, 'child'], { stdio: 'inherit' });
}
`
	if err := os.WriteFile(dir+"/run.js", []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, sandbox.Limits{Wall: time.Minute, MemoryBudget: 256 << 20})
	var out bytes.Buffer
	res, err := s.Run(context.Background(), sandbox.Run{Dir: dir, Stdout: &out, Stderr: &out, Args: []string{"/usr/bin/node", "run.js"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Limit != "" || res.ExitCode != 0 {
		t.Fatalf("stopped: %+v\n%s", res, out.String())
	}
}
