package exploretest

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// Recorder keeps what an exploration records in memory, merging findings
// by signature as the store does. Model calls are free.
type Recorder struct {
	mu sync.Mutex
	// Occurrences counts each signature's reports; News how often each
	// was recorded as new (once, or a finding was reported twice).
	Occurrences map[string]int
	News        map[string]int
	seqs        map[string]int
	// Last is the latest checkpoint, as it reads back from JSON.
	Last   explore.Checkpoint
	Events []orchestrator.Event
	// files are the artifacts stored, by name.
	files map[string][]byte
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{Occurrences: map[string]int{}, News: map[string]int{}, seqs: map[string]int{}}
}

// History keeps the events.
func (m *Recorder) History(_ context.Context, events []orchestrator.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Events = append(m.Events, events...)
	return nil
}

// Reserve allows every call.
func (m *Recorder) Reserve(context.Context, orchestrator.Call) error { return nil }

// Settle charges nothing.
func (m *Recorder) Settle(context.Context, orchestrator.Call) (int64, int64, error) { return 0, 0, nil }

// Artifact keeps the file.
func (m *Recorder) Artifact(_ context.Context, name, _ string, content []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string][]byte{}
	}
	m.files[name] = content
	return nil
}

// Artifacts returns the files stored so far, by name.
func (m *Recorder) Artifacts() map[string][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string][]byte, len(m.files))
	for k, v := range m.files {
		out[k] = v
	}
	return out
}

// Finding numbers new signatures and counts the others' occurrences.
func (m *Recorder) Finding(_ context.Context, f explore.Finding) (int, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Occurrences[f.Signature]++
	if seq, ok := m.seqs[f.Signature]; ok {
		return seq, false, nil
	}
	m.seqs[f.Signature] = len(m.seqs) + 1
	m.News[f.Signature]++
	return len(m.seqs), true, nil
}

// Progress keeps the checkpoint as the worker stores it (JSON).
func (m *Recorder) Progress(_ context.Context, cp explore.Checkpoint) error {
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Last = explore.Checkpoint{}
	return json.Unmarshal(b, &m.Last)
}
