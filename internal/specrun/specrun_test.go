package specrun_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/specrun"
)

// TestConcurrentRunsDoNotShareOutput: runs of the one installed runner at
// the same time (a worker verifying several repairs) each keep their own
// output; they once shared the runner's test-results directory, which each
// run clears as it starts, and a run failed with ENOENT at its browser's
// launch.
func TestConcurrentRunsDoNotShareOutput(t *testing.T) {
	t.Parallel()
	r := specrun.Runner{Dir: browsertest.RunnerDir(), Chromium: os.Getenv("WEBPILOT_CHROMIUM")}
	if err := r.Available(); err != nil {
		t.Fatal(err)
	}
	// The cause, checked directly (the race itself needs a loaded machine
	// to show): no run writes into the runner's own directory.
	shared := filepath.Join(r.Dir, "test-results")
	_ = os.RemoveAll(shared)
	const runs = 6
	var wg sync.WaitGroup
	errs := make([]error, runs)
	outs := make([]string, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Staggered, so that runs start while others launch browsers.
			time.Sleep(time.Duration(i) * 500 * time.Millisecond)
			spec := fmt.Sprintf(`import { test, expect } from '@playwright/test';
test('run %d', async ({ page }) => {
  await page.setContent('<h1>run %d</h1>');
  await page.waitForTimeout(%d);
  await expect(page.getByRole('heading')).toHaveText('run %d');
});
`, i, i, 2500, i)
			outs[i], errs[i] = r.Run(context.Background(), spec, specrun.Options{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("run %d: %v\n%s", i, err, outs[i])
		}
	}
	if _, err := os.Stat(shared); err == nil {
		t.Errorf("runs wrote their output into the shared %s", shared)
	}
}

// TestARunsChromiumNeverRunsAboveTheWorker: as root, the runner's Chromium
// raised its UI and compositor threads to nice -8, above the worker that
// verifies the spec. A spec that has rendered a page reads the nice value
// of every thread of the Chromium processes beneath its own worker.
func TestARunsChromiumNeverRunsAboveTheWorker(t *testing.T) {
	t.Parallel()
	r := specrun.Runner{Dir: browsertest.RunnerDir(), Chromium: os.Getenv("WEBPILOT_CHROMIUM")}
	spec := `import { test, expect } from '@playwright/test';
import * as fs from 'fs';

const stat = (p: string) => { const s = fs.readFileSync(p, 'utf8'); return s.slice(s.lastIndexOf(')') + 2).split(' '); };

test('no thread above nice 0', async ({ page }) => {
  await page.setContent('<h1>rendered</h1>');
  await page.screenshot();
  const parent = new Map<string, string>();
  for (const p of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try { parent.set(p, stat('/proc/' + p + '/stat')[1]); } catch {}
  }
  const beneath = (p: string) => { for (let q = parent.get(p); q && q !== '1'; q = parent.get(q)) if (q === String(process.pid)) return true; return false; };
  const raised: string[] = [];
  let threads = 0;
  for (const p of parent.keys()) {
    let comm = '';
    try { comm = fs.readFileSync('/proc/' + p + '/comm', 'utf8'); } catch {}
    if (!beneath(p) || !comm.startsWith('chrom')) continue;
    for (const task of fs.readdirSync('/proc/' + p + '/task')) {
      try {
        threads++;
        const nice = Number(stat('/proc/' + p + '/task/' + task + '/stat')[16]);
        if (nice < 0) raised.push(p + '/' + task + ' at ' + nice);
      } catch {}
    }
  }
  expect(threads).toBeGreaterThan(0);
  expect(raised).toEqual([]);
});
`
	if out, err := r.Run(context.Background(), spec, specrun.Options{}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestTheRunnerHoldsNoWorkerSecretAndItsBrowserNoDirectUDP: a spec's run
// was handed the worker's whole environment (its database, queue and
// model credentials) and started Chromium without the WebRTC switches the
// worker's own browser needs to keep STUN inside the proxy. It gets only
// what it needs and the secrets it is given, and its browser the one set
// of flags.
func TestTheRunnerHoldsNoWorkerSecretAndItsBrowserNoDirectUDP(t *testing.T) {
	t.Setenv("WEBPILOT_WORKER_ONLY", "database-password")
	r := specrun.Runner{Dir: browsertest.RunnerDir(), Chromium: os.Getenv("WEBPILOT_CHROMIUM")}
	if err := r.Available(); err != nil {
		t.Fatal(err)
	}
	spec := `import { test, expect } from '@playwright/test';
import { execSync } from 'child_process';
test('holds nothing of the worker', async ({ page }) => {
  expect(process.env.WEBPILOT_WORKER_ONLY).toBeUndefined();
  expect(process.env.GIVEN).toBe('to the spec');
  await page.setContent('<p>x</p>');
  const browsers = execSync('ps -o args= --ppid ' + process.pid).toString();
  expect(browsers).toContain('--force-webrtc-ip-handling-policy=disable_non_proxied_udp');
  expect(browsers).toContain('--webrtc-ip-handling-policy=disable_non_proxied_udp');
});
`
	if out, err := r.Run(context.Background(), spec, specrun.Options{Env: map[string]string{"GIVEN": "to the spec"}}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
