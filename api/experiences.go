package api

import (
	"net/http"
	"strconv"

	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
)

// ExperienceList is what the tenant's jobs learned about its apps.
type ExperienceList struct {
	Experiences []store.Experience `json:"experiences"`
}

// Deleted counts what a DELETE removed.
type Deleted struct {
	Deleted int64 `json:"deleted"`
}

// experiencesQuery reads the optional origin and id filters.
func experiencesQuery(w http.ResponseWriter, r *http.Request) (origin string, id int64, ok bool) {
	origin = r.URL.Query().Get("origin")
	if v := r.URL.Query().Get("id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			writeError(w, http.StatusBadRequest, "invalid query", []scenario.FieldError{{Field: "id", Message: "must be a positive whole number"}})
			return "", 0, false
		}
		id = n
	}
	return origin, id, true
}

// experiences lets a tenant review what its jobs learned about its apps
// (written by the model from page content, so worth a look).
func (s *Server) experiences(w http.ResponseWriter, r *http.Request) {
	origin, _, ok := experiencesQuery(w, r)
	if !ok {
		return
	}
	list, err := s.store.ListExperiences(r.Context(), tenantFrom(r.Context()).ID, origin)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if list == nil {
		list = []store.Experience{}
	}
	writeJSON(w, http.StatusOK, ExperienceList{Experiences: list})
}

// forgetExperiences deletes one learned note (?id=), an origin's
// (?origin=), or all of the tenant's.
func (s *Server) forgetExperiences(w http.ResponseWriter, r *http.Request) {
	origin, id, ok := experiencesQuery(w, r)
	if !ok {
		return
	}
	n, err := s.store.DeleteExperiences(r.Context(), tenantFrom(r.Context()).ID, origin, id)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, Deleted{Deleted: n})
}
