package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/sandbox"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// suitesBench measures customers' projects as written: the corpus's spec
// files accepted and listed, verdicts in the sandbox against the same
// project run outside webpilot with npx playwright test, drift healed by a
// verified patch to the file that defines the locator, regressions flagged
// and never healed, patches git apply takes, and the hostile project's
// probes of the sandbox.
func (e *env) suitesBench(ctx context.Context) error {
	runner := browsertest.RunnerDir()
	sb, err := sandbox.New(sandbox.Config{Runner: runner})
	if err != nil {
		return err
	}
	work, browsers, err := outsideWork("bench-suites-", runner)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	pr := suite.ProjectRunner{Sandbox: sb, Deps: &suite.Deps{Dir: suite.DefaultDepsDir()}}

	// Projects run side by side, each against its own app (variants are
	// per app) behind its own egress proxy.
	names := corpusNames()
	// The larger projects first: the area ends with its slowest project.
	size := func(name string) int {
		files, _ := suitetest.Files(name)
		n := 0
		for _, b := range files {
			n += len(b)
		}
		return n
	}
	slices.SortStableFunc(names, func(a, b string) int { return size(b) - size(a) })
	rows := make([]suitesRow, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, 3)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			rows[i], errs[i] = projectBench(ctx, pr, name, work, runner, browsers)
			rows[i].took = time.Since(start)
			// The table comes at the end; say on stderr how far it got, with
			// the project's figures, so a run cut short still tells them.
			r := rows[i]
			fmt.Fprintf(os.Stderr, "suites: %s done in %s: files=%d accepted=%d agree=%d drift_healed=%d/%d flagged=%d/%d wrongly=%d patches=%d/%d err=%v\n",
				name, r.took.Round(time.Second), r.files, r.accepted, r.agree, r.driftHealed, r.drift, r.flagged, r.regressed, r.wrong, r.applied, r.patches, errs[i])
			for _, n := range r.notes {
				fmt.Fprintf(os.Stderr, "suites:   %s: %s\n", name, n)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}

	fmt.Println("Customers' projects as written (the corpus, against the demo app; verdicts vs npx playwright test outside webpilot)")
	fmt.Printf("  %-12s %6s %9s %7s %13s %19s %7s %8s %8s\n", "project", "files", "accepted", "agree", "drift healed", "regressions flagged", "wrongly", "patches", "took")
	var total suitesRow
	for _, r := range rows {
		fmt.Printf("  %-12s %6d %9d %7d %13s %19s %7d %8s %8s\n", r.name, r.files, r.accepted, r.agree,
			fmt.Sprintf("%d/%d", r.driftHealed, r.drift), fmt.Sprintf("%d/%d", r.flagged, r.regressed), r.wrong,
			fmt.Sprintf("%d/%d", r.applied, r.patches), r.took.Round(time.Second))
		total.files += r.files
		total.accepted += r.accepted
		total.agree += r.agree
		total.driftHealed += r.driftHealed
		total.drift += r.drift
		total.flagged += r.flagged
		total.regressed += r.regressed
		total.wrong += r.wrong
		total.patches += r.patches
		total.applied += r.applied
	}
	for _, r := range rows {
		for _, n := range r.notes {
			fmt.Printf("  %s: %s\n", r.name, n)
		}
	}
	escapes, probes, err := hostileProbes(ctx, pr)
	if err != nil {
		return err
	}
	fmt.Printf("  sandbox: %d probes of the hostile project, %d got through\n", probes, escapes)
	fmt.Printf("bench suites: files=%d accepted=%d runner_agree=%d drift_healed=%d/%d regressions_flagged=%d/%d wrongly_healed=%d patches_apply=%d sandbox_escapes=%d\n\n",
		total.files, total.accepted, total.agree, total.driftHealed, total.drift, total.flagged, total.regressed, total.wrong, total.applied, escapes)
	return nil
}

// corpusNames are the corpus projects the suites areas measure (those of
// -suites-projects, or all), the hostile one apart.
func corpusNames() []string {
	var names []string
	for _, name := range suitetest.Projects() {
		if name != suitetest.Hostile && (suitesProjects == "" || slices.Contains(strings.Split(suitesProjects, ","), name)) {
			names = append(names, name)
		}
	}
	return names
}

// outsideWork makes a work directory for runs outside webpilot, with the
// browsers path npx playwright test finds Chromium at.
func outsideWork(prefix, runner string) (work, browsers string, err error) {
	if work, err = os.MkdirTemp("", prefix); err != nil {
		return "", "", err
	}
	browsers = filepath.Join(work, "browsers")
	if err := suitetest.BrowsersPath(browsers, runner); err != nil {
		_ = os.RemoveAll(work)
		return "", "", err
	}
	return work, browsers, nil
}

// suitesProjects limits the suites area to some corpus projects (the
// -suites-projects flag); all when empty.
var suitesProjects string

// suitesRow is one project's figures.
type suitesRow struct {
	name                                          string
	files, accepted, agree                        int
	driftHealed, drift, flagged, regressed, wrong int
	patches, applied                              int
	took                                          time.Duration
	notes                                         []string // what did not go as it should, for the reader
}

// projectBench measures one corpus project against an app of its own.
func projectBench(ctx context.Context, pr suite.ProjectRunner, name, work, runner, browsers string) (suitesRow, error) {
	r := suitesRow{name: name}
	app := demoapp.New(demoapp.Options{})
	srv := httptest.NewServer(app)
	defer srv.Close()
	proxy, err := netguard.NewProxy(netguard.New([]string{strings.TrimPrefix(srv.URL, "http://")}), nil)
	if err != nil {
		return r, err
	}
	defer proxy.Close()
	opts := func(env map[string]string) suite.RunOptions {
		tun := proxy.Open()
		return suite.RunOptions{BaseURL: srv.URL, Env: env,
			Proxy: &suite.Proxy{Addr: strings.TrimPrefix(proxy.Server(), "http://"), Username: tun.User, Password: tun.Password}}
	}
	secrets := map[string]string{"E2E_PASSWORD": demoapp.Password}
	files, err := suitetest.Files(name)
	if err != nil {
		return r, err
	}
	for f := range files {
		if suite.IsSpec(f) {
			r.files++
		}
	}
	p, err := suite.NewProject(files)
	if err != nil {
		r.notes = append(r.notes, "not accepted: "+err.Error())
		return r, nil
	}
	listed, err := pr.Run(ctx, p, suite.RunOptions{List: true})
	_ = os.RemoveAll(listed.Dir)
	if err != nil || len(listed.Errors) > 0 {
		r.notes = append(r.notes, fmt.Sprintf("does not list: %v %v", err, listed.Errors))
		return r, nil
	}
	specFiles := map[string]bool{}
	projects := map[string]bool{}
	for _, t := range listed.Tests {
		if suite.IsSpec(t.File) {
			specFiles[t.File] = true
		}
		projects[t.Project] = true
	}
	r.accepted = len(specFiles)

	// Verdicts: as written and under a regression, in the sandbox and
	// outside it; a file agrees when every test's verdict is the same.
	disagree := map[string]bool{}
	var prints map[string][]suite.TraceAction
	for _, variant := range [][]demoapp.Variation{nil, {demoapp.WrongCount}} {
		if err := app.SetVariant(variant...); err != nil {
			return r, err
		}
		in, err := pr.Run(ctx, p, withTrace(opts(secrets)))
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		if variant == nil {
			prints = map[string][]suite.TraceAction{}
			for i := range in.Tests {
				t := &in.Tests[i]
				if t.Evidence() == nil && t.Status == "passed" {
					prints[t.ID] = t.Actions
				}
				if t.Status == "failed" {
					r.notes = append(r.notes, fmt.Sprintf("fails as written: %s %s: %s", t.File, t.Title(), firstLine(t.Error)))
				}
			}
		}
		_ = os.RemoveAll(in.Dir)
		env := map[string]string{"BASE_URL": srv.URL, "APP_URL": srv.URL, "E2E_PASSWORD": demoapp.Password}
		dir, _ := os.MkdirTemp(work, name+"-")
		out, err := suitetest.Outside(ctx, p, dir, runner, browsers, env, keys(projects))
		if err != nil {
			return r, fmt.Errorf("%s outside: %w", name, err)
		}
		ref := map[string]suite.TestStatus{}
		for _, t := range out.Tests {
			ref[t.File+" "+t.Project+" "+t.Title()] = t.Status
		}
		seen := map[string]bool{}
		for _, t := range in.Tests {
			k := t.File + " " + t.Project + " " + t.Title()
			seen[k] = true
			if ref[k] != t.Status {
				disagree[t.File] = true
				r.notes = append(r.notes, fmt.Sprintf("disagrees under %v: %s: %q in the sandbox, %q outside", variant, k, t.Status, ref[k]))
			}
		}
		for k := range ref {
			if !seen[k] {
				disagree[strings.Fields(k)[0]] = true
				r.notes = append(r.notes, fmt.Sprintf("only outside under %v: %s", variant, k))
			}
		}
	}
	for f := range disagree {
		if specFiles[f] {
			r.agree--
		}
	}
	r.agree += r.accepted

	// Drift the repair must heal; regressions it must only report.
	for _, variant := range []struct {
		changes []demoapp.Variation
		drift   bool
	}{
		{[]demoapp.Variation{demoapp.RenamedIDs}, true},
		{[]demoapp.Variation{demoapp.Reworded}, true},
		{[]demoapp.Variation{demoapp.SlowAdd}, true},
		{[]demoapp.Variation{demoapp.Interstitial}, true},
		{[]demoapp.Variation{demoapp.ConfirmAdd}, true},
		{[]demoapp.Variation{demoapp.TipsGone}, true},
		{[]demoapp.Variation{demoapp.WrongCount}, false},
		{[]demoapp.Variation{demoapp.DeadAdd}, false},
	} {
		if err := app.SetVariant(variant.changes...); err != nil {
			return r, err
		}
		rep, err := pr.Repair(ctx, p, prints, opts(secrets))
		if err != nil {
			return r, fmt.Errorf("%s repair under %v: %w", name, variant.changes, err)
		}
		for _, t := range rep.Tests {
			if t.Verdict == orchestrator.VerdictPassed || t.Verdict == orchestrator.VerdictFlaky || prints[t.ID] == nil {
				continue // it passed, or it does not pass as written (skipped or failing): nothing to heal or flag
			}
			switch {
			case variant.drift:
				r.drift++
				if t.Verdict == orchestrator.VerdictHealed {
					r.driftHealed++
				} else {
					r.notes = append(r.notes, fmt.Sprintf("not healed under %v: %s %s: %s: %s", variant.changes, t.File, t.Title, t.Verdict, firstLine(t.Reason)))
				}
			default:
				r.regressed++
				if t.Verdict == orchestrator.VerdictRegression {
					r.flagged++
				} else {
					r.notes = append(r.notes, fmt.Sprintf("not flagged under %v: %s %s: %s: %s", variant.changes, t.File, t.Title, t.Verdict, firstLine(t.Reason)))
				}
				if t.Verdict == orchestrator.VerdictHealed {
					r.wrong++
				}
			}
		}
		if rep.Diff != "" {
			r.patches++
			if gitApplies(work, p, rep.Diff) {
				r.applied++
			} else {
				r.notes = append(r.notes, fmt.Sprintf("a patch git apply refuses under %v", variant.changes))
			}
		}
	}
	return r, nil
}

func withTrace(o suite.RunOptions) suite.RunOptions {
	o.Trace = true
	return o
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// gitApplies reports whether git apply takes diff on the project's files.
func gitApplies(work string, p suite.Project, diff string) bool {
	dir, err := os.MkdirTemp(work, "apply-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	if p.WriteTo(dir) != nil || os.WriteFile(filepath.Join(dir, ".patch"), []byte(diff), 0o644) != nil {
		return false
	}
	cmd := exec.Command("git", "apply", ".patch")
	cmd.Dir = dir
	return cmd.Run() == nil
}

// hostileProbes runs the hostile project — each test one way out of the
// sandbox — with a loopback service, a data directory and another run's
// files to reach for; a test that fails is an escape.
func hostileProbes(ctx context.Context, pr suite.ProjectRunner) (escapes, probes int, err error) {
	p, err := suitetest.Project(suitetest.Hostile)
	if err != nil {
		return 0, 0, err
	}
	canary, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	defer canary.Close()
	go func() {
		for {
			c, err := canary.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	data, err := os.MkdirTemp("", "bench-data-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(data)
	_ = os.Chmod(data, 0o755)
	secret := filepath.Join(data, "secret.key")
	other := filepath.Join(data, "other-run.spec.ts")
	_ = os.WriteFile(secret, []byte("sealing key"), 0o644)
	_ = os.WriteFile(other, []byte("another tenant's test"), 0o644)
	ports := []string{fmt.Sprint(canary.Addr().(*net.TCPAddr).Port), "4222", "5432", "55432"}
	env := map[string]string{"PROBE_SECRET_FILE": secret, "PROBE_OTHER_RUN": other, "PROBE_PORTS": strings.Join(ports, ",")}
	rep, err := pr.Run(ctx, p, suite.RunOptions{Env: env, Files: []string{"tests/probes.spec.js"}})
	_ = os.RemoveAll(rep.Dir)
	if err != nil {
		return 0, 0, err
	}
	for _, t := range rep.Tests {
		probes++
		if t.Status != "passed" {
			escapes++
			fmt.Printf("  sandbox probe got through: %s: %s\n", t.Title(), firstLine(t.Error))
		}
	}
	// The fork bomb may take its own run down with it: that is the limit
	// working; only a bomb that ran past it is an escape.
	bomb, err := pr.Run(ctx, p, suite.RunOptions{Env: env, Files: []string{"tests/fork.spec.js"}})
	_ = os.RemoveAll(bomb.Dir)
	probes++
	if err == nil && len(bomb.Tests) == 1 && bomb.Tests[0].Status != "passed" {
		escapes++
		fmt.Printf("  sandbox probe got through: a fork bomb: %s\n", firstLine(bomb.Tests[0].Error))
	}
	if probes == 0 {
		return 0, 0, fmt.Errorf("the hostile project ran no probe: %s", rep.Output)
	}
	return escapes, probes, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
