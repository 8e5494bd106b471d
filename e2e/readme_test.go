package e2e

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webpilot/webpilot/e2e/chaos"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/store/storetest"
	"github.com/webpilot/webpilot/internal/testslot"
)

// readmeSection is the fenced blocks of a README section, by language.
func readmeSection(t *testing.T, readme, heading string) map[string][]string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("the README has no section %q", heading)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	out := map[string][]string{}
	for _, m := range regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```").FindAllStringSubmatch(rest, -1) {
		out[m[1]] = append(out[m[1]], m[2])
	}
	return out
}

// TestTheREADMEsManualPathRunsAsWritten runs the README's own lines, in a
// checkout laid out as make leaves one, with nothing of the test's
// environment: start it, a first scenario, a first project repair. What a
// reader does between the lines is done for them and said here: make setup
// build is the test's own build, the database is a fresh one of the test's
// cluster, the ids the CLI prints are read from what it printed, and each
// server started in the background is waited for before the next line.
func TestTheREADMEsManualPathRunsAsWritten(t *testing.T) {
	t.Parallel()
	testslot.Take(t)
	raw, err := os.ReadFile("../README.md")
	must(t, err)
	readme := string(raw)
	start := readmeSection(t, readme, "Start it")["sh"]
	scenario := readmeSection(t, readme, "A first scenario")
	project := readmeSection(t, readme, "A first project repair")["sh"]
	if len(start) == 0 || len(scenario["text"]) == 0 || len(scenario["sh"]) == 0 || len(project) == 0 {
		t.Fatal("the README's manual path has lost a block")
	}

	checkout := t.TempDir()
	for _, name := range []string{"dispatcher", "worker", "webpilot", "demoapp"} {
		if _, err := chaos.Build(context.Background(), checkout, name, filepath.Dir(browsertest.DriverDir())); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.CopyFS(filepath.Join(checkout, "examples"), os.DirFS("../examples")))
	must(t, os.WriteFile(filepath.Join(checkout, "signin.txt"), []byte(scenario["text"][0]), 0o644))

	ready := func(url string) string {
		return fmt.Sprintf("for i in $(seq 100); do curl -sf -o /dev/null %s && break; sleep 0.2; done", url)
	}
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for _, line := range strings.Split(strings.Join(append(append(start, scenario["sh"][0]), project[0]), ""), "\n") {
		code, _, _ := strings.Cut(line, "  #")
		code = strings.TrimSpace(code)
		switch {
		case code == "":
			continue
		case strings.HasPrefix(code, "make setup build"):
			continue // the binaries are built above, the driver linked
		case strings.HasPrefix(code, "export DATABASE_URL="):
			code = "export DATABASE_URL='" + storetest.URL(t) + "'"
		case strings.HasPrefix(code, "bin/webpilot tenant create"):
			code += " | tee tenant.out"
		case strings.HasPrefix(code, "export WEBPILOT_API_KEY="):
			code = "export WEBPILOT_API_KEY=$(awk '/^api_key:/ {print $2}' tenant.out)"
		case strings.HasPrefix(code, "bin/webpilot submit"):
			code += " | tee submit.out"
		}
		code = strings.ReplaceAll(code, "TENANT_ID", "$(awk '/^tenant_id:/ {print $2}' tenant.out)")
		code = strings.ReplaceAll(code, "JOB_ID", "$(awk '/^submitted job/ {print $3}' submit.out)")
		fmt.Fprintf(&script, "echo '+ %s'\n%s\n", strings.ReplaceAll(line, "'", `'\''`), code)
		switch {
		case strings.HasPrefix(code, "bin/dispatcher &"):
			script.WriteString(ready("http://127.0.0.1:8080/healthz") + "\n")
		case strings.HasPrefix(code, "bin/demoapp"):
			addr := "127.0.0.1:8090"
			if m := regexp.MustCompile(`-addr (\S+)`).FindStringSubmatch(code); m != nil {
				addr = m[1]
			}
			script.WriteString(ready("http://"+addr+"/login") + "\n")
		}
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = checkout
	// Nothing of the test's environment but what a shell has.
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A file, not a pipe: the servers it leaves running hold its output
	// open, and Wait would wait for them.
	log, err := os.Create(filepath.Join(t.TempDir(), "readme.log"))
	must(t, err)
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	must(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The servers it started in the background end with it.
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) })
	select {
	case err = <-done:
	case <-time.After(8 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = fmt.Errorf("still running after 8 minutes")
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	b, _ := os.ReadFile(log.Name())
	text := string(b)
	if err != nil {
		t.Fatalf("the README's path, as written: %v\n%s", err, text)
	}
	spec, err := os.ReadFile(filepath.Join(checkout, "signin.spec.ts"))
	if err != nil || !strings.Contains(string(spec), "process.env.PASSWORD") || !strings.Contains(string(spec), "test(") {
		t.Errorf("the first scenario's spec (%v):\n%s\n%s", err, spec, text)
	}
	var ju junitReport
	if b, err := os.ReadFile(filepath.Join(checkout, "junit.xml")); err != nil || xml.Unmarshal(b, &ju) != nil || ju.Tests != 3 || ju.Failures != 0 {
		t.Errorf("the first run's junit report (%v): %+v\n%s", err, ju, text)
	}
	healed, err := os.ReadFile(filepath.Join(checkout, "my-e2e", "pages", "ShoppingList.ts"))
	if err != nil || !strings.Contains(string(healed), "add-entry-btn") || !strings.Contains(text, "wrote the verified patch") {
		t.Errorf("the first repair's patch, applied (%v):\n%s\n%s", err, healed, text)
	}
}
