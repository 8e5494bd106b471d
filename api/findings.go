package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
)

// FindingView is one finding of an exploration as the API shows it.
type FindingView struct {
	Seq      int    `json:"seq"`
	JobID    string `json:"job_id"`
	Type     string `json:"type"`
	Severity string `json:"severity"`
	// Confidence: observed, confirmed (its reproduction fails at its
	// check), unconfirmed or intermittent.
	Confidence string `json:"confidence"`
	// Status against the previous exploration of the app: new or
	// still_open (absent when there was none).
	Status      string             `json:"status,omitempty"`
	Title       string             `json:"title"`
	URL         string             `json:"url"`
	State       string             `json:"state"`
	Signature   string             `json:"signature"`
	Evidence    json.RawMessage    `json:"evidence"`
	Occurrences int                `json:"occurrences"`
	Places      []store.Occurrence `json:"places"`
	// Path is the first-seen action path from the start URL, in words.
	Path         []string        `json:"path"`
	Reproduction json.RawMessage `json:"reproduction,omitempty"`
	FoundAt      time.Time       `json:"found_at"`
}

// FindingList is an exploration's findings.
type FindingList struct {
	JobID    string        `json:"job_id"`
	State    string        `json:"state"`
	Findings []FindingView `json:"findings"`
}

// FindingViewOf is a stored finding as the API shows it.
func FindingViewOf(f store.FindingRecord) FindingView { return findingView(f) }

func findingView(f store.FindingRecord) FindingView {
	v := FindingView{Seq: f.Seq, JobID: f.JobID, Type: f.Type, Severity: f.Severity, Confidence: f.Confidence, Status: f.Status, Title: f.Title, URL: f.URL, State: f.State,
		Signature: f.Signature, Evidence: f.Evidence, Reproduction: f.Reproduction, FoundAt: f.CreatedAt, Path: []string{}}
	_ = json.Unmarshal(f.Occurrences, &v.Places)
	v.Occurrences = len(v.Places)
	var path []orchestrator.ManifestEntry
	if json.Unmarshal(f.Path, &path) == nil {
		for _, e := range path {
			v.Path = append(v.Path, entryWords(e))
		}
	}
	return v
}

// entryWords says what a recorded command did, naming its element the
// way the spec finds it.
func entryWords(e orchestrator.ManifestEntry) string {
	c := e.Command
	target := ""
	if e.Element != nil {
		if e.Element.Name != "" {
			target = e.Element.Role + " " + quote(e.Element.Name)
		} else if e.Element.Text != "" {
			target = e.Element.Tag + " " + quote(e.Element.Text)
		}
	}
	s := string(c.Action)
	if target != "" {
		s += " " + target
	}
	if c.Value != "" {
		s += " " + quote(c.Value)
	}
	return s
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// findings lists a job's findings (and those of its journeys).
func (s *Server) findings(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	fs, err := s.store.Findings(r.Context(), tenantFrom(r.Context()).ID, j.ID)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	out := FindingList{JobID: j.ID, State: string(j.State), Findings: []FindingView{}}
	for _, f := range fs {
		out.Findings = append(out.Findings, findingView(f))
	}
	writeJSON(w, http.StatusOK, out)
}
