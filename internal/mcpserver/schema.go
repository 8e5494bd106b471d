package mcpserver

import (
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/scenario"
)

// The tools' input schemas are inferred from the same Go types the agent's
// answers and the API's scenarios decode into, with the vocabularies
// (actions, assertions) from the lists Command.Validate checks against: a
// client is told exactly what the engine accepts.

// targetDef is where the target's schema lives in a tool's $defs: a target
// may lie within another, so it is referred to rather than inlined.
const targetDef = "target"

// targetFields has Target's fields under another name, so that the
// schema of Target itself can be built while Target refers to itself.
type targetFields browser.Target

// inputSchema is the schema of a tool's input type T.
func inputSchema[T any]() *jsonschema.Schema {
	ref := &jsonschema.Schema{Ref: "#/$defs/" + targetDef, Type: "object"}
	types := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[browser.Target]():    ref,
		reflect.TypeFor[browser.Action]():    {Type: "string", Enum: enum(append(browser.Actions(), browser.ActionVerify))},
		reflect.TypeFor[browser.Assertion](): {Type: "string", Enum: enum(browser.Assertions())},
		// A scenario's step is a sentence or an object.
		reflect.TypeFor[scenario.Step](): {Types: []string{"string", "object"}},
	}
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: types})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema: %v", err))
	}
	if usesTarget(s) {
		t, err := jsonschema.For[targetFields](&jsonschema.ForOptions{TypeSchemas: types})
		if err != nil {
			panic(fmt.Sprintf("mcpserver: target schema: %v", err))
		}
		t.Description = "an element: by ref from the page view, or as a test names it (role and name, label, placeholder, text, test_id …)"
		s.Defs = map[string]*jsonschema.Schema{targetDef: t}
	}
	return s
}

func usesTarget(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	if s.Ref != "" {
		return true
	}
	for _, p := range s.Properties {
		if usesTarget(p) {
			return true
		}
	}
	return usesTarget(s.Items)
}

func enum[T ~string](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}
