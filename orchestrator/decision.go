package orchestrator

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/webpilot/webpilot/browser"
)

// decision is the model's reply for one iteration.
type decision struct {
	Status      string                     `json:"status"` // continue, complete, stuck, infeasible
	Reasoning   string                     `json:"reasoning"`
	Commands    []browser.Command          `json:"commands"`
	Note        string                     `json:"note"`
	Experiences []string                   `json:"experiences"`
	Extracted   map[string]json.RawMessage `json:"extracted"`
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
	return d, nil
}

// checkCommands validates a batch against the vocabulary, the batch limit
// and the refs of the latest snapshot.
func checkCommands(cmds []browser.Command, refs map[string]bool, maxBatch int) []string {
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
		}
	}
	return problems
}
