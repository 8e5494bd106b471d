package testslot

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestASlotIsFreeOnlyOnceItsHolderLetsGo: with one slot, a second taker
// waits until the first closes its file, in this process as in another.
func TestASlotIsFreeOnlyOnceItsHolderLetsGo(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	first, err := acquire(1)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	go func() {
		f, err := acquire(1)
		if err != nil {
			t.Error(err)
		}
		got <- time.Now()
		_ = f.Close()
	}()
	time.Sleep(500 * time.Millisecond)
	released := time.Now()
	_ = first.Close()
	select {
	case at := <-got:
		if at.Before(released) {
			t.Fatalf("the second taker got the slot %s before the first let go", released.Sub(at))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second taker never got the freed slot")
	}
}

// TestSubtestsOfOneTestShareItsSlot: a test's subtests take the slot their
// top-level test holds (with one slot, taking another would never end).
func TestSubtestsOfOneTestShareItsSlot(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("WEBPILOT_TEST_SLOTS", "1")
	Take(t)
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			done := make(chan struct{})
			go func() { Take(t); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("a subtest waited for the slot its test holds")
			}
		})
	}
}

// TestAnIdleTestLendsItsSlot: with the one slot held, another taker gets
// it while the holder is idle, and the holder has it again afterwards
// (the other waits until it lets go).
func TestAnIdleTestLendsItsSlot(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("WEBPILOT_TEST_SLOTS", "1")
	Take(t)
	Idle(t, func() {
		lent := make(chan *os.File, 1)
		go func() {
			f, err := acquire(1)
			if err != nil {
				t.Error(err)
			}
			lent <- f
		}()
		select {
		case f := <-lent:
			_ = f.Close()
		case <-time.After(5 * time.Second):
			t.Fatal("no other taker got the slot of the idle test")
		}
	})
	got := make(chan struct{})
	go func() {
		f, err := acquire(1)
		if err != nil {
			t.Error(err)
		}
		close(got)
		_ = f.Close()
	}()
	select {
	case <-got:
		t.Fatal("another taker got the slot the test holds again")
	case <-time.After(time.Second):
	}
	top := held[t.Name()]
	_ = top.f.Close()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the slot taken back was never freed")
	}
}

// TestTheLongestWaiterTakesTheFreedSlot: with the one slot held, a waiter
// that began first takes it when it is freed, though a later one polls
// as often; a waiter that died waiting keeps no one out.
func TestTheLongestWaiterTakesTheFreedSlot(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	holder, err := acquire(1)
	if err != nil {
		t.Fatal(err)
	}
	// A dead waiter: its file is in the queue, unlocked, from before.
	dir := filepath.Join(slotDir(), "queue")
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d-dead", 1)), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 2)
	take := func(who string) {
		f, err := acquire(1)
		if err != nil {
			t.Error(err)
			return
		}
		order <- who
		time.Sleep(300 * time.Millisecond)
		_ = f.Close()
	}
	go take("first")
	time.Sleep(300 * time.Millisecond)
	go take("second")
	time.Sleep(300 * time.Millisecond)
	_ = holder.Close()
	for _, want := range []string{"first", "second"} {
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("%s took the slot, want %s", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s never took the slot", want)
		}
	}
}

// TestTheLongTierRunsOnlyWhenAsked: a long test is skipped in make test
// and runs when the tier is asked for, by any true spelling.
func TestTheLongTierRunsOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		v    string
		runs bool
	}{{"", false}, {"0", false}, {"false", false}, {"yes", false}, {"1", true}, {"true", true}} {
		t.Setenv(LongEnv, tc.v)
		ran := false
		t.Run(LongEnv+"="+tc.v, func(t *testing.T) {
			Long(t)
			ran = true // a skip ends the subtest before this
		})
		if ran != tc.runs {
			t.Errorf("%s=%q: ran %v, want %v", LongEnv, tc.v, ran, tc.runs)
		}
	}
}
