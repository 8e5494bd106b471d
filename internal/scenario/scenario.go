// Package scenario defines what a scenario job asks for: a named, ordered
// list of steps against a web app, with test data, secrets and options, and
// how such a request is validated. It has no dependencies so that both the
// API and the orchestrator can use it.
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/webpilot/webpilot/client"
	"github.com/webpilot/webpilot/internal/browser"
)

// Scenario is the input of a scenario job, turned into a @playwright/test spec.
type Scenario struct {
	Name    string            `json:"name"`
	BaseURL string            `json:"base_url"`
	Steps   []Step            `json:"steps"`
	Data    map[string]string `json:"data,omitempty"`    // test data, substituted for {{NAME}}
	Secrets map[string]string `json:"secrets,omitempty"` // typed from {{NAME}}, never shown or stored in the clear
	// SealedSecrets replaces Secrets once the dispatcher has sealed them.
	SealedSecrets string `json:"sealed_secrets,omitempty"`
	// Files are small files upload steps may set on file inputs. They are
	// stored with the job and written into the generated spec, so the test
	// is self-contained; nothing is ever read from a worker's disk.
	Files   []File  `json:"files,omitempty"`
	Options Options `json:"options"`
	// Tags group stored tests for suite runs and repairs ("checkout", "smoke").
	Tags []string `json:"tags,omitempty"`
	// Project names a customer's project of the tenant's: the test is
	// also written as a file of it, in its idiom (its page objects and
	// fixtures where they reach the elements), run by its runner in the
	// sandbox and, when it passes, proposed as a version of the project.
	Project string `json:"project,omitempty"`
}

// File is a file a scenario carries for uploads.
type File struct {
	Name     string `json:"name"`
	MimeType string `json:"mime_type,omitempty"`
	Content  []byte `json:"content"` // base64 in JSON
}

// Limits on the files a scenario carries.
const (
	MaxFiles         = 10
	MaxFileBytes     = 256 << 10
	MaxAllFilesBytes = 512 << 10
)

var (
	fileName = regexp.MustCompile(`^[^/\\\x00-\x1f]{1,100}$`)
	mimeType = regexp.MustCompile(`^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$`)
)

func (sc *Scenario) validateFiles(v *ValidationError, at string) {
	if len(sc.Files) > MaxFiles {
		v.Add(at+".files", "at most %d files, got %d", MaxFiles, len(sc.Files))
	}
	total := 0
	seen := map[string]bool{}
	for i, f := range sc.Files {
		p := fmt.Sprintf("%s.files[%d]", at, i)
		switch {
		case !fileName.MatchString(f.Name) || f.Name == "." || f.Name == "..":
			v.Add(p+".name", "must be a file name of 1 to 100 characters without slashes or control characters")
		case seen[f.Name]:
			v.Add(p+".name", "%q is already the name of another file", f.Name)
		}
		seen[f.Name] = true
		if f.MimeType != "" && !mimeType.MatchString(f.MimeType) {
			v.Add(p+".mime_type", "must be a MIME type such as text/plain")
		}
		if len(f.Content) > MaxFileBytes {
			v.Add(p+".content", "at most %d KiB, got %d bytes", MaxFileBytes>>10, len(f.Content))
		}
		total += len(f.Content)
	}
	if total > MaxAllFilesBytes {
		v.Add(at+".files", "at most %d KiB in all, got %d bytes", MaxAllFilesBytes>>10, total)
	}
}

// Options tune how a scenario job runs; zero values mean the defaults.
type Options struct {
	MaxCredits           float64 `json:"max_credits,omitempty"` // credits held for the job
	MaxIterationsPerStep int     `json:"max_iterations_per_step,omitempty"`
	MaxTotalIterations   int     `json:"max_total_iterations,omitempty"`
	MaxCommandsPerBatch  int     `json:"max_commands_per_batch,omitempty"`
	MaxStepFailures      int     `json:"max_consecutive_step_failures,omitempty"`
	HistoryWindow        int     `json:"history_window,omitempty"`
	MaxToolCalls         int     `json:"max_tool_calls_per_iteration,omitempty"`
	Vision               bool    `json:"vision,omitempty"`                   // send Set-of-Marks screenshots to the model
	CoordinateFallback   bool    `json:"coordinate_fallback,omitempty"`      // allow x/y targets after 3 failures
	FullPage             bool    `json:"full_page_representation,omitempty"` // show the model the whole page, not the viewport
	StepTimeoutSeconds   int     `json:"step_timeout_seconds,omitempty"`
	// NoStepCache makes every step the cheaper tiers cannot take go to the
	// agent, even when the tenant's step cache knows how it went before.
	NoStepCache bool `json:"no_step_cache,omitempty"`
	// Device emulates a phone or tablet by its Playwright name ("Pixel 7",
	// "iPhone 13"): viewport, user agent, touch and scale; the spec uses
	// the same descriptor. Empty is a desktop browser.
	Device string `json:"device,omitempty"`
	// AllowedOrigins are origins besides the base URL's that the agent may
	// navigate to (scheme://host[:port]); by default it stays on the base URL's.
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
}

// Step types. A step with no type is auto: deterministic when the grammar
// resolves it, the agent otherwise.
const (
	StepAuto     = "auto"
	StepAction   = "action"
	StepQuery    = "query"
	StepAIAction = "ai_action"
	StepAIQuery  = "ai_query"
)

// Step is one scenario step: a plain sentence, or an object with an explicit
// type, action and target. In JSON a step may be a bare string.
type Step struct {
	Text      string          `json:"text,omitempty"`
	Type      string          `json:"type,omitempty"`
	Action    browser.Action  `json:"action,omitempty"`
	Target    *Target         `json:"target,omitempty"`
	Value     string          `json:"value,omitempty"`
	Rule      string          `json:"rule,omitempty"`   // query: element_exists, element_absent
	Method    string          `json:"method,omitempty"` // ai_query: extract, observe, assess
	Schema    json.RawMessage `json:"schema,omitempty"` // ai_query extract: JSON schema of the result
	SaveAs    string          `json:"save_as,omitempty"`
	OnFailure string          `json:"on_failure,omitempty"` // stop (default) or continue
}

// Target names an element the way a person or a test would.
type Target struct {
	Role        string `json:"role,omitempty"`
	Name        string `json:"name,omitempty"`
	Label       string `json:"label,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
	Text        string `json:"text,omitempty"`
	TestID      string `json:"test_id,omitempty"`
	CSS         string `json:"css,omitempty"`
}

// Empty reports whether the target names nothing.
func (t *Target) Empty() bool {
	return t == nil || *t == Target{}
}

// UnmarshalJSON accepts a bare string as a step's text, or an object whose
// fields are all known.
func (s *Step) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err == nil {
		*s = Step{Text: text}
		return nil
	}
	type step Step
	var p step
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return &StepDecodeError{err: err}
	}
	*s = Step(p)
	return nil
}

// StepDecodeError is a step that is neither a string nor a valid step object.
type StepDecodeError struct{ err error }

// Error says what is wrong in terms of steps.
func (e *StepDecodeError) Error() string { return StepDecodeMessage(e.err) }

// Unwrap returns the decoding error.
func (e *StepDecodeError) Unwrap() error { return e.err }

// StepDecodeMessage explains a step's decoding error without Go type names.
func StepDecodeMessage(err error) string {
	var se *StepDecodeError
	if errors.As(err, &se) {
		err = se.err
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fmt.Sprintf("field %q must not be a JSON %s", typeErr.Field, typeErr.Value)
	case errors.As(err, &typeErr):
		return fmt.Sprintf("a step is a string or an object, not a JSON %s", typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "a step is a string or an object: " + err.Error()
}

// Describe is a short human description of the step.
func (s Step) Describe() string {
	if s.Text != "" {
		return s.Text
	}
	var b strings.Builder
	b.WriteString(s.Type)
	if s.Action != "" {
		b.WriteString(" " + string(s.Action))
	}
	if s.Rule != "" {
		b.WriteString(" " + s.Rule)
	}
	if s.Target != nil {
		tb, _ := json.Marshal(s.Target)
		b.WriteString(" " + string(tb))
	}
	return b.String()
}

var placeholderName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// MaxSteps bounds a scenario's length.
const MaxSteps = 200

// Validate appends every problem with the scenario to v, naming fields under at.
func (sc *Scenario) Validate(v *ValidationError, at string, urls URLPolicy) {
	if strings.TrimSpace(sc.BaseURL) == "" {
		v.Add(at+".base_url", "is required")
	} else if err := urls.CheckURL(sc.BaseURL); err != nil {
		v.Add(at+".base_url", "%v", err)
	}
	if len(sc.Steps) == 0 {
		v.Add(at+".steps", "at least one step is required")
	}
	if len(sc.Steps) > MaxSteps {
		v.Add(at+".steps", "at most %d steps, got %d", MaxSteps, len(sc.Steps))
	}
	for i, st := range sc.Steps {
		st.validate(v, fmt.Sprintf("%s.steps[%d]", at, i))
		st.checkURLs(v, fmt.Sprintf("%s.steps[%d]", at, i), sc.BaseURL, urls)
		for name := range sc.Secrets {
			if st.navigates() && strings.Contains(st.Text+st.Value, "{{"+name+"}}") {
				v.Add(fmt.Sprintf("%s.steps[%d]", at, i), "secret {{%s}} may only be typed into a field, never put into a URL", name)
			}
		}
	}
	for k := range sc.Data {
		if !placeholderName.MatchString(k) {
			v.Add(at+".data", "name %q must be letters, digits and underscores", k)
		}
	}
	ValidateSecrets(v, at, sc.Secrets)
	for k := range sc.Secrets {
		if _, dup := sc.Data[k]; dup {
			v.Add(at+".secrets."+k, "is also defined in data")
		}
	}
	if sc.SealedSecrets != "" {
		v.Add(at+".sealed_secrets", "is set by the server; send secrets instead")
	}
	sc.validateFiles(v, at)
	ValidateTags(v, at+".tags", sc.Tags)
	sc.Options.Validate(v, at+".options", urls)
}

// ValidateTags checks a list of tags at JSON path at.
func ValidateTags(v *ValidationError, at string, tags []string) {
	if len(tags) > MaxTags {
		v.Add(at, "at most %d tags", MaxTags)
	}
	for i, tag := range tags {
		if !tagName.MatchString(tag) {
			v.Add(fmt.Sprintf("%s[%d]", at, i), "must be 1 to 40 letters, digits, '-', '_', ':' or '.'")
		}
	}
}

// MaxTags is how many tags a test may carry.
const MaxTags = 20

var tagName = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,40}$`)

// ValidateSecrets checks secret names and values at JSON path at.
func ValidateSecrets(v *ValidationError, at string, secrets map[string]string) {
	for k, val := range secrets {
		if !placeholderName.MatchString(k) {
			v.Add(at+".secrets", "name %q must be letters, digits and underscores", k)
		}
		switch n := utf8.RuneCountInString(val); {
		case n == 0:
			v.Add(at+".secrets."+k, "must not be empty")
		case n < MinSecretLength:
			// A secret is taken out of everything a job returns wherever
			// it appears: a value of a character or two is everywhere (the
			// result would be withheld), and where it was gives it away
			// ("{{PIN}} of 3").
			v.Add(at+".secrets."+k, "must be at least %d characters: a shorter value appears by chance in what a job returns, and where it is taken out gives it away", MinSecretLength)
		}
	}
}

// MinSecretLength is the fewest characters a secret's value may have.
const MinSecretLength = 4

// Validate checks options at JSON path at (for example "scenario.options").
func (o Options) Validate(v *ValidationError, at string, urls URLPolicy) {
	if len(o.AllowedOrigins) > 20 {
		v.Add(at+".allowed_origins", "at most 20 origins")
	}
	for i, raw := range o.AllowedOrigins {
		f := fmt.Sprintf("%s.allowed_origins[%d]", at, i)
		u, err := url.Parse(raw)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil:
			v.Add(f, "must be an origin such as https://shop.example.com")
		default:
			if err := urls.CheckURL(raw); err != nil {
				v.Add(f, "%v", err)
			}
		}
	}
	if o.MaxCredits < 0 {
		v.Add(at+".max_credits", "must not be negative")
	}
	if _, ok := browser.DeviceNamed(o.Device); o.Device != "" && !ok {
		v.Add(at+".device", "%q is not a device Playwright emulates; such as %s", o.Device, strings.Join(likeDevices(o.Device), ", "))
	}
	for name, n := range map[string]int{
		"max_iterations_per_step": o.MaxIterationsPerStep, "max_total_iterations": o.MaxTotalIterations,
		"max_commands_per_batch": o.MaxCommandsPerBatch, "max_consecutive_step_failures": o.MaxStepFailures,
		"history_window": o.HistoryWindow, "step_timeout_seconds": o.StepTimeoutSeconds,
		"max_tool_calls_per_iteration": o.MaxToolCalls,
	} {
		if n < 0 || n > 1000 {
			v.Add(at+"."+name, "must be between 0 and 1000")
		}
	}
}

// actions are the browser actions an explicit action step may name.
var actions = map[browser.Action]bool{
	browser.ActionClick: true, browser.ActionDblClick: true, browser.ActionRightClick: true, browser.ActionTap: true, browser.ActionHover: true,
	browser.ActionFill: true, browser.ActionType: true, browser.ActionPress: true, browser.ActionSelect: true,
	browser.ActionCheck: true, browser.ActionUncheck: true, browser.ActionFocus: true, browser.ActionBlur: true,
	browser.ActionScroll: true, browser.ActionNavigate: true, browser.ActionBack: true, browser.ActionForward: true,
	browser.ActionReload: true, browser.ActionWait: true,
}

func (s Step) validate(v *ValidationError, at string) {
	typ := s.Type
	if typ == "" {
		typ = StepAuto
	}
	switch typ {
	case StepAuto, StepAIAction:
		if strings.TrimSpace(s.Text) == "" {
			v.Add(at+".text", "is required for a %s step", typ)
		}
	case StepAction:
		if !actions[s.Action] {
			v.Add(at+".action", "unknown action %q", s.Action)
		}
		needsTarget := s.Action != browser.ActionNavigate && s.Action != browser.ActionBack && s.Action != browser.ActionForward &&
			s.Action != browser.ActionReload && s.Action != browser.ActionWait && s.Action != browser.ActionPress
		if needsTarget && s.Target.Empty() {
			v.Add(at+".target", "is required for action %q", s.Action)
		}
		if (s.Action == browser.ActionType || s.Action == browser.ActionSelect || s.Action == browser.ActionNavigate || s.Action == browser.ActionPress) && s.Value == "" {
			v.Add(at+".value", "is required for action %q", s.Action)
		}
		if s.Action == browser.ActionWait && s.Target.Empty() {
			if n, err := strconv.Atoi(strings.TrimSuffix(s.Value, "ms")); err != nil || n < 0 || n > MaxWaitMS {
				v.Add(at+".value", "a wait is a number of milliseconds from 0 to %d", MaxWaitMS)
			}
		}
	case StepQuery:
		if s.Rule != "element_exists" && s.Rule != "element_absent" {
			v.Add(at+".rule", "must be element_exists or element_absent")
		}
		if s.Target.Empty() {
			v.Add(at+".target", "is required for a query step")
		}
	case StepAIQuery:
		if s.Method != "extract" && s.Method != "observe" && s.Method != "assess" {
			v.Add(at+".method", "must be extract, observe or assess")
		}
		if strings.TrimSpace(s.Text) == "" {
			v.Add(at+".text", "is required for an ai_query step")
		}
		if s.Method == "extract" && s.SaveAs == "" {
			v.Add(at+".save_as", "is required for an extract query")
		}
		if len(s.Schema) > 0 && !json.Valid(s.Schema) {
			v.Add(at+".schema", "is not valid JSON")
		}
	default:
		v.Add(at+".type", "unknown step type %q (auto, action, query, ai_action, ai_query)", s.Type)
	}
	if s.OnFailure != "" && s.OnFailure != "stop" && s.OnFailure != "continue" {
		v.Add(at+".on_failure", "must be stop or continue")
	}
	if s.SaveAs != "" && !placeholderName.MatchString(s.SaveAs) {
		// It becomes a variable name in the generated spec.
		v.Add(at+".save_as", "must be an identifier: letters, digits and underscores, not starting with a digit")
	}
	if m := waitSentence.FindStringSubmatch(strings.TrimSpace(s.Text)); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if strings.HasPrefix(strings.ToLower(m[2]), "s") && err == nil && n <= MaxWaitMS {
			n *= 1000
		}
		if err != nil || n > MaxWaitMS {
			v.Add(at+".text", "a wait is at most %d seconds", MaxWaitMS/1000)
		}
	}
}

// MaxWaitMS bounds a fixed wait step.
const MaxWaitMS = 600_000

// waitSentence is the grammar's fixed wait ("Wait 500ms", "Wait 2 s").
var waitSentence = regexp.MustCompile(`(?i)^wait\s+(\d+)\s*(ms|milliseconds?|s|seconds?)?$`)

// navigates reports whether a step opens a URL: a navigate action, or a
// sentence starting the way the grammar's navigation does.
func (s Step) navigates() bool {
	if s.Type == StepAction {
		return s.Action == browser.ActionNavigate
	}
	t := strings.ToLower(strings.TrimSpace(s.Text))
	for _, p := range []string{"go to ", "open ", "navigate to ", "visit "} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// urlInText finds what a step's text could make the browser load: absolute
// URLs of any scheme, and the schemes that run or reveal local content
// (javascript:, data: documents, file:, the browser's own pages).
var urlInText = regexp.MustCompile(`(?i)\b(?:[a-z][a-z0-9+.-]*://[^\s"'<>\x60]+|(?:javascript|file|chrome|chrome-extension|view-source|devtools|about):[^\s"'<>\x60]*|data:[a-z]+/[a-z0-9.+-]+[^\s"'<>\x60]*)`)

// checkURLs refuses, at submit, every URL a step names that the job could
// never be allowed to load: a navigate action's value (resolved against the
// base URL) and any URL written in a step's text.
func (s Step) checkURLs(v *ValidationError, at, base string, urls URLPolicy) {
	if s.Type == StepAction && s.Action == browser.ActionNavigate && s.Value != "" {
		target, ok := ResolveAgainst(base, s.Value)
		if !ok {
			target = s.Value
		}
		if err := urls.CheckURL(target); err != nil {
			v.Add(at+".value", "%v", err)
		}
	}
	for _, field := range []struct{ name, text string }{{"text", s.Text}, {"value", s.Value}} {
		if field.name == "value" && s.Action == browser.ActionNavigate {
			continue
		}
		for _, m := range urlInText.FindAllString(field.text, 4) {
			m = strings.TrimRight(m, ".,;:!?)]}")
			if err := urls.CheckURL(m); err != nil {
				v.Add(at+"."+field.name, "names %q, which the job may not load: %v", m, err)
			}
		}
		// Host-relative forms (//host, \\host, /\host): a browser resolves
		// them against the page to another host.
		for _, sm := range hostRelative.FindAllStringSubmatch(field.text, 4) {
			m := strings.TrimRight(sm[1], ".,;:!?)]}")
			if target, ok := ResolveAgainst(base, m); ok {
				if err := urls.CheckURL(target); err != nil {
					v.Add(at+"."+field.name, "names %q, which the job may not load: %v", m, err)
				}
			}
		}
	}
}

// hostRelative finds references that keep the page's scheme but name a host
// of their own, slashes written either way as browsers accept them.
var hostRelative = regexp.MustCompile(`(?:^|[\s"'(])([/\\][/\\][^\s"'<>\x60]+)`)

// ResolveAgainst resolves ref against base as a browser would for an
// http(s) page: backslashes are slashes, and a reference starting with two
// of them names a host.
func ResolveAgainst(base, ref string) (string, bool) {
	b, err := url.Parse(base)
	if err != nil {
		return "", false
	}
	ref = strings.TrimLeft(ref, " \t\n\r")
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		ref = strings.ReplaceAll(ref[:i], `\`, "/") + ref[i:]
	} else {
		ref = strings.ReplaceAll(ref, `\`, "/")
	}
	u, err := b.Parse(ref)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// ParseTextScenario reads a plain-text scenario: the first non-empty line may
// be "base: URL" (or the base URL is given separately), "# " lines are
// comments, every other line is a step.
func ParseTextScenario(name, text, baseURL string) Scenario {
	// The client reads the form; a scenario here is its steps' sentences.
	c := client.ScenarioFromText(name, text, baseURL)
	sc := Scenario{Name: c.Name, BaseURL: c.BaseURL}
	for _, st := range c.Steps {
		sc.Steps = append(sc.Steps, Step{Text: st.Text})
	}
	return sc
}

// Origin returns the scheme://host[:port] of the scenario's base URL.
func (sc *Scenario) Origin() string {
	u, err := url.Parse(sc.BaseURL)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// URLPolicy decides whether a URL may be reached; netguard.Policy is one.
type URLPolicy interface {
	CheckURL(raw string) error
}

// FieldError says what is wrong with one field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// ValidationError lists every problem found in a payload.
type ValidationError []FieldError

// Error joins the field messages.
func (v ValidationError) Error() string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = f.Field + ": " + f.Message
	}
	return "invalid job: " + strings.Join(parts, "; ")
}

// Add records a problem with field.
func (v *ValidationError) Add(field, format string, args ...any) {
	*v = append(*v, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Seal replaces the scenario's secrets by their sealed form, for storing.
func (sc *Scenario) Seal(sealed string) { sc.SealedSecrets, sc.Secrets = sealed, nil }

// Sealed is the scenario's sealed secrets, as stored.
func (sc *Scenario) Sealed() string { return sc.SealedSecrets }

// likeDevices names up to five devices whose names share a word with name,
// or a few common ones.
func likeDevices(name string) []string {
	var out []string
	words := strings.Fields(strings.ToLower(name))
	names := browser.DeviceNames()
	// The newest models first: they are the likelier meant.
	slices.Reverse(names)
	for _, d := range names {
		if strings.Contains(d, "landscape") && !strings.Contains(strings.ToLower(name), "landscape") {
			continue
		}
		for _, w := range words {
			if len(out) < 5 && len(w) > 2 && strings.Contains(strings.ToLower(d), w) {
				out = append(out, strconv.Quote(d))
				break
			}
		}
	}
	if len(out) == 0 {
		out = []string{`"Pixel 7"`, `"iPhone 13"`, `"iPad Mini"`, `"Galaxy S9+"`}
	}
	return out
}
