package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/jobs"
	"github.com/webpilot/webpilot/store"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// suiteCmd runs or repairs stored tests as one bulk job.
func suiteCmd(c *client, args []string, out io.Writer) error {
	const use = "usage: webpilot suite run|repair [--tag T]... [--test ID]... [--auto-accept] [--max-credits N] [--secret NAME=env:VAR] [--watch]"
	if len(args) == 0 || (args[0] != "run" && args[0] != "repair") {
		return errors.New(use)
	}
	kind := jobs.KindSuiteRun
	if args[0] == "repair" {
		kind = jobs.KindSuiteRepair
	}
	fs := flag.NewFlagSet("suite "+args[0], flag.ContinueOnError)
	var tags, tests listFlag
	fs.Var(&tags, "tag", "run the tests carrying this tag (repeatable, or comma-separated)")
	fs.Var(&tests, "test", "run this test id (repeatable, or comma-separated)")
	autoAccept := fs.Bool("auto-accept", false, "make each verified repair its test's script at once (repair only)")
	maxCredits := fs.Float64("max-credits", 0, "the credit budget of the whole run (repair only; default: one job's hold per test)")
	follow := fs.Bool("watch", false, "follow the run test by test until it ends")
	secrets := secretFlag(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New(use)
	}
	key, err := tenantKey()
	if err != nil {
		return err
	}
	req := jobs.SuiteRequest{TestIDs: tests, Tags: tags, AutoAccept: *autoAccept, Secrets: secrets}
	req.Options.MaxCredits = *maxCredits
	if len(secrets) == 0 {
		req.Secrets = nil
	}
	v, err := c.submit(key, "/v1/suites/"+args[0], req)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "submitted %s %s (%.2f credits held)\n", kind, v.ID, v.HoldCredits)
	if !*follow {
		return nil
	}
	return watch(c, key, v.ID, out)
}

// printTest prints one test's outcome of a bulk job as it arrives.
func printTest(out io.Writer, data []byte) {
	var t store.ChildReport
	if json.Unmarshal(data, &t) != nil {
		return
	}
	mark := map[string]string{"passed": "✓", "healed": "✎", "flaky": "~"}[t.Verdict]
	if mark == "" {
		mark = "✗"
	}
	verdict := t.Verdict
	if verdict == "" {
		verdict = t.State
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
func suiteSummary(v api.JobView, out io.Writer) error {
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
	if v.State != "succeeded" {
		return fmt.Errorf("%s ended %s", v.Kind, v.State)
	}
	if bad := rep.Tests - rep.Verdicts["passed"] - rep.Verdicts["healed"] - rep.Verdicts["flaky"]; bad > 0 {
		return fmt.Errorf("%d of %d tests fail (see the report: webpilot job %s)", bad, rep.Tests, v.ID)
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

// testCmd shows stored tests and decides proposed versions.
func testCmd(c *client, args []string, out io.Writer) error {
	const use = "usage: webpilot test list | show TEST_ID | diff TEST_ID VERSION | accept|reject TEST_ID VERSION"
	if len(args) == 0 {
		return errors.New(use)
	}
	key, err := tenantKey()
	if err != nil {
		return err
	}
	switch {
	case args[0] == "list" && len(args) == 1:
		var res struct{ Tests []store.Test }
		if err := c.do("GET", "/v1/tests", key, nil, &res); err != nil {
			return err
		}
		for _, t := range res.Tests {
			fmt.Fprintf(out, "%s  v%-3d %-15s %s  [%s]\n", t.ID, t.Version, t.LastStatus, t.Name, strings.Join(t.Tags, ","))
		}
		return nil
	case args[0] == "show" && len(args) == 2:
		var t store.Test
		if err := c.do("GET", "/v1/tests/"+args[1], key, nil, &t); err != nil {
			return err
		}
		var vs struct{ Versions []store.TestVersion }
		if err := c.do("GET", "/v1/tests/"+args[1]+"/versions", key, nil, &vs); err != nil {
			return err
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
	case args[0] == "diff" && len(args) == 3:
		var d string
		if err := c.do("GET", "/v1/tests/"+args[1]+"/versions/"+args[2]+"/diff", key, nil, &d); err != nil {
			return err
		}
		fmt.Fprint(out, d)
		return nil
	case (args[0] == "accept" || args[0] == "reject") && len(args) == 3:
		var v store.TestVersion
		if err := c.do("POST", "/v1/tests/"+args[1]+"/versions/"+args[2]+"/"+args[0], key, nil, &v); err != nil {
			return err
		}
		fmt.Fprintf(out, "test %s version %d: %s\n", v.TestID, v.Version, v.Status)
		return nil
	}
	return errors.New(use)
}

// importCmd stores existing spec files as tests; a construct outside the
// supported subset is reported by file and line and nothing is stored.
func importCmd(c *client, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	base := fs.String("base", "", "the base URL the tests run against (replaces the specs' own)")
	var tags listFlag
	fs.Var(&tags, "tag", "tag every imported test (repeatable, or comma-separated)")
	var files []string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if rest = fs.Args(); len(rest) > 0 {
			files, rest = append(files, rest[0]), rest[1:]
		}
	}
	if len(files) == 0 {
		return errors.New("usage: webpilot import FILE... [--base URL] [--tag T]")
	}
	key, err := tenantKey()
	if err != nil {
		return err
	}
	req := api.ImportRequest{BaseURL: *base, Tags: tags}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		req.Files = append(req.Files, api.ImportFile{Name: filepath.Base(f), Content: string(b)})
	}
	var res struct{ Tests []store.Test }
	if err := c.do("POST", "/v1/tests/import", key, req, &res); err != nil {
		return err
	}
	for _, t := range res.Tests {
		fmt.Fprintf(out, "imported %s  v%d  %s\n", t.ID, t.Version, t.Name)
	}
	fmt.Fprintf(out, "%d tests imported from %d files\n", len(res.Tests), len(files))
	return nil
}
