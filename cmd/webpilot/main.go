package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/webpilot/webpilot/client"
)

// conn is the CLI's way to the API: its address, and a client.Client per
// token (a tenant's key, the admin token).
type conn struct {
	base string
	http *http.Client
}

func newConn() *conn {
	base := os.Getenv("WEBPILOT_API")
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	return &conn{base: strings.TrimRight(base, "/"), http: &http.Client{}}
}

// as is the API's client with token.
func (c *conn) as(token string) *client.Client {
	return client.New(c.base, token, client.WithHTTPClient(c.http))
}

func tenantKey() (string, error) {
	if k := os.Getenv("WEBPILOT_API_KEY"); k != "" {
		return k, nil
	}
	return "", errors.New("WEBPILOT_API_KEY is not set")
}

func adminToken() (string, error) {
	if t := os.Getenv("WEBPILOT_ADMIN_TOKEN"); t != "" {
		return t, nil
	}
	dir := os.Getenv("WEBPILOT_DATA_DIR")
	if dir == "" {
		dir = ".data"
	}
	b, err := os.ReadFile(filepath.Join(dir, "admin.token"))
	if err != nil {
		return "", errors.New("WEBPILOT_ADMIN_TOKEN is not set and no admin.token file was found")
	}
	return strings.TrimSpace(string(b)), nil
}

// do sends a request and decodes a JSON answer into out (a *string takes
// it as it came); API errors are returned with their field messages.
func (c *conn) do(method, path, token string, body any, out any) error {
	return c.doWith(method, path, token, body, out, nil)
}

// doWith is do with extra request headers.
func (c *conn) doWith(method, path, token string, body any, out any, header map[string]string) error {
	h := http.Header{}
	for k, v := range header {
		h.Set(k, v)
	}
	var err error
	if s, ok := out.(*string); ok {
		var raw []byte
		err = c.as(token).Do(context.Background(), method, path, body, &raw, h)
		*s = string(raw)
	} else {
		err = c.as(token).Do(context.Background(), method, path, body, out, h)
	}
	return c.explain(method+" "+path, err)
}

// explain says what to do when the dispatcher does not answer.
func (c *conn) explain(what string, err error) error {
	var ue *client.UnreachableError
	if !errors.As(err, &ue) {
		return err
	}
	return fmt.Errorf("%s: cannot reach the dispatcher at %s (%w)\n"+
		"  start it (make demo, or bin/dispatcher) or point WEBPILOT_API at a running one", what, c.base, ue.Err)
}

func tenantCmd(c *conn, name string, maxRunning int, out io.Writer, asJSON bool) error {
	tok, err := adminToken()
	if err != nil {
		return err
	}
	var raw string
	if err := c.do("POST", "/v1/admin/tenants", tok, map[string]any{"name": name, "max_running": maxRunning}, &raw); err != nil {
		return err
	}
	if asJSON {
		printRaw(out, raw)
		return nil
	}
	var res struct {
		Tenant struct{ ID, Name string }
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return err
	}
	fmt.Fprintf(out, "tenant_id: %s\napi_key: %s\n", res.Tenant.ID, res.APIKey)
	return nil
}

// accountJSON is the credits answer the CLI prints.
type accountJSON struct {
	Balance   float64 `json:"balance_credits"`
	Held      float64 `json:"held_credits"`
	Available float64 `json:"available_credits"`
	Ledger    []struct {
		JobID   *string `json:"job_id"`
		Credits float64 `json:"credits"`
		Reason  string  `json:"reason"`
		At      string  `json:"at"`
	} `json:"ledger"`
}

// creditsGrant adds credits under one idempotency key: retried after a
// lost answer or a 503 with the same key, the grant is applied once; the
// key is printed so that a person can retry by hand with --key.
func creditsGrant(c *conn, tenantID string, amount float64, key string, out io.Writer, asJSON bool) error {
	tok, err := adminToken()
	if err != nil {
		return err
	}
	if key == "" {
		key = "cli-" + uuid.NewString()
	}
	acct, err := c.as(tok).GrantCredits(context.Background(), tenantID, client.GrantRequest{Credits: amount, IdempotencyKey: key})
	if err != nil {
		return fmt.Errorf("%w\n  retrying with --key %s never grants twice", c.explain("grant", err), key)
	}
	raw, err := json.Marshal(acct)
	if err != nil {
		return err
	}
	return printAccount(string(raw), out, asJSON, "grant key "+key)
}

// creditsShow prints a balance and its ledger: a tenant's own (API key),
// or any tenant's (admin token).
func creditsShow(c *conn, tenantID string, out io.Writer, asJSON bool) error {
	var raw string
	if tenantID != "" {
		tok, err := adminToken()
		if err != nil {
			return err
		}
		if err := c.do("GET", "/v1/admin/tenants/"+tenantID+"/credits", tok, nil, &raw); err != nil {
			return err
		}
	} else {
		key, err := tenantKey()
		if err != nil {
			return err
		}
		if err := c.do("GET", "/v1/credits", key, nil, &raw); err != nil {
			return err
		}
	}
	return printAccount(raw, out, asJSON, "")
}

func printAccount(raw string, out io.Writer, asJSON bool, note string) error {
	if asJSON {
		printRaw(out, raw)
		return nil
	}
	var res accountJSON
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return err
	}
	fmt.Fprintf(out, "balance %.6f  held %.6f  available %.6f credits\n", res.Balance, res.Held, res.Available)
	for _, e := range res.Ledger {
		job := ""
		if e.JobID != nil {
			job = " job " + *e.JobID
		}
		fmt.Fprintf(out, "  %s  %+.6f  %s%s\n", e.At, e.Credits, e.Reason, job)
	}
	if note != "" {
		fmt.Fprintln(out, note)
	}
	return nil
}

// parseSecrets reads --secret NAME=env:VAR|file:PATH values. A value on
// the command line itself would land in shell history and process lists,
// so it is refused.
func parseSecrets(specs []string) (map[string]string, error) {
	secrets := map[string]string{}
	for _, v := range specs {
		name, src, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--secret %q: want NAME=env:VAR or NAME=file:PATH", v)
		}
		switch {
		case strings.HasPrefix(src, "env:"):
			val, set := os.LookupEnv(strings.TrimPrefix(src, "env:"))
			if !set || val == "" {
				return nil, fmt.Errorf("secret %s: environment variable %s is not set", name, strings.TrimPrefix(src, "env:"))
			}
			secrets[name] = val
		case strings.HasPrefix(src, "file:"):
			b, err := os.ReadFile(strings.TrimPrefix(src, "file:"))
			if err != nil {
				return nil, fmt.Errorf("secret %s: %w", name, err)
			}
			secrets[name] = strings.TrimRight(string(b), "\r\n")
		default:
			return nil, fmt.Errorf("secret %s: give it as env:VAR or file:PATH, not inline", name)
		}
	}
	if len(secrets) == 0 {
		return nil, nil
	}
	return secrets, nil
}

// loadScenario reads a JSON scenario, or a text file with one step per line.
func loadScenario(path, base string) (client.Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return client.Scenario{}, err
	}
	if strings.HasSuffix(path, ".json") || bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		var sc client.Scenario
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sc); err != nil {
			return sc, fmt.Errorf("%s: %w", path, err)
		}
		if base != "" {
			sc.BaseURL = base
		}
		return sc, nil
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	// "file: NAME=PATH" lines attach files, read beside the scenario.
	var refs []string
	var kept []string
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "file:"); ok {
			ref := strings.TrimSpace(rest)
			if n, p, ok := strings.Cut(ref, "="); ok && !filepath.IsAbs(p) {
				ref = n + "=" + filepath.Join(filepath.Dir(path), p)
			}
			refs = append(refs, ref)
			continue
		}
		kept = append(kept, line)
	}
	sc := client.ScenarioFromText(name, strings.Join(kept, "\n"), base)
	files, err := readFiles(refs)
	if err != nil {
		return sc, fmt.Errorf("%s: %w", path, err)
	}
	sc.Files = files
	return sc, nil
}

// readFiles reads NAME=PATH file references (--file, "file:" lines) into
// files a scenario carries for upload steps; NAME is what steps call it.
func readFiles(refs []string) ([]client.File, error) {
	var out []client.File
	for _, ref := range refs {
		name, path, ok := strings.Cut(ref, "=")
		if !ok || name == "" || path == "" {
			return nil, fmt.Errorf("file %q: want NAME=PATH", ref)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", name, err)
		}
		mt, _, _ := strings.Cut(mime.TypeByExtension(filepath.Ext(name)), ";")
		if mt == "" {
			mt = "application/octet-stream"
		}
		out = append(out, client.File{Name: name, MimeType: mt, Content: b})
	}
	return out, nil
}

func submitCmd(c *conn, file, base, project string, follow bool, secrets map[string]string, files []string, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	sc, err := loadScenario(file, base)
	if err != nil {
		return err
	}
	more, err := readFiles(files)
	if err != nil {
		return err
	}
	sc.Files = append(sc.Files, more...)
	if project != "" {
		sc.Project = project
	}
	if len(secrets) > 0 && sc.Secrets == nil {
		sc.Secrets = map[string]string{}
	}
	for k, v := range secrets {
		sc.Secrets[k] = v
	}
	v, err := c.submit(key, "/v1/jobs", client.Submission{Kind: client.KindScenario, Scenario: &sc})
	if err != nil {
		return err
	}
	return submitted(c, key, v, fmt.Sprintf("submitted job %s (%d steps, %.2f credits held)", v.ID, v.Progress.Total, v.HoldCredits), follow, out, asJSON)
}

// submitted prints a new job (its JSON, or what) and follows it if asked.
func submitted(c *conn, key string, v client.JobView, what string, follow bool, out io.Writer, asJSON bool) error {
	if asJSON {
		b, _ := json.Marshal(v)
		fmt.Fprintln(out, string(b))
	} else {
		fmt.Fprintln(out, what)
	}
	if !follow {
		return nil
	}
	return watch(c, key, v.ID, out, asJSON)
}

// submit posts a new job; package client retries a lost answer or a 503
// under one Idempotency-Key, so a retry returns the job the first try
// created instead of a second one.
func (c *conn) submit(key, path string, body any) (client.JobView, error) {
	v, err := c.as(key).Submit(context.Background(), path, body)
	return v, c.explain("POST "+path, err)
}

// printRaw prints an API answer as it came (--json).
func printRaw(out io.Writer, raw string) {
	fmt.Fprintln(out, strings.TrimSpace(raw))
}

// printRunProgress prints a line of a running project job's progress.
func printRunProgress(out io.Writer, p client.RunProgress) {
	line := fmt.Sprintf("[%s] ", time.Now().Format("15:04:05"))
	if p.Phase != "" {
		line += p.Phase + ": "
	}
	if p.Files > 0 && p.Phase == "" {
		// A repair done a file at a time, before any file reported.
		fmt.Fprintf(out, "%sfiles %d/%d repaired\n", line, p.FilesEnded, p.Files)
		return
	}
	line += fmt.Sprintf("%d/%d tests ended (%d passed, %d failed)", p.Ended, p.Tests, p.Passed, p.Failed)
	if p.Healed+p.Flagged+p.Left > 0 {
		line += fmt.Sprintf("; healed %d, flagged %d, left %d", p.Healed, p.Flagged, p.Left)
	}
	if p.Files > 0 {
		line += fmt.Sprintf("; files %d/%d repaired", p.FilesEnded, p.Files)
	}
	if len(p.Running) > 0 {
		line += "; running " + p.Running[0]
		if len(p.Running) > 1 {
			line += fmt.Sprintf(" and %d more", len(p.Running)-1)
		}
	}
	fmt.Fprintln(out, line)
}

// watch follows the job's event stream and prints each step as it ends.
func watch(c *conn, key, id string, out io.Writer, asJSON bool) error {
	lastState := ""
	ended := false
	err := c.as(key).Events(context.Background(), id, func(e client.Event) error {
		data := []byte(e.Data)
		if asJSON && e.Name != "end" {
			// One JSON object per event, for scripts.
			b, _ := json.Marshal(struct {
				Event string          `json:"event"`
				Data  json.RawMessage `json:"data"`
			}{e.Name, data})
			fmt.Fprintln(out, string(b))
			if e.Name == "state" {
				var s struct{ State string }
				_ = json.Unmarshal(data, &s)
				lastState = s.State
			}
			return nil
		}
		switch e.Name {
		case "step":
			printStep(out, data)
		case "test":
			printTest(out, data)
		case "finding":
			var f client.FindingView
			if json.Unmarshal(data, &f) == nil {
				printFinding(out, f)
			}
		case "state":
			var s struct {
				State string
				Error string
				Run   *client.RunProgress `json:"run_progress"`
			}
			_ = json.Unmarshal(data, &s)
			if s.State != lastState {
				fmt.Fprintf(out, "[%s] %s\n", time.Now().Format("15:04:05"), s.State)
				lastState = s.State
			}
			if s.Run != nil {
				printRunProgress(out, *s.Run)
			}
		case "end":
			ended = true
		}
		return nil
	})
	if err == nil && ended {
		return summary(c, key, id, out, asJSON)
	}
	// The stream ended without the job's end (the dispatcher restarted, a
	// proxy cut it): that is not success, whatever the job does next.
	state := lastState
	if state == "" {
		state = "unknown"
	}
	var ae *client.Error
	switch {
	case errors.As(err, &ae):
		return fmt.Errorf("watch: HTTP %d: %s", ae.Status, ae.Message)
	case errors.Is(err, client.ErrStreamEnded) && err != client.ErrStreamEnded:
		return fmt.Errorf("watch %s: the event stream broke before the job ended (last state %s): %w; run webpilot watch %s again", id, state, err, id)
	case err != nil && err != client.ErrStreamEnded:
		return c.explain("watch "+id, err)
	}
	return fmt.Errorf("watch %s: the event stream ended before the job did (last state %s); run webpilot watch %s again", id, state, id)
}

func printStep(out io.Writer, data []byte) {
	var s struct {
		Index      int
		Goal       string
		Tier       string
		Status     string
		Error      string
		Iterations int
		Duration   int64 `json:"duration_ns"`
		Usage      struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		}
		Commands []struct{ OK bool }
	}
	if json.Unmarshal(data, &s) != nil {
		return
	}
	mark := "✓"
	if s.Status != "passed" {
		mark = "✗"
	}
	fmt.Fprintf(out, "  %s step %d  %-13s %6.0f ms  %d cmd  %d+%d tokens  %s\n", mark, s.Index+1, s.Tier,
		float64(s.Duration)/1e6, len(s.Commands), s.Usage.Prompt, s.Usage.Completion, s.Goal)
	if s.Error != "" {
		fmt.Fprintf(out, "      %s\n", s.Error)
	}
}

// tierLine says how many steps each tier took, cheapest first.
func tierLine(tiers map[string]int) string {
	var parts []string
	for _, t := range []string{"deterministic", "lexical", "cached", "replay", "settle", "relocate", "agent"} {
		if n := tiers[t]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, t))
		}
	}
	return strings.Join(parts, ", ")
}

func summary(c *conn, key, id string, out io.Writer, asJSON bool) error {
	var v client.JobView
	if err := c.do("GET", "/v1/jobs/"+id, key, nil, &v); err != nil {
		return err
	}
	if asJSON {
		b, _ := json.Marshal(v)
		fmt.Fprintln(out, string(b))
		if v.State != client.JobStateSucceeded {
			return fmt.Errorf("job ended %s", v.State)
		}
		return nil
	}
	if v.Suite != nil {
		return suiteSummary(v, out)
	}
	if v.Kind == client.KindExploration {
		return explorationSummary(v, out)
	}
	tokens := 0
	if v.Usage != nil {
		tokens = v.Usage.PromptTokens + v.Usage.CompletionTokens
	}
	fmt.Fprintf(out, "job %s %s: %d/%d steps, %d LLM tokens, cost %.6f credits (held %.2f)\n",
		v.ID, v.State, v.Progress.Done, v.Progress.Total, tokens, v.ChargedCredits, v.HoldCredits)
	if t := tierLine(v.Tiers); t != "" {
		fmt.Fprintf(out, "steps by tier: %s\n", t)
	}
	if v.Error != "" {
		fmt.Fprintf(out, "error: %s\n", v.Error)
	}
	intoProjectSummary(v, out)
	if v.State != client.JobStateSucceeded {
		return fmt.Errorf("job ended %s", v.State)
	}
	return nil
}

// intoProjectSummary says what a scenario naming a project wrote into it.
func intoProjectSummary(v client.JobView, out io.Writer) {
	var into client.IntoProject
	if json.Unmarshal(v.IntoProject, &into) != nil || into.Project == "" {
		return
	}
	uses := "none of its page objects"
	if len(into.Uses) > 0 {
		uses = strings.Join(into.Uses, ", ")
	}
	if into.File != "" {
		fmt.Fprintf(out, "written into project %s as %s (uses %s): %s under the runner\n", into.Project, into.File, uses, cmp.Or(string(into.Verdict), "not run"))
	}
	switch {
	case into.Proposed != "":
		fmt.Fprintf(out, "proposed version %s: webpilot project accept %s %s\n", into.Proposed[:12], into.Project, into.Proposed)
	case into.Error != "":
		fmt.Fprintf(out, "not proposed: %s\n", into.Error)
	}
}

// jobAction runs a command on one job: watch, job, script, cancel, history.
func jobAction(c *conn, key, name, id string, out io.Writer, asJSON bool) error {
	switch name {
	case "watch":
		return watch(c, key, id, out, asJSON)
	case "script":
		var s string
		if err := c.do("GET", "/v1/jobs/"+id+"/script", key, nil, &s); err != nil {
			return err
		}
		if asJSON {
			b, _ := json.Marshal(map[string]string{"job_id": id, "script": s})
			fmt.Fprintln(out, string(b))
			return nil
		}
		fmt.Fprint(out, s)
		return nil
	case "cancel":
		var v client.JobView
		if err := c.do("POST", "/v1/jobs/"+id+"/cancel", key, nil, &v); err != nil {
			return err
		}
		if asJSON {
			b, _ := json.Marshal(v)
			fmt.Fprintln(out, string(b))
			return nil
		}
		fmt.Fprintf(out, "job %s: %s (cancel requested)\n", v.ID, v.State)
		return nil
	case "history":
		var raw string
		if err := c.do("GET", "/v1/jobs/"+id+"/history", key, nil, &raw); err != nil {
			return err
		}
		if asJSON {
			printRaw(out, raw)
			return nil
		}
		var h struct {
			History []struct {
				Step      int    `json:"step"`
				Iteration int    `json:"iteration"`
				Kind      string `json:"kind"`
				Action    string `json:"action"`
				Target    string `json:"target"`
				Result    string `json:"result"`
				Error     string `json:"error"`
			} `json:"history"`
		}
		if err := json.Unmarshal([]byte(raw), &h); err != nil {
			return err
		}
		for _, e := range h.History {
			at := fmt.Sprintf("step %d", e.Step)
			if e.Iteration > 0 {
				at += fmt.Sprintf(".%d", e.Iteration) // the agent's turn within the step
			}
			line := fmt.Sprintf("  %-9s %-12s %-8s %s %s", at, e.Kind, e.Result, e.Action, e.Target)
			if e.Error != "" {
				line += "  — " + e.Error
			}
			fmt.Fprintln(out, strings.TrimRight(line, " "))
		}
		fmt.Fprintf(out, "%d entries\n", len(h.History))
		return nil
	default: // job
		var s string
		if err := c.do("GET", "/v1/jobs/"+id, key, nil, &s); err != nil {
			return err
		}
		fmt.Fprint(out, s)
		return nil
	}
}

// jobsList prints a page of the tenant's jobs.
func jobsList(c *conn, key string, limit int, after string, out io.Writer, asJSON bool) error {
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if after != "" {
		q.Set("after", after)
	}
	var raw string
	if err := c.do("GET", "/v1/jobs?"+q.Encode(), key, nil, &raw); err != nil {
		return err
	}
	if asJSON {
		printRaw(out, raw)
		return nil
	}
	var res struct {
		Jobs []client.JobView `json:"jobs"`
		Next string           `json:"next"`
	}
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return err
	}
	for _, v := range res.Jobs {
		tokens := 0
		if v.Usage != nil {
			tokens = v.Usage.PromptTokens + v.Usage.CompletionTokens
		}
		fmt.Fprintf(out, "%s  %-12s %-15s %3d/%-3d steps  %7d tokens  %9.6f credits  %s  %s\n", v.ID, v.Kind, v.State,
			v.Progress.Done, v.Progress.Total, tokens, v.ChargedCredits, v.CreatedAt.Format("2006-01-02 15:04"), v.Name)
	}
	if res.Next != "" {
		fmt.Fprintf(out, "next page: webpilot jobs --after %s\n", res.Next)
	}
	return nil
}
