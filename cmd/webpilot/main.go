// Command webpilot is the user CLI: submit scenarios, follow their progress,
// fetch generated tests, and (with the admin token) manage tenants and credits.
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/jobs"
	"github.com/webpilot/webpilot/scenario"
)

const usage = `webpilot — turn test scenarios into Playwright tests

Usage:
  webpilot tenant create NAME [--max-running N]   (admin) create a tenant; prints its API key once
  webpilot credits grant TENANT_ID CREDITS        (admin) add credits
  webpilot credits show [TENANT_ID]               balance and ledger (admin with TENANT_ID)
  webpilot submit FILE [--base URL] [--watch]     submit a scenario (.json, or text: one step per line)
  webpilot watch JOB_ID                           follow a job step by step until it ends
  webpilot job JOB_ID                             the job as JSON
  webpilot script JOB_ID                          print the generated @playwright/test spec
  webpilot cancel JOB_ID                          cancel a job (a suite's children with it)
  webpilot suite run [--tag T]... [--test ID]... [--watch]
                                                  replay stored tests (all, by tag, or listed) at 0 tokens
  webpilot suite repair [--tag T]... [--test ID]... [--auto-accept] [--max-credits N] [--watch]
                                                  replay and repair them: drift healed, regressions reported
  webpilot import FILE... [--base URL] [--tag T]  store existing @playwright/test specs as tests
  webpilot explore URL --goal "..." [--scope /path/]... [--max-actions N] [--max-minutes N] [--watch]
                                                  explore an app toward a goal and report the bugs found
  webpilot findings JOB_ID [--json]               an exploration's findings, their evidence and reproductions
  webpilot cache list|clear [--origin URL]        the steps re-runs take without the model; clear to forget them
  webpilot test list                              the stored tests and their last verdict
  webpilot test show TEST_ID                      a test's script and its versions
  webpilot test diff TEST_ID VERSION              the unified diff a version proposes
  webpilot test accept|reject TEST_ID VERSION     decide a proposed version
  (submit and suite take --secret NAME=env:VAR|file:PATH, repeatable)

Environment:
  WEBPILOT_API          dispatcher URL (default http://127.0.0.1:8080)
  WEBPILOT_API_KEY      tenant API key
  WEBPILOT_ADMIN_TOKEN  admin token (default: read from $WEBPILOT_DATA_DIR/admin.token)
`

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "webpilot:", err)
		os.Exit(1)
	}
}

type client struct {
	base string
	http *http.Client
}

func newClient() *client {
	base := os.Getenv("WEBPILOT_API")
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	return &client{base: strings.TrimRight(base, "/"), http: &http.Client{}}
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

// apiError is an error answer of the API.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// do sends a request and decodes a JSON answer into out; API errors are
// returned with their field messages.
func (c *client) do(method, path, token string, body any, out any) error {
	return c.doWith(method, path, token, body, out, nil)
}

// doWith is do with extra request headers.
func (c *client) doWith(method, path, token string, body any, out any, header map[string]string) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.unreachable(method+" "+path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		var e struct {
			Error  string `json:"error"`
			Fields []struct{ Field, Message string }
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			msg := fmt.Sprintf("%s (HTTP %d)", e.Error, resp.StatusCode)
			for _, f := range e.Fields {
				msg += fmt.Sprintf("\n  %s: %s", f.Field, f.Message)
			}
			return &apiError{status: resp.StatusCode, msg: msg}
		}
		return &apiError{status: resp.StatusCode, msg: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(raw)))}
	}
	if out == nil {
		return nil
	}
	if s, ok := out.(*string); ok {
		*s = string(raw)
		return nil
	}
	return json.Unmarshal(raw, out)
}

// unreachable says what to do when the dispatcher does not answer.
func (c *client) unreachable(what string, err error) error {
	return fmt.Errorf("%s: cannot reach the dispatcher at %s (%w)\n"+
		"  start it (make demo, or bin/dispatcher) or point WEBPILOT_API at a running one", what, c.base, err)
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(out, usage)
		return nil
	}
	c := newClient()
	switch args[0] {
	case "tenant":
		return tenantCmd(c, args[1:], out)
	case "credits":
		return creditsCmd(c, args[1:], out)
	case "submit":
		return submitCmd(c, args[1:], out)
	case "suite":
		return suiteCmd(c, args[1:], out)
	case "test":
		return testCmd(c, args[1:], out)
	case "import":
		return importCmd(c, args[1:], out)
	case "explore":
		return exploreCmd(c, args[1:], out)
	case "findings":
		return findingsCmd(c, args[1:], out)
	case "cache":
		return cacheCmd(c, args[1:], out)
	case "watch", "job", "script", "cancel":
		if len(args) != 2 {
			return fmt.Errorf("usage: webpilot %s JOB_ID", args[0])
		}
		key, err := tenantKey()
		if err != nil {
			return err
		}
		id := args[1]
		switch args[0] {
		case "watch":
			return watch(c, key, id, out)
		case "job":
			var s string
			if err := c.do("GET", "/v1/jobs/"+id, key, nil, &s); err != nil {
				return err
			}
			fmt.Fprint(out, s)
			return nil
		case "script":
			var s string
			if err := c.do("GET", "/v1/jobs/"+id+"/script", key, nil, &s); err != nil {
				return err
			}
			fmt.Fprint(out, s)
			return nil
		default:
			var v api.JobView
			if err := c.do("POST", "/v1/jobs/"+id+"/cancel", key, nil, &v); err != nil {
				return err
			}
			fmt.Fprintf(out, "job %s: %s (cancel requested)\n", v.ID, v.State)
			return nil
		}
	}
	return fmt.Errorf("unknown command %q\n\n%s", args[0], usage)
}

func tenantCmd(c *client, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("tenant create", flag.ContinueOnError)
	maxRunning := fs.Int("max-running", 0, "running jobs cap (0: default)")
	if len(args) < 2 || args[0] != "create" {
		return errors.New("usage: webpilot tenant create NAME [--max-running N]")
	}
	if err := fs.Parse(args[2:]); err != nil {
		return err
	}
	tok, err := adminToken()
	if err != nil {
		return err
	}
	var res struct {
		Tenant struct{ ID, Name string }
		APIKey string `json:"api_key"`
	}
	if err := c.do("POST", "/v1/admin/tenants", tok, map[string]any{"name": args[1], "max_running": *maxRunning}, &res); err != nil {
		return err
	}
	fmt.Fprintf(out, "tenant_id: %s\napi_key: %s\n", res.Tenant.ID, res.APIKey)
	return nil
}

func creditsCmd(c *client, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: webpilot credits grant|show")
	}
	var res struct {
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
	switch {
	case args[0] == "grant" && len(args) == 3:
		tok, err := adminToken()
		if err != nil {
			return err
		}
		amount, err := strconv.ParseFloat(args[2], 64)
		if err != nil {
			return fmt.Errorf("CREDITS must be a number: %w", err)
		}
		idem := make([]byte, 8)
		_, _ = rand.Read(idem)
		if err := c.do("POST", "/v1/admin/tenants/"+args[1]+"/credits", tok, map[string]any{"credits": amount, "idempotency_key": hex.EncodeToString(idem)}, &res); err != nil {
			return err
		}
	case args[0] == "show" && len(args) == 2:
		tok, err := adminToken()
		if err != nil {
			return err
		}
		if err := c.do("GET", "/v1/admin/tenants/"+args[1]+"/credits", tok, nil, &res); err != nil {
			return err
		}
	case args[0] == "show" && len(args) == 1:
		key, err := tenantKey()
		if err != nil {
			return err
		}
		if err := c.do("GET", "/v1/credits", key, nil, &res); err != nil {
			return err
		}
	default:
		return errors.New("usage: webpilot credits grant TENANT_ID CREDITS | credits show [TENANT_ID]")
	}
	fmt.Fprintf(out, "balance %.6f  held %.6f  available %.6f credits\n", res.Balance, res.Held, res.Available)
	for _, e := range res.Ledger {
		job := ""
		if e.JobID != nil {
			job = " job " + *e.JobID
		}
		fmt.Fprintf(out, "  %s  %+.6f  %s%s\n", e.At, e.Credits, e.Reason, job)
	}
	return nil
}

// secretFlag registers the repeatable --secret flag on fs.
func secretFlag(fs *flag.FlagSet) map[string]string {
	secrets := map[string]string{}
	fs.Func("secret", "NAME=env:VAR or NAME=file:PATH: a secret for {{NAME}}, typed into fields but never shown, stored or logged in the clear (repeatable)",
		func(v string) error {
			name, src, ok := strings.Cut(v, "=")
			if !ok || name == "" {
				return errors.New("want NAME=env:VAR or NAME=file:PATH")
			}
			switch {
			case strings.HasPrefix(src, "env:"):
				val, set := os.LookupEnv(strings.TrimPrefix(src, "env:"))
				if !set || val == "" {
					return fmt.Errorf("secret %s: environment variable %s is not set", name, strings.TrimPrefix(src, "env:"))
				}
				secrets[name] = val
			case strings.HasPrefix(src, "file:"):
				b, err := os.ReadFile(strings.TrimPrefix(src, "file:"))
				if err != nil {
					return fmt.Errorf("secret %s: %w", name, err)
				}
				secrets[name] = strings.TrimRight(string(b), "\r\n")
			default:
				// A value on the command line would land in shell history and process lists.
				return fmt.Errorf("secret %s: give it as env:VAR or file:PATH, not inline", name)
			}
			return nil
		})
	return secrets
}

// loadScenario reads a JSON scenario, or a text file with one step per line.
func loadScenario(path, base string) (scenario.Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return scenario.Scenario{}, err
	}
	if strings.HasSuffix(path, ".json") || bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		var sc scenario.Scenario
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
	return scenario.ParseTextScenario(name, string(b), base), nil
}

func submitCmd(c *client, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("submit", flag.ContinueOnError)
	base := fs.String("base", "", "base URL (overrides the file's)")
	follow := fs.Bool("watch", false, "follow progress until the job ends, then print the spec")
	secrets := secretFlag(fs)
	var file string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if rest = fs.Args(); len(rest) > 0 {
			file, rest = rest[0], rest[1:]
		}
	}
	if file == "" {
		return errors.New("usage: webpilot submit FILE [--base URL] [--secret NAME=env:VAR] [--watch]")
	}
	key, err := tenantKey()
	if err != nil {
		return err
	}
	sc, err := loadScenario(file, *base)
	if err != nil {
		return err
	}
	if len(secrets) > 0 && sc.Secrets == nil {
		sc.Secrets = map[string]string{}
	}
	for k, v := range secrets {
		sc.Secrets[k] = v
	}
	v, err := c.submit(key, "/v1/jobs", jobs.Submission{Kind: jobs.KindScenario, Scenario: &sc})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "submitted job %s (%d steps, %.2f credits held)\n", v.ID, v.Progress.Total, v.HoldCredits)
	if !*follow {
		return nil
	}
	return watch(c, key, v.ID, out)
}

// submit posts a new job, retrying a lost answer or a 503 under one
// Idempotency-Key, so a retry returns the job the first try created
// instead of a second one.
func (c *client) submit(key, path string, body any) (api.JobView, error) {
	idem := map[string]string{"Idempotency-Key": "cli-" + uuid.NewString()}
	var v api.JobView
	var err error
	for try := 1; ; try++ {
		err = c.doWith("POST", path, key, body, &v, idem)
		var ae *apiError
		retry := err != nil && (!errors.As(err, &ae) || ae.status == http.StatusServiceUnavailable)
		if !retry || try == 4 {
			return v, err
		}
		time.Sleep(time.Duration(try) * 500 * time.Millisecond)
	}
}

// watch follows the job's event stream and prints each step as it ends.
func watch(c *client, key, id string, out io.Writer) error {
	req, err := http.NewRequest("GET", c.base+"/v1/jobs/"+id+"/events", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := c.http.Do(req)
	if err != nil {
		return c.unreachable("watch "+id, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("watch: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(raw)))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	event := ""
	lastState := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := []byte(strings.TrimPrefix(line, "data: "))
			switch event {
			case "step":
				printStep(out, data)
			case "test":
				printTest(out, data)
			case "finding":
				var f api.FindingView
				if json.Unmarshal(data, &f) == nil {
					printFinding(out, f)
				}
			case "state":
				var s struct {
					State string
					Error string
				}
				_ = json.Unmarshal(data, &s)
				if s.State != lastState {
					fmt.Fprintf(out, "[%s] %s\n", time.Now().Format("15:04:05"), s.State)
					lastState = s.State
				}
			case "end":
				return summary(c, key, id, out)
			}
		}
	}
	// The stream ended without the job's end (the dispatcher restarted, a
	// proxy cut it): that is not success, whatever the job does next.
	state := lastState
	if state == "" {
		state = "unknown"
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("watch %s: the event stream broke before the job ended (last state %s): %w; run webpilot watch %s again", id, state, err, id)
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

func summary(c *client, key, id string, out io.Writer) error {
	var v api.JobView
	if err := c.do("GET", "/v1/jobs/"+id, key, nil, &v); err != nil {
		return err
	}
	if v.Suite != nil {
		return suiteSummary(v, out)
	}
	if v.Kind == string(jobs.KindExploration) {
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
	if v.State != "succeeded" {
		return fmt.Errorf("job ended %s", v.State)
	}
	return nil
}
