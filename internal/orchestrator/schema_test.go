package orchestrator

import (
	"strings"
	"testing"
)

func TestValidateSchema(t *testing.T) {
	t.Parallel()
	schema := []byte(`{"type":"object","required":["order","total","items"],"additionalProperties":false,
	 "properties":{"order":{"type":"string","minLength":3},"total":{"type":"number"},
	 "items":{"type":"array","minItems":1,"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"qty":{"type":"integer"}}}},
	 "status":{"enum":["paid","open"]}}}`)
	tests := []struct {
		value string
		want  []string // substrings of the violations, in order; none means valid
	}{
		{`{"order":"A-1042","total":42.5,"items":[{"name":"Mug","qty":2}],"status":"paid"}`, nil},
		{`{"order":"A-1042","total":42,"items":[{"name":"Mug"}]}`, nil},
		{`{"order":"A","total":"42.50","items":[]}`, []string{"$.items: fewer than 1", "$.order: shorter than 3", "$.total: want number, got string"}},
		{`{"total":1,"items":[{"qty":1.5}],"colour":"red"}`, []string{"missing required property \"order\"", "property \"colour\" is not allowed", "$.items[0]: missing required property \"name\"", "$.items[0].qty: want integer, got number"}},
		{`{"order":"A-1","total":1,"items":[{"name":"x"}],"status":"lost"}`, []string{"$.status: \"lost\" is not one of"}},
		{`[1,2]`, []string{"$: want object, got array"}},
		{`not json`, []string{"not valid JSON"}},
	}
	for _, tc := range tests {
		got := validateSchema(schema, []byte(tc.value))
		if len(got) != len(tc.want) {
			t.Errorf("%s: violations %q, want %d", tc.value, got, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: violation %d = %q, want it to contain %q", tc.value, i, got[i], w)
			}
		}
	}
}
