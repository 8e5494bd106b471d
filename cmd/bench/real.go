package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// realVariants are the changes the suites_real area repairs: drift alone,
// and drift with a regression (valid credentials refused).
var realVariants = []struct {
	name    string
	changes []demoapp.PracticeChange
	marks   func(suitetest.Marks) map[string]suitetest.Mark
}{
	{"drift", []demoapp.PracticeChange{demoapp.PracticeDrift}, func(m suitetest.Marks) map[string]suitetest.Mark { return m.Drift }},
	{"regressed", []demoapp.PracticeChange{demoapp.PracticeDrift, demoapp.PracticeRejectsLogin},
		func(m suitetest.Marks) map[string]suitetest.Mark { return m.Regressed }},
}

// realRow is one real-world project's figures, by mode.
type realRow struct {
	name                         string
	drift, healed, flagged, regr map[string]int
	wrong                        int
	patches, applied             int // repairs that healed drift; of those, patches that hold outside
	notes                        []string
	took                         time.Duration
}

// suitesRealBench repairs each project of the real-world corpus (suites
// written as public suites are, marked by hand) against the practice
// app's drift, and its drift with a regression, in every mode (warm,
// baseline, the customer's traces, the agent through the scripted model);
// every patch is applied with git apply and the patched project run
// outside webpilot, where it must fail exactly the tests marked
// regressions.
func suitesRealBench(ctx context.Context) error {
	var names []string
	for _, n := range suitetest.RealWorld() {
		if suitesProjects == "" || slices.Contains(strings.Split(suitesProjects, ","), n) {
			names = append(names, n)
		}
	}
	rows, err := eachProject("bench-real-", names, func(pr suite.ProjectRunner, name, work, runner, browsers string) (realRow, error) {
		start := time.Now()
		r, err := realProject(ctx, pr, name, work, runner, browsers)
		r.took = time.Since(start)
		fmt.Fprintf(os.Stderr, "suites_real: %s done in %s: drift %v of %v healed, flagged %v of %v, wrongly %d, patches %d of %d, err=%v\n",
			name, r.took.Round(time.Second), r.healed, r.drift, r.flagged, r.regr, r.wrong, r.applied, r.patches, err)
		return r, err
	})
	if err != nil {
		return err
	}
	fmt.Println("Real-world suites (public styles, practice app), red on arrival: drift healed, regressions flagged, patches that hold outside, by mode")
	fmt.Printf("  %-18s %-10s %13s %19s %8s\n", "project", "mode", "drift healed", "regressions flagged", "patches")
	total := realRow{drift: map[string]int{}, healed: map[string]int{}, flagged: map[string]int{}, regr: map[string]int{}}
	applied := 0
	for _, r := range rows {
		for _, m := range measuredModes() {
			fmt.Printf("  %-18s %-10s %13s %19s\n", r.name, m, fmt.Sprintf("%d/%d", r.healed[m], r.drift[m]), fmt.Sprintf("%d/%d", r.flagged[m], r.regr[m]))
			total.drift[m] += r.drift[m]
			total.healed[m] += r.healed[m]
			total.flagged[m] += r.flagged[m]
			total.regr[m] += r.regr[m]
		}
		fmt.Printf("  %-18s %-10s %13s %19s %8s\n", r.name, "patches", "", "", fmt.Sprintf("%d/%d", r.applied, r.patches))
		total.wrong += r.wrong
		if r.patches > 0 && r.applied == r.patches {
			applied++
		}
		for _, n := range r.notes {
			fmt.Printf("  note: %s: %s\n", r.name, n)
		}
	}
	healed, drift, flagged, regr := 0, 0, 0, 0
	for _, m := range measuredModes() {
		healed, drift, flagged, regr = healed+total.healed[m], drift+total.drift[m], flagged+total.flagged[m], regr+total.regr[m]
		fmt.Printf("  %-18s %-10s %13s %19s\n", "all", m, fmt.Sprintf("%d/%d", total.healed[m], total.drift[m]), fmt.Sprintf("%d/%d", total.flagged[m], total.regr[m]))
	}
	fmt.Printf("bench suites_real: projects=%d drift_healed=%d/%d regressions_flagged=%d/%d wrongly_healed=%d patches_applied=%d/%d\n\n",
		len(rows), healed, drift, flagged, regr, total.wrong, applied, len(rows))
	return nil
}

// realProject measures one real-world project in every mode, under each
// variant.
func realProject(ctx context.Context, pr suite.ProjectRunner, name, work, runner, browsers string) (realRow, error) {
	r := realRow{name: name, drift: map[string]int{}, healed: map[string]int{}, flagged: map[string]int{}, regr: map[string]int{}}
	app := demoapp.NewPractice()
	srv := httptest.NewServer(app)
	defer srv.Close()
	release := httptest.NewServer(demoapp.NewPractice())
	defer release.Close()
	tunnel, closeProxy, err := tunnelsTo(srv.URL, release.URL)
	if err != nil {
		return r, err
	}
	defer closeProxy()
	p, err := suitetest.RealWorldProject(name)
	if err != nil {
		return r, err
	}
	marks := suitetest.RealWorldMarks[name]
	listed, err := pr.Run(ctx, p, suite.RunOptions{List: true})
	_ = os.RemoveAll(listed.Dir)
	if err != nil {
		return r, fmt.Errorf("%s: list: %w", name, err)
	}
	in, err := recordRelease(ctx, pr, p, listed.Tests, release.URL, nil, map[string]string{"BASE_URL": release.URL}, nil, tunnel, work, runner, browsers, name)
	if err != nil {
		return r, err
	}
	defer in.model.Close()

	for _, v := range realVariants {
		app.Set(v.changes...)
		want := v.marks(marks)
		for _, mode := range measuredModes() {
			rep, err := in.repair(ctx, pr, p, mode, suite.RunOptions{BaseURL: srv.URL, Proxy: tunnel()}, release.URL, tunnel)
			if err != nil {
				return r, fmt.Errorf("%s %s repair under %s: %w", name, mode, v.name, err)
			}
			healedAny := false
			for _, t := range rep.Tests {
				title := t.Title
				if i := strings.LastIndex(title, " › "); i >= 0 {
					title = title[i+len(" › "):]
				}
				m := want[title]
				note := func(what string) {
					r.notes = append(r.notes, fmt.Sprintf("%s, %s: %s: %s %s: %s: %s", v.name, mode, what, t.File, t.Title, t.Verdict, firstLine(t.Reason)))
				}
				switch m {
				case suitetest.Drift:
					r.drift[mode]++
					if t.Verdict == orchestrator.VerdictHealed {
						r.healed[mode]++
						healedAny = true
					} else {
						note("not healed")
					}
				case suitetest.Regression:
					r.regr[mode]++
					if t.Verdict == orchestrator.VerdictRegression {
						r.flagged[mode]++
					} else {
						note("not flagged")
					}
					if t.Verdict == orchestrator.VerdictHealed {
						r.wrong++
					}
				default:
					if t.Verdict == orchestrator.VerdictHealed || t.Verdict == orchestrator.VerdictRegression {
						note("marked " + string(m))
					}
					if t.Verdict == orchestrator.VerdictHealed {
						r.wrong++
					}
				}
			}
			if !healedAny {
				continue
			}
			r.patches++
			if why := patchHolds(ctx, p, rep, srv.URL, want, work, runner, browsers); why != "" {
				r.notes = append(r.notes, fmt.Sprintf("%s, %s: the patch: %s", v.name, mode, why))
			} else {
				r.applied++
			}
		}
	}
	return r, nil
}

// patchHolds applies a repair's patch to the project as uploaded with git
// apply and runs the patched project outside webpilot against the changed
// app: it must fail exactly the tests marked regressions (a flaky test
// either way). It says what did not hold, or nothing.
func patchHolds(ctx context.Context, p suite.Project, rep suite.RepairReport, url string, want map[string]suitetest.Mark, work, runner, browsers string) string {
	if !rep.Verified || rep.Diff == "" {
		return "no verified patch"
	}
	dir, err := os.MkdirTemp(work, "patched-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(dir)
	if err := p.WriteTo(dir); err != nil {
		return err.Error()
	}
	diff := filepath.Join(dir, ".webpilot.patch")
	if err := os.WriteFile(diff, []byte(rep.Diff), 0o644); err != nil {
		return err.Error()
	}
	cmd := exec.CommandContext(ctx, "git", "apply", diff)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Sprintf("git apply: %v: %s", err, out)
	}
	_ = os.Remove(diff)
	files := map[string][]byte{}
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		return err.Error()
	}
	patched, err := suite.NewProject(files)
	if err != nil {
		return err.Error()
	}
	out, err := os.MkdirTemp(work, "outside-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(out)
	run, err := suitetest.Outside(ctx, patched, out, runner, browsers, map[string]string{"BASE_URL": url}, nil)
	if err != nil {
		return err.Error()
	}
	var wrong []string
	for _, t := range run.Tests {
		m := want[t.Titles[len(t.Titles)-1]]
		failed := t.Status == "failed" || t.Status == "skipped"
		if m != suitetest.Flaky && failed != (m == suitetest.Regression) {
			wrong = append(wrong, fmt.Sprintf("%s %s (marked %s)", t.Title(), t.Status, m))
		}
	}
	if len(wrong) > 0 {
		return "outside webpilot, " + strings.Join(wrong, "; ")
	}
	return ""
}
