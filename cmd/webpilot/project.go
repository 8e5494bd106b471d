package main

import (
	"github.com/webpilot/webpilot/client"

	"archive/tar"
	"archive/zip"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// projectCommand is the customers' own @playwright/test projects: upload
// one as it is, list its tests, run it, repair it into a patch.
func projectCommand(g *globals, out io.Writer) *cobra.Command {
	p := &cobra.Command{Use: "project", Short: "Your own @playwright/test projects: upload, run, repair into a patch"}
	var watchUpload bool
	upload := &cobra.Command{Use: "upload NAME DIR", Short: "Upload a project directory as it is (node_modules and results left out)",
		Args: cobra.ExactArgs(2), Example: "  webpilot project upload shop ./e2e",
		RunE: func(cmd *cobra.Command, args []string) error {
			return projectUpload(g.conn(), args[0], args[1], watchUpload, out, g.json)
		}}
	upload.Flags().BoolVar(&watchUpload, "watch", false, "wait for the runner's listing of its tests")
	var tracesVersion string
	traces := &cobra.Command{Use: "traces NAME PATH", Short: "Upload a green run of the project from your CI (its JSON report and trace.zip files): what a repair heals from when no run on webpilot passed",
		Args: cobra.ExactArgs(2), Example: "  npx playwright test --trace=on --reporter=json > results.json\n  webpilot project traces shop .   # results.json and test-results/**/trace.zip",
		RunE: func(cmd *cobra.Command, args []string) error {
			return projectTraces(g.conn(), args[0], args[1], tracesVersion, out, g.json)
		}}
	traces.Flags().StringVar(&tracesVersion, "version", "", "the version that run ran (default: the current one)")
	p.AddCommand(upload, traces,
		&cobra.Command{Use: "list", Short: "Your projects at their current versions", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error { return projectList(g.conn(), out, g.json) }},
		&cobra.Command{Use: "show NAME", Short: "A project's current version and its tests", Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error { return projectShow(g.conn(), args[0], out, g.json) }},
		&cobra.Command{Use: "accept NAME VERSION", Short: "Make a proposed version (a verified repair) the current one", Args: cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				return projectAccept(g.conn(), args[0], args[1], out, g.json)
			}},
	)
	for _, kind := range []client.Kind{client.KindProjectRun, client.KindProjectRepair} {
		var o projectJobOptions
		name, short := "run", "Run the project's tests in the sandbox, one child per test file"
		if kind == client.KindProjectRepair {
			name, short = "repair", "Heal its drift (locators where they are defined, waits, an overlay now in the flow); regressions are reported, never healed"
		}
		cmd := &cobra.Command{Use: name + " NAME", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				_, err := projectJob(g.conn(), kind, args[0], o, out, g.json)
				return err
			}}
		if kind == client.KindProjectRepair {
			cmd.Use = "repair NAME|DIR"
			cmd.Example = "  webpilot project repair shop --patch fix.patch\n" +
				"  webpilot project repair ./e2e --baseline-url https://shop.example   # a CI step: upload, repair, write webpilot.patch; non-zero unless every test passes or is healed"
			cmd.RunE = func(cmd *cobra.Command, args []string) error {
				if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
					return projectRepairDir(g.conn(), args[0], o, out)
				}
				_, err := projectJob(g.conn(), kind, args[0], o, out, g.json)
				return err
			}
		}
		o.flags(cmd, kind)
		p.AddCommand(cmd)
	}
	return p
}

// projectJobOptions are a project run's or repair's flags.
type projectJobOptions struct {
	baseURL, version, patch string
	baselineURL, name       string
	afterRun                string
	files, secrets          []string
	origins, baseline       map[string]string
	autoAccept, follow      bool
	maxCredits              float64
	// junit, html and traces are where a run's reports go once it ends.
	junit, html, traces string
}

// wantsReports: the command waits for the job and writes its reports.
func (o projectJobOptions) wantsReports() bool {
	return o.junit != "" || o.html != "" || o.traces != ""
}

func (o *projectJobOptions) flags(cmd *cobra.Command, kind client.Kind) {
	cmd.Flags().StringVar(&o.baseURL, "base-url", "", "every test's baseURL (default: the project's own)")
	cmd.Flags().StringVar(&o.version, "version", "", "the version to use (default: the current one)")
	cmd.Flags().StringSliceVar(&o.files, "file", nil, "only this test file (repeatable)")
	cmd.Flags().StringToStringVar(&o.origins, "origin", nil, "send an origin the tests name outright to another: https://staging.acme.test=http://localhost:8080 (repeatable)")
	cmd.Flags().BoolVar(&o.follow, "watch", false, "follow the job until it ends")
	cmd.Flags().Float64Var(&o.maxCredits, "max-credits", 0, "the most it may spend, its files' browser time together (default: the most its files can take)")
	secretFlag(cmd, &o.secrets)
	what := "wait for the run and write "
	if kind == client.KindProjectRepair {
		what = "with a DIR: run the project first and write "
	}
	cmd.Flags().StringVar(&o.junit, "junit", "", what+"the runner's junit XML to this file")
	cmd.Flags().StringVar(&o.html, "html", "", what+"the runner's html report into this directory (npx playwright show-report DIR)")
	cmd.Flags().StringVar(&o.traces, "traces", "", what+"each failing test's trace.zip into this directory (npx playwright show-trace FILE)")
	if kind == client.KindProjectRepair {
		cmd.Flags().StringVar(&o.patch, "patch", "", "wait for the repair and write its verified patch to this file (git apply takes it)")
		cmd.Flags().BoolVar(&o.autoAccept, "auto-accept", false, "make a verified repair the project's current version at once")
		cmd.Flags().StringVar(&o.baselineURL, "baseline-url", "", "a deployment where the suite still passes (production, the last release): tests no run on webpilot saw pass run there first, for the elements they act on")
		cmd.Flags().StringVar(&o.name, "name", "", "with a DIR: the project's name (default: the directory's)")
		cmd.Flags().StringVar(&o.afterRun, "after", "", "the project_run this repair follows (its job id): the files that passed in it are not run again")
		cmd.Flags().StringToStringVar(&o.baseline, "baseline-origin", nil, "an origin the tests name, sent elsewhere for the baseline run: https://staging.acme.test=https://acme.test (repeatable)")
	}
}

// skippedDir are what an upload leaves out of a project's directory.
var skippedDir = map[string]bool{"node_modules": true, ".git": true, "test-results": true, "playwright-report": true, "blob-report": true}

// projectArchive packs a project directory as a .tar.gz, leaving out
// installed packages and results.
func projectArchive(dir string) ([]byte, error) {
	return packDir(dir, func(string) bool { return true }, skippedDir)
}

// packDir packs the regular files of dir that keep takes (by relative
// path) as a .tar.gz, leaving out the folders named in skip.
func packDir(dir string, keep func(rel string) bool, skip map[string]bool) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && skip[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if !keep(filepath.ToSlash(rel)) {
			return nil
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		n++
		_, err = tw.Write(content)
		return err
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%s holds no file", dir)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func projectUpload(c *conn, name, dir string, follow bool, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	archive, err := projectArchive(dir)
	if err != nil {
		return err
	}
	var v client.ProjectView
	if err := c.do("POST", "/v1/projects/"+url.PathEscape(name), key, client.ProjectUpload{Archive: archive}, &v); err != nil {
		return err
	}
	if asJSON && !follow {
		b, _ := json.Marshal(v)
		fmt.Fprintln(out, string(b))
		return nil
	}
	if !asJSON {
		fmt.Fprintf(out, "project %s version %s: %d files, %d bytes\n", v.Name, short(v.Version), v.Files, v.Bytes)
	}
	if !follow || v.ListJob == "" {
		return nil
	}
	if err := watch(c, key, v.ListJob, io.Discard, false); err != nil {
		return err
	}
	return projectShow(c, name, out, asJSON)
}

// projectTraces uploads a customer's own run: PATH is an archive, or a
// directory whose JSON files and trace zips are packed.
func projectTraces(c *conn, name, path, version string, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	var archive []byte
	if st.IsDir() {
		archive, err = packDir(path, func(rel string) bool { return strings.HasSuffix(rel, ".json") || strings.HasSuffix(rel, ".zip") }, map[string]bool{"node_modules": true, ".git": true})
	} else {
		archive, err = os.ReadFile(path)
	}
	if err != nil {
		return err
	}
	var v client.TracesView
	if err := c.do("POST", "/v1/projects/"+url.PathEscape(name)+"/traces", key, client.ProjectTraces{Archive: archive, Version: version}, &v); err != nil {
		return err
	}
	if asJSON {
		b, _ := json.Marshal(v)
		fmt.Fprintln(out, string(b))
		return nil
	}
	fmt.Fprintf(out, "project %s version %s: recorded %d tests from your run\n", v.Project, short(v.Version), len(v.Recorded))
	for _, sk := range v.Skipped {
		fmt.Fprintf(out, "  not recorded: %s: %s\n", sk.Test, sk.Why)
	}
	return nil
}

func projectList(c *conn, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	var raw string
	if err := c.do("GET", "/v1/projects", key, nil, &raw); err != nil {
		return err
	}
	if asJSON {
		printRaw(out, raw)
		return nil
	}
	var l client.ProjectList
	if err := json.Unmarshal([]byte(raw), &l); err != nil {
		return err
	}
	if len(l.Projects) == 0 {
		fmt.Fprintln(out, "no projects yet: webpilot project upload NAME DIR")
	}
	for _, v := range l.Projects {
		var tests []client.TestOutcome
		_ = json.Unmarshal(v.Tests, &tests)
		fmt.Fprintf(out, "%-24s %s  %3d files  %3d tests\n", v.Name, short(v.Version), v.Files, len(tests))
	}
	return nil
}

func projectShow(c *conn, name string, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	var raw string
	if err := c.do("GET", "/v1/projects/"+url.PathEscape(name), key, nil, &raw); err != nil {
		return err
	}
	if asJSON {
		printRaw(out, raw)
		return nil
	}
	var v client.ProjectView
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return err
	}
	fmt.Fprintf(out, "project %s version %s (%d files)\n", v.Name, short(v.Version), v.Files)
	var tests []client.TestOutcome
	_ = json.Unmarshal(v.Tests, &tests)
	for _, t := range tests {
		project := ""
		if t.Project != "" {
			project = " [" + t.Project + "]"
		}
		fmt.Fprintf(out, "  %s:%d%s %s\n", t.File, t.Line, project, t.Title())
	}
	var problems []string
	_ = json.Unmarshal(v.ListErrors, &problems)
	for _, p := range problems {
		fmt.Fprintf(out, "  problem: %s\n", firstLine(p, 200))
	}
	if v.ListedAt == nil && len(problems) == 0 {
		fmt.Fprintln(out, "  (not listed yet)")
	}
	return nil
}

func projectAccept(c *conn, name, version string, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	var v client.AcceptedProjectView
	if err := c.do("POST", "/v1/projects/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version)+"/accept", key, nil, &v); err != nil {
		return err
	}
	if asJSON {
		b, _ := json.Marshal(v)
		fmt.Fprintln(out, string(b))
		return nil
	}
	fmt.Fprintf(out, "project %s is now at version %s\n", v.Name, short(v.Version))
	printWrittenBack(out, v.StoredTests)
	return nil
}

// projectJob submits a project run or repair; with --patch it waits for
// the repair and writes its verified patch.
func projectJob(c *conn, kind client.Kind, name string, o projectJobOptions, out io.Writer, asJSON bool) (jobID string, err error) {
	key, err := tenantKey()
	if err != nil {
		return "", err
	}
	if kind == client.KindProjectRepair && o.wantsReports() {
		return "", errors.New("--junit, --html and --traces go with a DIR (the CI step runs the project first), or with project run")
	}
	sec, err := parseSecrets(o.secrets)
	if err != nil {
		return "", err
	}
	req := client.ProjectRequest{Name: name, Version: o.version, Files: o.files, BaseURL: o.baseURL, Origins: o.origins, Secrets: sec, AutoAccept: o.autoAccept, MaxCredits: o.maxCredits,
		BaselineURL: o.baselineURL, BaselineOrigins: o.baseline, AfterRun: o.afterRun}
	path := "/v1/projects/" + url.PathEscape(name) + "/run"
	if kind == client.KindProjectRepair {
		path = "/v1/projects/" + url.PathEscape(name) + "/repair"
	}
	v, err := c.submit(key, path, req)
	if err != nil {
		return "", err
	}
	what := fmt.Sprintf("submitted %s %s (%.2f credits held)", kind, v.ID, v.HoldCredits)
	if kind == client.KindProjectRun && o.wantsReports() {
		fmt.Fprintln(out, what)
		ended := watch(c, key, v.ID, out, asJSON)
		if err := writeReports(c, key, v.ID, o, out); err != nil {
			return v.ID, errors.Join(ended, err)
		}
		return v.ID, ended
	}
	if o.patch == "" {
		return v.ID, submitted(c, key, v, what, o.follow, out, asJSON)
	}
	// The patch is there once the repair ended: follow it quietly unless
	// asked to watch.
	progress := io.Discard
	if o.follow {
		progress = out
	}
	fmt.Fprintln(out, what)
	ended := watch(c, key, v.ID, progress, false)
	var diff string
	err = c.do("GET", "/v1/jobs/"+v.ID+"/patch", key, nil, &diff)
	switch {
	case client.IsStatus(err, http.StatusConflict):
		if ended == nil {
			ended = errors.New("the repair healed nothing")
		}
		return v.ID, fmt.Errorf("%w: %w (webpilot job %s shows what the repair found)", errNoPatch, ended, v.ID)
	case err != nil:
		return v.ID, err
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(o.patch)), 0o755); err != nil {
		return v.ID, err
	}
	if err := os.WriteFile(o.patch, []byte(diff), 0o644); err != nil {
		return v.ID, err
	}
	fmt.Fprintf(out, "wrote the verified patch (%d files) to %s: git apply %s\n", strings.Count(diff, "\n+++ "), o.patch, o.patch)
	return v.ID, nil
}

// errNoPatch is a repair that ended without a verified patch.
var errNoPatch = errors.New("no verified patch")

// short is a digest's first characters, as versions are shown.
func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

// projectRepairDir is the CI step: upload DIR as the project, wait for its
// listing, repair it and write the verified patch (webpilot.patch unless
// --patch says where). It fails when the repair leaves any test red: an app
// regression, a test it could not heal or could not run.
func projectRepairDir(c *conn, dir string, o projectJobOptions, out io.Writer) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	name := o.name
	if name == "" {
		name = filepath.Base(abs)
	}
	if o.patch == "" {
		o.patch = "webpilot.patch"
	}
	if err := projectUpload(c, name, abs, true, io.Discard, false); err != nil {
		return fmt.Errorf("upload %s as project %s: %w", dir, name, err)
	}
	fmt.Fprintf(out, "uploaded %s as project %s\n", dir, name)
	o.version = "" // the version just uploaded is the current one
	if o.wantsReports() {
		// The runner's reports are a plain run's: the repair follows it,
		// and runs again only the files that failed in it.
		run := projectJobOptions{baseURL: o.baseURL, files: o.files, secrets: o.secrets, origins: o.origins, maxCredits: o.maxCredits,
			junit: o.junit, html: o.html, traces: o.traces}
		id, err := projectJob(c, client.KindProjectRun, name, run, out, false)
		switch {
		case id == "":
			return err
		case err == nil:
			fmt.Fprintln(out, "every test passed: nothing to repair")
			return nil
		}
		o.afterRun, o.junit, o.html, o.traces = id, "", "", ""
	}
	id, err := projectJob(c, client.KindProjectRepair, name, o, out, false)
	if err != nil && !errors.Is(err, errNoPatch) {
		return err
	}
	res, rerr := repairResult(c, id)
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	counts := repairSummary(out, res.Repair.Tests)
	switch {
	case counts[client.VerdictRegression] > 0:
		return fmt.Errorf("%d app regressions: the app no longer does what these tests check (never healed)", counts[client.VerdictRegression])
	case counts[client.VerdictUnrepairable]+counts[client.VerdictNotRun] > 0:
		return fmt.Errorf("%d tests are still failing or did not run", counts[client.VerdictUnrepairable]+counts[client.VerdictNotRun])
	}
	if err != nil && counts[client.VerdictHealed] > 0 {
		return err // healed but not verified: no patch to trust
	}
	return nil
}

// repairSummary writes a repair's counts, then each test it left red with
// why: the app regressions, the tests it could not heal, those that did
// not run. It answers the counts by verdict.
func repairSummary(out io.Writer, tests []client.RepairedTest) map[client.Verdict]int {
	counts := map[client.Verdict]int{}
	for _, t := range tests {
		counts[t.Verdict]++
	}
	fmt.Fprintf(out, "%d passed, %d healed, %d app regressions, %d unrepairable, %d not run\n", counts[client.VerdictPassed]+counts[client.VerdictFlaky],
		counts[client.VerdictHealed], counts[client.VerdictRegression], counts[client.VerdictUnrepairable], counts[client.VerdictNotRun])
	for _, v := range []struct {
		verdict client.Verdict
		label   string
	}{
		{client.VerdictRegression, "app regression"}, {client.VerdictUnrepairable, "unrepairable"}, {client.VerdictNotRun, "not run"},
	} {
		for _, t := range tests {
			if t.Verdict == v.verdict {
				fmt.Fprintf(out, "  %s: %s > %s: %s\n", v.label, t.File, t.Title, firstLine(t.Reason, 200))
			}
		}
	}
	return counts
}

// repairResult is a finished project repair's result.
func repairResult(c *conn, id string) (client.ProjectRepairResult, error) {
	key, err := tenantKey()
	if err != nil {
		return client.ProjectRepairResult{}, err
	}
	var v client.JobView
	if err := c.do("GET", "/v1/jobs/"+id, key, nil, &v); err != nil {
		return client.ProjectRepairResult{}, err
	}
	// A repair that flagged a test fails with it, its report kept.
	var r client.ProjectRepairResult
	if len(v.Project) == 0 || json.Unmarshal(v.Project, &r) != nil || r.Repair.Tests == nil {
		return r, fmt.Errorf("the repair %s ended %s: %s", id, v.State, v.Error)
	}
	return r, nil
}

// writeReports writes an ended project run's reports where the flags
// say: the runner's junit XML, its html report unpacked, and the failing
// tests' traces, each named after its test.
func writeReports(c *conn, key, id string, o projectJobOptions, out io.Writer) error {
	var v client.JobView
	if err := c.do("GET", "/v1/jobs/"+id, key, nil, &v); err != nil {
		return err
	}
	r := v.Reports
	if r == nil {
		return fmt.Errorf("job %s (%s) has no reports", id, v.State)
	}
	if r.Problem != "" {
		fmt.Fprintln(out, "reports: "+r.Problem)
	}
	get := func(job, name string) ([]byte, error) {
		var b string
		err := c.do("GET", "/v1/jobs/"+job+"/artifacts/"+url.PathEscape(name), key, nil, &b)
		return []byte(b), err
	}
	var errs []error
	for _, f := range []string{o.junit, o.html, o.traces} {
		if f != "" {
			if err := os.MkdirAll(filepath.Dir(filepath.Clean(f)), 0o755); err != nil {
				return err
			}
		}
	}
	if o.junit != "" {
		if r.JUnit == "" {
			errs = append(errs, errors.New("the run has no junit report"))
		} else if b, err := get(id, r.JUnit); err != nil {
			errs = append(errs, fmt.Errorf("the junit report: %w", err))
		} else if err := os.WriteFile(o.junit, b, 0o644); err != nil {
			errs = append(errs, err)
		} else {
			fmt.Fprintf(out, "wrote the junit report to %s\n", o.junit)
		}
	}
	if o.html != "" {
		if r.HTML == "" {
			errs = append(errs, errors.New("the run has no html report"))
		} else if b, err := get(id, r.HTML); err != nil {
			errs = append(errs, fmt.Errorf("the html report: %w", err))
		} else if n, err := unzipInto(b, o.html); err != nil {
			errs = append(errs, fmt.Errorf("the html report: %w", err))
		} else {
			fmt.Fprintf(out, "wrote the html report (%d files) to %s: npx playwright show-report %s\n", n, o.html, o.html)
		}
	}
	if o.traces != "" {
		if err := os.MkdirAll(o.traces, 0o755); err != nil {
			return errors.Join(append(errs, err)...)
		}
		taken := map[string]bool{}
		for _, t := range r.Traces {
			b, err := get(t.JobID, t.Artifact)
			if err != nil {
				errs = append(errs, fmt.Errorf("the trace of %s: %w", t.Test, err))
				continue
			}
			name := traceName(t.Test, taken)
			if err := os.WriteFile(filepath.Join(o.traces, name), b, 0o644); err != nil {
				errs = append(errs, err)
			}
		}
		fmt.Fprintf(out, "wrote %d failing tests' traces to %s: npx playwright show-trace FILE\n", len(r.Traces), o.traces)
	}
	return errors.Join(errs...)
}

// nameUnsafe is what a file name made of a test's title leaves out.
var nameUnsafe = regexp.MustCompile(`[^\p{L}\p{N}._-]+`)

// traceName names a test's trace file after the test, once per run.
func traceName(test string, taken map[string]bool) string {
	base := strings.Trim(nameUnsafe.ReplaceAllString(test, "-"), "-.")
	if r := []rune(base); len(r) > 100 {
		base = string(r[:100])
	}
	base = cmp.Or(base, "test")
	name := base + ".zip"
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s-%d.zip", base, i)
	}
	taken[name] = true
	return name
}

// unzipInto writes a zip's files under dir, refusing any that would land
// outside it; it answers how many it wrote.
func unzipInto(b []byte, dir string) (int, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		if !filepath.IsLocal(f.Name) {
			return n, fmt.Errorf("%q is not a path inside the report", f.Name)
		}
		to := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return n, err
		}
		rc, err := f.Open()
		if err != nil {
			return n, err
		}
		w, err := os.Create(to)
		if err == nil {
			_, err = io.Copy(w, rc)
			err = errors.Join(err, w.Close())
		}
		_ = rc.Close()
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// printWrittenBack says which stored tests an accepted version of a
// project of them updated, and which changed specs it left out.
func printWrittenBack(out io.Writer, back *client.WrittenBack) {
	if back == nil {
		return
	}
	for _, t := range back.Tests {
		fmt.Fprintf(out, "stored test %s (%s) is now at version %d\n", t.TestID, t.File, t.Version)
	}
	for _, s := range back.Skipped {
		fmt.Fprintf(out, "left out %s: %s\n", s.File, s.Reason)
	}
}
