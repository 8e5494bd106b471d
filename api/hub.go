package api

import (
	"context"
	"sync"
	"sync/atomic"
)

// hub fans the database's job-change notifications out to progress
// streams: one listening connection for all watchers, instead of a poll per
// watcher.
type hub struct {
	live atomic.Bool
	mu   sync.Mutex
	subs map[string]map[chan struct{}]bool
	// streams counts each tenant's open streams, to bound their cost.
	streams map[string]int
}

func newHub() *hub {
	return &hub{subs: map[string]map[chan struct{}]bool{}, streams: map[string]int{}}
}

// subscribe returns a channel signalled when jobID changes.
func (h *hub) subscribe(jobID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs[jobID] == nil {
		h.subs[jobID] = map[chan struct{}]bool{}
	}
	h.subs[jobID][ch] = true
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[jobID], ch)
		if len(h.subs[jobID]) == 0 {
			delete(h.subs, jobID)
		}
		h.mu.Unlock()
	}
}

func (h *hub) notify(jobID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[jobID] {
		select {
		case ch <- struct{}{}:
		default: // already signalled
		}
	}
}

// setLive records whether notifications flow; when they resume, every
// watcher reads again, since changes may have been missed meanwhile.
func (h *hub) setLive(live bool) {
	if was := h.live.Swap(live); live && !was {
		h.mu.Lock()
		for _, subs := range h.subs {
			for ch := range subs {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
		h.mu.Unlock()
	}
}

// open counts a tenant's stream; false means it has max open already.
func (h *hub) open(tenantID string, max int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streams[tenantID] >= max {
		return false
	}
	h.streams[tenantID]++
	return true
}

func (h *hub) close(tenantID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streams[tenantID]--; h.streams[tenantID] <= 0 {
		delete(h.streams, tenantID)
	}
}

// FollowChanges feeds progress streams from the database's job-change
// notifications until ctx ends. Without it, streams poll.
func (s *Server) FollowChanges(ctx context.Context) {
	s.store.ListenJobChanges(ctx, s.hub.notify, s.hub.setLive)
}

// Watch follows a job's changes for a progress stream outside the API (the
// console's): changed is signalled when the job changes, while the change
// feed is live (poll as well: it may not be). ok is false when the tenant
// already has as many streams open as it may; stop ends the watch.
func (s *Server) Watch(tenantID, jobID string) (changed <-chan struct{}, stop func(), ok bool) {
	if !s.hub.open(tenantID, s.cfg.MaxStreams) {
		return nil, nil, false
	}
	ch, unsubscribe := s.hub.subscribe(jobID)
	return ch, func() { unsubscribe(); s.hub.close(tenantID) }, true
}
