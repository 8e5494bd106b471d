package suite

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// realisticReport is a runner's JSON report of n tests in files of ten,
// each under a describe block, with its results, attachments and errors
// as the runner writes them.
func realisticReport(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"config":{"rootDir":"/work/tests","projects":[{"name":"chromium","timeout":30000,"retries":2,"metadata":{}}]},"suites":[`)
	for f := 0; f*10 < n; f++ {
		if f > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"title":"f%d.spec.ts","file":"f%d.spec.ts","specs":[],"suites":[{"title":"cart \"x\" [y]","file":"f%d.spec.ts","specs":[`, f, f, f)
		for i := 0; i < 10 && f*10+i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"title":"adds {%d}","file":"f%d.spec.ts","line":%d,"column":3,"tests":[{"projectName":"chromium","status":"unexpected","expectedStatus":"passed",`+
				`"annotations":[],"results":[{"status":"failed","duration":1234.5,"errors":[{"message":"Error: expect(locator).toBeVisible() failed\n\\u001b[2m  at x\\u001b[22m"}],`+
				`"attachments":[{"name":"trace","path":"/work/test-results/f%d-%d/trace.zip","contentType":"application/zip"},{"name":"screenshot","path":"/work/x.png"}],`+
				`"steps":[{"title":"click","duration":3}],"stdout":[],"stderr":[{"text":"}]"}]}]}]}`, i, f, 5+i, f, i)
		}
		b.WriteString(`]}]}`)
	}
	b.WriteString(`],"errors":[],"stats":{"expected":0,"unexpected":` + fmt.Sprint(n) + `}}`)
	return b.Bytes()
}

// TestAReportIsCountedBeforeItIsDecoded: a report is written by code the
// customer controls, and decoding costs far more than its bytes: 1,000,000
// empty tests (3 MB) took a worker to 1.33 GB, 20,000 tests under 2,000
// nested suites to 2.86 GB. Each bound is checked in one pass over the
// bytes, before anything is decoded, and a real report of hundreds of
// tests passes whole.
func TestAReportIsCountedBeforeItIsDecoded(t *testing.T) {
	// Not parallel: what it allocates is measured.
	r := strings.Repeat
	emptyTests := []byte(`{"config":{"rootDir":"/work"},"suites":[{"title":"a","specs":[{"title":"t","tests":[` + r("{},", 999_999) + `{}]}]}]}`)
	for _, tc := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"1,000,000 empty tests", emptyTests, "more than 20000 tests"},
		{"2,000 nested suites", []byte(`{"suites":` + r(`[{"title":"s","suites":`, 2000) + `[]` + r(`}]`, 2000) + `}`), "more than 32 levels of nested suites"},
		{"100,000 nested arrays in a field no one reads", []byte(`{"config":{"x":` + r("[", 100_000) + r("]", 100_000) + `}}`), "more than 128 levels of nesting"},
		{"a million results", []byte(`{"suites":[{"specs":[{"tests":[{"results":[` + r(`{"status":"passed"},`, 999_999) + `{}]}]}]}]}`), "more than 400000 results"},
		{"keys that look like tests in strings", []byte(`{"config":{"rootDir":"/work"},"suites":[{"title":"\"tests\":[{},{}]","specs":[]}]}`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := checkReportShape(tc.raw)
			runtime.ReadMemStats(&after)
			var se *ShapeError
			if tc.want == "" && err != nil || tc.want != "" && (!errors.As(err, &se) || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Errorf("counting %d bytes allocated %d", len(tc.raw), grew)
			}
			if tc.want != "" {
				var rep RunReport
				if err := rep.read(tc.raw, "", "/work", false); err == nil || !strings.Contains(err.Error(), tc.want) || len(rep.Tests) != 0 {
					t.Errorf("read: %v, %d tests", err, len(rep.Tests))
				}
			}
		})
	}
	raw := realisticReport(900)
	if err := checkReportShape(raw); err != nil {
		t.Fatalf("a real report of 900 tests: %v", err)
	}
	var rep RunReport
	if err := rep.read(raw, "", "/work", false); err != nil || len(rep.Tests) != 900 || rep.Tests[899].Status != "failed" || rep.Tests[0].File != "tests/f0.spec.ts" {
		t.Fatalf("read: %v, %d tests", err, len(rep.Tests))
	}
}

// TestATraceKeepsOnlyTheEventsItIsReadFor: each line of a trace's events
// became a stored event of about 320 bytes however short (a 627-byte
// upload took the dispatcher from 45 to 1,374 MB). A line of {} is not
// kept, and past maxTraceEvents of the events it is read for the trace is
// refused.
func TestATraceKeepsOnlyTheEventsItIsReadFor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, events string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), zipOf(t, entry{name: "test.trace", body: events}, entry{name: "0-trace.trace", body: events}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("empty.zip", strings.Repeat("{}\n", 1_000_000))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr, err := ReadTrace(dir, "empty.zip", "/work")
	runtime.GC()
	runtime.ReadMemStats(&after)
	if err != nil || len(tr.Actions) != 0 {
		t.Fatalf("2,000,000 lines of {}: %v, %d actions", err, len(tr.Actions))
	}
	if after.HeapAlloc > before.HeapAlloc+(16<<20) {
		t.Errorf("reading them holds %d MB more", (after.HeapAlloc-before.HeapAlloc)>>20)
	}
	write("many.zip", strings.Repeat(`{"type":"before","callId":"c"}`+"\n", maxTraceEvents/2+1))
	if _, err := ReadTrace(dir, "many.zip", "/work"); !errors.Is(err, errEvents) {
		t.Fatalf("%d events: %v", maxTraceEvents+2, err)
	}
}

// TestATracesSnapshotsAreDecodedWithinABudget: a trace's page snapshots
// decode to many times their bytes (a snapshot of 3 MB of "[]," is
// millions of values); a trace of twenty took a worker to gigabytes,
// every one decoded for the calls that name it. What is decoded of one
// trace is bounded: snapshots past the budget are read as absent.
func TestATracesSnapshotsAreDecodedWithinABudget(t *testing.T) {
	// Not parallel: what it allocates is measured.
	var ev strings.Builder
	page := `["HTML",{},` + strings.Repeat("[],", 1<<20) + `[]]`
	for i := range 20 {
		fmt.Fprintf(&ev, `{"type":"before","callId":"c%d","stepId":"s%d","apiName":"locator.click","method":"click","params":{"selector":"#x"},"beforeSnapshot":"before@c%d"}`+"\n", i, i, i)
		fmt.Fprintf(&ev, `{"type":"frame-snapshot","snapshot":{"callId":"c%d","snapshotName":"before@c%d","frameId":"f","frameUrl":"http://app/","isMainFrame":true,"html":%s}}`+"\n", i, i, page)
		fmt.Fprintf(&ev, `{"type":"after","callId":"c%d"}`+"\n", i)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "trace.zip"), zipOf(t, entry{name: "0-trace.trace", body: ev.String()}), 0o600); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tr, err := ReadTrace(dir, "trace.zip", "/work")
	runtime.ReadMemStats(&after)
	if err != nil || len(tr.Actions) != 20 {
		t.Fatalf("%v, %d actions", err, len(tr.Actions))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 600<<20 {
		t.Errorf("reading a trace of %d MB of snapshots allocated %d MB", ev.Len()>>20, alloc>>20)
	}
}
