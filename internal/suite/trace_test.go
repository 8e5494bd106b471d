package suite

import (
	"strings"
	"testing"
)

// TestReadTrace reads a trace the runner wrote for the spec beside it
// (testdata/traces/click-then-failing-expect.spec.js, run from
// /tmp/sbx/work): each call with its selector, call site in the spec,
// outcome and target element (whose snapshot refers back to an earlier
// one), and what the page logged.
func TestReadTrace(t *testing.T) {
	t.Parallel()
	tr, err := ReadTrace("testdata/traces", "click-then-failing-expect.zip", "/tmp/sbx/work")
	if err != nil {
		t.Fatal(err)
	}
	byMethod := map[string]TraceAction{}
	for _, a := range tr.Actions {
		byMethod[a.Method] = a
	}
	click, ok := byMethod["click"]
	if !ok || click.Selector != `internal:role=button[name="Go"i]` || click.File != "example.spec.js" || click.Line != 4 || click.Column != 50 || click.Error != "" {
		t.Fatalf("click: %+v", click)
	}
	if click.Target == nil || click.Target.Tag != "button" || click.Target.Text != "Go" || !strings.HasSuffix(click.Target.Path, "body button") {
		t.Fatalf("the click's target: %+v", click.Target)
	}
	exp, ok := byMethod["expect"]
	if !ok || exp.Expect != "to.have.text" || exp.Line != 5 || exp.Error == "" || exp.Selector != "h1" || exp.Duration < 900_000_000 {
		t.Fatalf("expect: %+v", exp)
	}
	if exp.Target == nil || exp.Target.Tag != "h1" || exp.Target.Text != "Hello" {
		t.Fatalf("the assertion's target: %+v", exp.Target)
	}
	if len(tr.Console) != 1 || tr.Console[0].Type != "error" || tr.Console[0].Text != "boom" {
		t.Fatalf("console: %+v", tr.Console)
	}
}

// FuzzSnapshotTarget: a trace is written inside the sandbox by code the
// customer controls; no snapshot, however shaped (references pointing
// back up, to nowhere, or to themselves), may panic or stall the worker.
func FuzzSnapshotTarget(f *testing.F) {
	f.Add(`["HTML",{},["BODY",{},["BUTTON",{"__playwright_target__":"c"},"Go"]]]`, `[[1,2]]`)
	f.Add(`["HTML",{},[[0,0]],[[0,0]],[[0,0]]]`, `[[0,0]]`)
	f.Add(`["A"]`, `[[5,99]]`)
	f.Add(`[[1,0],[1,0]]`, `["X",{},[[1,0]],[[1,0]],[[1,0]],[[1,0]]]`)
	f.Fuzz(func(t *testing.T, first, second string) {
		frame := []*frameSnapshot{{HTML: []byte(first)}, {HTML: []byte(second)}}
		for _, s := range frame {
			_ = s.target(frame, "c")
		}
	})
}
