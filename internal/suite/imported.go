package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Limits of an upload of a customer's own run (its JSON report and
// traces): traces are larger than source files.
const (
	MaxTraceUploadBytes = 48 << 20
	maxTraceFileBytes   = 24 << 20
	maxTraceFiles       = 2000
)

// TraceImport is what a customer's own green run gave a version of their
// project: the elements its passing tests acted on.
type TraceImport struct {
	// Prints are the recorded tests' calls with their targets, by test id.
	Prints map[string][]TraceAction `json:"-"`
	// Recorded are the tests recorded (file › title path).
	Recorded []string `json:"recorded"`
	// Skipped are the report's tests that gave nothing, and why.
	Skipped []ImportSkip `json:"skipped,omitempty"`
}

// ImportSkip is a test of an uploaded run that was not recorded.
type ImportSkip struct {
	Test string `json:"test"`
	Why  string `json:"why"`
}

// ImportTraces reads an archive of a customer's own run of the project
// (the runner's JSON report and the trace.zip files it names, as their CI
// keeps them) for the tests of listing (the version's listing): each test
// that passed there, with a trace, has the elements its calls acted on
// recorded, as a passing run on webpilot records them. Everything in the
// archive is untrusted and bounded as an upload is.
func ImportTraces(ctx context.Context, archive []byte, listing []TestOutcome) (TraceImport, error) {
	files, err := readArchive(archive, func(name string) bool {
		return strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".zip")
	}, intakeLimits{files: maxTraceFiles, fileBytes: maxTraceFileBytes, totalBytes: MaxTraceUploadBytes})
	if err != nil {
		return TraceImport{}, err
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	var rep RunReport
	rootDir := ""
	for _, n := range names {
		if !strings.HasSuffix(n, ".json") {
			continue
		}
		if err := checkReportShape(files[n]); err != nil {
			return TraceImport{}, problem(n, "%v", err)
		}
		var r report
		if json.Unmarshal(files[n], &r) != nil || r.Config.RootDir == "" || len(r.Suites) == 0 {
			continue
		}
		rep = RunReport{}
		if err := rep.read(files[n], "", r.Config.RootDir, false); err == nil {
			rootDir = r.Config.RootDir
			break
		}
	}
	if rootDir == "" {
		return TraceImport{}, problem("", "the archive holds no JSON report of the runner's (run with --reporter=json and upload its output with the traces)")
	}
	tmp, err := os.MkdirTemp("", "webpilot-traces-")
	if err != nil {
		return TraceImport{}, err
	}
	defer os.RemoveAll(tmp)
	out := TraceImport{Prints: map[string][]TraceAction{}}
	byTitles := map[string][]TestOutcome{}
	for _, l := range listing {
		k := titleKey(l)
		byTitles[k] = append(byTitles[k], l)
	}
	kept := 0 // bytes of the prints kept, as stored
	for _, t := range rep.Tests {
		if err := ctx.Err(); err != nil {
			return TraceImport{}, err // the request is gone: stop reading for it
		}
		title := t.File + " › " + t.Title()
		skip := func(why string, args ...any) {
			out.Skipped = append(out.Skipped, ImportSkip{Test: title, Why: fmt.Sprintf(why, args...)})
		}
		if t.Status != StatusPassed && t.Status != StatusFlaky {
			skip("it did not pass in that run (%s)", t.Status)
			continue
		}
		l, ok := listed(byTitles[titleKey(t)], t)
		if !ok {
			skip("the version's listing has no such test")
			continue
		}
		if t.traceAt == "" {
			skip("the report names no trace for it (record traces: --trace=on, or use.trace in the config)")
			continue
		}
		zipped, ok := traceEntry(files, t.traceAt)
		if !ok {
			skip("its trace %s is not in the archive", path.Base(path.Dir(t.traceAt))+"/"+path.Base(t.traceAt))
			continue
		}
		if err := os.WriteFile(filepath.Join(tmp, "trace.zip"), zipped, 0o600); err != nil {
			return TraceImport{}, err
		}
		// Call sites are named relative to the project's root: the report's
		// root is the test directory, the listing says where that is.
		root := rootDir
		if prefix := strings.TrimSuffix(l.File, t.File); prefix != "" {
			root = strings.TrimSuffix(strings.TrimSuffix(rootDir, "/"), "/"+strings.TrimSuffix(prefix, "/"))
		}
		tr, err := ReadTrace(tmp, "trace.zip", root)
		if err != nil {
			skip("its trace cannot be read: %v", err)
			continue
		}
		var acts []TraceAction
		for _, a := range tr.Actions {
			if a.Target != nil && a.File != "" && !filepath.IsAbs(a.File) {
				acts = append(acts, a)
			}
		}
		if len(acts) == 0 {
			skip("its trace holds no element the test acted on in the project's files (recorded without snapshots?)")
			continue
		}
		if len(tr.Actions) > maxPrintActions {
			skip("its trace holds %d calls, more than the %d a test's record keeps", len(tr.Actions), maxPrintActions)
			continue
		}
		b, err := json.Marshal(tr.Actions)
		if err != nil {
			return TraceImport{}, err
		}
		if kept += len(b); kept > MaxPrintBytes {
			return TraceImport{}, problem("", "the traces record more than %d MiB of calls and elements; upload fewer tests' traces at a time", MaxPrintBytes>>20)
		}
		out.Prints[l.ID] = tr.Actions
		out.Recorded = append(out.Recorded, l.File+" › "+l.Title())
	}
	return out, nil
}

// What is kept of uploaded traces: a test's record of its calls, and all
// of an upload's records together, as stored.
const (
	maxPrintActions = 5_000
	// MaxPrintBytes bounds an upload's records together.
	MaxPrintBytes = 16 << 20
)

// titleKey keys a test by its project and title path.
func titleKey(t TestOutcome) string {
	return t.Project + "\x00" + strings.Join(t.Titles, "\x00")
}

// listed is the test of the listing a report's test is: the same
// project and title path (the candidates share them), in the file the
// report names relative to its test directory.
func listed(candidates []TestOutcome, t TestOutcome) (TestOutcome, bool) {
	for _, l := range candidates {
		if l.Project == t.Project && slices.Equal(l.Titles, t.Titles) && (l.File == t.File || strings.HasSuffix(l.File, "/"+t.File)) {
			return l, true
		}
	}
	return TestOutcome{}, false
}

// traceEntry is the archive's file that the report's trace path names:
// the longest entry path (less any leading folders the archive adds) the
// path ends with.
func traceEntry(files map[string][]byte, at string) ([]byte, bool) {
	at = filepath.ToSlash(at)
	best, bestLen := "", 0
	for name := range files {
		parts := strings.Split(strings.TrimPrefix(path.Clean(name), "./"), "/")
		for i := range parts {
			suffix := strings.Join(parts[i:], "/")
			if (at == suffix || strings.HasSuffix(at, "/"+suffix)) && len(suffix) > bestLen && i < len(parts)-1 {
				best, bestLen = name, len(suffix)
			}
		}
	}
	return files[best], best != ""
}
