package jobs

import (
	"github.com/webpilot/webpilot/internal/scenario"
)

// SessionRequest is the input of a session job: a browser an MCP client
// drives call by call through the dispatcher, held by one worker.
type SessionRequest struct {
	// Options.AllowedOrigins are where the session may navigate (at least
	// one); Options.Device emulates a phone or tablet; Options.MaxCredits
	// is the session's budget.
	Options scenario.Options `json:"options"`
	// Secrets are typed where a command's value says {{NAME}}.
	Secrets       map[string]string `json:"secrets,omitempty"`
	SealedSecrets string            `json:"sealed_secrets,omitempty"`
	// IdleSeconds ends the session after this long without a call
	// (default DefaultSessionIdle).
	IdleSeconds int `json:"idle_seconds,omitempty"`
}

// Session limits.
const (
	DefaultSessionIdle = 600
	MaxSessionIdle     = 3600
)

// Validate checks a session request at JSON path at.
func (r *SessionRequest) Validate(v *scenario.ValidationError, at string, urls scenario.URLPolicy) {
	if len(r.Options.AllowedOrigins) == 0 {
		v.Add(at+".options.allowed_origins", "name at least one origin the session may navigate to")
	}
	r.Options.Validate(v, at+".options", urls)
	scenario.ValidateSecrets(v, at, r.Secrets)
	if r.SealedSecrets != "" {
		v.Add(at+".sealed_secrets", "is set by the server; send secrets instead")
	}
	if r.IdleSeconds < 0 || r.IdleSeconds > MaxSessionIdle {
		v.Add(at+".idle_seconds", "must be between 0 (the default, %d) and %d", DefaultSessionIdle, MaxSessionIdle)
	}
}

// Seal replaces the secrets with their sealed form.
func (r *SessionRequest) Seal(sealed string) { r.SealedSecrets, r.Secrets = sealed, nil }

// Sealed is the sealed secrets.
func (r *SessionRequest) Sealed() string { return r.SealedSecrets }

// SessionSubject is where the worker holding a session job takes its
// calls (NATS request and reply).
func SessionSubject(jobID string) string { return "webpilot.session." + jobID }
