package orchestrator

import (
	"encoding/json"

	"github.com/webpilot/webpilot/scenario"
)

// SpecOf writes the @playwright/test spec of a test that has not run here
// yet (an imported one) from its recorded commands, exactly as a run that
// carried them out would write it.
func SpecOf(sc scenario.Scenario, manifest []ManifestStep) string {
	r := &run{sc: sc, secrets: newSecrets(nil), vars: map[string]string{}, extracted: map[string]json.RawMessage{},
		specVars: map[string]bool{}}
	for k, v := range sc.Data {
		r.vars[k] = v
	}
	steps := make([]StepReport, 0, len(manifest))
	for _, m := range manifest {
		rep := StepReport{Index: m.Step - 1, Goal: m.Goal, Status: StepPassed, Manifest: m.Entries}
		for _, e := range m.Entries {
			rep.Commands = append(rep.Commands, CommandReport{Command: e.Command, OK: true, Page: 1,
				Locator: locatorCode(e.Command, e.Element)})
		}
		rep.Lines = r.stepLines(rep)
		steps = append(steps, rep)
	}
	return emitSpec(sc, steps)
}
