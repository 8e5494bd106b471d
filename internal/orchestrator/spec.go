package orchestrator

import (
	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/scenario"
)

// SpecOf writes the @playwright/test spec of commands recorded elsewhere
// (an imported test, an exploration's journey), exactly as a run that
// carried them out would write it. Values naming one of secretNames
// ({{NAME}}) are read from the environment.
func SpecOf(sc scenario.Scenario, manifest []ManifestStep, secretNames ...string) string {
	return emitSpec(sc, manifestSteps(sc, manifest, secretNames))
}

// SpecBody is the test body SpecOf would write (a line each, unindented,
// from the page.goto of the start URL) and the origin its paths are
// relative to, for a spec that adds checks of its own (an exploration's
// reproductions). Values naming one of secretNames ({{NAME}}) are read
// from the environment.
func SpecBody(sc scenario.Scenario, manifest []ManifestStep, secretNames []string) (origin string, lines []string) {
	return specBody(sc, manifestSteps(sc, manifest, secretNames))
}

// JSString writes s as a JavaScript string literal, the way every value
// of a spec is written.
func JSString(s string) string { return jsString(s) }

// Locate names, in a spec written elsewhere (a project's own file), the
// locator code of one element a command acted on: its fingerprint, as the
// run found it. "" keeps the locator webpilot writes.
type Locate func(c browser.Command, el browser.Fingerprint) string

// SpecBodyLocated is SpecBody with the locator of each command about one
// fingerprinted element named by locate where it names one (a project's
// page object: listPage.addButton). A count, an absence or a position is
// about the target as named, never one element: it keeps its own.
func SpecBodyLocated(sc scenario.Scenario, manifest []ManifestStep, secretNames []string, locate Locate) (origin string, lines []string) {
	return specBody(sc, manifestStepsLocated(sc, manifest, secretNames, locate))
}

func manifestSteps(sc scenario.Scenario, manifest []ManifestStep, secretNames []string) []StepReport {
	return manifestStepsLocated(sc, manifest, secretNames, nil)
}

func manifestStepsLocated(sc scenario.Scenario, manifest []ManifestStep, secretNames []string, locate Locate) []StepReport {
	names := map[string]string{}
	for _, n := range secretNames {
		names[n] = "\x00" // a name only: no value is known here, nor needed
	}
	vars := map[string]string{}
	for k, v := range sc.Data {
		vars[k] = v
	}
	w := newSpecWriter(sc, newSecrets(names), vars, nil)
	steps := make([]StepReport, 0, len(manifest))
	for _, m := range manifest {
		rep := StepReport{Index: m.Step - 1, Goal: m.Goal, Status: StepPassed, Manifest: m.Entries}
		for _, e := range m.Entries {
			loc := locatorCode(e.Command, e.Element)
			if e.Element != nil && locate != nil && loc != "page" && loc != "" && !byName(e.Command) && len(e.Element.Frames) == 0 {
				if code := locate(e.Command, *e.Element); code != "" {
					loc = code
				}
			}
			rep.Commands = append(rep.Commands, CommandReport{Command: e.Command, OK: true, Page: 1, Locator: loc})
		}
		rep.Lines = w.stepLines(rep)
		steps = append(steps, rep)
	}
	return steps
}
