package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/tracing"
)

// throttled answers 429 when the tenant submits faster than its limit.
func (s *Server) throttled(w http.ResponseWriter, r *http.Request) bool {
	t := tenantFrom(r.Context())
	if s.submit != nil && !s.submit.take(t.ID) {
		s.metrics.submissions.WithLabelValues("unknown", "throttled").Inc()
		tooMany(w, s.submit.retryAfter(t.ID), "too many submissions; slow down (the limit is per tenant)")
		return true
	}
	return false
}

func (s *Server) submitJob(w http.ResponseWriter, r *http.Request) {
	if s.throttled(w, r) {
		return
	}
	var sub jobs.Submission
	if !s.decode(w, r, &sub) {
		return
	}
	s.submitValid(w, r, sub)
}

// submitSuite takes POST /v1/suites/{run,repair}: the body is the suite
// request of a bulk job of kind.
func (s *Server) submitSuite(kind jobs.Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.throttled(w, r) {
			return
		}
		var req jobs.SuiteRequest
		if !s.decode(w, r, &req) {
			return
		}
		s.submitValid(w, r, jobs.Submission{Kind: kind, Suite: &req})
	}
}

// submitValid validates a submission, stores it with its credit hold and
// publishes it.
func (s *Server) submitValid(w http.ResponseWriter, r *http.Request, sub jobs.Submission) {
	t := tenantFrom(r.Context())
	outcome := "invalid"
	defer func() {
		kind := sub.Kind
		if !kind.Known() {
			kind = "unknown" // a caller's made-up kind must not grow the series
		}
		s.metrics.submissions.WithLabelValues(string(kind), outcome).Inc()
	}()
	if err := sub.Validate(s.urls); err != nil {
		var ve scenario.ValidationError
		if errors.As(err, &ve) {
			writeError(w, http.StatusBadRequest, "invalid job", ve)
			return
		}
		writeError(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	idemKey, ok := idempotencyKey(w, r)
	if !ok {
		return
	}
	in, ok := s.jobInput(w, r, sub)
	if !ok {
		return
	}
	hold := s.cfg.DefaultHold * int64(max(in.tests, 1))
	switch sub.Kind {
	case jobs.KindSuiteRun:
		// Replays make no model call: what they use is browser time.
		hold = int64(max(in.tests, 1)) * jobs.ReplayHoldSeconds * jobs.BrowserSecondMicro
	case jobs.KindProjectRun:
		// Each file's run is charged its browser time, up to the sandbox's
		// wall time, for each attempt a crash may take (a dead attempt is
		// charged what it reserved).
		hold = int64(max(in.tests, 1)) * (jobs.CrashLimit + 1) * jobs.FileRunSeconds * jobs.BrowserSecondMicro
	case jobs.KindProjectRepair:
		hold = jobs.RepairHoldSeconds(in.tests) * jobs.BrowserSecondMicro
	}
	if in.options.MaxCredits > 0 {
		if in.options.MaxCredits > maxHold {
			field := in.creditsField
			if field == "" {
				field = in.at + ".options.max_credits"
			}
			writeError(w, http.StatusBadRequest, "invalid job", []scenario.FieldError{{Field: field, Message: fmt.Sprintf("must be at most %g", float64(maxHold))}})
			return
		}
		hold = int64(math.Ceil(in.options.MaxCredits * store.MicroCredits))
	}
	// Secrets are sealed to the job's id, so a sealed value cannot be replayed into another job.
	traceParent := tracing.TraceParent(r.Context())
	job, err := s.store.SubmitJob(r.Context(), store.NewJob{TenantID: t.ID, Kind: string(sub.Kind), Hold: hold,
		IdempotencyKey: idemKey, RequestHash: requestHash(sub), TestID: in.testID, TraceParent: traceParent,
		Subject: jobs.Subject(sub.Kind, t.ID), Prepare: func(jobID string) (json.RawMessage, error) {
			sealed := ""
			if len(in.secrets) > 0 {
				plain, _ := json.Marshal(in.secrets)
				var err error
				if sealed, err = s.sealer.Seal(plain, "secrets:"+jobID); err != nil {
					return nil, err
				}
			}
			return in.encode(sealed)
		}})
	var reused *store.KeyReusedError
	if errors.As(err, &reused) {
		outcome = "conflict"
		if !reused.SameRequest {
			writeError(w, http.StatusConflict, "this Idempotency-Key was already used for a different request (job "+reused.JobID+"); use a new key for a new job", nil)
			return
		}
		first, gerr := s.store.GetJob(r.Context(), t.ID, reused.JobID)
		if gerr != nil {
			outcome = "error"
			s.internal(w, r, gerr)
			return
		}
		outcome = "replayed"
		w.Header().Set("Idempotent-Replayed", "true")
		writeJSON(w, http.StatusAccepted, view(first, false))
		return
	}
	if errors.Is(err, store.ErrInsufficientCredits) {
		outcome = "insufficient_credits"
		acct, _ := s.store.Account(r.Context(), t.ID)
		writeError(w, http.StatusPaymentRequired, fmt.Sprintf("not enough credits: this job holds %.6g credits and %.6g are available", credits(hold), credits(acct.Available)), nil)
		return
	}
	if err != nil {
		outcome = "error"
		s.internal(w, r, err)
		return
	}
	outcome = "accepted"
	// The job is safe in Postgres; a message not confirmed is republished by the reconciler.
	s.pub.Send(store.OutboxItem{Subject: jobs.Subject(sub.Kind, t.ID), JobID: job.ID, TraceParent: traceParent})
	writeJSON(w, http.StatusAccepted, view(job, false))
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, s.JobView(r.Context(), j))
}

// JobView is a job as GET /v1/jobs/{id} answers it: steps, usage, and its
// repair, suite or exploration report.
func (s *Server) JobView(ctx context.Context, j store.Job) JobView {
	v := s.bulkView(ctx, j, true)
	if u, err := s.store.JobUsage(ctx, j.ID); err == nil {
		v.Usage = &u
	}
	return v
}

// ListView is a job as GET /v1/jobs lists it.
func ListView(j store.Job) JobView { return view(j, false) }

func (s *Server) job(w http.ResponseWriter, r *http.Request) (store.Job, bool) {
	j, err := s.store.GetJob(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "job not found", nil)
		return j, false
	}
	if err != nil {
		s.internal(w, r, err)
		return j, false
	}
	return j, true
}

func (s *Server) script(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	if j.Script == "" {
		writeError(w, http.StatusConflict, fmt.Sprintf("the job is %s and has no script yet", j.State), nil)
		return
	}
	w.Header().Set("Content-Type", "text/typescript; charset=utf-8")
	_, _ = w.Write([]byte(j.Script))
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	h, err := s.store.History(r.Context(), tenantFrom(r.Context()).ID, j.ID)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if h == nil {
		h = []store.HistoryEntry{}
	}
	writeJSON(w, http.StatusOK, HistoryList{History: h})
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	limit, ok := limitParam(w, r, 20, 100)
	if !ok {
		return
	}
	f := store.JobFilter{After: r.URL.Query().Get("after"), Limit: limit + 1, State: store.JobState(r.URL.Query().Get("state")), Kind: r.URL.Query().Get("kind")}
	var fe []scenario.FieldError
	if f.State != "" && !f.State.Valid() {
		fe = append(fe, scenario.FieldError{Field: "state", Message: "must be one of " + strings.Join(stateNames(), ", ")})
	}
	if f.Kind != "" && !jobs.Kind(f.Kind).Known() {
		fe = append(fe, scenario.FieldError{Field: "kind", Message: "is not a job kind"})
	}
	if len(fe) > 0 {
		writeError(w, http.StatusBadRequest, "invalid query", fe)
		return
	}
	list, err := s.store.ListJobs(r.Context(), tenantFrom(r.Context()).ID, f)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusBadRequest, "invalid query", []scenario.FieldError{{Field: "after", Message: "is not a job id"}})
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	out := JobList{Jobs: []JobView{}}
	for i, j := range list {
		if i == limit {
			out.Next = list[i-1].ID
			break
		}
		out.Jobs = append(out.Jobs, view(j, false))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	j, err := s.store.RequestCancel(r.Context(), tenantFrom(r.Context()).ID, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "job not found", nil)
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, view(j, false))
}

// events streams a job's progress as server-sent events until it ends.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	tenantID := tenantFrom(r.Context()).ID
	if !s.hub.open(tenantID, s.cfg.MaxStreams) {
		tooMany(w, "5", fmt.Sprintf("at most %d progress streams may be open at once", s.cfg.MaxStreams))
		return
	}
	defer s.hub.close(tenantID)
	changed, unsubscribe := s.hub.subscribe(j.ID)
	defer unsubscribe()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(format string, args ...any) bool {
		// The server's write timeout would cut a long stream: each event extends it.
		_ = rc.SetWriteDeadline(time.Now().Add(time.Minute))
		fmt.Fprintf(w, format, args...)
		return rc.Flush() == nil
	}
	end := time.After(streamLife)
	lastState, lastDone, lastRun := store.JobState(""), -1, ""
	var stepsSent int
	testsSent := map[string]bool{}
	findingsSent := map[string]bool{}
	for {
		v := s.bulkView(r.Context(), j, true)
		run, _ := json.Marshal(v.RunProgress)
		if v.State != lastState || v.Progress.Done != lastDone || string(run) != lastRun {
			var steps []json.RawMessage
			_ = json.Unmarshal(v.Steps, &steps)
			for ; stepsSent < len(steps); stepsSent++ {
				fmt.Fprintf(w, "event: step\ndata: %s\n\n", compact(steps[stepsSent]))
			}
			if v.Suite != nil {
				// A bulk job's tests, each once, as it gets its outcome.
				for _, c := range v.Suite.Children {
					if c.State.Terminal() && !testsSent[c.JobID] {
						testsSent[c.JobID] = true
						c.Diff = "" // the report and the versions API have it
						b, _ := json.Marshal(c)
						fmt.Fprintf(w, "event: test\ndata: %s\n\n", b)
					}
				}
			}
			b, _ := json.Marshal(struct {
				ID       string             `json:"id"`
				State    store.JobState     `json:"state"`
				Progress Progress           `json:"progress"`
				Run      *suite.RunProgress `json:"run_progress,omitempty"`
				Error    string             `json:"error,omitempty"`
			}{v.ID, v.State, v.Progress, v.RunProgress, v.Error})
			if !send("event: state\ndata: %s\n\n", b) {
				return
			}
			lastState, lastDone, lastRun = v.State, v.Progress.Done, string(run)
		}
		if j.Kind == string(jobs.KindExploration) {
			// Each finding once, as it is found.
			if fs, err := s.store.Findings(r.Context(), tenantID, j.ID); err == nil {
				for _, f := range fs {
					if !findingsSent[f.ID] {
						findingsSent[f.ID] = true
						b, _ := json.Marshal(findingView(f))
						if !send("event: finding\ndata: %s\n\n", b) {
							return
						}
					}
				}
			}
		}
		if j.State.Terminal() {
			send("event: end\ndata: {}\n\n")
			return
		}
		wait := pollInterval
		if s.hub.live.Load() {
			wait = streamCheck
		}
		select {
		case <-r.Context().Done():
			return
		case <-end:
			return
		case <-changed:
		case <-time.After(wait):
			if wait == streamCheck && !send(": keep-alive\n\n") {
				return
			}
		}
		var err error
		if j, err = s.store.GetJob(r.Context(), tenantID, j.ID); err != nil {
			return
		}
	}
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}

// maxIdempotencyKey bounds the Idempotency-Key header.
const maxIdempotencyKey = 255

// idempotencyKey reads the optional Idempotency-Key header: 1 to 255
// printable ASCII characters. A retried submission with the same key (kept
// per tenant for at least 24 hours) returns the job the first one created.
func idempotencyKey(w http.ResponseWriter, r *http.Request) (string, bool) {
	k, present := r.Header["Idempotency-Key"]
	if !present {
		return "", true
	}
	key := strings.Join(k, ",")
	bad := key == "" || len(key) > maxIdempotencyKey
	for _, c := range key {
		if c < 0x21 || c > 0x7e {
			bad = true
		}
	}
	if bad {
		writeError(w, http.StatusBadRequest, "invalid request", []scenario.FieldError{{Field: "header Idempotency-Key",
			Message: fmt.Sprintf("must be 1 to %d printable ASCII characters without spaces", maxIdempotencyKey)}})
		return "", false
	}
	return key, true
}

// requestHash identifies what a submission asked for, so a reused
// Idempotency-Key with a different request is refused. Secret values are
// left out of it: only their names count.
func requestHash(sub jobs.Submission) []byte {
	c := sub
	if sub.Scenario != nil {
		sc := *sub.Scenario
		sc.Secrets = secretNames(sc.Secrets)
		c.Scenario = &sc
	}
	if c.Repair != nil {
		r := *c.Repair
		r.Secrets = secretNames(r.Secrets)
		c.Repair = &r
	}
	if c.Replay != nil {
		r := *c.Replay
		r.Secrets = secretNames(r.Secrets)
		c.Replay = &r
	}
	if c.Suite != nil {
		r := *c.Suite
		r.Secrets = secretNames(r.Secrets)
		c.Suite = &r
	}
	b, _ := json.Marshal(c)
	h := sha256.Sum256(b)
	return h[:]
}

// secretNames keeps a secrets map's names without their values.
func secretNames(secrets map[string]string) map[string]string {
	if secrets == nil {
		return nil
	}
	names := make(map[string]string, len(secrets))
	for k := range secrets {
		names[k] = ""
	}
	return names
}

// placeholderRef is a {{NAME}} in a stored test's scenario or manifest.
var placeholderRef = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`)

// missingSecrets lists, sorted, the placeholders a stored test types that
// neither its test data, a value it extracts itself, nor the secrets given
// define: replayed without them it would type the literal {{NAME}}.
func missingSecrets(t store.Test, given map[string]string) []string {
	var sc scenario.Scenario
	_ = json.Unmarshal(t.Scenario, &sc)
	defined := map[string]bool{}
	for k := range sc.Data {
		defined[k] = true
	}
	for _, st := range sc.Steps {
		if st.SaveAs != "" {
			defined[st.SaveAs] = true
		}
	}
	for k := range given {
		defined[k] = true
	}
	missing := map[string]bool{}
	for _, raw := range [][]byte{t.Scenario, t.Manifest} {
		for _, m := range placeholderRef.FindAllSubmatch(raw, -1) {
			if name := string(m[1]); !defined[name] {
				missing[name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(missing))
}

// secretsField reports a test's missing secrets at field, naming each.
func secretsField(field, test string, missing []string) scenario.FieldError {
	return scenario.FieldError{Field: field, Message: fmt.Sprintf("the test %q types {{%s}}: give %s as a secret (it would be typed literally)",
		test, strings.Join(missing, "}}, {{"), strings.Join(missing, ", "))}
}

// sealable is a request whose secrets are stored sealed.
type sealable[T any] interface {
	*T
	Seal(sealed string)
}

// sealedEncoder encodes req as it is stored: its secrets replaced by their
// sealed form.
func sealedEncoder[T any, P sealable[T]](req T) func(sealed string) (json.RawMessage, error) {
	return func(sealed string) (json.RawMessage, error) {
		P(&req).Seal(sealed)
		return json.Marshal(req)
	}
}

// suiteField is the field of a suite request that selects its tests.
func suiteField(c jobs.SuiteRequest) string {
	switch {
	case len(c.Tags) > 0:
		return "suite.tags"
	case len(c.TestIDs) > 0:
		return "suite.test_ids"
	}
	return "suite"
}

// jobInput is what a submission stores, by kind.
type jobInput struct {
	at      string // the JSON path of the kind's input, for errors
	options scenario.Options
	secrets map[string]string
	testID  string
	tests   int                                                 // tests a bulk job runs over (its default hold covers each)
	encode  func(sealedSecrets string) (json.RawMessage, error) // the stored input, secrets sealed
	// creditsField is where the credit budget was given, when not options.max_credits.
	creditsField string
}

// jobInput prepares a validated submission for storing; the tests a job
// names must be the tenant's (a 400 naming the field otherwise), and a
// bulk job must select at least one test with a script.
func (s *Server) jobInput(w http.ResponseWriter, r *http.Request, sub jobs.Submission) (jobInput, bool) {
	tenantID := tenantFrom(r.Context()).ID
	switch sub.Kind {
	case jobs.KindRepair, jobs.KindReplay:
		req, at := sub.Repair, "repair"
		if sub.Kind == jobs.KindReplay {
			req, at = sub.Replay, "replay"
		}
		c := *req
		test, err := s.store.GetTest(r.Context(), tenantID, c.TestID)
		if errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusBadRequest, "invalid job", []scenario.FieldError{{Field: at + ".test_id", Message: "no such test in your suite"}})
			return jobInput{}, false
		} else if err != nil {
			s.internal(w, r, err)
			return jobInput{}, false
		}
		if missing := missingSecrets(test, c.Secrets); len(missing) > 0 {
			writeError(w, http.StatusBadRequest, "invalid job", []scenario.FieldError{secretsField(at+".secrets", test.Name, missing)})
			return jobInput{}, false
		}
		return jobInput{at: at, options: c.Options, secrets: c.Secrets, testID: c.TestID,
			encode: sealedEncoder(c)}, true
	case jobs.KindSuiteRun, jobs.KindSuiteRepair:
		c := *sub.Suite
		tests, missing, err := s.store.SelectTests(r.Context(), tenantID, store.Selection{TestIDs: c.TestIDs, Tags: c.Tags})
		if err != nil {
			s.internal(w, r, err)
			return jobInput{}, false
		}
		if len(missing) > 0 {
			var fields []scenario.FieldError
			for i, id := range c.TestIDs {
				if slices.Contains(missing, id) {
					fields = append(fields, scenario.FieldError{Field: fmt.Sprintf("suite.test_ids[%d]", i), Message: "no such test in your suite"})
				}
			}
			writeError(w, http.StatusBadRequest, "invalid job", fields)
			return jobInput{}, false
		}
		if len(tests) == 0 {
			writeError(w, http.StatusBadRequest, "invalid job", []scenario.FieldError{{Field: suiteField(c), Message: "selects no stored test with a passing version to replay"}})
			return jobInput{}, false
		}
		var fields []scenario.FieldError
		for _, t := range tests {
			if missing := missingSecrets(t, c.Secrets); len(missing) > 0 && len(fields) < 20 {
				fields = append(fields, secretsField("suite.secrets", t.Name, missing))
			}
		}
		if len(fields) > 0 {
			writeError(w, http.StatusBadRequest, "invalid job", fields)
			return jobInput{}, false
		}
		if len(tests) > s.cfg.MaxBulkTests {
			writeError(w, http.StatusBadRequest, "invalid job", []scenario.FieldError{{Field: suiteField(c),
				Message: fmt.Sprintf("selects %d tests; one bulk job runs at most %d (narrow it with tags or test_ids)", len(tests), s.cfg.MaxBulkTests)}})
			return jobInput{}, false
		}
		if budget := c.Options.MaxCredits; budget > 0 && float64(len(tests))*s.cfg.BulkTestCredits > budget+1e-9 {
			writeError(w, http.StatusBadRequest, "invalid job", []scenario.FieldError{{Field: "suite.options.max_credits",
				Message: fmt.Sprintf("%g credits cover at most %d tests (%g per test); raise it or select fewer than %d", budget,
					int(budget/s.cfg.BulkTestCredits+1e-9), s.cfg.BulkTestCredits, len(tests))}})
			return jobInput{}, false
		}
		return jobInput{at: "suite", options: c.Options, secrets: c.Secrets, tests: len(tests),
			encode: sealedEncoder(c)}, true
	}
	if sub.Kind == jobs.KindProjectRun || sub.Kind == jobs.KindProjectRepair {
		c := *sub.Project
		v, err := s.store.ProjectVersion(r.Context(), tenantID, c.Name, c.Version)
		if errors.Is(err, store.ErrNotFound) {
			f := "project.name"
			if c.Version != "" {
				f = "project.version"
			}
			writeError(w, http.StatusBadRequest, "invalid job", []scenario.FieldError{{Field: f, Message: "no such project (or version) of yours"}})
			return jobInput{}, false
		} else if err != nil {
			s.internal(w, r, err)
			return jobInput{}, false
		}
		c.Version = v.Digest // the run is of the version current now, whatever is uploaded next
		if c.AfterRun != "" {
			if why := s.runToFollow(r.Context(), tenantID, c); why != "" {
				writeError(w, http.StatusBadRequest, "invalid job", []scenario.FieldError{{Field: "project.after_run", Message: why}})
				return jobInput{}, false
			}
		}
		files := len(c.Files)
		if files == 0 {
			if files, err = s.testFiles(r.Context(), tenantID, v); err != nil {
				s.internal(w, r, err)
				return jobInput{}, false
			}
		}
		field := ""
		if c.MaxCredits > 0 {
			field = "project.max_credits"
		}
		return jobInput{at: "project", options: scenario.Options{MaxCredits: c.MaxCredits}, creditsField: field, secrets: c.Secrets,
			tests: files, encode: sealedEncoder(c)}, true
	}
	if sub.Kind == jobs.KindExploration {
		c := *sub.Exploration
		opts := c.Options
		opts.MaxCredits = c.Credits()
		field := ""
		if c.Budget.MaxCredits > 0 {
			field = "exploration.budget.max_credits"
		}
		return jobInput{at: "exploration", options: opts, secrets: c.Secrets, creditsField: field, tests: len(c.Journeys),
			encode: sealedEncoder(c)}, true
	}
	if sub.Kind == jobs.KindSession {
		c := *sub.Session
		return jobInput{at: "session", options: c.Options, secrets: c.Secrets, encode: sealedEncoder(c)}, true
	}
	sc := *sub.Scenario
	if sc.Project != "" {
		if _, err := s.store.ProjectVersion(r.Context(), tenantID, sc.Project, ""); errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusBadRequest, "invalid job", []scenario.FieldError{{Field: "scenario.project", Message: "no such project of yours (upload it first: POST /v1/projects/{name})"}})
			return jobInput{}, false
		} else if err != nil {
			s.internal(w, r, err)
			return jobInput{}, false
		}
	}
	return jobInput{at: "scenario", options: sc.Options, secrets: sc.Secrets, encode: sealedEncoder(sc)}, true
}

// testFiles counts the test files of a version: those of its listing, or
// for a version not listed yet (a repair's, listed by its first run) the
// files the runner takes for tests by default.
func (s *Server) testFiles(ctx context.Context, tenantID string, v store.ProjectVersion) (int, error) {
	files := map[string]bool{}
	if v.ListedAt != nil {
		var tests []struct {
			File string `json:"file"`
		}
		_ = json.Unmarshal(v.Tests, &tests)
		for _, t := range tests {
			files[t.File] = true
		}
		return max(len(files), 1), nil
	}
	archive, err := s.store.ProjectArchive(ctx, tenantID, v.Digest)
	if err != nil {
		return 0, err
	}
	p, err := suite.ReadArchive(archive)
	if err != nil {
		return max(v.Files, 1), nil
	}
	for _, f := range p.Files {
		if suite.IsSpec(f.Path) {
			files[f.Path] = true
		}
	}
	return max(len(files), 1), nil
}

// limitParam reads ?limit= (def without it), answering a 400 naming it
// unless it is a whole number from 1 to max.
func limitParam(w http.ResponseWriter, r *http.Request, def, max int) (int, bool) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		writeError(w, http.StatusBadRequest, "invalid query", []scenario.FieldError{{Field: "limit", Message: fmt.Sprintf("must be a whole number from 1 to %d", max)}})
		return 0, false
	}
	return n, true
}
