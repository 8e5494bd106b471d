package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/webpilot/webpilot/client"
)

// suiteCmd runs or repairs stored tests as one bulk job.
func suiteCmd(c *conn, kind client.Kind, tags, tests []string, autoAccept bool, maxCredits float64, follow bool,
	secrets map[string]string, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	req := client.SuiteRequest{TestIDs: tests, Tags: tags, AutoAccept: autoAccept, Secrets: secrets}
	req.Options.MaxCredits = maxCredits
	path := "/v1/suites/run"
	if kind == client.KindSuiteRepair {
		path = "/v1/suites/repair"
	}
	v, err := c.submit(key, path, req)
	if err != nil {
		return err
	}
	return submitted(c, key, v, fmt.Sprintf("submitted %s %s (%.2f credits held)", kind, v.ID, v.HoldCredits), follow, out, asJSON)
}

// printTest prints one test's outcome of a bulk job as it arrives.
func printTest(out io.Writer, data []byte) {
	var t client.ChildReport
	if json.Unmarshal(data, &t) != nil {
		return
	}
	mark := map[string]string{"passed": "✓", "healed": "✎", "flaky": "~"}[t.Verdict]
	if mark == "" {
		mark = "✗"
	}
	verdict := t.Verdict
	if verdict == "" {
		verdict = string(t.State)
	}
	line := fmt.Sprintf("  %s %-15s %-32s %5d tokens", mark, verdict, t.TestName, t.Tokens)
	if t.Version > 0 {
		line += fmt.Sprintf("  v%d %s", t.Version, t.VersionStatus)
	}
	fmt.Fprintln(out, line)
	if t.Error != "" && t.Verdict != "passed" && t.Verdict != "healed" {
		fmt.Fprintf(out, "      %s\n", firstLine(t.Error, 200))
	}
}

// suiteSummary prints a bulk job's totals; it fails when the run did not
// complete or a test regressed or could not be repaired.
func suiteSummary(v client.JobView, out io.Writer) error {
	if v.Kind == client.KindProjectRun && v.Reports != nil && v.Reports.Files > 0 {
		return runSummary(v, out)
	}
	rep := v.Suite
	var parts []string
	for k, n := range rep.Verdicts {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(parts)
	fmt.Fprintf(out, "%s %s %s: %d/%d tests (%s), %d LLM tokens, cost %.6f credits (held %.2f)\n",
		v.Kind, v.ID, v.State, rep.Done, rep.Tests, strings.Join(parts, ", "), rep.Tokens, v.ChargedCredits, v.HoldCredits)
	if v.Error != "" {
		fmt.Fprintf(out, "error: %s\n", v.Error)
	}
	if v.State != client.JobStateSucceeded {
		return fmt.Errorf("%s ended %s", v.Kind, v.State)
	}
	if bad := rep.Tests - rep.Verdicts["passed"] - rep.Verdicts["healed"] - rep.Verdicts["flaky"]; bad > 0 {
		return fmt.Errorf("%d of %d tests fail (see the report: webpilot job %s)", bad, rep.Tests, v.ID)
	}
	return nil
}

// runSummary prints a project run's totals: its tests by the runner's
// verdict over its files (its jobs are parts of several files each); it
// fails when the run did not succeed.
func runSummary(v client.JobView, out io.Writer) error {
	var parts []string
	all := 0
	for k, n := range v.Reports.Tests {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
		all += n
	}
	sort.Strings(parts)
	jobs := 0
	if v.Suite != nil {
		jobs = len(v.Suite.Children)
	}
	fmt.Fprintf(out, "%s %s %s: %d tests in %d files (%s), run in %d parts, cost %.6f credits (held %.2f)\n",
		v.Kind, v.ID, v.State, all, v.Reports.Files, strings.Join(parts, ", "), jobs, v.ChargedCredits, v.HoldCredits)
	if v.Error != "" {
		fmt.Fprintf(out, "error: %s\n", v.Error)
	}
	if v.State != client.JobStateSucceeded {
		return fmt.Errorf("%s ended %s", v.Kind, v.State)
	}
	return nil
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// testList prints the stored tests and their last verdict.
func testList(c *conn, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	var raw string
	if err := c.do("GET", "/v1/tests", key, nil, &raw); err != nil {
		return err
	}
	if asJSON {
		printRaw(out, raw)
		return nil
	}
	var res struct{ Tests []client.TestView }
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return err
	}
	for _, t := range res.Tests {
		fmt.Fprintf(out, "%s  v%-3d %-15s %s  [%s]\n", t.ID, t.Version, t.LastStatus, t.Name, strings.Join(t.Tags, ","))
	}
	return nil
}

// testProject writes stored tests as a project and says where each went.
func testProject(c *conn, req client.TestsToProject, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	var raw string
	if err := c.do("POST", "/v1/tests/project", key, req, &raw); err != nil {
		return err
	}
	if asJSON {
		printRaw(out, raw)
		return nil
	}
	var v client.TestsProjectView
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return err
	}
	fmt.Fprintf(out, "project %s version %s: %d tests written (%d files)\n", v.Name, v.Version, len(v.Written), v.Files)
	if v.ListJob != "" {
		fmt.Fprintf(out, "listing its tests: job %s\n", v.ListJob)
	}
	fmt.Fprintf(out, "run them:    webpilot project run %s\nrepair them: webpilot project repair %s\n", v.Name, v.Name)
	return nil
}

// testShow prints a test's script and its versions.
func testShow(c *conn, id string, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	var t client.TestView
	if err := c.do("GET", "/v1/tests/"+id, key, nil, &t); err != nil {
		return err
	}
	var vs struct {
		Versions []client.TestVersion `json:"versions"`
	}
	if err := c.do("GET", "/v1/tests/"+id+"/versions", key, nil, &vs); err != nil {
		return err
	}
	if asJSON {
		b, _ := json.Marshal(struct {
			Test     client.TestView      `json:"test"`
			Versions []client.TestVersion `json:"versions"`
		}{t, vs.Versions})
		fmt.Fprintln(out, string(b))
		return nil
	}
	fmt.Fprintf(out, "test %s %q  version %d  last %s  tags [%s]\n", t.ID, t.Name, t.Version, t.LastStatus, strings.Join(t.Tags, ","))
	fmt.Fprintln(out, "versions:")
	for _, v := range vs.Versions {
		job := ""
		if v.Job != nil {
			job = " by job " + *v.Job
		}
		fmt.Fprintf(out, "  v%-3d %-9s %s%s\n", v.Version, v.Status, firstLine(v.Summary, 160), job)
	}
	fmt.Fprintf(out, "\n%s", t.Script)
	return nil
}

// testDiff prints the unified diff a version proposes (text in both modes:
// a diff is its own format).
func testDiff(c *conn, id, version string, out io.Writer) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	var d string
	if err := c.do("GET", "/v1/tests/"+id+"/versions/"+version+"/diff", key, nil, &d); err != nil {
		return err
	}
	fmt.Fprint(out, d)
	return nil
}

// testDecide accepts or rejects a proposed version.
func testDecide(c *conn, decision, id, version string, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	var raw string
	if err := c.do("POST", "/v1/tests/"+id+"/versions/"+version+"/"+decision, key, nil, &raw); err != nil {
		return err
	}
	if asJSON {
		printRaw(out, raw)
		return nil
	}
	var v client.TestVersion
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return err
	}
	fmt.Fprintf(out, "test %s version %d: %s\n", v.TestID, v.Version, v.Status)
	return nil
}
