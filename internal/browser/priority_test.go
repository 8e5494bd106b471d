package browser_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

// TestChromiumNeverRunsAboveTheWorker: as root, Chromium set its UI and
// compositor threads to nice -8, above the worker driving it and, by the
// scheduler's weights, some 18 times the share of a sandboxed project run
// at nice 5, whose tests then ran out of time while pages rendered. Every
// thread of every Chromium process this process started, with a page
// loaded and shown, runs at the worker's own priority or below.
func TestChromiumNeverRunsAboveTheWorker(t *testing.T) {
	t.Parallel()
	if !browser.HoldsSysNice() {
		t.Skip("this process cannot raise a priority (no CAP_SYS_NICE): there is nothing to hold back")
	}
	s := browsertest.Session(t)
	ctx := context.Background()
	if err := s.Navigate(ctx, demo(t)+"/list"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Screenshot(false); err != nil {
		t.Fatal(err)
	}
	own := niceOf(t, "/proc/self/stat")
	threads := 0
	for _, pid := range descendants(t, os.Getpid()) {
		if comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm")); !strings.HasPrefix(string(comm), "chrom") {
			continue
		}
		tasks, _ := filepath.Glob(filepath.Join("/proc", pid, "task", "*", "stat"))
		for _, task := range tasks {
			threads++
			if n := niceOf(t, task); n < own {
				comm, _ := os.ReadFile(filepath.Join(filepath.Dir(task), "comm"))
				t.Errorf("%s (%s) runs at nice %d, above this process's %d", task, strings.TrimSpace(string(comm)), n, own)
			}
		}
	}
	if threads == 0 {
		t.Fatal("no Chromium thread found beneath this process")
	}
	t.Logf("%d Chromium threads, none above nice %d", threads, own)
}

// niceOf reads the nice value of a /proc stat file (its 19th field,
// counted after the command's closing parenthesis).
func niceOf(t *testing.T, stat string) int {
	t.Helper()
	b, err := os.ReadFile(stat)
	if err != nil {
		return 0 // a thread that ended meanwhile
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(fields[16])
	if err != nil {
		t.Fatalf("%s: %v", stat, err)
	}
	return n
}

// descendants are the processes beneath pid.
func descendants(t *testing.T, pid int) []string {
	t.Helper()
	parent := map[string]string{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		parent[filepath.Base(filepath.Dir(st))] = fields[1]
	}
	var out []string
	for p := range parent {
		for q := p; q != "" && q != "0" && q != "1"; q = parent[q] {
			if q == strconv.Itoa(pid) && p != q {
				out = append(out, p)
				break
			}
		}
	}
	return out
}
