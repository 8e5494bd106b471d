package suite_test

import (
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/suite"
)

// TestARunsBudgetFollowsItsTestsAndTheirTimeouts: every test to its own
// timeout on every attempt, each attempt followed by a worker's restart
// (15 s), workers at a time, after a minute's start; never under four
// minutes nor over the ceiling.
func TestARunsBudgetFollowsItsTestsAndTheirTimeouts(t *testing.T) {
	t.Parallel()
	tests := func(n, timeoutMS, retries int) []suite.TestOutcome {
		out := make([]suite.TestOutcome, n)
		for i := range out {
			out[i] = suite.TestOutcome{TimeoutMS: timeoutMS, Retries: retries}
		}
		return out
	}
	for _, c := range []struct {
		name    string
		tests   []suite.TestOutcome
		workers int
		want    time.Duration
	}{
		{"a few quick tests get the floor", tests(3, 5_000, 0), 1, 4 * time.Minute},
		{"25 tests of 30 s, retried twice, on two workers", tests(25, 30_000, 2), 2, 10 * time.Minute},
		{"12 tests of 20 s on one worker", tests(12, 20_000, 0), 1, 8 * time.Minute},
		{"the same on two", tests(12, 20_000, 0), 2, 4*time.Minute + 30*time.Second},
		{"an unknown timeout is the runner's 30 s", tests(6, 0, 0), 1, 5*time.Minute + 30*time.Second},
		{"a failing attempt's restart counts", tests(8, 5_000, 1), 1, 6*time.Minute + 20*time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := suite.Budget(c.tests, c.workers, 10*time.Minute); got != c.want {
				t.Errorf("budget %s, want %s", got, c.want)
			}
		})
	}
}
