package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestTheProcessCountIsTheUIDsProcessesAndThreads: what a run that shares
// the worker's uid gets on top of its limit is what that uid runs, threads
// included (the limit counts each), and a uid that runs nothing counts 0.
func TestTheProcessCountIsTheUIDsProcessesAndThreads(t *testing.T) {
	t.Parallel()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc here")
	}
	own := 0
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			own, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	before := tasksOf(os.Getuid())
	if own < 2 || before < own {
		t.Fatalf("the uid counts %d, this process alone runs %d threads", before, own)
	}
	// Three more processes of the uid are counted.
	var cmds []*exec.Cmd
	for range 3 {
		c := exec.Command("sleep", "30")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	t.Cleanup(func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	if after := tasksOf(os.Getuid()); after < own+3 {
		t.Fatalf("with three more processes the uid counts %d (this process %d threads)", after, own)
	}
	if n := tasksOf(59999); n != 0 {
		t.Fatalf("a uid that runs nothing counts %d", n)
	}
}
