// Package testslot bounds how many heavy tests (a whole stack, a sandboxed
// runner, a browser) run at once on the machine, across every test
// process: go test runs packages side by side and each package's parallel
// tests side by side, and on two cores four stacks at once put the load at
// 20 to 50, where a page that loads in a second takes ten and the tests'
// own timeouts, not the code, decide the verdicts.
//
// A slot is a lock on one of N files in a directory every test process on
// the machine shares; the kernel frees it when the holder exits, so a
// killed test run never leaves a slot taken. N is WEBPILOT_TEST_SLOTS, or
// the number of CPUs; 0 turns the bound off.
package testslot

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	mu   sync.Mutex
	held = map[string]*slot{} // by top-level test: its subtests share its slot
)

type slot struct {
	f     *os.File
	users int
}

// Take holds a slot for the test until it (or the last of its top-level
// test's subtests holding it) ends, waiting for one to be free. Call it
// after t.Parallel, before the test starts anything it times.
func Take(t testing.TB) {
	t.Helper()
	n := slots()
	if n == 0 {
		return
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	mu.Lock()
	s := held[top]
	if s != nil {
		s.users++
		mu.Unlock()
	} else {
		mu.Unlock()
		start := time.Now()
		f, err := acquire(n)
		if err != nil {
			t.Fatalf("testslot: %v", err)
		}
		if w := time.Since(start); w > time.Second {
			// The test's time includes this wait: the slowest tests' list
			// reads with it.
			t.Logf("testslot: waited %s for one of %d slots", w.Round(time.Second), n)
		}
		mu.Lock()
		if s = held[top]; s != nil {
			// A sibling subtest took one meanwhile: share it.
			s.users++
			_ = f.Close()
		} else {
			s = &slot{f: f, users: 1}
			held[top] = s
		}
		mu.Unlock()
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if s.users--; s.users == 0 {
			delete(held, top)
			_ = s.f.Close() // closing the file drops its lock
		}
	})
}

// Idle runs fn with the test's slot given back, for a test that waits on
// something outside it (a database kept down, an app's delay) and keeps
// the machine's cores free meanwhile; it takes a slot again, waiting its
// turn, before it returns. A slot the test shares with its subtests, or
// none (the bound off), is simply kept.
func Idle(t testing.TB, fn func()) {
	t.Helper()
	top, _, _ := strings.Cut(t.Name(), "/")
	mu.Lock()
	s := held[top]
	if s == nil || s.users != 1 {
		mu.Unlock()
		fn()
		return
	}
	free := s.f
	mu.Unlock()
	_ = free.Close()
	fn()
	f, err := acquire(slots())
	if err != nil {
		t.Fatalf("testslot: %v", err)
	}
	mu.Lock()
	s.f = f
	mu.Unlock()
}

func slots() int {
	if v, ok := os.LookupEnv("WEBPILOT_TEST_SLOTS"); ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return n
		}
	}
	return runtime.NumCPU()
}

// acquire takes the first free of the n slot files once every test that
// began waiting before this one has taken one: first come, first served,
// so that a package of many short heavy tests does not keep one of a few
// long ones waiting for ever. A waiter is a locked file in the queue
// directory, named by when it began; one whose lock is free belongs to a
// process that died waiting, and is removed.
func acquire(n int) (*os.File, error) {
	dir := slotDir()
	queue := filepath.Join(dir, "queue")
	if err := os.MkdirAll(queue, 0o700); err != nil {
		return nil, err
	}
	me, name, err := enqueue(queue)
	if err != nil {
		return nil, err
	}
	defer func() {
		// Removed before its lock goes: a waiter's file found unlocked
		// is always a dead one's.
		_ = os.Remove(name)
		_ = me.Close()
	}()
	for {
		if first(queue, filepath.Base(name)) {
			for i := range n {
				f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(i)), os.O_CREATE|os.O_RDWR, 0o600)
				if err != nil {
					return nil, err
				}
				if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
					return f, nil
				}
				_ = f.Close()
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// slotDir is the directory of the slots and their queue, shared by every
// test process of the user.
func slotDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("webpilot-test-slots-%d", os.Getuid()))
}

// enqueue puts a locked waiter file in the queue. It is locked before it
// gets its name there, so that no other waiter ever sees it unlocked.
func enqueue(queue string) (f *os.File, name string, err error) {
	f, err = os.CreateTemp(queue, ".new-")
	if err != nil {
		return nil, "", err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, "", err
	}
	name = filepath.Join(queue, fmt.Sprintf("%020d-%s", time.Now().UnixNano(), strings.TrimPrefix(filepath.Base(f.Name()), ".new-")))
	if err := os.Rename(f.Name(), name); err != nil {
		_ = f.Close()
		return nil, "", err
	}
	return f, name, nil
}

// first says whether no live waiter began before me.
func first(queue, me string) bool {
	entries, err := os.ReadDir(queue)
	if err != nil {
		return true
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name >= me {
			continue
		}
		f, err := os.Open(filepath.Join(queue, name))
		if err != nil {
			continue // taken its slot meanwhile
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			// Its process died waiting.
			_ = os.Remove(f.Name())
			_ = f.Close()
			continue
		}
		_ = f.Close()
		return false
	}
	return true
}

// LongEnv is the variable that admits the long tier (make test-long).
const LongEnv = "WEBPILOT_TEST_LONG"

// Long skips the test unless LongEnv is set to a true value: a heavy test
// that goes again, by another route or at a larger size, over what a test
// of make test already covers (a variant of a flow heal, a second cold
// mode, an outage beside the crash drill's). make test runs the rest on
// two cores in the time CI gives; make test-long runs every test.
func Long(t testing.TB) {
	t.Helper()
	if !long() {
		t.Skipf("long tier: runs under make test-long (%s=1)", LongEnv)
	}
}

func long() bool {
	v, err := strconv.ParseBool(os.Getenv(LongEnv))
	return err == nil && v
}
