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
