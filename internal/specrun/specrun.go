// Package specrun runs a generated spec under the real @playwright/test
// runner: a repair proposes a new version only after its spec passed there.
// The spec is webpilot's own output (commands are data; every string in it
// is escaped by the emitter), never code a model or a page wrote.
package specrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/chromium"
)

// Runner is an installation of @playwright/test and the Chromium it drives.
type Runner struct {
	// Dir holds node_modules/@playwright/test (make setup installs it).
	Dir string
	// Chromium is the browser executable; default chromium.HeadlessShell.
	Chromium string
	// Timeout bounds one run; default 3 minutes.
	Timeout time.Duration
}

// Proxy sends the runner's browser through the worker's egress guard.
type Proxy struct {
	Server, Username, Password string
}

// Options are one run's environment.
type Options struct {
	// Env adds variables (the secrets the spec reads from process.env);
	// they are never written to disk.
	Env   map[string]string
	Proxy *Proxy
	// JSON makes the runner print its JSON report (see RunReport).
	JSON bool
	// Repeat runs each test this many times in a row, each on a freshly
	// loaded page (0 and 1: once): a spec that passes only once, on a
	// page the job left warm, is caught.
	Repeat int
}

// ErrNotInstalled means the runner is missing.
var ErrNotInstalled = errors.New("@playwright/test is not installed")

// config is a run's own; its outputDir is the run's directory's (by
// default it is the runner's package directory's, shared by every run, and
// each run clears it as it starts).
const config = `import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: '.',
  outputDir: './test-results',
  timeout: 60000,
  retries: 0,
  reporter: 'line',
  use: {
    launchOptions: { executablePath: %s, args: %s },%s
  },
});
`

func (r Runner) cli() string {
	return filepath.Join(r.Dir, "node_modules", "@playwright", "test", "cli.js")
}

// Available reports whether the runner is installed.
func (r Runner) Available() error {
	if _, err := os.Stat(r.cli()); err != nil {
		return fmt.Errorf("%w in %s (run make setup): %v", ErrNotInstalled, r.Dir, err)
	}
	return nil
}

// Run runs spec and returns the runner's output; a failing spec is an error.
func (r Runner) Run(ctx context.Context, spec string, o Options) (string, error) {
	if err := r.Available(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(r.Dir, "runs"), 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(filepath.Join(r.Dir, "runs"), "spec-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	exe := r.Chromium
	if exe == "" {
		exe = chromium.HeadlessShell
	}
	// The one definition of the browser's flags (WebRTC only through the
	// proxy among them), as the worker's own browser is started.
	flags, _ := json.Marshal(chromium.Args())
	chromiumArgs := string(flags)
	proxy := ""
	if p := o.Proxy; p != nil {
		// Credentials come from the environment, not the file.
		proxy = fmt.Sprintf("\n    proxy: { server: %s, username: process.env.WEBPILOT_PROXY_USER, password: process.env.WEBPILOT_PROXY_PASSWORD },",
			strconv.Quote(p.Server))
	}
	if err := os.WriteFile(filepath.Join(dir, "playwright.config.ts"), []byte(fmt.Sprintf(config, strconv.Quote(exe), chromiumArgs, proxy)), 0o600); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "generated.spec.ts"), []byte(spec), 0o600); err != nil {
		return "", err
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := []string{r.cli(), "test", "--config", filepath.Join(dir, "playwright.config.ts")}
	if o.JSON {
		args = append(args, "--reporter=json")
	}
	if o.Repeat > 1 {
		args = append(args, "--repeat-each="+strconv.Itoa(o.Repeat), "--workers=1")
	}
	// The runner's Chromium runs no higher than the worker (as root it
	// would raise its threads to nice -8).
	line := append(chromium.Unraised(), "node")
	cmd := exec.CommandContext(ctx, line[0], append(line[1:], args...)...)
	cmd.Dir = dir
	// The runner gets what it needs, never the worker's environment (its
	// database, queue and model credentials).
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "CI=1"}
	if p := o.Proxy; p != nil {
		cmd.Env = append(cmd.Env, "WEBPILOT_PROXY_USER="+p.Username, "WEBPILOT_PROXY_PASSWORD="+p.Password)
	}
	for k, v := range o.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out []byte
	if o.JSON {
		out, err = cmd.Output() // the report alone; the runner's own messages go to stderr
	} else {
		out, err = cmd.CombinedOutput()
	}
	if err != nil {
		return string(out), fmt.Errorf("the spec fails under @playwright/test: %w", err)
	}
	return string(out), nil
}

// TestResult is how one test of a spec fared.
type TestResult struct {
	// Title is the test's describe titles and its own, space-separated.
	Title  string `json:"title"`
	Status string `json:"status"` // passed, failed, timedOut, skipped, interrupted
	Error  string `json:"error,omitempty"`
	// Line is where in the spec file the test failed (0 when it passed).
	Line int `json:"line,omitempty"`
	// Duration is the test's time as the runner reports it; Body is that
	// without its hooks and fixtures (opening the browser context and page).
	Duration time.Duration `json:"duration_ns,omitempty"`
	Body     time.Duration `json:"body_ns,omitempty"`
}

// RunReport runs spec and reports each of its tests. A spec whose tests
// fail is not an error here: their results say so.
func (r Runner) RunReport(ctx context.Context, spec string, o Options) ([]TestResult, error) {
	o.JSON = true
	out, runErr := r.Run(ctx, spec, o)
	var rep struct {
		Suites []jsonSuite `json:"suites"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		if runErr != nil {
			return nil, fmt.Errorf("%w: %s", runErr, lastBytes(out, 2000))
		}
		return nil, fmt.Errorf("read the runner's report: %w", err)
	}
	var results []TestResult
	for _, s := range rep.Suites {
		s.collect("", &results)
	}
	if len(results) == 0 && len(rep.Errors) > 0 {
		return nil, fmt.Errorf("the spec did not load: %s", rep.Errors[0].Message)
	}
	return results, nil
}

type jsonSuite struct {
	Title  string      `json:"title"`
	File   string      `json:"file"`
	Specs  []jsonSpec  `json:"specs"`
	Suites []jsonSuite `json:"suites"`
}

type jsonSpec struct {
	Title string `json:"title"`
	Tests []struct {
		Results []struct {
			Status   string  `json:"status"`
			Duration float64 `json:"duration"` // ms
			Steps    []struct {
				Title    string  `json:"title"`
				Duration float64 `json:"duration"`
			} `json:"steps"`
			Errors []struct {
				Message  string `json:"message"`
				Location *struct {
					File string `json:"file"`
					Line int    `json:"line"`
				} `json:"location"`
			} `json:"errors"`
		} `json:"results"`
	} `json:"tests"`
}

func (s jsonSuite) collect(prefix string, out *[]TestResult) {
	title := prefix
	if s.Title != "" && s.Title != s.File && !strings.HasSuffix(s.Title, ".ts") {
		title = strings.TrimSpace(prefix + " " + s.Title)
	}
	for _, sp := range s.Specs {
		t := TestResult{Title: strings.TrimSpace(title + " " + sp.Title)}
		for _, tt := range sp.Tests {
			for _, res := range tt.Results {
				t.Status = res.Status
				t.Duration = time.Duration(res.Duration * float64(time.Millisecond))
				t.Body = t.Duration
				for _, st := range res.Steps {
					if st.Title == "Before Hooks" || st.Title == "After Hooks" {
						t.Body -= time.Duration(st.Duration * float64(time.Millisecond))
					}
				}
				for _, e := range res.Errors {
					if t.Error == "" {
						t.Error = stripANSI(e.Message)
					}
					if e.Location != nil && t.Line == 0 && strings.HasSuffix(e.Location.File, "generated.spec.ts") {
						t.Line = e.Location.Line
					}
				}
			}
		}
		*out = append(*out, t)
	}
	for _, c := range s.Suites {
		c.collect(title, out)
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
