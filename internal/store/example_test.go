package store_test

import (
	"fmt"

	"github.com/webpilot/webpilot/internal/store"
)

// Every job state, and which of them end a job.
func ExampleJobStates() {
	for _, s := range store.JobStates() {
		fmt.Println(s, s.Terminal())
	}
	// Output:
	// queued false
	// running false
	// waiting false
	// succeeded true
	// failed true
	// cancelled true
	// budget_exhausted true
}
