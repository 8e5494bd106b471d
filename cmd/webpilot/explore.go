package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/webpilot/webpilot/client"
)

// exploreCmd submits an exploration.
// With plan it follows the job and then prints its test plans.
func exploreCmd(c *conn, req client.ExplorationRequest, follow, plan bool, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	v, err := c.submit(key, "/v1/jobs", client.Submission{Kind: client.KindExploration, Exploration: &req})
	if err != nil {
		return err
	}
	err = submitted(c, key, v, fmt.Sprintf("submitted exploration %s (%.2f credits held)", v.ID, v.HoldCredits), follow || plan, out, asJSON)
	if err != nil || !plan {
		return err
	}
	return plansCmd(c, v.ID, out)
}

// findingsCmd prints a job's findings.
func findingsCmd(c *conn, id string, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	var raw string
	if err := c.do("GET", "/v1/jobs/"+id+"/findings", key, nil, &raw); err != nil {
		return err
	}
	if asJSON {
		fmt.Fprint(out, raw)
		return nil
	}
	var res struct {
		State    string
		Findings []client.FindingView
	}
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return err
	}
	verified := 0
	for _, f := range res.Findings {
		printFinding(out, f)
		var r struct{ Verified bool }
		if json.Unmarshal(f.Reproduction, &r) == nil && r.Verified {
			verified++
		}
	}
	fmt.Fprintf(out, "%d findings (%d reproduced under @playwright/test); job %s\n", len(res.Findings), verified, res.State)
	return nil
}

// printFinding prints one finding: what, where, how to get there, and
// whether its reproduction fails as it should.
func printFinding(out io.Writer, f client.FindingView) {
	fmt.Fprintf(out, "#%d %-8s %-15s %s\n", f.Seq, f.Severity, f.Type, f.Title)
	status := ""
	if f.Status != "" {
		status = ", " + strings.ReplaceAll(f.Status, "_", " ")
	}
	fmt.Fprintf(out, "    at %s (%d place(s)); %s%s\n", f.URL, f.Occurrences, f.Confidence, status)
	var ev struct {
		Message, Expected, Observed, Screenshot string
	}
	if json.Unmarshal(f.Evidence, &ev) == nil {
		if ev.Expected != "" {
			fmt.Fprintf(out, "    expected %s; observed %s\n", ev.Expected, ev.Observed)
		} else if ev.Message != "" {
			fmt.Fprintf(out, "    %s\n", firstLine(ev.Message, 160))
		}
		if ev.Screenshot != "" {
			fmt.Fprintf(out, "    screenshot: /v1/jobs/%s/artifacts/%s\n", f.JobID, ev.Screenshot)
		}
	}
	if len(f.Path) > 0 {
		fmt.Fprintf(out, "    path: %s\n", strings.Join(f.Path, " → "))
	}
	var r struct {
		Verified bool
		Outcome  string
	}
	if json.Unmarshal(f.Reproduction, &r) == nil && r.Outcome != "" {
		fmt.Fprintf(out, "    reproduction: %s\n", r.Outcome)
	}
}

// explorationSummary prints how an exploration ended.
func explorationSummary(v client.JobView, out io.Writer) error {
	var r struct {
		GoalMet  bool `json:"goal_met"`
		Stopped  string
		Actions  int
		Findings []struct {
			Reproduction struct{ Verified bool }
		}
		Coverage struct {
			States    []json.RawMessage
			Exercised int `json:"elements_exercised"`
			Seen      int `json:"elements_seen"`
		}
		Journey      struct{ Verified bool }
		Verification string
		NeedsAuth    []string `json:"needs_authentication"`
		Noise        []string
		Comparison   *struct {
			Previous  string `json:"previous_job"`
			New       int
			StillOpen int `json:"still_open"`
			Fixed     []struct {
				Seq   int
				Title string
			}
			Missed []struct {
				Seq   int
				Title string
			}
			NotRechecked []struct {
				Seq        int
				Title, Why string
			} `json:"not_rechecked"`
		}
	}
	_ = json.Unmarshal(v.Exploration, &r)
	verified := 0
	for _, f := range r.Findings {
		if f.Reproduction.Verified {
			verified++
		}
	}
	tokens := 0
	if v.Usage != nil {
		tokens = v.Usage.PromptTokens + v.Usage.CompletionTokens
	}
	fmt.Fprintf(out, "exploration %s %s: %d findings (%d reproduced), %d actions, %d states, %d/%d elements exercised, goal met: %v, stopped: %s; %d LLM tokens, cost %.6f credits\n",
		v.ID, v.State, len(r.Findings), verified, r.Actions, len(r.Coverage.States), r.Coverage.Exercised, r.Coverage.Seen, r.GoalMet,
		r.Stopped, tokens, v.ChargedCredits)
	if r.Verification != "" {
		fmt.Fprintf(out, "verification: %s\n", r.Verification)
	}
	if len(r.NeedsAuth) > 0 || len(r.Noise) > 0 {
		fmt.Fprintf(out, "apart: %d page(s) asking for a login, %d third-party or refused request(s)\n", len(r.NeedsAuth), len(r.Noise))
	}
	if c := r.Comparison; c != nil {
		fmt.Fprintf(out, "against exploration %s: %d new, %d still open, %d fixed, %d missed by this run, %d not rechecked\n",
			c.Previous, c.New, c.StillOpen, len(c.Fixed), len(c.Missed), len(c.NotRechecked))
		for _, f := range c.Fixed {
			fmt.Fprintf(out, "  fixed: #%d %s\n", f.Seq, f.Title)
		}
	}
	if v.Error != "" {
		fmt.Fprintf(out, "error: %s\n", v.Error)
	}
	if v.State != client.JobStateSucceeded {
		return fmt.Errorf("job ended %s", v.State)
	}
	return nil
}

// explorationPlans reads the plans an exploration suggested and where it began.
func explorationPlans(c *conn, key, id string) (startURL string, plans []client.Plan, err error) {
	var v client.JobView
	if err := c.do("GET", "/v1/jobs/"+id, key, nil, &v); err != nil {
		return "", nil, err
	}
	var r struct {
		StartURL string        `json:"start_url"`
		Plans    []client.Plan `json:"plans"`
	}
	if len(v.Exploration) == 0 || json.Unmarshal(v.Exploration, &r) != nil {
		return "", nil, fmt.Errorf("job %s is not a finished exploration", id)
	}
	return r.StartURL, r.Plans, nil
}

// plansCmd prints an exploration's suggested test plans, numbered for
// webpilot plan accept.
func plansCmd(c *conn, id string, out io.Writer) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	_, plans, err := explorationPlans(c, key, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d test plan(s); webpilot plan accept %s N makes plan N a stored test\n", len(plans), id)
	for i, p := range plans {
		fmt.Fprintf(out, "plan %d [%s] %s\n", i+1, p.Kind, p.Name)
		for _, s := range p.Steps {
			fmt.Fprintf(out, "    %s\n", s)
		}
	}
	return nil
}

// planAcceptCmd submits plan n of an exploration as a scenario job: when
// it succeeds, its spec is a stored test.
func planAcceptCmd(c *conn, id string, n int, name string, follow bool, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	start, plans, err := explorationPlans(c, key, id)
	if err != nil {
		return err
	}
	if n < 1 || n > len(plans) {
		return fmt.Errorf("exploration %s has %d plan(s); there is no plan %d", id, len(plans), n)
	}
	p := plans[n-1]
	sc := client.Scenario{Name: cmp.Or(name, p.Name), BaseURL: start}
	for _, s := range p.Steps {
		sc.Steps = append(sc.Steps, client.Step{Text: s})
	}
	v, err := c.submit(key, "/v1/jobs", client.Submission{Kind: client.KindScenario, Scenario: &sc})
	if err != nil {
		return err
	}
	return submitted(c, key, v, fmt.Sprintf("submitted plan %d of exploration %s as scenario job %s", n, id, v.ID), follow, out, asJSON)
}
