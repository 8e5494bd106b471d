package testslot

import (
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
