// Package jobs defines webpilot's job kinds and payloads, their validation,
// and how jobs travel over NATS JetStream: subjects, the JOBS stream and its
// consumer, publishing, and the embedded server used on one machine.
package jobs

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/scenario"
)

// Kind names a type of job.
type Kind string

// Job kinds.
const (
	KindScenario    Kind = "scenario"
	KindExploration Kind = "exploration"
	KindReplay      Kind = "replay" // one stored test replayed, nothing changed
	KindRepair      Kind = "repair" // one stored test replayed and its drift repaired
	KindSuiteRun    Kind = "suite_run"
	KindSuiteRepair Kind = "suite_repair"
	// KindProjectList lists an uploaded project's tests with the runner.
	KindProjectList Kind = "project_list"
	// KindProjectRun runs a project's tests: one KindProjectFile child
	// per test file.
	KindProjectRun Kind = "project_run"
	// KindProjectFile runs one test file of a project.
	KindProjectFile Kind = "project_file"
	// KindProjectRepair runs a project and heals its drifted locators where
	// they are defined, proposing the verified patch as a new version.
	KindProjectRepair Kind = "project_repair"
	// KindProjectRepairFile repairs one test file of a project for the
	// project_repair that fanned it out, which merges the files' heals into
	// one patch and verifies it.
	KindProjectRepairFile Kind = "project_repair_file"
	// KindSession is a browser an MCP client drives call by call (the
	// dispatcher's /mcp endpoint opens it).
	KindSession Kind = "session"
)

// Kinds are every kind, in the order the API documents them.
var Kinds = []Kind{KindScenario, KindExploration, KindReplay, KindRepair, KindSuiteRun, KindSuiteRepair,
	KindProjectList, KindProjectRun, KindProjectFile, KindProjectRepair, KindProjectRepairFile, KindSession}

// kindNames lists the kinds a submission may name, for error messages.
const kindNames = "one of scenario, exploration, replay, repair, suite_run, suite_repair, project_run, project_repair, session"

// Submittable reports whether a tenant may submit jobs of this kind
// through POST /v1/jobs (the others are made by the server: a project's
// listing on upload, a run's children).
func (k Kind) Submittable() bool {
	return k.Known() && k != KindProjectList && k != KindProjectFile && k != KindProjectRepairFile
}

// Supported reports whether workers can run jobs of this kind.
func (k Kind) Supported() bool { return k.Known() }

// Known reports whether k is a kind the API recognises.
func (k Kind) Known() bool {
	return slices.Contains(Kinds, k)
}

// RunsCustomerCode reports whether jobs of this kind run a customer's own
// code (in the sandbox), which can take its worker down: such a job is
// stopped after CrashLimit attempts that ended with their worker's death,
// where webpilot's own jobs are tried up to the attempt cap.
func (k Kind) RunsCustomerCode() bool {
	return k == KindProjectList || k == KindProjectFile || k == KindProjectRepair || k == KindProjectRepairFile
}

// CrashLimit is how many of its workers a job running customer code may
// take down before it is failed instead of delivered to the next one.
const CrashLimit = 2

// Bulk reports whether jobs of this kind fan out one child per test.
func (k Kind) Bulk() bool { return k == KindSuiteRun || k == KindSuiteRepair }

// ChildKind is the kind of a bulk job's children.
func (k Kind) ChildKind() Kind {
	if k == KindSuiteRepair {
		return KindRepair
	}
	return KindReplay
}

// Submission is the body of POST /v1/jobs.
type Submission struct {
	Kind     Kind               `json:"kind"`
	Scenario *scenario.Scenario `json:"scenario,omitempty"`
	Repair   *RepairRequest     `json:"repair,omitempty"` // kind repair
	Replay   *RepairRequest     `json:"replay,omitempty"` // kind replay (auto_accept does not apply)
	Suite    *SuiteRequest      `json:"suite,omitempty"`  // kinds suite_run and suite_repair
	// Exploration is the input of kind exploration.
	Exploration *ExplorationRequest `json:"exploration,omitempty"`
	// Project is the input of kind project_run.
	Project *ProjectRequest `json:"project,omitempty"`
	// Session is the input of kind session.
	Session *SessionRequest `json:"session,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"` // the input of kinds not supported yet
}

// Limits of a suite selection.
const (
	MaxSuiteTests = 500
	MaxSuiteTags  = 20
)

// SuiteRequest is the input of a bulk job over a tenant's suite: the listed
// tests, those carrying any of the tags, or (neither given) all of them.
// One child job runs per selected test; options.max_credits is the budget
// of the whole run, which every child's model calls draw from.
type SuiteRequest struct {
	TestIDs []string `json:"test_ids,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	// AutoAccept makes each verified repair its test's script at once
	// (suite_repair only).
	AutoAccept    bool              `json:"auto_accept,omitempty"`
	Secrets       map[string]string `json:"secrets,omitempty"`
	SealedSecrets string            `json:"sealed_secrets,omitempty"`
	Options       scenario.Options  `json:"options"`
}

// ValidateSelection checks a selection of stored tests (their ids, or
// tags) whose fields sit under JSON path at ("" at the top): a suite's
// run and repair, and the stored tests written as a project, pick tests
// by the same rules.
func ValidateSelection(v *scenario.ValidationError, at string, testIDs, tags []string) {
	field := func(name string) string {
		if at == "" {
			return name
		}
		return at + "." + name
	}
	if len(testIDs) > 0 && len(tags) > 0 {
		// Either picks the tests; both would leave it unclear which wins.
		v.Add(field("tags"), "give test_ids or tags, not both")
	}
	if len(testIDs) > MaxSuiteTests {
		v.Add(field("test_ids"), "at most %d tests", MaxSuiteTests)
	}
	seen := map[string]bool{}
	for i, id := range testIDs {
		if _, err := uuid.Parse(id); err != nil {
			v.Add(fmt.Sprintf("%s[%d]", field("test_ids"), i), "must be a test id (a UUID)")
		} else if seen[id] {
			v.Add(fmt.Sprintf("%s[%d]", field("test_ids"), i), "is listed twice")
		}
		seen[id] = true
	}
	scenario.ValidateTags(v, field("tags"), tags)
}

// Validate checks a suite request at JSON path at.
func (r *SuiteRequest) Validate(v *scenario.ValidationError, at string, kind Kind, urls scenario.URLPolicy) {
	ValidateSelection(v, at, r.TestIDs, r.Tags)
	if r.AutoAccept && kind != KindSuiteRepair {
		v.Add(at+".auto_accept", "only a suite_repair proposes versions")
	}
	scenario.ValidateSecrets(v, at, r.Secrets)
	if r.SealedSecrets != "" {
		v.Add(at+".sealed_secrets", "is set by the server; send secrets instead")
	}
	r.Options.Validate(v, at+".options", urls)
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
		v.Add("kind", "is required (%s)", kindNames)
	case !s.Kind.Submittable():
		v.Add("kind", "unknown kind %q (%s)", s.Kind, kindNames)
	case !s.Kind.Supported():
		v.Add("kind", "kind %q is not supported yet", s.Kind)
	case s.Kind == KindRepair && s.Repair == nil:
		v.Add("repair", "is required for kind repair")
	case s.Kind == KindRepair:
		s.Repair.Validate(&v, "repair", urls)
	case s.Kind == KindReplay && s.Replay == nil:
		v.Add("replay", "is required for kind replay")
	case s.Kind == KindReplay:
		if s.Replay.AutoAccept {
			v.Add("replay.auto_accept", "only a repair proposes versions")
		}
		s.Replay.Validate(&v, "replay", urls)
	case s.Kind.Bulk() && s.Suite == nil:
		v.Add("suite", "is required for kind %s", s.Kind)
	case s.Kind.Bulk():
		s.Suite.Validate(&v, "suite", s.Kind, urls)
	case (s.Kind == KindProjectRun || s.Kind == KindProjectRepair) && s.Project == nil:
		v.Add("project", "is required for kind %s", s.Kind)
	case s.Kind == KindProjectRun || s.Kind == KindProjectRepair:
		s.Project.Validate(&v, "project", urls)
		if s.Project.AutoAccept && s.Kind != KindProjectRepair {
			v.Add("project.auto_accept", "only a project_repair proposes versions")
		}
		if s.Kind != KindProjectRepair && (s.Project.BaselineURL != "" || len(s.Project.BaselineOrigins) > 0) {
			v.Add("project.baseline_url", "only a project_repair runs tests on a baseline")
		}
		if a := s.Project.AfterRun; a != "" && s.Kind != KindProjectRepair {
			v.Add("project.after_run", "only a project_repair follows a run")
		} else if _, err := uuid.Parse(a); a != "" && err != nil {
			v.Add("project.after_run", "is not a job id")
		}
	case s.Kind == KindExploration && s.Exploration == nil:
		v.Add("exploration", "is required for kind exploration")
	case s.Kind == KindExploration:
		s.Exploration.Validate(&v, "exploration", urls)
	case s.Kind == KindSession && s.Session == nil:
		v.Add("session", "is required for kind session")
	case s.Kind == KindSession:
		s.Session.Validate(&v, "session", urls)
	case s.Scenario == nil:
		v.Add("scenario", "is required for kind scenario")
	default:
		s.Scenario.Validate(&v, "scenario", urls)
		if p := s.Scenario.Project; p != "" && !ValidProjectName(p) {
			v.Add("scenario.project", "must be a project's name: letters, digits, '.', '_' and '-', at most 100")
		}
	}
	if len(v) > 0 {
		return v
	}
	return nil
}

// ProjectRequest runs an uploaded project's tests with the real runner in
// the sandbox: its current version, or the one named.
type ProjectRequest struct {
	// Name is the project's name (required).
	Name string `json:"name"`
	// Version is a version's digest; empty: the project's current one.
	Version string `json:"version,omitempty"`
	// Files limits the run to these test files.
	Files []string `json:"files,omitempty"`
	// BaseURL, when set, is every test's baseURL (the project's own
	// otherwise); the job's browser may go to its origin.
	BaseURL string `json:"base_url,omitempty"`
	// Origins sends origins the tests name outright (page.goto of an
	// absolute URL, a request fixture's) to others: a staging origin to
	// the app under test. Keys and values are http(s) origins.
	Origins map[string]string `json:"origins,omitempty"`
	// Secrets are given to the tests as environment variables.
	Secrets       map[string]string `json:"secrets,omitempty"`
	SealedSecrets string            `json:"sealed_secrets,omitempty"`
	// BaselineURL names a deployment where the suite still passes
	// (production, the last release): a repair of tests no run on webpilot
	// saw pass first runs them there, to record the elements they act on,
	// then heals against the target (project_repair only). It is every
	// test's baseURL there, as BaseURL is on the target.
	BaselineURL string `json:"baseline_url,omitempty"`
	// BaselineOrigins are Origins for the baseline run.
	BaselineOrigins map[string]string `json:"baseline_origins,omitempty"`
	// AutoAccept makes a verified repair the project's current version at
	// once (project_repair only); otherwise it is proposed.
	AutoAccept bool `json:"auto_accept,omitempty"`
	// AfterRun names the project_run a repair follows (project_repair
	// only): a run of the same version at the same base URL. The files
	// that passed whole in it are not run again, their tests reported
	// passed in it; the others are repaired.
	AfterRun string `json:"after_run,omitempty"`
	// MaxCredits bounds what the run or repair may spend, all its files
	// together (its hold); a file its budget cannot cover is not started.
	MaxCredits float64 `json:"max_credits,omitempty"`
	// Parts, on a part of a run (project_file), is how many parts the
	// run was cut into: the part's share of the runner workers. Set by
	// the worker that cuts the run.
	Parts int `json:"parts,omitempty"`
}

// Browser time is metered: a job holding a browser context (a scenario, a
// replay, a repair, an exploration) or the test runner in the sandbox (a
// project's runs) is charged for the seconds it holds them, as model calls
// are charged for their tokens.
const (
	// BrowserSecondMicro is the price of a second of a browser context or
	// of a project's runner in the sandbox, in micro-credits (0.0005
	// credits; 0.03 a minute).
	BrowserSecondMicro = 500
	// BrowserChunkSeconds is how much browser time a job reserves from its
	// hold at a time while its context is open (0.005 credits).
	BrowserChunkSeconds = 10
	// ReplayHoldSeconds is the browser time a suite run holds per test
	// without max_credits (0.05 credits): its replays make no model call.
	ReplayHoldSeconds = 100
	// FileRunSeconds is the most a project file's run can take (the
	// sandbox's wall time), and so the most it is charged.
	FileRunSeconds = 600
	// RepairRunSeconds is the most a project repair's runs are charged,
	// all its trials together (a repair in one, or the merged patch's
	// verification of a repair done a file at a time).
	RepairRunSeconds = 3 * FileRunSeconds
	// RepairFileSeconds is the most one file's repair is charged (its
	// evidence, baseline and trials together), as a file's run is.
	RepairFileSeconds = FileRunSeconds
)

// RepairHoldSeconds is the browser time a project repair of files test
// files holds: each file's repair for each attempt a crash may take, and
// the merged patch's verification, or a repair in one for each attempt.
func RepairHoldSeconds(files int) int64 {
	return max((CrashLimit+1)*RepairRunSeconds, int64(max(files, 1))*(CrashLimit+1)*RepairFileSeconds+RepairRunSeconds)
}

// projectName is what a project may be called.
var projectName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// ValidProjectName reports whether name may name a project.
func ValidProjectName(name string) bool { return projectName.MatchString(name) }

// Validate checks a project request at JSON path at.
func (r *ProjectRequest) Validate(v *scenario.ValidationError, at string, urls scenario.URLPolicy) {
	if !ValidProjectName(r.Name) {
		v.Add(at+".name", "must be a project's name: letters, digits, '.', '_' and '-', at most 100")
	}
	if r.Version != "" && !digest.MatchString(r.Version) {
		v.Add(at+".version", "must be a version's digest (64 hex digits)")
	}
	if len(r.Files) > MaxSuiteTests {
		v.Add(at+".files", "at most %d files per run", MaxSuiteTests)
	}
	for i, f := range r.Files {
		if f == "" || strings.HasPrefix(f, "/") || strings.Contains(f, "..") {
			v.Add(fmt.Sprintf("%s.files[%d]", at, i), "must be a test file's path in the project")
		}
	}
	validBaseURL(v, at+".base_url", r.BaseURL, remapped(r.Origins, urls))
	validOrigins(v, at+".origins", r.Origins, urls)
	validBaseURL(v, at+".baseline_url", r.BaselineURL, remapped(r.BaselineOrigins, urls))
	validOrigins(v, at+".baseline_origins", r.BaselineOrigins, urls)
	if r.MaxCredits < 0 {
		v.Add(at+".max_credits", "must be a positive number of credits")
	}
	scenario.ValidateSecrets(v, at, r.Secrets)
	if r.SealedSecrets != "" {
		v.Add(at+".sealed_secrets", "is set by the server; send secrets instead")
	}
	if r.Parts != 0 {
		v.Add(at+".parts", "is set by the server: a run is cut into parts by its tests' times")
	}
}

// remapped is urls for a base URL whose origin may be one the request
// remaps: such a base URL is reached at its target, which validOrigins
// checks, so its own host need not resolve (https://staging.acme.test).
func remapped(origins map[string]string, urls scenario.URLPolicy) scenario.URLPolicy {
	return remappedPolicy{origins: origins, next: urls}
}

type remappedPolicy struct {
	origins map[string]string
	next    scenario.URLPolicy
}

func (p remappedPolicy) CheckURL(raw string) error {
	if u, err := url.Parse(raw); err == nil {
		for from := range p.origins {
			if o, err := netguard.ParseOrigin(from); err == nil && strings.EqualFold(o.Scheme, u.Scheme) && strings.EqualFold(o.Host, u.Host) {
				return nil
			}
		}
	}
	return p.next.CheckURL(raw)
}

// validBaseURL checks an optional base URL at JSON path at.
func validBaseURL(v *scenario.ValidationError, at, base string, urls scenario.URLPolicy) {
	if base == "" {
		return
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.Add(at, "must be an absolute http(s) URL")
	} else if err := urls.CheckURL(base); err != nil {
		v.Add(at, "%v", err)
	}
}

// validOrigins checks remapped origins at JSON path at.
func validOrigins(v *scenario.ValidationError, at string, origins map[string]string, urls scenario.URLPolicy) {
	if len(origins) > MaxOrigins {
		v.Add(at, "at most %d origins", MaxOrigins)
	}
	for _, from := range slices.Sorted(maps.Keys(origins)) {
		key := fmt.Sprintf("%s[%q]", at, from)
		if _, err := netguard.ParseOrigin(from); err != nil {
			v.Add(key, "the key must be an http(s) origin (scheme://host[:port]): %v", err)
			continue
		}
		to := origins[from]
		if _, err := netguard.ParseOrigin(to); err != nil {
			v.Add(key, "must be an http(s) origin (scheme://host[:port]): %v", err)
		} else if err := urls.CheckURL(to); err != nil {
			v.Add(key, "%v", err)
		}
	}
}

// MaxOrigins bounds a project request's remapped origins.
const MaxOrigins = 20

var digest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Seal replaces the request's secrets by their sealed form, for storing.
func (r *ProjectRequest) Seal(sealed string) { r.SealedSecrets, r.Secrets = sealed, nil }

// Sealed is the request's sealed secrets, as stored.
func (r *ProjectRequest) Sealed() string { return r.SealedSecrets }

// Seal replaces the request's secrets by their sealed form, for storing.
func (r *SuiteRequest) Seal(sealed string) { r.SealedSecrets, r.Secrets = sealed, nil }

// Seal replaces the request's secrets by their sealed form, for storing.
func (r *RepairRequest) Seal(sealed string) { r.SealedSecrets, r.Secrets = sealed, nil }

// Sealed is the request's sealed secrets, as stored.
func (r *SuiteRequest) Sealed() string { return r.SealedSecrets }

// Sealed is the request's sealed secrets, as stored.
func (r *RepairRequest) Sealed() string { return r.SealedSecrets }
