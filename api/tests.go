package api

import (
	"errors"
	"net/http"

	"github.com/webpilot/webpilot/store"
)

// tests lists the tenant's stored suite.
func (s *Server) tests(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Tests(r.Context(), tenantFrom(r.Context()).ID)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if list == nil {
		list = []store.Test{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tests": list})
}

// test returns one stored test: scenario, current script and step manifest.
func (s *Server) test(w http.ResponseWriter, r *http.Request) {
	t, err := s.store.GetTest(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "test not found", nil)
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}
