package worker

import "testing"

// TestFilesSideBySideShareTheRunnersWorkers: a file alone gets every
// runner worker a run may have; a file beside others gets what they
// left, at least one; what a file gives back is taken by the next.
func TestFilesSideBySideShareTheRunnersWorkers(t *testing.T) {
	t.Parallel()
	var r runnerShare
	a, releaseA := r.take(2)
	b, releaseB := r.take(2)
	c, releaseC := r.take(2)
	if a != 2 || b != 1 || c != 1 {
		t.Fatalf("three files side by side got %d, %d and %d workers, want 2, 1, 1", a, b, c)
	}
	releaseA()
	releaseA() // twice is once
	if d, releaseD := r.take(2); d != 1 {
		t.Errorf("beside two files of one worker each a file got %d workers, want 1 (the cap is 2)", d)
	} else {
		releaseD()
	}
	releaseB()
	releaseC()
	if e, _ := r.take(3); e != 3 {
		t.Errorf("alone again a file got %d workers, want 3", e)
	}
}
