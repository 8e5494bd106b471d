package orchestrator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/lexical"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/scenario"
)

// Agent runs scenarios. Model may be nil: then only deterministic steps run.
type Agent struct {
	Page     Page
	Model    Model
	Recorder Recorder
	// Cache, when set, keeps what the agent did per step and app for the
	// next run (see StepCache).
	Cache  StepCache
	Limits Limits
	Log    *slog.Logger
}

// run is the state of one scenario run.
type run struct {
	*Agent
	artifacts []Artifact
	// replayMark is when the replayed step before this one began.
	replayMark time.Time
	// pagesSeen is how many pages the last batch knew of.
	pagesSeen int
	in        Input
	sc        scenario.Scenario
	limits    Limits
	secrets   *secrets
	vars      map[string]string // test data and extracted values for {{NAME}}
	steps     []StepReport
	extracted map[string]json.RawMessage
	learned   []string
	note      string
	noteStep  int // the step the note was written in
	iters     int
	calls     int
	all       []Event // this attempt's history, newest last: the prompt's window and recall_history
	usage     llm.Usage
	timing    Timing
	spec      *specWriter
	origins   origins // where navigation may go
	// freshDoc is the document loaded into a context without restored
	// storage, if the page is still on it (see Checkpoint.RestoreStorage).
	freshDoc   string
	budgetNote string   // why the hold could not cover the next call
	boundary   string   // frames untrusted content in prompts; a page cannot guess it
	blocksSeen int      // egress refusals already reported
	blocked    []string // refusals outside any step (Result.Blocked)
	// named is what the last step named, when the fast tiers read all of
	// it, for the next step's pronouns ("untick the third one").
	named lexical.Referent
	files []browser.File
	// nextView is the representation the last batch took after settling: the
	// next one the model sees, and the "before" of the next delta.
	nextView *browser.Snapshot
	// unsettled is the wait a batch nobody looked at after left short (see
	// batchWith); the next representation takes it up.
	unsettled *browser.SettleOptions
	// pending is when the last action ended, until the first check after
	// it holds: the spec's check must allow for what the job waited for in
	// between (see dependentWait).
	pending *pendingCheck
}

// NewBoundary returns a random marker that untrusted blocks of a prompt are
// framed with: a page that prints a closing marker cannot forge this one.
func NewBoundary() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "UNTRUSTED-" + hex.EncodeToString(b)
}

// Run executes the scenario and returns its result. Errors of the page or
// the model end the run with a failed status; only a recorder failure that
// means the attempt was superseded is returned as an error.
func (a *Agent) Run(ctx context.Context, in Input) (Result, error) {
	start := time.Now()
	if a.Log == nil {
		a.Log = slog.Default()
	}
	limits := a.Limits
	if limits.MaxIterationsPerStep == 0 {
		limits = DefaultLimits()
	}
	r := &run{Agent: a, in: in, sc: in.Scenario, limits: limits.withOptions(in.Scenario.Options),
		secrets: newSecrets(in.Secrets), vars: map[string]string{}, extracted: map[string]json.RawMessage{},
		origins: originsOf(in.Scenario)}
	for k, v := range in.Scenario.Data {
		r.vars[k] = v
	}
	r.guardSecrets(in.Secrets)
	for _, f := range in.Scenario.Files {
		r.files = append(r.files, browser.File{Name: f.Name, MimeType: f.MimeType, Content: f.Content})
	}
	r.spec = newSpecWriter(r.sc, r.secrets, r.vars, r.files)
	// Experiences from earlier jobs were written by a model reading pages:
	// only those that pass today's rules are shown.
	var exps []string
	for _, e := range in.Experiences {
		if r.safeExperience(e) {
			exps = append(exps, e)
		}
	}
	r.in.Experiences = exps
	r.boundary = NewBoundary()
	res, err := r.execute(ctx)
	res.Timing = r.timing
	res.Timing.Total = time.Since(start)
	return res, err
}

// guardSecrets keeps the run's secret values out of spec locators, and has
// every picture it takes paint over what shows one.
func (r *run) guardSecrets(secrets map[string]string) {
	var values []string
	for _, v := range secrets {
		values = append(values, v)
	}
	r.Page.AvoidInLocators(values)
	if len(r.secrets.forms) > 0 {
		r.Page.HideInPictures(r.secrets.shows)
	} else {
		r.Page.HideInPictures(nil)
	}
}

func (r *run) execute(ctx context.Context) (Result, error) {
	first := 0
	if cp := r.in.Resume; cp != nil {
		first, r.steps, r.note, r.iters, r.calls = cp.NextStep, cp.Steps, cp.Note, cp.Iterations, cp.Calls
		r.noteStep = cp.NextStep - 1
		for k, v := range cp.Extracted {
			r.extracted[k] = v
			r.setVar(k, v)
		}
		for _, s := range r.steps {
			r.usage = addUsage(r.usage, s.Usage)
		}
		r.spec.recall(r.steps)
		t := time.Now()
		err := r.rebuild(ctx, cp)
		r.timing.Browser += time.Since(t)
		if err != nil {
			if ctx.Err() != nil {
				return r.result(StatusFailed, err.Error()), ctx.Err()
			}
			return r.result(StatusFailed, "resume: "+r.secrets.redact(err.Error())), nil
		}
	} else {
		t := time.Now()
		err := r.Page.Navigate(ctx, r.sc.BaseURL)
		r.timing.Browser += time.Since(t)
		if err != nil {
			// What the guard refused on the way (a redirect of the start
			// URL) is reported as such, not only in the error.
			var opening StepReport
			if events := r.blockEvents(&opening, 0); len(events) > 0 {
				r.blocked = opening.Blocked
				if herr := r.persist(func() error { return r.Recorder.History(ctx, events) }); herr != nil {
					r.Log.Warn("history not recorded", "err", herr)
				}
			}
			return r.result(StatusFailed, fmt.Sprintf("open %s: %v", r.sc.BaseURL, err)), nil
		}
		if doc, err := r.Page.Document(ctx); err == nil {
			r.freshDoc = doc.ID
		}
	}
	r.pagesSeen = len(r.Page.Pages())
	failures := 0
	for i := first; i < len(r.sc.Steps); i++ {
		if r.cancelled() {
			return r.result(StatusCancelled, "cancelled at step "+fmt.Sprint(i+1)), nil
		}
		if r.in.Yield != nil && r.in.Yield() {
			return r.result(StatusFailed, fmt.Sprintf("handed back before step %d", i+1)), ErrYielded
		}
		rep, err := r.runStep(ctx, i)
		if r.in.StepShots && err == nil {
			r.stepShot(ctx, &rep)
		}
		r.steps = append(r.steps, rep)
		r.usage = addUsage(r.usage, rep.Usage)
		switch {
		case errors.Is(err, errBudget):
			return r.result(StatusBudgetExhausted, fmt.Sprintf("step %d: stopped before a model call the job's credit hold could not cover (%s)", i+1, r.budgetNote)), nil
		case errors.Is(err, errCancelled):
			return r.result(StatusCancelled, fmt.Sprintf("cancelled during step %d", i+1)), nil
		case err != nil:
			return r.result(StatusFailed, err.Error()), err
		}
		if rep.Status == StepFailed {
			failures++
			if r.sc.Steps[i].OnFailure != "continue" {
				return r.result(StatusFailed, fmt.Sprintf("step %d (%s): %s", i+1, rep.Goal, rep.Error)), nil
			}
			if failures >= r.limits.MaxStepFailures {
				return r.result(StatusFailed, fmt.Sprintf("%d consecutive steps failed; last: step %d (%s): %s", failures, i+1, rep.Goal, rep.Error)), nil
			}
		} else {
			failures = 0
		}
		if err := r.checkpoint(ctx, i+1); err != nil {
			return r.result(StatusFailed, err.Error()), err
		}
	}
	if err := ctx.Err(); err != nil {
		return r.result(StatusFailed, err.Error()), err
	}
	res := r.result(StatusSucceeded, "")
	for _, s := range r.steps {
		if s.Status == StepFailed {
			res.Status, res.Error = StatusFailed, fmt.Sprintf("step %d (%s): %s", s.Index+1, s.Goal, s.Error)
			break
		}
	}
	return res, nil
}

func (r *run) checkpoint(ctx context.Context, next int) error {
	cp := Checkpoint{NextStep: next, Steps: r.steps, URL: r.secrets.redact(r.Page.URL()), Extracted: r.extracted, Note: r.note,
		Iterations: r.iters, Calls: r.calls}
	// Everything in a checkpoint but the document and the storage state
	// (which the recorder seals) is redacted.
	if red, ok := redactJSON(r.secrets, cp); ok {
		cp = red
	}
	t := time.Now()
	if doc, err := r.Page.Document(ctx); err == nil {
		cp.Document = doc
		if doc.ID == r.freshDoc {
			cp.FreshDocument = doc.ID
		}
	}
	if st, err := r.Page.StorageState(); err == nil {
		cp.StorageState = st
	}
	r.timing.Browser += time.Since(t)
	return r.persist(func() error { return r.Recorder.Checkpoint(ctx, cp) })
}

// stepShot pictures the page after a step, once what the step started has
// settled, and stores it at once. A picture that cannot be taken or stored
// costs the job nothing but the picture.
func (r *run) stepShot(ctx context.Context, rep *StepReport) {
	t := time.Now()
	r.catchUp(ctx)
	shot, err := r.Page.StepShot()
	r.timing.Browser += time.Since(t)
	if errors.Is(err, browser.ErrUnsafePicture) {
		rep.Notes = append(rep.Notes, r.secrets.redact(err.Error()))
		return
	}
	if err != nil {
		r.Log.Debug("step screenshot failed", "step", rep.Index+1, "err", err)
		return
	}
	// The run's boundary is random: a resumed attempt's pictures never
	// take the name of an earlier attempt's.
	name := fmt.Sprintf("step-%d-%s.jpg", rep.Index+1, strings.TrimPrefix(r.boundary, "UNTRUSTED-")[:8])
	if err := r.persist(func() error { return r.Recorder.Artifact(ctx, Artifact{Kind: "step", Name: name, Content: shot}) }); err != nil {
		r.Log.Warn("storing a step screenshot failed", "step", rep.Index+1, "err", err)
		return
	}
	rep.Screenshot = name
}

func (r *run) persist(fn func() error) error {
	t := time.Now()
	err := fn()
	r.timing.Persist += time.Since(t)
	return err
}

func (r *run) cancelled() bool {
	return r.in.Cancelled != nil && r.in.Cancelled()
}

func (r *run) result(status Status, msg string) Result {
	res := Result{Status: status, Error: r.secrets.redact(msg), Steps: r.steps, Extracted: r.extracted, Usage: r.usage, Experiences: r.learned,
		Artifacts: r.artifacts, Blocked: r.blocked}
	sc, kept := r.sc, r.steps
	if r.in.Replay != nil {
		res.Verdict = verdict(status, r.steps, r.in.Replay.Repair)
		sc, kept = repairedScenario(r.sc, r.steps)
		res.Scenario = &sc
	}
	res.Script = emitSpec(sc, kept)
	for _, s := range r.steps {
		if s.Tier != "" {
			if res.Tiers == nil {
				res.Tiers = map[string]int{}
			}
			res.Tiers[s.Tier]++
		}
	}
	for _, s := range kept {
		if len(s.Manifest) > 0 {
			res.Manifest = append(res.Manifest, ManifestStep{Step: s.Index + 1, Goal: s.Goal, Entries: s.Manifest})
		}
	}
	red, ok := redactJSON(r.secrets, res)
	if !ok {
		// Never store what could not be redacted whole.
		return Result{Status: StatusFailed, Error: "the result could not be redacted of the job's secrets", Script: res.Script, Usage: res.Usage}
	}
	return red
}

// runStep runs one step through the tier its type and text call for.
func (r *run) runStep(ctx context.Context, i int) (StepReport, error) {
	st := r.sc.Steps[i]
	typ := st.Type
	if typ == "" {
		typ = scenario.StepAuto
	}
	rep := StepReport{Index: i, Goal: st.Describe(), Type: typ}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, r.limits.StepTimeout)
	defer cancel()

	var err error
	entries, replayed := r.manifestFor(i)
	switch {
	case replayed:
		err = r.replayStep(ctx, &rep, i, entries)
	default:
		err = r.generateStep(ctx, &rep, i, st, typ)
	}
	if rep.Status == "" {
		rep.Status = StepPassed
	}
	if rep.Status == StepFailed && ctx.Err() != nil && rep.Error == "" {
		rep.Error = "step timed out"
	}
	rep.Lines = r.spec.stepLines(rep)
	rep.Duration = time.Since(start)
	return rep, err
}

// generateStep runs a step through the tier its type and text call for.
func (r *run) generateStep(ctx context.Context, rep *StepReport, i int, st scenario.Step, typ string) error {
	var err error
	// What this step names is known only when the fast tiers read all of
	// it (autoStep says); a step after any other names nothing to point at.
	prior := r.named.NextStep()
	r.named = lexical.Referent{}
	switch typ {
	case scenario.StepAction:
		rep.Tier = TierDeterministic
		cmd, cerr := explicitCommand(st)
		if cerr != nil {
			rep.Status, rep.Error = StepFailed, cerr.Error()
			break
		}
		r.deterministic(ctx, rep, []browser.Command{cmd})
	case scenario.StepQuery:
		rep.Tier = TierDeterministic
		r.query(ctx, rep, st)
	case scenario.StepAuto:
		err = r.autoStep(ctx, rep, i, st, prior)
	default:
		err = r.viaAgent(ctx, rep, i, st, "")
	}
	return err
}

// viaAgent takes a step from the tenant's step cache or, failing that,
// from the agent, and caches what the agent did. why is what the cheaper
// tiers said of the step ("" for a step only the agent takes); it is what
// fails the step when no model is configured, and what the model is told.
func (r *run) viaAgent(ctx context.Context, rep *StepReport, i int, st scenario.Step, why string) error {
	key, cacheable := r.cacheKey(st)
	if cacheable && r.fromCache(ctx, rep, key) {
		return nil
	}
	switch {
	case r.Model == nil && why == "":
		rep.Tier = TierAgent
		rep.Status, rep.Error = StepFailed, fmt.Sprintf("a %s step needs the agent: %v", st.Type, ErrNoModel)
		return nil
	case r.Model == nil:
		if rep.Tier == "" {
			rep.Tier = TierDeterministic
		}
		rep.Status, rep.Error = StepFailed, why+"; "+ErrNoModel.Error()+" for the agent to take it"
		return nil
	case why != "":
		r.Log.Debug("step escalates to the agent", "step", i+1, "why", why)
		// The model sees why the cheaper tiers gave the step up.
		r.remember([]Event{{Step: i, Kind: "deterministic", Action: "resolve", Target: r.secrets.redact(r.expand(st.Text)), OK: false, Error: r.secrets.redact(why)}})
	}
	rep.Tier = TierAgent
	err := r.agent(ctx, rep, st)
	if cacheable && err == nil {
		r.toCache(ctx, rep, key)
	}
	return err
}

// lexical resolves a plain sentence against the page (see package
// lexical); an error says why it did not.
func (r *run) lexical(ctx context.Context, text, trail string, before *lexical.Referent) (lexical.Resolution, error) {
	t := time.Now()
	defer func() { r.timing.Browser += time.Since(t) }()
	return lexical.Resolve(ctx, r.Page, text, lexical.Options{Expand: r.expand, Trail: trail, Before: before})
}

// deterministic runs resolved commands as one batch.
func (r *run) deterministic(ctx context.Context, rep *StepReport, cmds []browser.Command) {
	b := r.batch(ctx, rep, 0, cmds, nil)
	if b.failed >= 0 {
		rep.Status, rep.Error = StepFailed, b.err
	}
}

// query checks a deterministic element_exists / element_absent rule.
func (r *run) query(ctx context.Context, rep *StepReport, st scenario.Step) {
	t := targetFromStep(st.Target)
	cmd := browser.Command{Action: browser.ActionVerify, Assert: browser.AssertCountGreaterThan, Target: t, Value: "0"}
	if st.Rule == "element_absent" {
		cmd = browser.Command{Action: browser.ActionVerify, Assert: browser.AssertCountEquals, Target: t, Value: "0"}
	}
	r.deterministic(ctx, rep, []browser.Command{cmd})
}

// expand substitutes test data and extracted values (never secrets) into text.
func (r *run) expand(s string) string { return expandVars(r.vars, s) }

func expandVars(vars map[string]string, s string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	return s
}

func addUsage(a, b llm.Usage) llm.Usage {
	return llm.Usage{PromptTokens: a.PromptTokens + b.PromptTokens, CachedTokens: a.CachedTokens + b.CachedTokens,
		CompletionTokens: a.CompletionTokens + b.CompletionTokens}
}

// plain renders an extracted JSON value for substitution into text.
func plain(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// specPath turns an absolute URL on the scenario's origin into a path for
// page.goto, leaving other URLs whole.
func specPath(base, raw string) string {
	b, err1 := url.Parse(base)
	u, err2 := url.Parse(raw)
	if err1 != nil || err2 != nil || !u.IsAbs() || u.Host != b.Host || u.Scheme != b.Scheme {
		return raw
	}
	p := u.RequestURI()
	if u.Fragment != "" {
		p += "#" + u.Fragment
	}
	return p
}
