package suite

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/orchestrator"
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

// TestThePageAtTheFailureIsTheFailingCalls: a test ran out of time during
// its click (no action timeout, as many suites have none), then its
// afterEach went on: clicked Logout, which failed too, and navigated to
// about:blank (testdata/traces/pending-then-hook-*.spec.js, traces the
// runner wrote). The failure is the test's own pending click, not the
// hook's, and the page read for it is the login page it waited on, not
// the blank page the hook left.
func TestThePageAtTheFailureIsTheFailingCalls(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"pending-then-hook-navigates.zip", "pending-then-hook-fails.zip"} {
		t.Run(name, func(t *testing.T) {
			o := TestOutcome{RunDir: "testdata/traces", Trace: name, Status: "failed", Error: "Error: locator.click: Test timeout of 4000ms exceeded."}
			if err := o.Evidence(); err != nil {
				t.Fatal(err)
			}
			if f := o.Failure; f == nil || f.Selector != `internal:role=button[name="Login"i]` || !f.Pending {
				t.Fatalf("the failure: %+v", o.Failure)
			}
			readsTheLoginPage(t, o.RunDir, o.Trace, o.Failure.callID)
		})
	}
}

// TestAFailingCallWithNoSnapshotIsReadFromTheCallsBefore: a loaded host
// let the test run out of time before the runner wrote the pending
// click's own snapshot (its events kept, every snapshot of it dropped
// from a trace the runner wrote). The page read at the failure is the
// login page as the calls before it left it, not nothing (which left a
// renamed element unrepairable) and not the blank page the afterEach
// navigated to after it.
func TestAFailingCallWithNoSnapshotIsReadFromTheCallsBefore(t *testing.T) {
	t.Parallel()
	o := TestOutcome{RunDir: "testdata/traces", Trace: "pending-then-hook-navigates.zip", Status: "failed", Error: "Error: locator.click: Test timeout of 4000ms exceeded."}
	if err := o.Evidence(); err != nil || o.Failure == nil {
		t.Fatalf("%v, the failure %+v", err, o.Failure)
	}
	dir := t.TempDir()
	withoutSnapshotsOf(t, "testdata/traces/pending-then-hook-navigates.zip", filepath.Join(dir, "trace.zip"), o.Failure.callID)
	readsTheLoginPage(t, dir, "trace.zip", o.Failure.callID)
}

// readsTheLoginPage: the page at the failure, read for the failing call
// (callID) and for the trace's own failure, is the login page.
func readsTheLoginPage(t *testing.T, dir, trace, callID string) {
	t.Helper()
	for _, call := range []string{callID, ""} {
		dom, err := FailureDOM(dir, trace, call)
		if err != nil {
			t.Fatalf("call %q: %v", call, err)
		}
		var text []string
		for _, e := range dom {
			if e.Tag == "button" || e.Tag == "label" {
				text = append(text, e.Text)
			}
		}
		if strings.Join(text, ",") != "User name,Log in" {
			t.Errorf("call %q: the page at the failure holds %d elements, its labels and buttons %q", call, len(dom), text)
		}
	}
}

// withoutSnapshotsOf copies the trace archive from to to, leaving out the
// page snapshots of the call whose id is callID.
func withoutSnapshotsOf(t *testing.T, from, to, callID string) {
	t.Helper()
	zr, err := zip.OpenReader(from)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	dropped := 0
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f.Name, ".trace") {
			var kept bytes.Buffer
			sc := bufio.NewScanner(bytes.NewReader(body))
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				var e struct {
					Type     string `json:"type"`
					Snapshot struct {
						CallID string `json:"callId"`
					} `json:"snapshot"`
				}
				if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "frame-snapshot" && e.Snapshot.CallID == callID {
					dropped++
					continue
				}
				kept.Write(sc.Bytes())
				kept.WriteByte('\n')
			}
			body = kept.Bytes()
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if dropped == 0 {
		t.Fatalf("%s holds no snapshot of call %s", from, callID)
	}
}

// TestAWaitForAURLThatNeverEndedIsTheFailure: a test ran out of time in
// page.waitForURL (testdata/traces/pending-wait-for-url.spec.js), which
// the trace writes as an event wait on no element: that wait is the
// failure, with the page's address, not "no failure the trace names".
func TestAWaitForAURLThatNeverEndedIsTheFailure(t *testing.T) {
	t.Parallel()
	o := TestOutcome{RunDir: "testdata/traces", Trace: "pending-wait-for-url.zip", Status: "failed", Error: "Test timeout of 4000ms exceeded."}
	if err := o.Evidence(); err != nil {
		t.Fatal(err)
	}
	f := o.Failure
	if f == nil || f.API != "page.waitForURL" || !f.Pending || !strings.HasSuffix(f.URL, "/login.html") {
		t.Fatalf("the failure: %+v", f)
	}
	if _, _, verdict, why := diagnose(o, nil, nil, nil); verdict != orchestrator.VerdictRegression || !strings.Contains(why, "page.waitForURL") {
		t.Fatalf("%s: %s", verdict, why)
	}
}

// TestAWaitForSelectorHasTheElementItWaitedFor: the runner marks no target
// for page.waitForSelector (testdata/traces/wait-for-selector.spec.js), as
// legacy suites wait for a flash message; the element its CSS selector
// found on the page is its target, so a run that passed records what a
// failing one waited for.
func TestAWaitForSelectorHasTheElementItWaitedFor(t *testing.T) {
	t.Parallel()
	tr, err := ReadTrace("testdata/traces", "wait-for-selector.zip", "/tmp/sbx/work")
	if err != nil {
		t.Fatal(err)
	}
	var wait *TraceAction
	for i := range tr.Actions {
		if tr.Actions[i].Method == "waitForSelector" {
			wait = &tr.Actions[i]
		}
	}
	if wait == nil || wait.Selector != ".flash.success" || wait.Line != 6 {
		t.Fatalf("the wait: %+v", wait)
	}
	if el := wait.Target; el == nil || el.Tag != "div" || el.Attributes["id"] != "flash" || el.Text != "You logged in" {
		t.Fatalf("the wait's target: %+v", wait.Target)
	}
	frames := map[string][]*frameSnapshot{"f": {{FrameID: "f", HTML: []byte(`["HTML",{},["BODY",{},["DIV",{"class":"flash success","id":"flash"},"You logged in"],["INPUT",{"type":"checkbox"}],["INPUT",{"type":"checkbox"}]]]`)}}}
	if el := cssTarget("css=div#flash.success", frames, frames["f"][0]); el == nil || el.Text != "You logged in" {
		t.Fatalf("css=div#flash.success found %+v", el)
	}
	for _, tc := range []struct{ name, selector string }{
		{"an engine of the runner's own", "text=You logged in"},
		{"a chain", ".flash >> text=You"},
		{"XPath", "//div"},
		{"a selector that does not parse", "div[[["},
		{"a match that depends on siblings", "input:nth-of-type(2)"},
		{"nothing on the page", ".flash.error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if el := cssTarget(tc.selector, frames, frames["f"][0]); el != nil {
				t.Errorf("%q found %+v", tc.selector, el)
			}
		})
	}
}
