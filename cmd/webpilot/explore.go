package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/jobs"
)

// exploreCmd submits an exploration.
func exploreCmd(c *client, args []string, out io.Writer) error {
	const use = `usage: webpilot explore URL --goal "..." [--journey "..."]... [--scope /path/]... [--max-actions N] [--max-minutes N] [--max-credits N] [--deny WORD]... [--allow WORD]... [--watch]`
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New(use)
	}
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	goal := fs.String("goal", "", "the journey to explore, e.g. \"check out as a guest\"")
	var journeys, scope, deny, allow listFlag
	fs.Var(&journeys, "journey", "explore several journeys, one child job each (repeatable; instead of --goal)")
	fs.Var(&scope, "scope", "a path prefix the exploration may visit (repeatable; default: the whole host)")
	fs.Var(&deny, "deny", "a word that keeps the exploration from clicking an element naming it (repeatable)")
	fs.Var(&allow, "allow", "a default deny word the exploration may click after all (repeatable)")
	maxActions := fs.Int("max-actions", 0, "actions at most (default 60)")
	maxMinutes := fs.Int("max-minutes", 0, "minutes at most (default 10)")
	maxCredits := fs.Float64("max-credits", 0, "credits at most (the job's hold)")
	follow := fs.Bool("watch", false, "follow the exploration finding by finding until it ends")
	secrets := secretFlag(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New(use)
	}
	key, err := tenantKey()
	if err != nil {
		return err
	}
	req := jobs.ExplorationRequest{BaseURL: args[0], Goal: *goal, Journeys: journeys, Scope: scope, Secrets: secrets,
		Budget: jobs.Budget{MaxActions: *maxActions, MaxMinutes: *maxMinutes, MaxCredits: *maxCredits},
		Safety: jobs.Safety{Deny: deny, Allow: allow}}
	if len(secrets) == 0 {
		req.Secrets = nil
	}
	v, err := c.submit(key, "/v1/jobs", jobs.Submission{Kind: jobs.KindExploration, Exploration: &req})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "submitted exploration %s (%.2f credits held)\n", v.ID, v.HoldCredits)
	if !*follow {
		return nil
	}
	return watch(c, key, v.ID, out)
}

// findingsCmd prints a job's findings.
func findingsCmd(c *client, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("findings", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	var id string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if id == "" && fs.NArg() == 1 {
		id = fs.Arg(0)
	}
	if id == "" {
		return errors.New("usage: webpilot findings JOB_ID [--json]")
	}
	key, err := tenantKey()
	if err != nil {
		return err
	}
	var raw string
	if err := c.do("GET", "/v1/jobs/"+id+"/findings", key, nil, &raw); err != nil {
		return err
	}
	if *asJSON {
		fmt.Fprint(out, raw)
		return nil
	}
	var res struct {
		State    string
		Findings []api.FindingView
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
func printFinding(out io.Writer, f api.FindingView) {
	fmt.Fprintf(out, "#%d %-8s %-15s %s\n", f.Seq, f.Severity, f.Type, f.Title)
	fmt.Fprintf(out, "    at %s (%d place(s))\n", f.URL, f.Occurrences)
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
func explorationSummary(v api.JobView, out io.Writer) error {
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
		Journey struct{ Verified bool }
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
	if v.Error != "" {
		fmt.Fprintf(out, "error: %s\n", v.Error)
	}
	if v.State != "succeeded" {
		return fmt.Errorf("job ended %s", v.State)
	}
	return nil
}
