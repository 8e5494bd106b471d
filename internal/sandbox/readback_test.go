package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/sandbox"
)

// TestWhatARunLeavesIsReadOnlyAsARegularFileInsideIt: a run's code can
// replace any file the host reads afterwards (the runner's report, a
// trace) with a link to /dev/zero or to the worker's own environment, a
// FIFO, or a path out of the directory. Each is refused at once, without
// reading it; a regular file inside is read, and one too large is refused
// before any of it is.
func TestWhatARunLeavesIsReadOnlyAsARegularFileInsideIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "host-key")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, ".webpilot", "results"), 0o755))
	must(os.WriteFile(outside, []byte("the host's secret"), 0o644))
	must(os.WriteFile(filepath.Join(dir, ".webpilot", "report.json"), []byte(`{"suites":[]}`), 0o644))
	must(os.WriteFile(filepath.Join(dir, "big.json"), make([]byte, 4096), 0o644))
	must(os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")))
	must(os.Symlink("/proc/self/environ", filepath.Join(dir, "environ.json")))
	must(os.Symlink(outside, filepath.Join(dir, "host.json")))
	must(os.Symlink("/proc/self", filepath.Join(dir, ".webpilot", "proc")))
	must(os.Symlink(filepath.Dir(outside), filepath.Join(dir, "elsewhere")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "dir.json"), 0o755))

	for _, c := range []struct {
		rel  string
		want error
	}{
		{".webpilot/report.json", nil},
		{"./.webpilot/results/../report.json", nil},
		{"zero.json", sandbox.ErrUnsafeResult},
		{"environ.json", sandbox.ErrUnsafeResult},
		{"host.json", sandbox.ErrUnsafeResult},
		{".webpilot/proc/environ", sandbox.ErrUnsafeResult},
		{"elsewhere/host-key", sandbox.ErrUnsafeResult},
		{"../" + filepath.Base(dir) + "/big.json", sandbox.ErrUnsafeResult},
		{".webpilot/../../host-key", sandbox.ErrUnsafeResult},
		{"/etc/passwd", sandbox.ErrUnsafeResult},
		{"fifo.json", sandbox.ErrUnsafeResult},
		{"dir.json", sandbox.ErrUnsafeResult},
		{"big.json", sandbox.ErrResultTooLarge},
		{"absent.json", os.ErrNotExist},
	} {
		t.Run(c.rel, func(t *testing.T) {
			start := time.Now()
			b, err := sandbox.ReadResult(context.Background(), dir, c.rel, 1024)
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %s", took)
			}
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("a regular file inside was refused: %v", err)
			case c.want == nil && string(b) != `{"suites":[]}`:
				t.Fatalf("read %q", b)
			case c.want != nil && !errors.Is(err, c.want):
				t.Fatalf("err = %v (read %d bytes), want %v", err, len(b), c.want)
			case c.want != nil && (len(b) > 0 || strings.Contains(err.Error(), "secret")):
				t.Fatalf("read %q / %v", b, err)
			}
		})
	}
}

// TestRunDirectoriesArePrivateAndADeadWorkersAreSwept: a worker killed
// mid-run left its customer's files in the host's /tmp, world-readable.
// Run directories are now private to the worker and the run's user, the
// helper directory goes when the run ends, and a new sandbox removes the
// directories of workers no longer alive (and only those).
func TestRunDirectoriesArePrivateAndADeadWorkersAreSwept(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the run root of a worker that is not root is its own")
	}
	root := filepath.Join(os.TempDir(), "webpilot-runs")
	if err := os.MkdirAll(root, 0o711); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(root, "2147483646-r-left") // no such process
	alive := filepath.Join(root, fmt.Sprint(os.Getpid())+"-r-mine")
	for _, d := range []string{dead, alive} {
		if err := os.MkdirAll(filepath.Join(d, ".webpilot"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = os.RemoveAll(alive) })
	s := newSandbox(t, sandbox.Limits{Wall: time.Minute})
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dead worker's run directory was left: %v", err)
	}
	if _, err := os.Stat(alive); err != nil {
		t.Errorf("a live worker's run directory was removed: %v", err)
	}
	dir, err := s.NewRunDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if st, _ := os.Stat(root); st.Mode().Perm() != 0o711 {
		t.Errorf("the run root is %o, want 711 (passable, not listable)", st.Mode().Perm())
	}
	var out bytes.Buffer
	res, err := s.Run(context.Background(), sandbox.Run{Dir: dir, Stdout: &out, Stderr: &out,
		Args: []string{"/bin/sh", "-c", "tr '\\0' ' ' < /proc/1/cmdline"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %v %+v %s", err, res, out.String())
	}
	// bwrap is the sandbox's PID 1: its command line named every host path
	// it bound.
	if cmdline := out.String(); strings.Contains(cmdline, dir) || strings.Contains(cmdline, browsertest.RunnerDir()) {
		t.Errorf("the sandbox's /proc/1/cmdline names host paths: %s", cmdline)
	}
	st, _ := os.Stat(dir)
	owner := st.Sys().(*syscall.Stat_t).Uid
	if st.Mode().Perm() != 0o700 || owner == 0 {
		t.Errorf("the run's directory is %o owned by %d, want 700 owned by the run's user", st.Mode().Perm(), owner)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), fmt.Sprint(os.Getpid())+"-h-") {
			t.Errorf("the run's helper directory %s outlived it", e.Name())
		}
	}
}
