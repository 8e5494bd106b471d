package orchestrator

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// validateSchema checks a JSON value against the subset of JSON Schema an
// extract step may declare: type (string, number, integer, boolean, object,
// array, null, or a list of them), properties, required,
// additionalProperties false, items, enum, minItems, maxItems, minLength.
// It returns every violation with its path.
func validateSchema(schema, value json.RawMessage) []string {
	if len(schema) == 0 {
		return nil
	}
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return []string{"the step's schema is not a JSON object: " + err.Error()}
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(value)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []string{"the result is not valid JSON: " + err.Error()}
	}
	var out []string
	check(s, v, "$", &out)
	return out
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && !strings.ContainsAny(x.String(), ".eE") {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func typeMatches(want string, got string) bool {
	return want == got || (want == "number" && got == "integer")
}

func check(s map[string]any, v any, path string, out *[]string) {
	got := jsonType(v)
	switch t := s["type"].(type) {
	case string:
		if !typeMatches(t, got) {
			*out = append(*out, fmt.Sprintf("%s: want %s, got %s", path, t, got))
			return
		}
	case []any:
		ok := false
		for _, x := range t {
			if ts, _ := x.(string); typeMatches(ts, got) {
				ok = true
			}
		}
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: want one of %v, got %s", path, t, got))
			return
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		vb, _ := json.Marshal(v)
		for _, e := range enum {
			eb, _ := json.Marshal(e)
			if string(eb) == string(vb) {
				found = true
			}
		}
		if !found {
			*out = append(*out, fmt.Sprintf("%s: %s is not one of %v", path, vb, enum))
		}
	}
	switch x := v.(type) {
	case string:
		if n, ok := s["minLength"].(float64); ok && float64(len([]rune(x))) < n {
			*out = append(*out, fmt.Sprintf("%s: shorter than %v characters", path, n))
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if name, _ := r.(string); name != "" {
					if _, ok := x[name]; !ok {
						*out = append(*out, fmt.Sprintf("%s: missing required property %q", path, name))
					}
				}
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := props[k].(map[string]any); ok {
				check(ps, x[k], path+"."+k, out)
			} else if ap, ok := s["additionalProperties"].(bool); ok && !ap {
				*out = append(*out, fmt.Sprintf("%s: property %q is not allowed", path, k))
			}
		}
	case []any:
		if n, ok := s["minItems"].(float64); ok && float64(len(x)) < n {
			*out = append(*out, fmt.Sprintf("%s: fewer than %v items", path, n))
		}
		if n, ok := s["maxItems"].(float64); ok && float64(len(x)) > n {
			*out = append(*out, fmt.Sprintf("%s: more than %v items", path, n))
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range x {
				check(items, it, fmt.Sprintf("%s[%d]", path, i), out)
			}
		}
	}
}
