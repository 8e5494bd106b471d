package sandbox

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Without delegated cgroups a run's totals cannot be left to the kernel:
// every process has its rlimits, but two processes together, or a tmpfs
// filled beside them, are bounded by nothing. The watchdog measures the
// whole run (every process descending from its bubblewrap, however it
// was started) and kills it at the first budget it passes.

// watchEvery is how often memory is read; the run's process tree is
// walked again, and its CPU time read, every treeEvery (every sample once
// its memory is past half its budget, so that a process started since is
// counted at once), and its disk every walkEvery. A browser's processes
// have dozens of threads each, whose children lists the walk reads: doing
// that twenty times a second cost a run a good share of a core.
const (
	watchEvery   = 100 * time.Millisecond
	treeEvery    = 500 * time.Millisecond
	walkEvery    = time.Second
	predictAhead = 200 * time.Millisecond
)

// usage is what the watchdog last measured of a run.
type usage struct {
	memory int64         // proportional set size of its processes plus its tmpfs pages
	cpu    time.Duration // user and system time, its reaped children's included
	disk   int64         // bytes in its directory and its /tmp
	files  int           // files and directories in them
}

// watchdog measures one run and stops it at its budgets.
type watchdog struct {
	root    int // the pid bwrap runs as, outside
	dir     string
	lim     Limits
	page    int64
	peak    usage
	stopped string // the limit it killed the run for
	why     string
	prev    int64     // proportional memory at the last sample near the budget
	prevAt  time.Time // when; zero when that sample was not near it
	pids    []int     // the run's processes at the last walk of its tree
	treeAt  time.Time // when
	cpu     time.Duration
	near    bool // memory past half the budget at the last sample
}

// watch measures the run rooted at pid every watchEvery until done
// closes, and kills its processes when one of lim's budgets is passed; it
// answers the limit ("memory", "disk", "files", "cpu") and why, or "".
func watch(pid int, dir string, lim Limits, done <-chan struct{}) *watchdog {
	w := &watchdog{root: pid, dir: dir, lim: lim, page: int64(os.Getpagesize())}
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	last := time.Time{}
	for {
		select {
		case <-done:
			return w
		case now := <-tick.C:
			walk := now.Sub(last) >= walkEvery
			if walk {
				last = now
			}
			if w.sample(walk) {
				return w
			}
		}
	}
}

// sample measures once and kills the run if it passed a budget.
func (w *watchdog) sample(walk bool) (killed bool) {
	now := time.Now()
	if w.pids == nil || w.near || now.Sub(w.treeAt) >= treeEvery {
		w.pids, w.treeAt = descendants(w.root), now
		w.cpu = 0
		for _, p := range w.pids {
			w.cpu += cpuTime(p)
		}
	}
	pids := w.pids
	u := usage{cpu: w.cpu}
	var rss int64
	for _, p := range pids {
		rss += w.statm(p)
	}
	shm, shmFiles := tmpfsUse(pids)
	u.memory = rss + shm
	w.near = u.memory > w.lim.MemoryBudget/2
	// Shared pages (a browser's libraries) count fully in each process's
	// resident size, which is only an upper bound: far from the budget it
	// is enough, near it each process's proportional share is measured,
	// and only that ever stops a run. A run growing fast would pass its
	// budget before the next samples: it is stopped when its growth rate
	// says it would within predictAhead (the rate per second, so a sample
	// a busy machine delayed does not inflate it).
	predicted := int64(0)
	if u.memory > w.lim.MemoryBudget-w.lim.MemoryBudget/4 {
		var share int64
		for _, p := range pids {
			share += pss(p)
		}
		u.memory = share + shm
		predicted = u.memory
		if !w.prevAt.IsZero() {
			if dt := now.Sub(w.prevAt).Seconds(); dt > 0 && u.memory > w.prev {
				predicted += int64(float64(u.memory-w.prev) / dt * predictAhead.Seconds())
			}
		}
		w.prev, w.prevAt = u.memory, now
	} else {
		w.prevAt = time.Time{}
	}
	if walk {
		u.disk, u.files = dirUse(w.dir)
		u.disk += shm + heldDeleted(pids)
		u.files += shmFiles
	} else {
		u.disk, u.files = w.peak.disk, w.peak.files
	}
	switch {
	case predicted > w.lim.MemoryBudget:
		w.stopped, w.why = "memory", fmt.Sprintf("its processes and their temporary files used %s of memory (the budget is %s)",
			size(u.memory), size(w.lim.MemoryBudget))
		if u.memory <= w.lim.MemoryBudget {
			w.why = fmt.Sprintf("its processes and their temporary files used %s of memory and were growing past the budget of %s",
				size(u.memory), size(w.lim.MemoryBudget))
		}
	case u.cpu > w.lim.TotalCPU:
		w.stopped, w.why = "cpu", fmt.Sprintf("its processes used %s of CPU time (the budget is %s)", u.cpu.Round(time.Second), w.lim.TotalCPU)
	case u.disk > w.lim.Disk:
		w.stopped, w.why = "disk", fmt.Sprintf("it wrote %s to its directory, /tmp and files it deleted but holds open (the budget is %s)", size(u.disk), size(w.lim.Disk))
	case u.files > w.lim.Files:
		w.stopped, w.why = "files", fmt.Sprintf("it made %d files in its directory and /tmp (the budget is %d)", u.files, w.lim.Files)
	}
	w.peak.memory = max(w.peak.memory, u.memory)
	w.peak.cpu = max(w.peak.cpu, u.cpu)
	w.peak.disk, w.peak.files = max(w.peak.disk, u.disk), max(w.peak.files, u.files)
	if w.stopped == "" {
		return false
	}
	// bwrap first (its --die-with-parent children follow), then every
	// process found, in case one escaped the group.
	_ = syscall.Kill(-w.root, syscall.SIGKILL)
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	return true
}

// descendants lists pid and every process descending from it, through the
// kernel's children lists (a process that left its parent is reparented to
// the sandbox's own init, which descends from pid too).
func descendants(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out) && len(out) < 4096; i++ {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", out[i]))
		if err != nil {
			continue
		}
		for _, t := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", out[i], t.Name()))
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// statm is a process's resident size in bytes.
func (w *watchdog) statm(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * w.page
}

// pss is a process's proportional set size in bytes.
func pss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("Pss:")); ok {
			f := strings.Fields(string(rest))
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// clockTicks is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on
// Linux everywhere).
const clockTicks = 100

// cpuTime is a process's CPU time, user and system, its reaped
// children's included.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces: fields start after its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0
	}
	var ticks int64
	for _, k := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		n, _ := strconv.ParseInt(f[k], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// tmpfsUse is what the run's own tmpfs mounts (/tmp, /dev/shm) hold, in
// bytes and files, read through one of its processes' root.
func tmpfsUse(pids []int) (int64, int) {
	for _, p := range pids[1:] {
		var bytes int64
		files := 0
		ok := false
		for _, m := range []string{"tmp", "dev/shm"} {
			var st unix.Statfs_t
			if unix.Statfs(fmt.Sprintf("/proc/%d/root/%s", p, m), &st) != nil || st.Type != unix.TMPFS_MAGIC {
				continue
			}
			ok = true
			bytes += int64(st.Blocks-st.Bfree) * st.Bsize
			files += int(st.Files - st.Ffree)
		}
		if ok {
			return bytes, files
		}
	}
	return 0, 0
}

// dirUse is the bytes and files under dir, links not followed.
func dirUse(dir string) (int64, int) {
	var n int64
	files := 0
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		files++
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512 // what it takes on disk (a sparse file takes little)
			}
		}
		return nil
	})
	return n, files
}

// heldDeleted is what the run's processes hold in files they deleted but
// keep open: on disk still, in no directory dirUse walks. Each file is
// counted once, however many descriptors hold it.
func heldDeleted(pids []int) int64 {
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	var n int64
	for _, p := range pids {
		fds := fmt.Sprintf("/proc/%d/fd", p)
		ents, err := os.ReadDir(fds)
		if err != nil {
			continue
		}
		for _, e := range ents {
			fd := fds + "/" + e.Name()
			if target, err := os.Readlink(fd); err != nil || !strings.HasSuffix(target, " (deleted)") {
				continue
			}
			var st unix.Stat_t
			if unix.Stat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 0 {
				continue
			}
			if k := (inode{st.Dev, st.Ino}); !seen[k] {
				seen[k] = true
				n += st.Blocks * 512
			}
		}
	}
	return n
}

// size writes bytes for people.
func size(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	default:
		return fmt.Sprintf("%d MiB", b>>20)
	}
}
