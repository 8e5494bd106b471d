// Package jobs defines webpilot's job kinds and payloads, their validation,
// and how jobs travel over NATS JetStream: subjects, the JOBS stream and its
// consumer, publishing, and the embedded server used on one machine.
package jobs

import (
	"encoding/json"

	"github.com/google/uuid"

	"github.com/webpilot/webpilot/scenario"
)

// Kind names a type of job.
type Kind string

// Job kinds.
const (
	KindScenario    Kind = "scenario"
	KindExploration Kind = "exploration"
	KindRepair      Kind = "repair"
	KindSuiteRepair Kind = "suite_repair"
)

// Supported reports whether workers can run jobs of this kind yet.
func (k Kind) Supported() bool { return k == KindScenario || k == KindRepair }

// Known reports whether k is a kind the API recognises.
func (k Kind) Known() bool {
	switch k {
	case KindScenario, KindExploration, KindRepair, KindSuiteRepair:
		return true
	}
	return false
}

// Submission is the body of POST /v1/jobs.
type Submission struct {
	Kind     Kind               `json:"kind"`
	Scenario *scenario.Scenario `json:"scenario,omitempty"`
	Repair   *RepairRequest     `json:"repair,omitempty"`
	Payload  json.RawMessage    `json:"payload,omitempty"` // the input of kinds not supported yet
}

// RepairRequest is the input of a repair job: one stored test, replayed
// and repaired where it drifted.
type RepairRequest struct {
	TestID string `json:"test_id"`
	// AutoAccept makes a verified repair the test's script at once;
	// otherwise it is proposed for a person to accept or reject.
	AutoAccept bool              `json:"auto_accept,omitempty"`
	Secrets    map[string]string `json:"secrets,omitempty"`
	// SealedSecrets replaces Secrets once the dispatcher has sealed them.
	SealedSecrets string           `json:"sealed_secrets,omitempty"`
	Options       scenario.Options `json:"options"`
}

// Validate checks a repair request at JSON path at.
func (r *RepairRequest) Validate(v *scenario.ValidationError, at string, urls scenario.URLPolicy) {
	if r.TestID == "" {
		v.Add(at+".test_id", "is required")
	} else if _, err := uuid.Parse(r.TestID); err != nil {
		v.Add(at+".test_id", "must be a test id (a UUID)")
	}
	scenario.ValidateSecrets(v, at, r.Secrets)
	if r.SealedSecrets != "" {
		v.Add(at+".sealed_secrets", "is set by the server; send secrets instead")
	}
	r.Options.Validate(v, at+".options", urls)
}

// Validate checks a submission and returns a ValidationError naming each bad field.
func (s *Submission) Validate(urls scenario.URLPolicy) error {
	var v scenario.ValidationError
	switch {
	case s.Kind == "":
		v.Add("kind", "is required (one of scenario, exploration, repair, suite_repair)")
	case !s.Kind.Known():
		v.Add("kind", "unknown kind %q (one of scenario, exploration, repair, suite_repair)", s.Kind)
	case !s.Kind.Supported():
		v.Add("kind", "kind %q is not supported yet", s.Kind)
	case s.Kind == KindRepair && s.Repair == nil:
		v.Add("repair", "is required for kind repair")
	case s.Kind == KindRepair:
		s.Repair.Validate(&v, "repair", urls)
	case s.Scenario == nil:
		v.Add("scenario", "is required for kind scenario")
	default:
		s.Scenario.Validate(&v, "scenario", urls)
	}
	if len(v) > 0 {
		return v
	}
	return nil
}
