// Package sandbox runs a customer's own code (a @playwright/test suite and
// everything it imports) where it can reach nothing of the worker's: a
// bubblewrap sandbox per run with its own user, PID, network, IPC and UTS
// namespaces, a read-only system, a private /tmp, only the run's own
// directory writable, an environment of exactly what the run is given, the
// network only through the job's egress proxy, and limits on time, CPU,
// memory per process, processes and file size.
//
// The design, and what it does not cover:
//   - The filesystem is assembled, not inherited: /usr, /lib, /bin and the
//     few files of /etc a browser needs are bound read-only; the spec runner
//     is bound read-only at /runner; the run's directory read-write at
//     /work; /tmp is a fresh tmpfs. The worker's data directory, its
//     sources, other runs' directories, /root and /home are simply absent.
//   - bwrap itself is started with an empty environment (PID 1 of the
//     sandbox is bwrap, and its /proc/1/environ is readable inside).
//   - The network namespace has only loopback. A forwarder inside listens on
//     ProxyAddr and carries each connection over a Unix socket bound in
//     from the host, to the job's egress proxy; nothing else leaves.
//   - When the worker runs as root, each run also gets its own host uid
//     (setpriv), so the process limit is the run's own and nothing the run
//     writes is owned by the worker's user. The uid is leased for the run
//     with a lock file per uid, so runs of different workers (processes) on
//     one host never share one; workers in separate containers on one host
//     need their own ranges (Config.FirstUID). A worker that is not root
//     (the image's) runs every sandbox under its own uid, whose processes
//     and threads all count against the limit: each run's limit is then
//     what the uid runs when it starts plus its own.
//   - Limits per process are rlimits (prlimit): CPU time, data segment
//     (address-space limits break Chromium's reservations), processes per
//     uid, file size; wall time is the context's.
//   - Limits of the run as a whole hold without cgroups, which these hosts
//     do not delegate: a watchdog reads every process descending from the
//     run's bubblewrap every 100 ms and kills the run at the first budget
//     its processes pass together: memory (their proportional set sizes
//     with the in-memory /tmp and /dev/shm, both also size-capped), the
//     bytes and files of its directory and /tmp, and CPU time. The run is
//     niced below the worker. What a watchdog cannot bound: memory that
//     grows faster than it samples (it stops a run early when the last
//     sample's growth would pass the budget), kernel memory a process
//     holds outside its pages (sockets, pipes), and I/O bandwidth.
//   - Every run starts under a seccomp filter (see seccompFilter) with no
//     new privileges and no nested user namespace.
package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Inside the sandbox.
const (
	// WorkDir is where the run's directory is, read-write.
	WorkDir = "/work"
	// RunnerDir is where the spec runner's installation is, read-only.
	RunnerDir = "/runner"
	// DepsDir is where the run's installed dependencies are, read-only.
	DepsDir = "/deps"
	// ProxyAddr is the job's egress proxy as the run reaches it.
	ProxyAddr = "127.0.0.1:3128"
	// helperDir holds the forwarder and the socket to the egress proxy.
	helperDir = "/run/webpilot"
	// policyFile is Chromium's managed policy inside.
	policyFile = "/etc/chromium/policies/managed/webpilot.json"
)

// browserPolicy is the managed policy the full Chromium reads, should a
// run start it: file: URLs refused, as in scenario jobs. The headless shell
// a run's tests use reads no policy; its file: URLs show what the run's own
// code reads anyway, so what a run may see is bounded by its filesystem
// (accounts included: see runPasswd), not by a browser's setting.
const browserPolicy = `{"URLBlocklist": ["file://*"], "FileSelectionDialogsEnabled": false}`

// The run's /etc/passwd and /etc/group: its own user (uid 1000 inside) and
// nobody. The host's would name its accounts to any test (fs, or a
// browser's file: URL); node and Chromium need only the run's own entry.
const (
	runPasswd = "sandbox:x:1000:1000:sandbox:/tmp:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
	runGroup  = "sandbox:x:1000:\nnogroup:x:65534:\n"
)

// Defaults of Limits' zero fields.
const (
	DefaultWall     = 10 * time.Minute
	DefaultCPU      = 10 * time.Minute
	DefaultMemory   = 4 << 30 // bytes of data segment per process
	DefaultProcs    = 512
	DefaultFileSize = 1 << 30
	// DefaultMemoryBudget bounds all of a run's processes together, with
	// its in-memory /tmp and /dev/shm.
	DefaultMemoryBudget = 2 << 30
	// DefaultDisk and DefaultFiles bound what a run writes, in its
	// directory and its /tmp together.
	DefaultDisk  = 1 << 30
	DefaultFiles = 10_000
	// DefaultTotalCPU bounds the CPU time of all of a run's processes.
	DefaultTotalCPU = 15 * time.Minute
	// DefaultFirstUID is the first host uid runs get when the worker is root.
	DefaultFirstUID = 61000
)

// Limits bound one run.
type Limits struct {
	Wall     time.Duration // the whole run
	CPU      time.Duration // CPU time of each process
	Memory   int64         // data segment of each process, bytes
	Procs    int           // processes and threads of the run (on top of the worker's when runs share its uid)
	FileSize int64         // largest file it may write, bytes
	// MemoryBudget bounds the run's processes together (their
	// proportional set sizes) with its in-memory /tmp and /dev/shm, bytes.
	MemoryBudget int64
	// Disk and Files bound what the run holds in its directory and /tmp.
	Disk  int64
	Files int
	// TotalCPU bounds the CPU time of all of the run's processes.
	TotalCPU time.Duration
}

// WithDefaults fills the zero fields.
func (l Limits) WithDefaults() Limits {
	l.Wall = cmp.Or(l.Wall, DefaultWall)
	l.CPU = cmp.Or(l.CPU, DefaultCPU)
	l.Memory = cmp.Or(l.Memory, DefaultMemory)
	l.Procs = cmp.Or(l.Procs, DefaultProcs)
	l.FileSize = cmp.Or(l.FileSize, DefaultFileSize)
	l.MemoryBudget = cmp.Or(l.MemoryBudget, DefaultMemoryBudget)
	l.Disk = cmp.Or(l.Disk, DefaultDisk)
	l.Files = cmp.Or(l.Files, DefaultFiles)
	l.TotalCPU = cmp.Or(l.TotalCPU, DefaultTotalCPU)
	return l
}

// Config is a host's sandbox set-up.
type Config struct {
	// Runner is the spec runner's installation (node_modules with
	// @playwright/test), bound read-only at RunnerDir (required).
	Runner string
	// Limits bound every run; zero fields take the defaults.
	Limits Limits
	// FirstUID is the first of the 1000 host uids runs get when the worker
	// runs as root (DefaultFirstUID).
	FirstUID int
	// EqualPriority runs the runs' processes at the caller's own priority
	// rather than RunNice below it: for a process that has no work of its
	// own the runs should yield to (the suite package's tests, where the
	// runs would yield only to the other tests' browsers).
	EqualPriority bool
}

// RunNice is how far below the worker's priority (nice(1)'s increment)
// a run's processes are scheduled: they yield the CPU to the worker's own
// (its heartbeats, its agent's browser).
const RunNice = 5

// Sandbox runs commands in bubblewrap sandboxes.
type Sandbox struct {
	cfg                           Config
	bwrap, setpriv, prlimit, nice string
	asRoot                        bool
	next                          atomic.Int64
	seccomp                       []byte // the filter every run starts under
}

//go:embed forward.js
var forwarder []byte

// ErrUnavailable means this host cannot sandbox (no bubblewrap, or user
// namespaces refused); customer code is then never run.
var ErrUnavailable = errors.New("the customer-code sandbox is unavailable")

// New checks that the host can sandbox and returns a Sandbox.
func New(cfg Config) (*Sandbox, error) {
	if cfg.Runner == "" {
		return nil, errors.New("sandbox: Config.Runner is required")
	}
	if !filepath.IsAbs(cfg.Runner) {
		return nil, fmt.Errorf("sandbox: the runner %q must be an absolute path", cfg.Runner)
	}
	cfg.Limits = cfg.Limits.WithDefaults()
	cfg.FirstUID = cmp.Or(cfg.FirstUID, DefaultFirstUID)
	s := &Sandbox{cfg: cfg, asRoot: os.Geteuid() == 0}
	if s.asRoot && !othersReach(cfg.Runner) {
		// A root worker's runs have their own uids, which cannot pass a
		// private directory on the way to the runner (a checkout in root's
		// 0700 home): they get a copy where every uid reaches it.
		copied, err := reachableCopy(cfg.Runner)
		if err != nil {
			return nil, fmt.Errorf("sandbox: the runner %s is in a directory the runs' users cannot enter, and copying it failed: %w "+
				"(install it under a directory every user may enter, such as /opt or /var/tmp)", cfg.Runner, err)
		}
		s.cfg.Runner = copied
	}
	for _, tool := range []struct {
		name string
		dst  *string
	}{{"bwrap", &s.bwrap}, {"setpriv", &s.setpriv}, {"prlimit", &s.prlimit}, {"nice", &s.nice}} {
		p, err := exec.LookPath(tool.name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s not found (install bubblewrap and util-linux)", ErrUnavailable, tool.name)
		}
		*tool.dst = p
	}
	var err error
	if s.seccomp, err = seccompFilter(); err != nil {
		return nil, err
	}
	sweep()
	// User namespaces may be refused (a container's seccomp profile).
	probe := exec.Command(s.bwrap, "--ro-bind", "/", "/", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--", "/bin/true")
	probe.Env = []string{"PATH=/usr/bin:/bin"}
	if out, err := probe.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: bubblewrap cannot create namespaces here: %v: %s", ErrUnavailable, err, out)
	}
	return s, nil
}

// runRoot is where a host's run directories are made: private ones under
// a directory others may pass through but not list.
func runRoot() string {
	name := "webpilot-runs"
	if uid := os.Geteuid(); uid != 0 {
		name += "-" + strconv.Itoa(uid)
	}
	return filepath.Join(os.TempDir(), name)
}

// mkdir makes a directory private to this worker (and, once handed over,
// to a run's user) under the run root, named for this process so that a
// later worker can tell a dead one's leftovers (sweep).
func (s *Sandbox) mkdir(kind string) (string, error) {
	root := runRoot()
	if err := os.MkdirAll(root, 0o711); err != nil {
		return "", err
	}
	return os.MkdirTemp(root, fmt.Sprintf("%d-%s-", os.Getpid(), kind))
}

// NewRunDir makes a directory for a run of the customer's code: private
// (0700) to the worker and, during the run, to the run's own user. The
// caller removes it when it has read what the run left; a worker that dies
// before leaves it to the next sandbox made on the host, which sweeps it.
func (s *Sandbox) NewRunDir() (string, error) {
	dir, err := s.mkdir("r")
	if err != nil {
		return "", fmt.Errorf("sandbox: make a run directory: %w", err)
	}
	return dir, nil
}

// sweep removes the run directories of workers no longer alive: a worker
// killed mid-run leaves its customer's files and traces behind.
func sweep() {
	entries, err := os.ReadDir(runRoot())
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, _, ok := strings.Cut(e.Name(), "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n <= 0 {
			continue
		}
		if err := syscall.Kill(n, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(filepath.Join(runRoot(), e.Name()))
		}
	}
}

// Run is one command to run in a sandbox.
type Run struct {
	// Dir is the host directory the command works in, bound read-write at
	// WorkDir; nothing else it can write survives the run.
	Dir string
	// Args is the command, as seen inside (node is /usr/bin/node).
	Args []string
	// Env is the command's environment besides PATH and HOME: exactly what
	// it is given, nothing of the worker's.
	Env map[string]string
	// Deps is a host directory of installed packages, bound read-only at
	// DepsDir (none when empty).
	Deps string
	// Egress is the host address of the job's egress proxy, reachable
	// inside at ProxyAddr; empty means no network at all.
	Egress string
	// Stdout and Stderr receive the command's output (discarded if nil).
	Stdout, Stderr io.Writer
	// Wall, when set and shorter than the sandbox's own Limits.Wall (the
	// ceiling), is this run's time limit: a run's budget follows what it
	// runs.
	Wall time.Duration
}

// Result is how a run ended.
type Result struct {
	// ExitCode is the command's exit status (-1 when a signal ended it).
	ExitCode int
	// Limit names the limit that ended it ("time", "cpu", "memory",
	// "disk", "files"), if one did, and Reason says what the run used.
	Limit, Reason string
	// PeakMemory is the most memory the run's processes and its tmpfs
	// held together when measured, bytes.
	PeakMemory int64
}

// Wall is the longest a run may take (Limits.Wall): the ceiling of
// Run.Wall.
func (s *Sandbox) Wall() time.Duration { return s.cfg.Limits.Wall }

// Runner is the host path of the spec runner's installation, which runs
// see at RunnerDir.
func (s *Sandbox) Runner() string { return s.cfg.Runner }

// Run runs r.Args in a fresh sandbox and waits for it to end. An error is
// the sandbox failing, not the command (see Result).
func (s *Sandbox) Run(ctx context.Context, r Run) (Result, error) {
	if len(r.Args) == 0 {
		return Result{}, errors.New("sandbox: nothing to run")
	}
	lim := s.cfg.Limits
	if !s.asRoot {
		// The run shares the worker's uid, whose processes and threads
		// (the worker's own, its browsers, other runs) all count against
		// the limit: the run's processes come on top of them.
		lim.Procs += tasksOf(os.Getuid())
	}
	if r.Wall > 0 && r.Wall < lim.Wall {
		lim.Wall = r.Wall
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Wall)
	defer cancel()
	uid := -1
	if s.asRoot {
		var release func()
		var err error
		if uid, release, err = s.leaseUID(); err != nil {
			return Result{}, err
		}
		defer release()
	}

	// The helper directory: the forwarder, the egress socket and the
	// browser's policy, outside the run's own directory so the run cannot
	// replace them (it sees it read-only), private to the run's user.
	helper, err := s.mkdir("h")
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	defer os.RemoveAll(helper)
	if uid >= 0 {
		if err := os.Chown(helper, uid, uid); err != nil {
			return Result{}, fmt.Errorf("sandbox: %w", err)
		}
	}
	for name, content := range map[string][]byte{"forward.js": forwarder, "policy.json": []byte(browserPolicy),
		"passwd": []byte(runPasswd), "group": []byte(runGroup)} {
		if err := os.WriteFile(filepath.Join(helper, name), content, 0o644); err != nil {
			return Result{}, fmt.Errorf("sandbox: %w", err)
		}
	}
	args := r.Args
	if r.Egress != "" {
		stop, err := forward(filepath.Join(helper, "egress.sock"), r.Egress)
		if err != nil {
			return Result{}, err
		}
		defer stop()
		args = append([]string{"/usr/bin/node", helperDir + "/forward.js", ProxyAddr, helperDir + "/egress.sock"}, args...)
	}

	nice := RunNice
	if s.cfg.EqualPriority {
		nice = 0
	}
	cmdline := []string{s.nice, "-n", strconv.Itoa(nice), s.prlimit,
		"--cpu=" + strconv.Itoa(int(lim.CPU.Seconds())),
		"--data=" + strconv.FormatInt(lim.Memory, 10),
		"--nproc=" + strconv.Itoa(lim.Procs),
		"--fsize=" + strconv.FormatInt(lim.FileSize, 10),
		"--"}
	if uid >= 0 {
		if err := chownTree(r.Dir, uid); err != nil {
			return Result{}, fmt.Errorf("sandbox: hand the run's directory to its user: %w", err)
		}
		id := strconv.Itoa(uid)
		cmdline = append(cmdline, s.setpriv, "--reuid="+id, "--regid="+id, "--clear-groups", "--")
	}
	// bwrap's own arguments travel over a pipe, not its command line: the
	// sandbox's PID 1 is bwrap, whose /proc/1/cmdline the run can read, and
	// they name host paths. The seccomp filter comes the same way.
	var extra []*os.File
	defer func() {
		for _, f := range extra {
			_ = f.Close()
		}
	}()
	fdOf := func(data []byte) (string, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return "", fmt.Errorf("sandbox: %w", err)
		}
		extra = append(extra, r)
		_, werr := w.Write(data)
		if cerr := w.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", fmt.Errorf("sandbox: %w", werr)
		}
		return strconv.Itoa(2 + len(extra)), nil // ExtraFiles start at 3
	}
	seccompFD, err := fdOf(s.seccomp)
	if err != nil {
		return Result{}, err
	}
	bw := s.binds(r.Dir, helper, r.Deps)
	// --disable-userns: no nested user namespace (root in it) for the run.
	bw = append(bw, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session", "--hostname", "sandbox",
		"--uid", "1000", "--gid", "1000", "--clearenv", "--seccomp", seccompFD)
	for _, kv := range environment(r.Env) {
		bw = append(bw, "--setenv", kv[0], kv[1])
	}
	bw = append(bw, "--chdir", WorkDir)
	var packed bytes.Buffer
	for _, a := range bw {
		packed.WriteString(a)
		packed.WriteByte(0)
	}
	argsFD, err := fdOf(packed.Bytes())
	if err != nil {
		return Result{}, err
	}
	// The command itself (paths inside the sandbox) must follow on the
	// command line.
	cmdline = append(cmdline, s.bwrap, "--args", argsFD, "--")
	cmdline = append(cmdline, args...)

	cmd := exec.CommandContext(ctx, cmdline[0], cmdline[1:]...)
	cmd.ExtraFiles = extra
	// bwrap is PID 1 inside, and its environment is readable there.
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Stdout, cmd.Stderr = r.Stdout, r.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	done := make(chan struct{})
	watched := make(chan *watchdog, 1)
	go func() { watched <- watch(cmd.Process.Pid, r.Dir, lim, done) }()
	err = cmd.Wait()
	close(done)
	dog := <-watched
	res := Result{ExitCode: cmd.ProcessState.ExitCode(), PeakMemory: dog.peak.memory}
	switch {
	case dog.stopped != "":
		res.Limit, res.Reason = dog.stopped, dog.why
	case ctx.Err() != nil:
		res.Limit, res.Reason = "time", fmt.Sprintf("it ran for %s", lim.Wall)
	case cmd.ProcessState != nil && signalled(cmd.ProcessState, syscall.SIGXCPU):
		res.Limit, res.Reason = "cpu", fmt.Sprintf("a process used %s of CPU time", lim.CPU)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && ctx.Err() == nil {
		return res, fmt.Errorf("sandbox: %w", err)
	}
	return res, nil
}

// binds assembles the sandbox's filesystem.
func (s *Sandbox) binds(dir, helper, deps string) []string {
	b := []string{
		"--ro-bind", "/usr", "/usr",
		"--ro-bind", "/bin", "/bin",
		"--ro-bind", "/lib", "/lib",
		"--ro-bind-try", "/lib64", "/lib64",
		"--ro-bind-try", "/sbin", "/sbin",
		"--dev", "/dev",
		// In-memory, so counted in the memory budget as well as the disk's.
		"--size", strconv.FormatInt(s.cfg.Limits.Disk, 10), "--tmpfs", "/dev/shm",
		"--proc", "/proc",
		"--size", strconv.FormatInt(s.cfg.Limits.Disk, 10), "--tmpfs", "/tmp",
		"--dir", "/run",
	}
	// What a browser and node read of /etc; nothing else of it (no
	// credentials, no host configuration).
	for _, f := range []string{"/etc/ssl", "/etc/fonts", "/etc/ld.so.cache", "/etc/alternatives",
		"/etc/nsswitch.conf", "/etc/localtime", "/etc/mime.types"} {
		b = append(b, "--ro-bind-try", f, f)
	}
	if deps != "" {
		b = append(b, "--ro-bind", deps, DepsDir)
	}
	return append(b,
		"--ro-bind", s.cfg.Runner, RunnerDir,
		"--ro-bind", helper, helperDir,
		"--ro-bind", filepath.Join(helper, "policy.json"), policyFile,
		"--ro-bind", filepath.Join(helper, "passwd"), "/etc/passwd",
		"--ro-bind", filepath.Join(helper, "group"), "/etc/group",
		"--bind", dir, WorkDir,
		// Nothing but /work and /tmp may be written.
		"--remount-ro", "/")
}

// environment is the run's whole environment, in a stable order.
func environment(env map[string]string) [][2]string {
	out := [][2]string{{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"HOME", "/tmp"}}
	keys := make([]string, 0, len(env))
	for k := range env {
		if k != "PATH" && k != "HOME" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, [2]string{k, env[k]})
	}
	return out
}

// forward carries each connection to sock on to the TCP address to (the
// egress proxy) until stop.
func forward(sock, to string) (stop func(), err error) {
	l, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("sandbox: egress socket: %w", err)
	}
	// The run's user, whoever it is, must be able to connect.
	if err := os.Chmod(sock, 0o777); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("sandbox: egress socket: %w", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	track := func(c net.Conn, on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			open[c] = true
		} else {
			delete(open, c)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := net.DialTimeout("tcp", to, 10*time.Second)
				if err != nil {
					_ = in.Close()
					return
				}
				track(in, true)
				track(out, true)
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
				go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
				<-done
				_ = in.Close()
				_ = out.Close()
				<-done
				track(in, false)
				track(out, false)
			}()
		}
	}()
	return func() {
		_ = l.Close()
		mu.Lock()
		for c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}, nil
}

// uidRange is how many host uids runs take turns with.
const uidRange = 1000

// leaseUID takes a host uid no other run on this host holds, whichever
// process started it: the process limit counts every process and thread of
// a uid, so two runs sharing one would share the limit (a busy host's
// Chromium then cannot start a thread). The lease is an flock on a file per
// uid, which the kernel drops when the run ends or its worker dies.
func (s *Sandbox) leaseUID() (int, func(), error) {
	dir := filepath.Join(os.TempDir(), "webpilot-sandbox-uids")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, nil, fmt.Errorf("sandbox: lease a uid: %w", err)
	}
	start := s.next.Add(1)
	for i := range int64(uidRange) {
		uid := s.cfg.FirstUID + int((start+i)%uidRange)
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(uid)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return 0, nil, fmt.Errorf("sandbox: lease a uid: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				continue
			}
			return 0, nil, fmt.Errorf("sandbox: lease a uid: %w", err)
		}
		reap(uid)
		return uid, func() { _ = f.Close() }, nil
	}
	return 0, nil, fmt.Errorf("sandbox: all %d run uids from %d are in use on this host", uidRange, s.cfg.FirstUID)
}

// tasksOf counts the processes and threads whose real uid is uid, as the
// process limit counts them.
func tasksOf(uid int) int {
	_, n := processesOf(uid)
	return n
}

// processesOf lists the processes whose real uid is uid, and counts their
// threads.
func processesOf(uid int) (pids []int, tasks int) {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, 0
	}
	want := strconv.Itoa(uid)
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", d.Name(), "status"))
		if err != nil {
			continue // gone since
		}
		mine := false
		for _, line := range strings.Split(string(status), "\n") {
			k, v, _ := strings.Cut(line, ":")
			f := strings.Fields(v)
			switch {
			case k == "Uid" && len(f) > 0:
				mine = f[0] == want
				if mine {
					pid, _ := strconv.Atoi(d.Name())
					pids = append(pids, pid)
				}
			case k == "Threads" && mine && len(f) > 0:
				t, _ := strconv.Atoi(f[0])
				tasks += t
			}
		}
	}
	return pids, tasks
}

// reap kills what is left running under a run uid just leased: the run of
// a worker that died (a live worker holds its uid's lease until its run
// has ended), which would go on using the machine and count against the
// next run's process limit.
func reap(uid int) {
	for range 20 {
		pids, _ := processesOf(uid)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chownTree hands dir and everything in it to uid.
func chownTree(dir string, uid int) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
}

func signalled(ps *os.ProcessState, sig syscall.Signal) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// othersReach reports whether a user that is neither the owner nor in the
// group of any directory on the way can enter every one of them and read
// the last.
func othersReach(p string) bool {
	for d := p; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return false
		}
		need := fs.FileMode(0o001)
		if d == p {
			need = 0o005
		}
		if st.Mode().Perm()&need != need {
			return false
		}
		if d == "/" {
			return true
		}
	}
}

// reachableCopy copies dir, once per host and content, to a directory
// under the system's temporary directory that every user may read, and
// answers it.
func reachableCopy(dir string) (string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(dir + "\x00" + st.ModTime().String()))
	dst := filepath.Join(os.TempDir(), "webpilot-runner-"+hex.EncodeToString(h[:6]))
	if _, err := os.Stat(filepath.Join(dst, ".complete")); err == nil {
		return dst, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "webpilot-runner-copy-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if out, err := exec.Command("cp", "-a", dir+"/.", tmp).CombinedOutput(); err != nil {
		return "", fmt.Errorf("cp: %w: %s", err, out)
	}
	if out, err := exec.Command("chmod", "-R", "a+rX,go-w", tmp).CombinedOutput(); err != nil {
		return "", fmt.Errorf("chmod: %w: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dst); err != nil {
		if _, serr := os.Stat(filepath.Join(dst, ".complete")); serr == nil {
			return dst, nil // another worker made it first
		}
		return "", err
	}
	return dst, nil
}
