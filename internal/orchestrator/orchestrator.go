// Package orchestrator is webpilot's agent. It runs a scenario's steps in
// order against a browser page: deterministic steps through a small
// imperative grammar that never calls the model, everything else through an
// observe-decide-act-settle-record loop that asks an LLM for structured
// commands. It returns a @playwright/test spec and a per-step report.
//
// It knows nothing of NATS or Postgres: the page, the model and the recorder
// are small interfaces declared here.
package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
)

// Page is the browser as the agent uses it; *browser.Session implements it.
type Page interface {
	Navigate(ctx context.Context, url string) error
	URL() string
	Title() string
	Snapshot(ctx context.Context, o browser.SnapshotOptions) (browser.Snapshot, error)
	Execute(ctx context.Context, c browser.Command, o browser.ExecOptions) browser.Outcome
	Count(ctx context.Context, t browser.Target) (int, error)
	Settle(ctx context.Context, o browser.SettleOptions) browser.SettleReport
	// FillChecked is the verdict on a fill whose effect check was left to
	// the settle after it (ExecOptions.SettleChecksFill).
	FillChecked() error
	// Dialogs lists the native dialogs so far, oldest first; Pages the
	// open pages (tabs, popups); CurrentPage the one commands act on.
	Dialogs() []browser.Dialog
	Pages() []browser.PageInfo
	CurrentPage() int
	StorageState() ([]byte, error)
	// Pictures: every one is masked as HideInPictures says (text and
	// attributes showing a secret, fields, unreadable media), or not taken
	// (browser.ErrUnsafePicture).
	Screenshot(fullPage bool) ([]byte, error)
	// StepShot pictures the viewport for the step timeline.
	StepShot() ([]byte, error)
	HideInPictures(shows func(string) bool)
	SetOfMarks(ctx context.Context, snap browser.Snapshot, limit int) ([]byte, []browser.Mark, error)
	Read(ctx context.Context, t browser.Target, attr string) (string, *browser.Fingerprint, error)
	// Attributes lists an element's identifying attributes, for inspect_page.
	Attributes(ctx context.Context, t browser.Target) ([][2]string, error)
	Document(ctx context.Context) (browser.Document, error)
	// AvoidInLocators keeps the job's secret values out of spec locators.
	AvoidInLocators(values []string)
	// Relocate finds where a recorded element went after the app changed.
	Relocate(ctx context.Context, old browser.Fingerprint, o browser.RelocateOptions) (browser.Relocation, error)
	// Problems lists the app's errors (exceptions, console errors, 5xx) since t.
	Problems(since time.Time) []browser.Problem
	// Denied lists what the egress guard refused so far, oldest first.
	Denied() []string
	// Elements and Pin are what the lexical tier reads (see lexical.Page).
	Elements(ctx context.Context) ([]browser.Element, error)
	Pin(ctx context.Context, path string) (*browser.Fingerprint, error)
	// Describe fingerprints the element a target names now (a cached
	// step's targets are checked against their fingerprints).
	Describe(ctx context.Context, t browser.Target) (*browser.Fingerprint, error)
}

// StepCache remembers how the agent carried out a step on an app, so the
// same step there runs again without the model. Entries belong to the
// implementation's tenant; they never cross tenants.
type StepCache interface {
	// CachedStep returns the commands stored for a step, if any.
	CachedStep(ctx context.Context, key StepKey) ([]ManifestEntry, bool, error)
	// CacheStep stores (or replaces) them.
	CacheStep(ctx context.Context, key StepKey, entries []ManifestEntry) error
}

// StepKey names a step on an app: the origin and path template of the page
// it starts on, and its text normalised (test data substituted, secrets
// left as placeholders).
type StepKey struct {
	Origin string `json:"origin"`
	Path   string `json:"path"`
	Text   string `json:"text"`
}

// Model is the LLM; *llm.Client implements it.
type Model interface {
	Chat(ctx context.Context, r llm.Request) (llm.Reply, error)
	Model() string
}

// Recorder persists what the agent does as it does it.
type Recorder interface {
	// History appends executed commands and tool calls.
	History(ctx context.Context, events []Event) error
	// Reserve sets aside the most a model call can cost (call.Usage is its
	// maximum usage) before it is sent. An error wrapping ErrOverBudget
	// means the job's hold cannot cover it: the call must not be made.
	Reserve(ctx context.Context, call Call) error
	// Settle charges a reserved call at its reported usage (zero usage for
	// a call that failed) and returns how much of the job's hold is spent.
	Settle(ctx context.Context, call Call) (spent, hold int64, err error)
	// Checkpoint stores progress after a completed step.
	Checkpoint(ctx context.Context, cp Checkpoint) error
	// Extracted stores a named value the job extracted.
	Extracted(ctx context.Context, key string, value json.RawMessage) error
	// Artifact stores a file of the job at once (a step's screenshot), so
	// it can be shown while the job runs.
	Artifact(ctx context.Context, a Artifact) error
}

// Event is one executed command or tool call.
type Event struct {
	Step        int
	Iteration   int
	Kind        string // command, verification, tool
	Action      string
	Target      string
	OK          bool
	Error       string
	Observation json.RawMessage
	Duration    time.Duration
}

// Call is one model call: its sequence number within the attempt, the
// model, and its usage (maximal when reserving, reported when settling).
type Call struct {
	Seq   int
	Model string
	Usage llm.Usage
}

// Checkpoint is what a later attempt resumes from.
type Checkpoint struct {
	NextStep int          `json:"next_step"`
	Steps    []StepReport `json:"steps"`
	URL      string       `json:"url"`
	// Document is the page's document when the checkpoint was taken; the
	// commands of Steps that ran on it are replayed after loading it again.
	Document browser.Document `json:"document"`
	// FreshDocument is the document the run loaded into a context without
	// restored storage (the start of the job): resuming on it starts clean.
	FreshDocument string                     `json:"fresh_document,omitempty"`
	StorageState  []byte                     `json:"storage_state,omitempty"` // the recorder seals it
	Extracted     map[string]json.RawMessage `json:"extracted,omitempty"`
	Note          string                     `json:"note,omitempty"`
	Iterations    int                        `json:"iterations"`
	Calls         int                        `json:"calls"`
}

// RestoreStorage says whether a resumed attempt must start with the
// checkpoint's cookies and local storage. Not when the page is still the
// job's first document: replaying its commands from a clean context is what
// the job did, while restored storage could already hold their effects (a
// session a replayed login would then not expect).
func (c *Checkpoint) RestoreStorage() bool {
	return c.Document.ID == "" || c.Document.ID != c.FreshDocument
}

// Limits are the guardrails; zero fields take the defaults.
type Limits struct {
	MaxIterationsPerStep int
	MaxToolCalls         int
	MaxCommandsPerBatch  int
	MaxTotalIterations   int
	MaxStepFailures      int
	HistoryWindow        int
	ExperiencesCap       int
	SnapshotBudget       int // characters of page representation
	StepTimeout          time.Duration
}

// DefaultLimits are the brief's defaults.
func DefaultLimits() Limits {
	return Limits{MaxIterationsPerStep: 8, MaxToolCalls: 5, MaxCommandsPerBatch: 5, MaxTotalIterations: 50,
		MaxStepFailures: 2, HistoryWindow: 7, ExperiencesCap: 20, SnapshotBudget: 12000, StepTimeout: 3 * time.Minute}
}

func (l Limits) withOptions(o scenario.Options) Limits {
	set := func(dst *int, v int) {
		if v > 0 {
			*dst = v
		}
	}
	set(&l.MaxIterationsPerStep, o.MaxIterationsPerStep)
	set(&l.MaxTotalIterations, o.MaxTotalIterations)
	set(&l.MaxCommandsPerBatch, o.MaxCommandsPerBatch)
	set(&l.MaxStepFailures, o.MaxStepFailures)
	set(&l.HistoryWindow, o.HistoryWindow)
	set(&l.MaxToolCalls, o.MaxToolCalls)
	if o.StepTimeoutSeconds > 0 {
		l.StepTimeout = time.Duration(o.StepTimeoutSeconds) * time.Second
	}
	return l
}

// Input is one job for the agent.
type Input struct {
	Scenario    scenario.Scenario
	Secrets     map[string]string // opened by the caller; typed into fields, never shown
	Experiences []string          // learned on earlier jobs on the same origin
	Resume      *Checkpoint
	Cancelled   func() bool // polled between iterations; nil means never
	// Yield is polled at every step boundary (after the checkpoint): when it
	// says true the run stops with ErrYielded so the job can be handed back.
	Yield func() bool
	// CallIDPrefix, when set, names each model call "<prefix>/<seq>" to the
	// endpoint (X-Client-Request-Id), matching the call's ledger entry.
	CallIDPrefix string
	// Replay runs a stored test from its manifest (and repairs it when
	// Replay.Repair is set) instead of generating its steps.
	Replay *Replay
	// StepShots pictures the page after each step for the job's timeline
	// (StepReport.Screenshot names the artifact). Form fields are masked
	// when the scenario has secrets.
	StepShots bool
}

// Status is how a run ended (a scenario's, a replay's or an
// exploration's): one of the job's terminal states, as the store defines
// them, which the worker makes the job's.
type Status = store.JobState

const (
	// StatusSucceeded: every step (or the exploration) did what it asked.
	StatusSucceeded = store.JobStateSucceeded
	// StatusFailed: a step failed, or the run could not go on; the
	// result's error says why.
	StatusFailed = store.JobStateFailed
	// StatusCancelled: the tenant cancelled the job.
	StatusCancelled = store.JobStateCancelled
	// StatusBudgetExhausted: stopped before a model call the job's credit
	// hold could not cover; what was done is kept.
	StatusBudgetExhausted = store.JobStateBudgetExhausted
)

// Result is what a run produced.
type Result struct {
	Status      Status                     `json:"status"`
	Error       string                     `json:"error,omitempty"`
	Steps       []StepReport               `json:"steps"`
	Script      string                     `json:"script"`
	Manifest    []ManifestStep             `json:"manifest"`
	Extracted   map[string]json.RawMessage `json:"extracted,omitempty"`
	Experiences []string                   `json:"experiences,omitempty"`
	Usage       llm.Usage                  `json:"usage"`
	Timing      Timing                     `json:"timing"`
	// Tiers counts the steps by the tier that took them.
	Tiers map[string]int `json:"tiers,omitempty"`
	// Verdict is a replay's finding (replays only).
	Verdict Verdict `json:"verdict,omitempty"`
	// Scenario is the test's scenario as the replay left it (steps a
	// repair found obsolete removed); Script and Manifest follow it.
	Scenario *scenario.Scenario `json:"scenario,omitempty"`
	// Blocked is what the egress guard refused outside any step (opening
	// the start URL, a redirect of it); each step reports its own.
	Blocked []string `json:"blocked,omitempty"`
	// Artifacts are files for the job (failing states' screenshots).
	Artifacts []Artifact `json:"-"`
}

// Timing splits a run's wall time.
type Timing struct {
	Total   time.Duration `json:"total_ns"`
	Browser time.Duration `json:"browser_ns"` // navigation, commands, snapshots
	Settle  time.Duration `json:"settle_ns"`
	Model   time.Duration `json:"model_ns"`
	Persist time.Duration `json:"persist_ns"` // recorder calls
}

// StepReport says how one step went.
type StepReport struct {
	Index      int                    `json:"index"`
	Goal       string                 `json:"goal"`
	Type       string                 `json:"type"`
	Tier       string                 `json:"tier"` // see the Tier constants
	Status     string                 `json:"status"`
	Error      string                 `json:"error,omitempty"`
	Commands   []CommandReport        `json:"commands"`
	Iterations int                    `json:"iterations,omitempty"`
	Usage      llm.Usage              `json:"usage"`
	Credits    int64                  `json:"credits_micro,omitempty"`
	Duration   time.Duration          `json:"duration_ns"`
	Settle     []browser.SettleReport `json:"settle,omitempty"`
	Delta      *browser.Delta         `json:"delta,omitempty"`
	Notes      []string               `json:"notes,omitempty"`   // blockers cleared, step re-evaluations
	Blocked    []string               `json:"blocked,omitempty"` // what the egress guard refused during the step
	Result     json.RawMessage        `json:"result,omitempty"`  // an ai_query's answer
	SaveAs     string                 `json:"save_as,omitempty"` // where an extract's result was saved
	Lines      []string               `json:"lines,omitempty"`   // spec lines this step contributed
	Manifest   []ManifestEntry        `json:"manifest,omitempty"`
	// Repair is how a replayed step went (replays only).
	Repair *StepRepair `json:"repair,omitempty"`
	// Screenshot names the artifact picturing the page after the step
	// (with Input.StepShots).
	Screenshot string `json:"screenshot,omitempty"`
}

// Tiers a generated step is resolved by, cheapest first.
const (
	TierDeterministic = "deterministic" // the strict grammar, or an explicit action
	TierLexical       = "lexical"       // a plain sentence matched against the page (see package lexical)
	TierCached        = "cached"        // what the agent did for the same step on the same app before
	// TierAgent is the model's (it is also the last repair tier).
)

// Step statuses.
const (
	StepPassed  = "passed"
	StepFailed  = "failed"
	StepSkipped = "skipped"
)

// CommandReport is one command as the report shows it (secrets as placeholders).
type CommandReport struct {
	Command browser.Command `json:"command"`
	// Words are the words of the step the command carries out (the clause
	// a fast tier read it from).
	Words    string        `json:"words,omitempty"`
	OK       bool          `json:"ok"`
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Waited is the part of Duration spent waiting for the page (the
	// target to appear, the condition to hold); the spec's timeout covers it.
	Waited  time.Duration `json:"waited_ns,omitempty"`
	Locator string        `json:"locator,omitempty"` // as written in the spec
	// Document is the id of the document the command ran on (see
	// browser.Document); resume replays the commands of the last one.
	Document string `json:"document,omitempty"`
	// Page is the page (1 is the first; popups count on) it ran on.
	Page int `json:"page,omitempty"`
	// Via is how it was carried out where the spec must do the same (see browser.Outcome).
	Via string `json:"via,omitempty"`
	// Dialogs and Opened are what the command caused: the spec answers
	// the same dialogs and waits for the same popups around it.
	Dialogs []browser.Dialog `json:"dialogs,omitempty"`
	Opened  []int            `json:"opened,omitempty"`
}

// ManifestEntry pairs a spec line's command with its target's fingerprint.
type ManifestEntry struct {
	Command browser.Command      `json:"command"`
	Element *browser.Fingerprint `json:"element,omitempty"`
	// Timeout is what the spec line allows the command (0: the runner's default).
	Timeout time.Duration `json:"timeout_ns,omitempty"`
}

// ManifestStep is one step's entries.
type ManifestStep struct {
	Step    int             `json:"step"`
	Goal    string          `json:"goal"`
	Entries []ManifestEntry `json:"entries"`
}

// ErrNoModel means a step needed the agent and no model is configured.
var ErrNoModel = errors.New("no LLM configured (set OPENAI_API_KEY)")

// ErrOverBudget is what a Recorder's Reserve wraps when the job's hold
// cannot cover a call's maximum cost.
var ErrOverBudget = errors.New("the job's credit hold cannot cover the next model call")

// ErrYielded means the run stopped at a step boundary because Input.Yield
// asked it to; its last checkpoint is where the next attempt resumes.
var ErrYielded = errors.New("run yielded at a step boundary")

// errBudget stops a run whose hold cannot cover its next model call.
var errBudget = errors.New("credit budget exhausted")

// errCancelled stops a run whose cancellation was requested.
var errCancelled = errors.New("cancelled")
