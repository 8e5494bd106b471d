package e2e

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
)

// junitReport is the part of the runner's junit XML a CI system reads.
type junitReport struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// checkRunReports checks a finished project run's reports as a CI system
// and a person read them: the junit XML parses and its counts and failing
// cases are the run's verdicts; the html report is there with its
// index.html; each failing test's trace is a trace the viewer opens; and
// the job's secret is in none of them, nor in any file's blob report.
func checkRunReports(t *testing.T, s *stack, key string, run api.JobView, files map[string]fileReport, secret string) {
	t.Helper()
	r := run.Reports
	if r == nil || r.JUnit != suite.JUnitArtifact || r.HTML != suite.HTMLArtifact || r.Problem != "" {
		t.Fatalf("the run's reports: %+v", r)
	}
	tests, failing := 0, []string{}
	for _, fr := range files {
		for _, tc := range fr.Tests {
			tests++
			if tc.Status == "failed" {
				failing = append(failing, strings.Join(tc.Titles, " › "))
			}
		}
	}
	download := func(job, name string) []byte {
		t.Helper()
		code, b := s.call(t, "GET", "/v1/jobs/"+job+"/artifacts/"+name, key, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s of %s: %d %s", name, job, code, b)
		}
		return b
	}
	raw := download(run.ID, r.JUnit)
	var ju junitReport
	if err := xml.Unmarshal(raw, &ju); err != nil {
		t.Fatalf("the junit report does not parse: %v\n%.500s", err, raw)
	}
	var junitFailing []string
	cases := 0
	for _, su := range ju.Suites {
		for _, c := range su.Cases {
			cases++
			if c.Failure != nil {
				junitFailing = append(junitFailing, c.Name)
			}
		}
	}
	slices.Sort(failing)
	slices.Sort(junitFailing)
	if ju.Tests != tests || cases != tests || ju.Failures != len(failing) || ju.Errors != 0 || ju.Skipped != 0 {
		t.Errorf("junit counts %d tests (%d cases), %d failures, %d errors, %d skipped; the run had %d tests, %d failing",
			ju.Tests, cases, ju.Failures, ju.Errors, ju.Skipped, tests, len(failing))
	}
	for _, f := range failing {
		// junit names a case by its describe path and title.
		title := f[strings.LastIndex(f, " › ")+len(" › "):]
		if !slices.ContainsFunc(junitFailing, func(n string) bool { return strings.HasSuffix(n, title) }) {
			t.Errorf("junit does not fail %q: %v", f, junitFailing)
		}
	}
	report := download(run.ID, r.HTML)
	if names := zipNames(t, report); !slices.Contains(names, "index.html") {
		t.Errorf("the html report holds %v, no index.html", names)
	}
	if len(r.Traces) != len(failing) {
		t.Errorf("%d traces for %d failing tests: %+v", len(r.Traces), len(failing), r.Traces)
	}
	var blobs [][]byte
	for _, tr := range r.Traces {
		b := download(tr.JobID, tr.Artifact)
		if names := zipNames(t, b); !slices.ContainsFunc(names, func(n string) bool { return path.Ext(n) == ".trace" }) {
			t.Errorf("the trace of %s holds %v", tr.Test, names)
		}
		blobs = append(blobs, b)
	}
	for _, c := range run.Suite.Children {
		blobs = append(blobs, download(c.JobID, suite.BlobArtifact))
	}
	for i, b := range append(blobs, report, raw) {
		if suitetest.ZipHolds(t, b, secret) {
			t.Errorf("download %d holds the job's secret", i)
		}
	}
}

// checkWrittenReports checks what the CLI wrote of a run's reports: the
// junit XML the API serves, the html report unpacked, a trace per failing
// test.
func checkWrittenReports(t *testing.T, run api.JobView, junit, report, traces string) {
	t.Helper()
	if b, err := os.ReadFile(junit); err != nil || xml.Unmarshal(b, new(junitReport)) != nil {
		t.Errorf("the CLI's junit report: %v", err)
	}
	if _, err := os.Stat(filepath.Join(report, "index.html")); err != nil {
		t.Errorf("the CLI's html report: %v", err)
	}
	written, err := filepath.Glob(filepath.Join(traces, "*.zip"))
	if err != nil || len(written) != len(run.Reports.Traces) || len(written) == 0 {
		t.Errorf("the CLI wrote traces %v for %d failing tests (%v)", written, len(run.Reports.Traces), err)
	}
	for _, f := range written {
		b, err := os.ReadFile(f)
		must(t, err)
		if !slices.ContainsFunc(zipNames(t, b), func(n string) bool { return path.Ext(n) == ".trace" }) {
			t.Errorf("%s is not a trace", f)
		}
	}
}

// zipNames lists a zip's entries.
func zipNames(t *testing.T, b []byte) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	return names
}

// htmlReportShows opens the run's html report from its page in the
// console, in Chromium, and checks it lists the failing test as failed.
func htmlReportShows(t *testing.T, pg playwright.Page, failing string) {
	t.Helper()
	must(t, pg.Locator("#html-report").Click())
	must(t, pg.WaitForURL("**/report/index.html"))
	row := pg.GetByText(failing).First()
	if err := row.WaitFor(); err != nil {
		body, _ := pg.Locator("body").InnerText()
		t.Fatalf("the html report does not show %q: %v\n%.2000s", failing, err, body)
	}
	if n, err := pg.GetByText("Failed").Count(); err != nil || n == 0 {
		t.Errorf("the html report shows no failed test (%v)", err)
	}
}
