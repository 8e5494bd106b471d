package api

import "net/http"

// importRetired answers POST /v1/tests/import, retired: specs a customer
// already has are uploaded as a project, which runs them as written (any
// construct, their config, fixtures and page objects) and repairs them,
// where the import stored only straight-line specs as scenarios.
func (s *Server) importRetired(w http.ResponseWriter, _ *http.Request) {
	writeError(w, http.StatusGone, "importing specs as stored tests is retired: upload them as a project (POST /v1/projects/{name} "+
		"with their files, or webpilot project upload NAME DIR), which runs them as written, with their config, fixtures and page "+
		"objects, and repairs them", nil)
}
