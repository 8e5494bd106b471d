package api

import (
	"encoding/json"
	"net/http"
	"time"
)

// StepCacheView is one step cache entry as the API shows it.
type StepCacheView struct {
	Origin    string     `json:"origin"`
	Path      string     `json:"path"`
	Step      string     `json:"step"`
	Commands  int        `json:"commands"`
	Hits      int        `json:"hits"`
	UpdatedAt time.Time  `json:"updated_at"`
	UsedAt    *time.Time `json:"used_at,omitempty"`
}

// StepCacheList is the tenant's step cache.
type StepCacheList struct {
	Entries []StepCacheView `json:"entries"`
}

// stepCache lists the tenant's step cache (?origin= for one app, ?limit=
// up to 500, default 100): what re-runs take without the model.
func (s *Server) stepCache(w http.ResponseWriter, r *http.Request) {
	limit, ok := limitParam(w, r, 100, 500)
	if !ok {
		return
	}
	list, err := s.store.StepCache(r.Context(), tenantFrom(r.Context()).ID, r.URL.Query().Get("origin"), limit)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	out := make([]StepCacheView, 0, len(list))
	for _, c := range list {
		var entries []json.RawMessage
		_ = json.Unmarshal(c.Entries, &entries)
		n := len(entries)
		out = append(out, StepCacheView{Origin: c.Origin, Path: c.Path, Step: c.Step, Commands: n, Hits: c.Hits, UpdatedAt: c.UpdatedAt, UsedAt: c.UsedAt})
	}
	writeJSON(w, http.StatusOK, StepCacheList{Entries: out})
}

// clearStepCache deletes the tenant's step cache (?origin= for one app):
// the next run of each step goes to the agent again.
func (s *Server) clearStepCache(w http.ResponseWriter, r *http.Request) {
	n, err := s.store.ClearStepCache(r.Context(), tenantFrom(r.Context()).ID, r.URL.Query().Get("origin"))
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, Deleted{Deleted: n})
}
