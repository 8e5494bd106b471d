package store_test

import (
	"testing"

	"github.com/webpilot/webpilot/internal/store"
)

// TestJobStatesAreOneVocabulary: the list holds every state once, the
// terminal ones are exactly those a job ends in, and anything else is not
// a state (the API's filter and the console read the same list).
func TestJobStatesAreOneVocabulary(t *testing.T) {
	t.Parallel()
	seen := map[store.JobState]bool{}
	var terminal []store.JobState
	for _, s := range store.JobStates() {
		if seen[s] || !s.Valid() {
			t.Fatalf("%q listed twice or not valid", s)
		}
		seen[s] = true
		if s.Terminal() {
			terminal = append(terminal, s)
		}
	}
	if len(seen) != 7 || len(terminal) != 4 || store.JobStateWaiting.Terminal() || store.JobStateRunning.Terminal() {
		t.Fatalf("states %v, terminal %v", store.JobStates(), terminal)
	}
	for _, bad := range []store.JobState{"", "Queued", "done"} {
		if bad.Valid() || bad.Terminal() {
			t.Errorf("%q passes as a state", bad)
		}
	}
}
