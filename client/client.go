// Package client is webpilot's Go client: its API's request and response
// types, generated from the server's own (types.go, by wiregen, the same
// types the OpenAPI document at /v1/openapi.json is built from), and a
// Client that calls the API with them.
//
//	c := client.New("https://webpilot.example.com", os.Getenv("WEBPILOT_API_KEY"))
//	job, err := c.SubmitJob(ctx, client.Submission{Kind: client.KindScenario, Scenario: &sc})
//	job, err = c.Wait(ctx, job.ID, 0)
//
// An error answer of the API is an *Error: its status, message and, for
// invalid input, each field at fault by its JSON path.
package client

//go:generate go run ../cmd/wiregen -o types.go

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one webpilot API with one bearer token: a tenant's API key
// for the tenant's routes, the operators' admin token for /v1/admin.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends the requests through h (its timeout, transport,
// proxy) instead of a client of the package's own.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New returns a client of the API at base (scheme, host and port, as
// "http://127.0.0.1:8080") authenticating with token.
func New(base, token string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// BaseURL is the API's address the client calls.
func (c *Client) BaseURL() string { return c.base }

// WithToken returns a client of the same API authenticating with token.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}

// Error is an error answer of the API.
type Error struct {
	// Status is the HTTP status.
	Status int
	// Message is the API's error, or the answer's text when it sent no
	// error body.
	Message string
	// Fields are the invalid input's problems, by JSON path.
	Fields []FieldError
	// RetryAfter is the answer's Retry-After (a 429 or a 503), if any.
	RetryAfter string
}

// Error says what the API said, field by field.
func (e *Error) Error() string {
	msg := fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status)
	for _, f := range e.Fields {
		msg += fmt.Sprintf("\n  %s: %s", f.Field, f.Message)
	}
	return msg
}

// UnreachableError is a request that got no answer: the API's address is
// wrong, or nothing serves there.
type UnreachableError struct {
	// Base is the API's address.
	Base string
	// Request is the request's method and path.
	Request string
	Err     error
}

// Error names the request and the address.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s: cannot reach the API at %s (%v)", e.Request, e.Base, e.Err)
}

// Unwrap returns the transport's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// IsStatus reports whether err is the API's answer with that status.
func IsStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}

// Do sends one request: body (when not nil) as JSON, and the answer's JSON
// decoded into out. out may be a *[]byte or a *json.RawMessage for the
// answer as it came, or nil. header adds request headers.
func (c *Client) Do(ctx context.Context, method, path string, body, out any, header http.Header) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: encode the body: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	resp, err := c.send(ctx, method, path, rd, header)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return &UnreachableError{Base: c.base, Request: method + " " + path, Err: err}
	}
	if resp.StatusCode >= 300 {
		return answerError(resp, raw)
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*o = raw
		return nil
	case *json.RawMessage:
		*o = raw
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

func (c *Client) send(ctx context.Context, method, path string, body io.Reader, header http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &UnreachableError{Base: c.base, Request: method + " " + path, Err: err}
	}
	return resp, nil
}

func answerError(resp *http.Response, raw []byte) error {
	e := &Error{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
	var b ErrorBody
	if json.Unmarshal(raw, &b) == nil && b.Error != "" {
		e.Message, e.Fields = b.Error, b.Fields
	} else {
		e.Message = strings.TrimSpace(string(raw))
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	return e
}

// retried runs an idempotent request up to 4 times, again only after a
// lost answer or a 503: any other answer is the request's outcome.
func retried(ctx context.Context, do func() error) error {
	for try := 1; ; try++ {
		err := do()
		var ue *UnreachableError
		retry := errors.As(err, &ue) || IsStatus(err, http.StatusServiceUnavailable)
		if !retry || try == 4 {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(try) * 500 * time.Millisecond):
		}
	}
}

// newIdempotencyKey names one submission across its retries.
func newIdempotencyKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "client-" + hex.EncodeToString(b)
}

// Submit posts body to a route that makes a job (path: /v1/jobs,
// /v1/suites/run, /v1/projects/{name}/repair, …), retrying a lost answer
// or a 503 under one Idempotency-Key, so that a retry answers the job the
// first try created instead of making a second one.
func (c *Client) Submit(ctx context.Context, path string, body any) (JobView, error) {
	h := http.Header{"Idempotency-Key": {newIdempotencyKey()}}
	var v JobView
	err := retried(ctx, func() error { return c.Do(ctx, http.MethodPost, path, body, &v, h) })
	return v, err
}

// SubmitJob submits a job (POST /v1/jobs): a scenario, an exploration, a
// stored test's replay or repair, a project's run. A lost answer or a 503
// is retried under one Idempotency-Key: the job is made once.
func (c *Client) SubmitJob(ctx context.Context, s Submission) (JobView, error) {
	return c.Submit(ctx, "/v1/jobs", s)
}

// RunSuite runs the tenant's stored tests (POST /v1/suites/run), repair
// too when repair is set (POST /v1/suites/repair).
func (c *Client) RunSuite(ctx context.Context, r SuiteRequest, repair bool) (JobView, error) {
	path := "/v1/suites/run"
	if repair {
		path = "/v1/suites/repair"
	}
	return c.Submit(ctx, path, r)
}

// Job returns a job with its report so far.
func (c *Client) Job(ctx context.Context, id string) (JobView, error) {
	var v JobView
	return v, c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id), nil, &v, nil)
}

// JobsQuery filters a job listing; the zero value lists the newest.
type JobsQuery struct {
	State JobState
	Kind  Kind
	// Limit is at most how many (the API's default when 0).
	Limit int
	// After is the previous page's Next.
	After string
}

// Jobs lists the tenant's jobs, newest first, a page at a time.
func (c *Client) Jobs(ctx context.Context, q JobsQuery) (JobList, error) {
	v := url.Values{}
	if q.State != "" {
		v.Set("state", string(q.State))
	}
	if q.Kind != "" {
		v.Set("kind", string(q.Kind))
	}
	if q.Limit > 0 {
		v.Set("limit", fmt.Sprint(q.Limit))
	}
	if q.After != "" {
		v.Set("after", q.After)
	}
	path := "/v1/jobs"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var l JobList
	return l, c.Do(ctx, http.MethodGet, path, nil, &l, nil)
}

// CancelJob asks a job to stop; a running one stops at its next step.
func (c *Client) CancelJob(ctx context.Context, id string) (JobView, error) {
	var v JobView
	return v, c.Do(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(id)+"/cancel", nil, &v, nil)
}

// Terminal reports whether a job in state s has ended.
func (s JobState) Terminal() bool {
	switch s {
	case JobStateSucceeded, JobStateFailed, JobStateCancelled, JobStateBudgetExhausted:
		return true
	}
	return false
}

// Wait polls a job every interval (1 s when 0) until it ends or ctx is
// done, and returns it as it ended.
func (c *Client) Wait(ctx context.Context, id string, interval time.Duration) (JobView, error) {
	if interval <= 0 {
		interval = time.Second
	}
	for {
		v, err := c.Job(ctx, id)
		if err != nil || v.State.Terminal() {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// History returns a job's steps as they were recorded.
func (c *Client) History(ctx context.Context, id string) (HistoryList, error) {
	var h HistoryList
	return h, c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/history", nil, &h, nil)
}

// Script returns a succeeded scenario job's @playwright/test spec.
func (c *Client) Script(ctx context.Context, id string) (string, error) {
	var b []byte
	err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/script", nil, &b, nil)
	return string(b), err
}

// Patch returns a project repair's proposed change as a unified diff.
func (c *Client) Patch(ctx context.Context, id string) (string, error) {
	var b []byte
	err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/patch", nil, &b, nil)
	return string(b), err
}

// Artifact returns one of a job's artifacts (a screenshot, a run's junit
// XML or html report, a failing test's trace) as it was stored.
func (c *Client) Artifact(ctx context.Context, id, name string) ([]byte, error) {
	var b []byte
	err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/artifacts/"+url.PathEscape(name), nil, &b, nil)
	return b, err
}

// Findings returns an exploration's findings.
func (c *Client) Findings(ctx context.Context, id string) (FindingList, error) {
	var l FindingList
	return l, c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/findings", nil, &l, nil)
}

// Tests lists the tenant's stored tests.
func (c *Client) Tests(ctx context.Context) (TestList, error) {
	var l TestList
	return l, c.Do(ctx, http.MethodGet, "/v1/tests", nil, &l, nil)
}

// Test returns a stored test: its scenario, script and manifest.
func (c *Client) Test(ctx context.Context, id string) (TestView, error) {
	var t TestView
	return t, c.Do(ctx, http.MethodGet, "/v1/tests/"+url.PathEscape(id), nil, &t, nil)
}

// Versions lists a stored test's versions, newest first.
func (c *Client) Versions(ctx context.Context, id string) (VersionList, error) {
	var l VersionList
	return l, c.Do(ctx, http.MethodGet, "/v1/tests/"+url.PathEscape(id)+"/versions", nil, &l, nil)
}

// DecideVersion accepts a proposed version of a stored test (it becomes
// the test's script), or rejects it.
func (c *Client) DecideVersion(ctx context.Context, id string, version int, accept bool) (TestVersion, error) {
	verb := "reject"
	if accept {
		verb = "accept"
	}
	var v TestVersion
	return v, c.Do(ctx, http.MethodPost, fmt.Sprintf("/v1/tests/%s/versions/%d/%s", url.PathEscape(id), version, verb), nil, &v, nil)
}

// TestsToProject writes stored tests (each accepted spec with its steps'
// manifest) as the current version of a project, to be run and repaired
// by the runner as any project is.
func (c *Client) TestsToProject(ctx context.Context, r TestsToProject) (TestsProjectView, error) {
	var v TestsProjectView
	return v, c.Do(ctx, http.MethodPost, "/v1/tests/project", r, &v, nil)
}

// UploadProject uploads a version of a project of the tenant's: a zip or
// tar archive, or its files by path. Its tests are listed by a job the
// answer names (ListJob).
func (c *Client) UploadProject(ctx context.Context, name string, u ProjectUpload) (ProjectView, error) {
	var v ProjectView
	return v, c.Do(ctx, http.MethodPost, "/v1/projects/"+url.PathEscape(name), u, &v, nil)
}

// Projects lists the tenant's projects with their current versions.
func (c *Client) Projects(ctx context.Context) (ProjectList, error) {
	var l ProjectList
	return l, c.Do(ctx, http.MethodGet, "/v1/projects", nil, &l, nil)
}

// Project returns a project's current version and its listed tests.
func (c *Client) Project(ctx context.Context, name string) (ProjectView, error) {
	var v ProjectView
	return v, c.Do(ctx, http.MethodGet, "/v1/projects/"+url.PathEscape(name), nil, &v, nil)
}

// RunProject runs a project's tests with its own runner in the sandbox.
func (c *Client) RunProject(ctx context.Context, name string, r ProjectRequest) (JobView, error) {
	return c.Submit(ctx, "/v1/projects/"+url.PathEscape(name)+"/run", r)
}

// RepairProject runs a project's tests and heals what drifted, proposing
// the verified patch as a new version; a regression is reported, never
// healed.
func (c *Client) RepairProject(ctx context.Context, name string, r ProjectRequest) (JobView, error) {
	return c.Submit(ctx, "/v1/projects/"+url.PathEscape(name)+"/repair", r)
}

// AcceptProjectVersion makes a proposed version the project's current one
// (for a project of stored tests, the tests it healed take their new
// specs: StoredTests says which).
func (c *Client) AcceptProjectVersion(ctx context.Context, name, version string) (AcceptedProjectView, error) {
	var v AcceptedProjectView
	return v, c.Do(ctx, http.MethodPost, "/v1/projects/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version)+"/accept", nil, &v, nil)
}

// UploadTraces records what a run of the project elsewhere (the
// customer's CI) saw, from its traces, for its repairs to start from.
func (c *Client) UploadTraces(ctx context.Context, name string, t ProjectTraces) (TracesView, error) {
	var v TracesView
	return v, c.Do(ctx, http.MethodPost, "/v1/projects/"+url.PathEscape(name)+"/traces", t, &v, nil)
}

// Credits returns the tenant's credits and latest ledger movements.
func (c *Client) Credits(ctx context.Context) (AccountView, error) {
	var a AccountView
	return a, c.Do(ctx, http.MethodGet, "/v1/credits", nil, &a, nil)
}

// CreateWebhook registers a URL for events; the answer's Secret signs
// every delivery and is never shown again.
func (c *Client) CreateWebhook(ctx context.Context, r WebhookRequest) (WebhookCreated, error) {
	var w WebhookCreated
	return w, c.Do(ctx, http.MethodPost, "/v1/webhooks", r, &w, nil)
}

// Webhooks lists the tenant's webhooks.
func (c *Client) Webhooks(ctx context.Context) (WebhookList, error) {
	var l WebhookList
	return l, c.Do(ctx, http.MethodGet, "/v1/webhooks", nil, &l, nil)
}

// DeleteWebhook removes a webhook.
func (c *Client) DeleteWebhook(ctx context.Context, id string) (Deleted, error) {
	var d Deleted
	return d, c.Do(ctx, http.MethodDelete, "/v1/webhooks/"+url.PathEscape(id), nil, &d, nil)
}

// Deliveries lists a webhook's latest deliveries with their attempts.
func (c *Client) Deliveries(ctx context.Context, id string) (DeliveryList, error) {
	var l DeliveryList
	return l, c.Do(ctx, http.MethodGet, "/v1/webhooks/"+url.PathEscape(id)+"/deliveries", nil, &l, nil)
}

// CreateTenant makes a tenant and its API key (an admin token's call).
func (c *Client) CreateTenant(ctx context.Context, r TenantRequest) (TenantCreated, error) {
	var t TenantCreated
	return t, c.Do(ctx, http.MethodPost, "/v1/admin/tenants", r, &t, nil)
}

// GrantCredits adds credits to a tenant's balance, once per
// IdempotencyKey (an admin token's call): a lost answer or a 503 is
// retried with the same key.
func (c *Client) GrantCredits(ctx context.Context, tenantID string, r GrantRequest) (AccountView, error) {
	var a AccountView
	err := retried(ctx, func() error {
		return c.Do(ctx, http.MethodPost, "/v1/admin/tenants/"+url.PathEscape(tenantID)+"/credits", r, &a, nil)
	})
	return a, err
}
