// Package jobs defines webpilot's job kinds and payloads, their validation,
// and how jobs travel over NATS JetStream: subjects, the JOBS stream and its
// consumer, publishing, and the embedded server used on one machine.
package jobs

import (
	"encoding/json"

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
func (k Kind) Supported() bool { return k == KindScenario }

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
	Payload  json.RawMessage    `json:"payload,omitempty"` // the input of kinds not supported yet
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
