package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/webpilot/webpilot/internal/specrun"
)

// RunnerDir is where make setup installs @playwright/test.
func RunnerDir() string {
	if d := os.Getenv("WEBPILOT_SPEC_RUNNER"); d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(DriverDir()), "pwtest")
}

// RunSpec runs a generated spec under the real @playwright/test runner with
// env added to the environment, and returns the runner's output and error.
func RunSpec(ctx context.Context, spec string, env map[string]string) (string, error) {
	return specrun.Runner{Dir: RunnerDir(), Chromium: os.Getenv("WEBPILOT_CHROMIUM")}.Run(ctx, spec, specrun.Options{Env: env})
}

// Untimed is spec without the timeouts a job writes for the commands that
// took longer than the runner's default allows ({ timeout: 13000 }): how
// long a command took depends on the machine's load, and a test that
// checks a spec's lines checks what they do, not the machine.
func Untimed(spec string) string {
	spec = timeoutAlone.ReplaceAllString(spec, "()")
	spec = timeoutLast.ReplaceAllString(spec, ")")
	return timeoutInside.ReplaceAllString(spec, " }")
}

var (
	timeoutAlone  = regexp.MustCompile(`\(\{ timeout: \d+ \}\)`)
	timeoutLast   = regexp.MustCompile(`, \{ timeout: \d+ \}\)`)
	timeoutInside = regexp.MustCompile(`, timeout: \d+ \}`)
)

var passed sync.Map // scripts that already passed in this test binary, and how many times in a row

// MustPassSpec fails the test unless spec passes under @playwright/test.
// Every test that gets a succeeded job's spec calls it: a succeeded job's
// spec must pass where the job passed. A script that passed once is not
// run again.
func MustPassSpec(t testing.TB, spec string, env map[string]string) {
	t.Helper()
	mustPass(t, spec, env, 1)
}

// MustPassSpecTwice is MustPassSpec with the spec run twice in a row, each
// run on a freshly loaded page: what every job through the whole stack
// must hold to (a spec that passes only on a page the job left warm is
// caught).
func MustPassSpecTwice(t testing.TB, spec string, env map[string]string) {
	t.Helper()
	mustPass(t, spec, env, 2)
}

func mustPass(t testing.TB, spec string, env map[string]string, times int) {
	t.Helper()
	if n, ok := passed.Load(spec); ok && n.(int) >= times {
		return
	}
	out, err := specrun.Runner{Dir: RunnerDir(), Chromium: os.Getenv("WEBPILOT_CHROMIUM")}.Run(context.Background(), spec,
		specrun.Options{Env: env, Repeat: times})
	if err != nil {
		t.Fatalf("generated spec fails under @playwright/test (run %d times): %v\n%s\n%s", times, err, out, spec)
	}
	passed.Store(spec, times)
}

// RunReport runs a spec under @playwright/test and reports each test.
func RunReport(ctx context.Context, spec string, env map[string]string) ([]specrun.TestResult, error) {
	return specrun.Runner{Dir: RunnerDir(), Chromium: os.Getenv("WEBPILOT_CHROMIUM")}.RunReport(ctx, spec, specrun.Options{Env: env})
}

// AxeSource is axe-core's script as make setup installs it beside the runner.
func AxeSource(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(RunnerDir(), "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("browsertest: axe-core is not installed (run make setup): %v", err)
	}
	return string(b)
}
