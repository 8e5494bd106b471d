package orchestrator

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/webpilot/webpilot/internal/browser"
)

// decision is the model's reply for one iteration.
type decision struct {
	Status           string                     `json:"status"` // continue, complete, stuck, infeasible
	Reasoning        string                     `json:"reasoning"`
	Commands         []browser.Command          `json:"commands"`
	ToolCalls        []toolCall                 `json:"tool_calls"`
	NeedsToolResults bool                       `json:"needs_tool_results"`
	Blocker          *blocker                   `json:"blocker"`
	StepEvaluation   *stepEvaluation            `json:"step_evaluation"`
	Note             string                     `json:"note"`
	Experiences      []string                   `json:"experiences"`
	Extracted        map[string]json.RawMessage `json:"extracted"`
	// Result answers an ai_query step: the extracted data, the observed
	// elements, or the assessment.
	Result json.RawMessage `json:"result"`
}

// toolCall asks for a tool by name.
type toolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// blocker is something in the way (a cookie banner, a modal, a tour) and the
// commands that clear it; they run before the step's own commands.
type blocker struct {
	Description string            `json:"description"`
	Commands    []browser.Command `json:"commands"`
}

// stepEvaluation is the model's judgement of the step itself.
type stepEvaluation struct {
	Verdict string `json:"verdict"` // ok, already_done, prior_step_incomplete, wrong_order
	Reason  string `json:"reason"`
}

// parseDecision reads the first JSON object in a reply, tolerating code
// fences and prose around it and missing optional fields.
func parseDecision(text string) (decision, error) {
	var d decision
	i := strings.IndexByte(text, '{')
	if i < 0 {
		return d, errors.New("the reply contains no JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(text[i:]))
	if err := dec.Decode(&d); err != nil {
		return d, fmt.Errorf("the reply is not valid JSON for the schema: %v", err)
	}
	d.Status = strings.ToLower(strings.TrimSpace(d.Status))
	switch d.Status {
	case "":
		d.Status = "continue"
	case "continue", "complete", "stuck", "infeasible":
	default:
		return d, fmt.Errorf("unknown status %q (continue, complete, stuck or infeasible)", d.Status)
	}
	if d.StepEvaluation != nil {
		switch d.StepEvaluation.Verdict {
		case "", "ok", "already_done", "prior_step_incomplete", "wrong_order":
		default:
			return d, fmt.Errorf("unknown step_evaluation verdict %q", d.StepEvaluation.Verdict)
		}
	}
	if string(d.Result) == "null" {
		d.Result = nil
	}
	return d, nil
}

// checkCommands validates a batch against the vocabulary, the batch limit,
// the refs of the latest snapshot and whether coordinates are allowed yet.
func checkCommands(cmds []browser.Command, refs map[string]bool, maxBatch int, coordinates bool) []string {
	var problems []string
	if len(cmds) > maxBatch {
		problems = append(problems, fmt.Sprintf("a batch may hold at most %d commands; you sent %d", maxBatch, len(cmds)))
	}
	for i, c := range cmds {
		if err := c.Validate(); err != nil {
			problems = append(problems, fmt.Sprintf("command %d: %v", i+1, err))
			continue
		}
		for _, t := range []browser.Target{c.Target, c.To} {
			if t.Ref != "" && !refs[t.Ref] {
				problems = append(problems, fmt.Sprintf("command %d: ref %q is not in the latest page representation", i+1, t.Ref))
			}
			if t.IsCoordinate() && !coordinates {
				problems = append(problems, fmt.Sprintf("command %d: coordinate targets are not allowed now; target an element", i+1))
			}
		}
	}
	return problems
}
