// Package explore is webpilot's exploratory tester. Given a journey goal
// instead of steps, it drives the app under a budget, a scope and a safety
// policy: the model picks the next actions toward the goal, and when it is
// done (or there is none) a deterministic sweep exercises what the journey
// left untouched. Detectors that never call the model watch every action —
// exceptions, console errors, failed and slow requests, error pages,
// broken links, dead clicks, accessibility — and each finding comes with
// its evidence and the shortest action path that reaches it, from which a
// failing @playwright/test reproduction is written.
//
// Like the orchestrator it knows nothing of NATS or Postgres: the page, the
// model and the recorder are small interfaces declared here.
package explore

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// Page is the browser as an exploration uses it; *browser.Session
// implements it.
type Page interface {
	Navigate(ctx context.Context, url string) error
	URL() string
	Title() string
	Snapshot(ctx context.Context, o browser.SnapshotOptions) (browser.Snapshot, error)
	Execute(ctx context.Context, c browser.Command, o browser.ExecOptions) browser.Outcome
	Settle(ctx context.Context, o browser.SettleOptions) browser.SettleReport
	Read(ctx context.Context, t browser.Target, attr string) (string, *browser.Fingerprint, error)
	// Screenshot is masked as HideInPictures says (see browser.Session).
	Screenshot(fullPage bool) ([]byte, error)
	StorageState() ([]byte, error)
	AvoidInLocators(values []string)
	HideInPictures(shows func(string) bool)
	// Detected lists what the session's detectors saw since t.
	Detected(since time.Time) []browser.Problem
	Activity(ctx context.Context) (browser.Activity, error)
	Axe(ctx context.Context, source string) ([]browser.AxeViolation, error)
	Links(limit int) ([]string, error)
	CheckLink(ctx context.Context, url string, timeout time.Duration) (int, error)
	// Denied lists what the URL policy and the egress proxy refused.
	Denied() []string
	// Remeasure times a GET of url again (see browser.Session).
	Remeasure(ctx context.Context, url string, timeout time.Duration) (time.Duration, error)
}

// Model is the LLM; *llm.Client implements it.
type Model interface {
	Chat(ctx context.Context, r llm.Request) (llm.Reply, error)
	Model() string
}

// Recorder persists what the exploration does as it does it. The model
// calls are reserved and settled exactly as a scenario job's.
type Recorder interface {
	History(ctx context.Context, events []orchestrator.Event) error
	Reserve(ctx context.Context, call orchestrator.Call) error
	Settle(ctx context.Context, call orchestrator.Call) (spent, hold int64, err error)
	// Finding stores a finding, or adds the place to the one of the job
	// with the same signature; isNew says which.
	Finding(ctx context.Context, f Finding) (seq int, isNew bool, err error)
	// Progress stores the checkpoint a later attempt resumes from.
	Progress(ctx context.Context, cp Checkpoint) error
	// Artifact stores a file of the job (a finding's screenshot).
	Artifact(ctx context.Context, name, kind string, content []byte) error
}

// Config is how an exploration's detectors and prompts are tuned; zero
// fields take the defaults.
type Config struct {
	// AxeSource is axe-core's axe.min.js; empty turns the accessibility
	// detector off (and the result says so).
	AxeSource string
	// SlowResponse is the threshold of the slow-response detector; the
	// browser session must be opened with the same value.
	SlowResponse   time.Duration
	MaxLinkChecks  int // per job
	SnapshotBudget int // characters of page representation per prompt
	MaxBatch       int // commands per model decision
	// ProbeTurns is how many turns the model gets on one page template
	// before the crawl moves on.
	ProbeTurns int
	// DeadClickGrace is how long a click that changed nothing is given
	// before it is called dead (effects behind a short timer).
	DeadClickGrace time.Duration
	// Caps on what one exploration records, whatever the pages claim:
	// distinct findings per job and per page, and finding pictures per
	// job. Reaching one is reported in Result.Capped.
	MaxFindings, MaxFindingsPerPage, MaxScreenshots int
}

// Defaults of the caps on what an exploration records.
const (
	DefaultMaxFindings        = 200
	DefaultMaxFindingsPerPage = 40
	DefaultMaxScreenshots     = 60
)

// DefaultSlowResponse is the slow-response threshold by default.
const DefaultSlowResponse = time.Second

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if c.SlowResponse == 0 {
		c.SlowResponse = DefaultSlowResponse
	}
	c.MaxFindings = cmp.Or(c.MaxFindings, DefaultMaxFindings)
	c.MaxFindingsPerPage = cmp.Or(c.MaxFindingsPerPage, DefaultMaxFindingsPerPage)
	c.MaxScreenshots = cmp.Or(c.MaxScreenshots, DefaultMaxScreenshots)
	if c.MaxLinkChecks == 0 {
		c.MaxLinkChecks = 200
	}
	c.ProbeTurns = cmp.Or(c.ProbeTurns, 4)
	if c.SnapshotBudget == 0 {
		c.SnapshotBudget = 10000
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = 5
	}
	if c.DeadClickGrace == 0 {
		c.DeadClickGrace = 700 * time.Millisecond
	}
	return c
}

// Explorer runs explorations. Model may be nil: then the sweep alone runs.
type Explorer struct {
	Page     Page
	Model    Model
	Recorder Recorder
	Config   Config
	Log      *slog.Logger
}

// Input is one exploration.
type Input struct {
	BaseURL string
	Goal    string
	// Data is test data the model may type and the sweep fills fields with.
	Data map[string]string
	// Secrets are typed only by the login; the model never sees them.
	Secrets map[string]string
	Login   *Login
	// MaxActions and MaxDuration bound the exploration (the credit budget
	// is the recorder's hold).
	MaxActions  int
	MaxDuration time.Duration
	// Scope lists allowed path prefixes; Deny the safety policy's words.
	Scope       []string
	Deny        []string
	Experiences []string
	Resume      *Checkpoint
	Cancelled   func() bool
	// Yield is polled between batches; true stops the run with ErrYielded
	// after a checkpoint, so the job can be handed back.
	Yield        func() bool
	CallIDPrefix string
}

// Login signs in before the exploration: the page with the form and the
// names of the secrets to type (the spec reads them from the environment).
type Login struct {
	URL            string
	UsernameSecret string
	PasswordSecret string
}

// ErrYielded means the run stopped between batches because Input.Yield
// asked it to; its last checkpoint is where the next attempt resumes.
var ErrYielded = orchestrator.ErrYielded

// Result is what an exploration produced.
type Result struct {
	Status orchestrator.Status `json:"status"`
	Error  string              `json:"error,omitempty"`
	Goal   string              `json:"goal"`
	// GoalMet says the model reported the journey's goal reached.
	GoalMet bool `json:"goal_met"`
	// Stopped says why the exploration ended.
	Stopped  string    `json:"stopped"`
	Findings []Finding `json:"findings"`
	// Rejected are functional claims of the model that the page did not
	// bear out: never findings.
	Rejected []Claim `json:"rejected_claims,omitempty"`
	// Journey is what the exploration did that worked, as a spec.
	Journey     Journey  `json:"journey"`
	Coverage    Coverage `json:"coverage"`
	Suggestions []string `json:"suggested_scenarios,omitempty"`
	// Plans are scenarios grounded in the flows the exploration went
	// through, in the step language, each a stored test with one call.
	Plans []Plan `json:"plans,omitempty"`
	// Experiences are what the model noted about the app for later jobs.
	Experiences []string  `json:"experiences,omitempty"`
	Actions     int       `json:"actions"`
	Calls       int       `json:"model_calls"`
	Usage       llm.Usage `json:"usage"`
	// Detectors lists the detectors that ran (accessibility needs axe-core).
	Detectors []string `json:"detectors"`
	// NeedsAuthentication lists the pages that asked for a login (401,
	// 403): expected behaviour the explored session was not signed in
	// for, reported apart and never as broken.
	NeedsAuthentication []string `json:"needs_authentication,omitempty"`
	// Noise lists requests to other hosts that failed or that the egress
	// guard refused (analytics, fonts, third-party scripts): reported
	// apart, never as the app's bugs.
	Noise []string `json:"noise,omitempty"`
	// Verification says how many reproductions were verified under
	// @playwright/test and why the others were not (set by Verify, or by
	// the caller that could not run it).
	Verification string `json:"verification,omitempty"`
	// Comparison is how the findings compare with the previous
	// exploration of the same app (set by Compare; nil when none).
	Comparison *Comparison `json:"comparison,omitempty"`
	// Capped lists each cap the exploration reached and what it left out.
	Capped   []string      `json:"capped,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// StartURL is where specs begin (the login page when there is one);
	// Prefix the login's entries, Trace every action that worked after
	// it, and SecretNames what specs read from the environment.
	StartURL    string                       `json:"start_url"`
	Prefix      []orchestrator.ManifestEntry `json:"-"`
	Trace       []orchestrator.ManifestEntry `json:"-"`
	SecretNames []string                     `json:"-"`
}

// Journey is the exploration's own path as a passing spec: every action
// that worked, with a check of each page it reached.
type Journey struct {
	Name     string                      `json:"name"`
	Script   string                      `json:"script"`
	Manifest []orchestrator.ManifestStep `json:"manifest"`
	// Verified says the spec passed under @playwright/test (set by the
	// caller that ran it).
	Verified bool   `json:"verified"`
	Detail   string `json:"detail,omitempty"`
}

// Coverage is the map of what the exploration reached and exercised.
type Coverage struct {
	States      []StateCoverage `json:"states"`
	Transitions []transition    `json:"transitions"`
	Exercised   int             `json:"elements_exercised"`
	Seen        int             `json:"elements_seen"`
	// Covered counts the elements exercised and the links to pages reached.
	Covered int `json:"elements_covered"`
	// Pages is how many page templates were reached.
	Pages int `json:"page_templates"`
	// Frontier are in-scope pages seen linked but never visited.
	Frontier []string `json:"frontier,omitempty"`
}

// StateCoverage is one state of the coverage map.
type StateCoverage struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Title     string   `json:"title,omitempty"`
	Visits    int      `json:"visits"`
	Seen      int      `json:"elements_seen"`
	Exercised int      `json:"elements_exercised"`
	Untouched []string `json:"untouched,omitempty"` // elements never exercised, links to pages not reached
}

// errBudget stops the model part of a run whose hold cannot cover a call.
var errBudget = errors.New("credit budget exhausted")
