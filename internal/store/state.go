package store

// JobState is where a job is in its lifecycle. A job is queued when it is
// stored, running while a worker's attempt holds its lease, waiting while a
// bulk job's children run, and then in one terminal state. The store alone
// moves a job between them; its transitions are the methods that claim,
// finish, cancel and fail jobs.
type JobState string

const (
	// JobStateQueued is a stored job with its credit hold, whose message is
	// on the stream or in the outbox, waiting for a worker (or parked while
	// its tenant is at its limit of running jobs).
	JobStateQueued JobState = "queued"
	// JobStateRunning is a job a worker's attempt holds under a lease; a
	// lease that runs out lets another attempt claim it.
	JobStateRunning JobState = "running"
	// JobStateWaiting is a bulk job whose children run; it ends when the
	// last of them does.
	JobStateWaiting JobState = "waiting"
	// JobStateSucceeded is a job that did what it was asked.
	JobStateSucceeded JobState = "succeeded"
	// JobStateFailed is a job that ended without doing it; its error says
	// why.
	JobStateFailed JobState = "failed"
	// JobStateCancelled is a job its tenant cancelled.
	JobStateCancelled JobState = "cancelled"
	// JobStateBudgetExhausted is a job stopped before a model call its
	// credit hold could not cover; what it did is kept.
	JobStateBudgetExhausted JobState = "budget_exhausted"
)

// JobStates are every job state, in the order a job can reach them.
func JobStates() []JobState {
	return []JobState{JobStateQueued, JobStateRunning, JobStateWaiting, JobStateSucceeded, JobStateFailed,
		JobStateCancelled, JobStateBudgetExhausted}
}

// Terminal reports whether a job in state s has ended.
func (s JobState) Terminal() bool {
	switch s {
	case JobStateSucceeded, JobStateFailed, JobStateCancelled, JobStateBudgetExhausted:
		return true
	}
	return false
}

// Valid reports whether s is a job state.
func (s JobState) Valid() bool {
	for _, v := range JobStates() {
		if s == v {
			return true
		}
	}
	return false
}
