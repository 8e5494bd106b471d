package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/webpilot/webpilot/internal/sandbox"
)

func TestMain(m *testing.M) {
	if os.Getenv("SANDBOX_KERNEL_PROBE") == "1" {
		kernelProbe()
		return
	}
	os.Exit(m.Run())
}

// kernelProbe is this test binary run inside a sandbox: it makes each
// system call a run must not make, with arguments that, were the call
// allowed, would answer something other than EPERM (a success, EFAULT,
// EBADF, EINVAL), and prints what each answered.
func kernelProbe() {
	const keySpecSession = ^uintptr(2) // KEY_SPEC_SESSION_KEYRING, -3
	calls := map[string][6]uintptr{
		"ptrace":            {unix.SYS_PTRACE, unix.PTRACE_TRACEME},
		"process_vm_readv":  {unix.SYS_PROCESS_VM_READV, uintptr(os.Getpid())},
		"keyctl":            {unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, keySpecSession, 1},
		"perf_event_open":   {unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0)},
		"userfaultfd":       {unix.SYS_USERFAULTFD, 1 /* UFFD_USER_MODE_ONLY */},
		"bpf":               {unix.SYS_BPF, ^uintptr(0)},
		"unshare":           {unix.SYS_UNSHARE, 0},
		"setns":             {unix.SYS_SETNS, ^uintptr(0)},
		"mount":             {unix.SYS_MOUNT},
		"clock_settime":     {unix.SYS_CLOCK_SETTIME, ^uintptr(0)},
		"init_module":       {unix.SYS_INIT_MODULE},
		"io_uring_setup":    {unix.SYS_IO_URING_SETUP, 1},
		"clone3":            {unix.SYS_CLONE3},
		"shmget":            {unix.SYS_SHMGET, 0 /* IPC_PRIVATE */, 1 << 20, unix.IPC_CREAT | 0o600},
		"msgget":            {unix.SYS_MSGGET, 0, unix.IPC_CREAT | 0o600},
		"semget":            {unix.SYS_SEMGET, 0, 1, unix.IPC_CREAT | 0o600},
		"memfd_create":      {unix.SYS_MEMFD_CREATE, ^uintptr(0)},
		"socket AF_VSOCK":   {unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_STREAM},
		"socket AF_NETLINK": {unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE},
		"socket AF_PACKET":  {unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW},
	}
	out := map[string]string{}
	for name, c := range calls {
		_, _, errno := unix.Syscall6(c[0], c[1], c[2], c[3], c[4], c[5], 0)
		out[name] = unix.ErrnoName(errno)
		if errno == 0 {
			out[name] = "allowed"
		}
	}
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && (k == "Seccomp" || k == "NoNewPrivs") {
			out[k] = strings.TrimSpace(v)
		}
	}
	b, _ := json.Marshal(out)
	fmt.Printf("KERNEL %s\n", b)
}

// TestTheKernelsRarePathsAreClosedToARun: inside, a nested user namespace
// gave root in it (unshare -U -r) and no seccomp filter applied; SysV
// shared memory and memfds held gigabytes no watchdog saw, and vsock and
// netlink sockets opened. Each call a test run never needs now answers EPERM (clone3 ENOSYS, so the C library
// falls back to clone, whose namespace flags are refused), under a filter
// and no-new-privileges.
func TestTheKernelsRarePathsAreClosedToARun(t *testing.T) {
	t.Parallel()
	dir := runDir(t, "kernel")
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	probe, err := os.OpenFile(filepath.Join(dir, "probe.test"), os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(probe, self); err != nil {
		t.Fatal(err)
	}
	_ = probe.Close()
	s := newSandbox(t, sandbox.Limits{Wall: time.Minute})
	var out bytes.Buffer
	res, err := s.Run(context.Background(), sandbox.Run{Dir: dir, Stdout: &out, Stderr: &out,
		Env: map[string]string{"SANDBOX_KERNEL_PROBE": "1"}, Args: []string{sandbox.WorkDir + "/probe.test"}})
	if err != nil {
		t.Fatal(err)
	}
	_, line, ok := strings.Cut(out.String(), "KERNEL ")
	if !ok || res.ExitCode != 0 {
		t.Fatalf("the probe did not report (exit %d):\n%s", res.ExitCode, out.String())
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(strings.TrimSpace(line)), &got); err != nil {
		t.Fatal(err)
	}
	for name, answer := range got {
		want := "EPERM"
		switch name {
		case "clone3":
			want = "ENOSYS"
		case "Seccomp":
			want = "2" // a filter
		case "NoNewPrivs":
			want = "1"
		}
		if answer != want {
			t.Errorf("%s answered %s inside the sandbox, want %s", name, answer, want)
		}
	}

	// util-linux's unshare, as the probe used it.
	out.Reset()
	res, err = s.Run(context.Background(), sandbox.Run{Dir: dir, Stdout: &out, Stderr: &out,
		Args: []string{"/bin/sh", "-c", "unshare -U -r id -u && echo NESTED-ROOT"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || strings.Contains(out.String(), "NESTED-ROOT") {
		t.Errorf("unshare -U -r gave a nested user namespace (exit %d): %s", res.ExitCode, out.String())
	}
}
