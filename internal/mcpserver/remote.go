package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
)

// SessionCall is one tool call the dispatcher sends to the worker holding
// a session job, over NATS request and reply on jobs.SessionSubject.
type SessionCall struct {
	Op        string            `json:"op"` // navigate, view, sequence, spec, dialogs, pages, screenshot, close; ping (free) asks whether the session is up
	URL       string            `json:"url,omitempty"`
	View      bool              `json:"view,omitempty"`
	Commands  []browser.Command `json:"commands,omitempty"`
	Goal      string            `json:"goal,omitempty"`
	TimeoutMS int               `json:"timeout_ms,omitempty"`
	FullPage  bool              `json:"full_page,omitempty"`
}

// SessionReply is the worker's answer to a SessionCall.
type SessionReply struct {
	Error    string                       `json:"error,omitempty"`
	Sequence *orchestrator.SequenceResult `json:"sequence,omitempty"`
	Text     string                       `json:"text,omitempty"`
	Dialogs  []browser.Dialog             `json:"dialogs,omitempty"`
	Pages    []browser.PageInfo           `json:"pages,omitempty"`
	PNG      []byte                       `json:"png,omitempty"`
}

// ServeOptions say how a worker serves a session.
type ServeOptions struct {
	// Idle ends the session after this long without a call.
	Idle time.Duration
	// Charge is called before each call runs; an error refuses the call
	// (the session's credits are spent).
	Charge func(ctx context.Context, c SessionCall) error
	Log    *slog.Logger
}

// ServeSession answers the calls sent to subject with s until a close call,
// Idle without a call, or ctx's end. Calls run one at a time, in order.
func ServeSession(ctx context.Context, nc *nats.Conn, subject string, s *orchestrator.Session, o ServeOptions) error {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	calls := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe(subject, calls)
	if err != nil {
		return fmt.Errorf("session subscription: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.Flush(); err != nil {
		return fmt.Errorf("session subscription: %w", err)
	}
	idle := time.NewTimer(o.Idle)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-idle.C:
			o.Log.Info("session idle; closing", "idle", o.Idle)
			return nil
		case m := <-calls:
			var c SessionCall
			var reply SessionReply
			if err := json.Unmarshal(m.Data, &c); err != nil {
				reply.Error = "the call cannot be decoded: " + err.Error()
			} else if c.Op == "close" {
				respond(m, reply, o.Log)
				return nil
			} else if c.Op == "ping" {
				respond(m, reply, o.Log)
				continue
			} else if o.Charge != nil {
				if err := o.Charge(ctx, c); err != nil {
					reply.Error = err.Error()
				}
			}
			if reply.Error == "" {
				reply = serveCall(ctx, s, c)
			}
			respond(m, reply, o.Log)
			idle.Reset(o.Idle)
		}
	}
}

func respond(m *nats.Msg, r SessionReply, log *slog.Logger) {
	b, _ := json.Marshal(r)
	if err := m.Respond(b); err != nil {
		log.Warn("session reply not sent", "err", err)
	}
}

// serveCall runs one call on the session.
func serveCall(ctx context.Context, s *orchestrator.Session, c SessionCall) SessionReply {
	var r SessionReply
	var err error
	switch c.Op {
	case "navigate":
		var res orchestrator.SequenceResult
		res, err = s.Navigate(ctx, c.URL, c.View)
		r.Sequence = &res
	case "sequence":
		var res orchestrator.SequenceResult
		res, err = s.Sequence(ctx, c.Commands, orchestrator.SequenceOptions{Goal: c.Goal, View: c.View, Timeout: millis(c.TimeoutMS)})
		r.Sequence = &res
	case "view":
		r.Text, err = s.View(ctx)
	case "spec":
		r.Text, err = s.Spec()
	case "dialogs":
		r.Dialogs = s.Dialogs()
	case "pages":
		r.Pages = s.Pages()
	case "screenshot":
		r.PNG, err = s.Screenshot(c.FullPage)
	default:
		err = fmt.Errorf("unknown call %q", c.Op)
	}
	if err != nil {
		r.Error = s.Redact(err.Error())
	}
	return r
}

// Remote runs sessions on the platform's workers for one tenant, through
// the dispatcher's own API (the same validation, credit holds, sealing and
// history as any job) and NATS request and reply to the worker holding
// each session.
type Remote struct {
	// API is the dispatcher's API handler; Key the tenant's API key, sent
	// as its bearer token.
	API http.Handler
	Key string
	// NATS carries the calls to the workers.
	NATS *nats.Conn
	// Session is what a session job is opened with: its allowed origins,
	// device, budget and secrets.
	Session jobs.SessionRequest
	// Start bounds the wait for a worker to take a new session.
	Start time.Duration
	Log   *slog.Logger
}

// apiError is an API answer other than the one expected.
type apiError struct {
	status int
	body   string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("the API answered %d: %s", e.status, strings.TrimSpace(e.body))
}

// api calls the dispatcher's API in process, as the tenant, and returns
// the answer's body; out, when set, is decoded from it.
func (r *Remote) api(ctx context.Context, method, path string, body any, want int, out any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequestWithContext(ctx, method, path, rd)
	req.Header.Set("Authorization", "Bearer "+r.Key)
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "127.0.0.1:0"
	rec := httptest.NewRecorder()
	r.API.ServeHTTP(rec, req)
	if rec.Code != want {
		return nil, &apiError{status: rec.Code, body: rec.Body.String()}
	}
	if out != nil {
		return rec.Body.Bytes(), json.Unmarshal(rec.Body.Bytes(), out)
	}
	return rec.Body.Bytes(), nil
}

type jobView struct {
	ID             string          `json:"id"`
	State          string          `json:"state"`
	Error          string          `json:"error"`
	ChargedCredits float64         `json:"charged_credits"`
	Steps          json.RawMessage `json:"steps"`
}

func terminal(state string) bool { return store.JobState(state).Terminal() }

// Open submits a session job and waits for a worker to take it.
func (r *Remote) Open(ctx context.Context) (Conn, error) {
	var j jobView
	if _, err := r.api(ctx, "POST", "/v1/jobs", jobs.Submission{Kind: jobs.KindSession, Session: &r.Session}, http.StatusAccepted, &j); err != nil {
		return nil, fmt.Errorf("open a session: %w", err)
	}
	wait := r.Start
	if wait == 0 {
		wait = time.Minute
	}
	deadline := time.Now().Add(wait)
	for {
		var now jobView
		if _, err := r.api(ctx, "GET", "/v1/jobs/"+j.ID, nil, http.StatusOK, &now); err != nil {
			return nil, err
		}
		switch {
		case now.State == "running":
			c := &remoteConn{r: r, jobID: j.ID}
			// The worker subscribes once it has a browser: the first call
			// that finds nobody listening waits for it.
			if err := c.ready(ctx, deadline); err != nil {
				return nil, err
			}
			return c, nil
		case terminal(now.State):
			return nil, fmt.Errorf("the session job %s ended %s before it started: %s", j.ID, now.State, now.Error)
		case time.Now().After(deadline):
			_, _ = r.api(context.WithoutCancel(ctx), "POST", "/v1/jobs/"+j.ID+"/cancel", nil, http.StatusAccepted, nil)
			return nil, fmt.Errorf("no worker took the session within %s (job %s cancelled)", wait, j.ID)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type remoteConn struct {
	r     *Remote
	jobID string
}

func (c *remoteConn) ready(ctx context.Context, deadline time.Time) error {
	for {
		_, err := c.call(ctx, SessionCall{Op: "ping"})
		if err == nil || !errors.Is(err, nats.ErrNoResponders) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the worker holding session %s does not answer", c.jobID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// callTimeout bounds one call: its commands' waits and settling.
const callTimeout = 5 * time.Minute

func (c *remoteConn) call(ctx context.Context, sc SessionCall) (SessionReply, error) {
	b, err := json.Marshal(sc)
	if err != nil {
		return SessionReply{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	m, err := c.r.NATS.RequestWithContext(ctx, jobs.SessionSubject(c.jobID), b)
	if errors.Is(err, nats.ErrNoResponders) {
		return SessionReply{}, fmt.Errorf("session %s has ended (idle, closed or its worker lost): open a new one: %w", c.jobID, err)
	}
	if err != nil {
		return SessionReply{}, fmt.Errorf("session %s: %w", c.jobID, err)
	}
	var r SessionReply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return r, fmt.Errorf("session %s answered what cannot be decoded: %w", c.jobID, err)
	}
	if r.Error != "" {
		return r, errors.New(r.Error)
	}
	return r, nil
}

func (c *remoteConn) sequence(ctx context.Context, sc SessionCall) (orchestrator.SequenceResult, error) {
	r, err := c.call(ctx, sc)
	if err != nil || r.Sequence == nil {
		return orchestrator.SequenceResult{}, err
	}
	return *r.Sequence, nil
}

func (c *remoteConn) Navigate(ctx context.Context, url string, view bool) (orchestrator.SequenceResult, error) {
	return c.sequence(ctx, SessionCall{Op: "navigate", URL: url, View: view})
}

func (c *remoteConn) View(ctx context.Context) (string, error) {
	r, err := c.call(ctx, SessionCall{Op: "view"})
	return r.Text, err
}

func (c *remoteConn) Sequence(ctx context.Context, cmds []browser.Command, o orchestrator.SequenceOptions) (orchestrator.SequenceResult, error) {
	return c.sequence(ctx, SessionCall{Op: "sequence", Commands: cmds, Goal: o.Goal, View: o.View, TimeoutMS: int(o.Timeout / time.Millisecond)})
}

func (c *remoteConn) Spec() (string, error) {
	r, err := c.call(context.Background(), SessionCall{Op: "spec"})
	return r.Text, err
}

func (c *remoteConn) Dialogs() []browser.Dialog {
	r, _ := c.call(context.Background(), SessionCall{Op: "dialogs"})
	return r.Dialogs
}

func (c *remoteConn) Pages() []browser.PageInfo {
	r, _ := c.call(context.Background(), SessionCall{Op: "pages"})
	return r.Pages
}

func (c *remoteConn) Screenshot(fullPage bool) ([]byte, error) {
	r, err := c.call(context.Background(), SessionCall{Op: "screenshot", FullPage: fullPage})
	return r.PNG, err
}

// Close ends the session: the worker closes its browser and finishes the
// job with the session's spec.
func (c *remoteConn) Close() error {
	_, err := c.call(context.Background(), SessionCall{Op: "close"})
	if errors.Is(err, nats.ErrNoResponders) {
		return nil
	}
	return err
}

// Run submits a scenario job (or a replay of a stored test) as the tenant
// and reports each step as it finishes, until the job ends.
func (r *Remote) Run(ctx context.Context, in RunInput, progress func(StepProgress)) (RunResult, error) {
	var sub jobs.Submission
	if in.TestID != "" {
		if in.Scenario != nil || in.Text != "" {
			return RunResult{}, errors.New("test_id: give a stored test or a scenario, not both")
		}
		sub = jobs.Submission{Kind: jobs.KindReplay, Replay: &jobs.RepairRequest{TestID: in.TestID, Secrets: r.Session.Secrets}}
	} else {
		sc, err := scenarioOf(in)
		if err != nil {
			return RunResult{}, err
		}
		if sc.Secrets == nil && len(r.Session.Secrets) > 0 {
			sc.Secrets = r.Session.Secrets
		}
		sub = jobs.Submission{Kind: jobs.KindScenario, Scenario: &sc}
	}
	var j jobView
	if _, err := r.api(ctx, "POST", "/v1/jobs", sub, http.StatusAccepted, &j); err != nil {
		return RunResult{}, err
	}
	reported := 0
	for {
		var now jobView
		if _, err := r.api(ctx, "GET", "/v1/jobs/"+j.ID, nil, http.StatusOK, &now); err != nil {
			return RunResult{JobID: j.ID}, err
		}
		var steps []orchestrator.StepReport
		_ = json.Unmarshal(now.Steps, &steps)
		total := len(steps)
		if sub.Scenario != nil {
			total = len(sub.Scenario.Steps)
		}
		for ; reported < len(steps); reported++ {
			s := steps[reported]
			progress(StepProgress{Step: reported + 1, Total: max(total, len(steps)), Goal: s.Goal, Status: s.Status, Tier: s.Tier, Error: s.Error})
		}
		if terminal(now.State) {
			res := RunResult{JobID: j.ID, Status: now.State, Error: now.Error, Steps: len(steps), CreditsMicro: int64(now.ChargedCredits * 1e6)}
			if spec, err := r.api(ctx, "GET", "/v1/jobs/"+j.ID+"/script", nil, http.StatusOK, nil); err == nil {
				res.Spec = string(spec)
			}
			return res, nil
		}
		select {
		case <-ctx.Done():
			return RunResult{JobID: j.ID}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
