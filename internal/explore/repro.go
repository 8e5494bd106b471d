package explore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/specrun"
)

// reproBody writes the test body of a finding's reproduction: listeners
// for what the check watches, the path from the start URL, then the check,
// which holds on a correct app and fails while the bug is present. It
// returns the body's lines, the index of the check's line among them and
// the origin the spec's paths are relative to.
func reproBody(startURL string, f Finding, path []orchestrator.ManifestEntry, secretNames []string) (origin string, lines []string, check int) {
	q := orchestrator.JSString
	reason := q(fmt.Sprintf("finding %d: %s", f.Seq, f.Title))
	entries := path
	var last []orchestrator.ManifestEntry
	if f.Check.Kind == CheckEffect && len(path) > 0 {
		entries, last = path[:len(path)-1], path[len(path)-1:]
	}
	if f.Check.Kind == CheckVerify && f.Check.Verify != nil {
		last = []orchestrator.ManifestEntry{*f.Check.Verify}
	}
	sc := scenario.Scenario{BaseURL: startURL}
	origin, body := orchestrator.SpecBody(sc, []orchestrator.ManifestStep{{Step: 1, Goal: "reach the finding", Entries: entries}}, secretNames)
	var pre, post []string
	matcher := func() string {
		m := fmt.Sprintf("r.request().method() === %s && new RegExp(%s).test(new URL(r.url()).pathname)", q(f.Check.Method), q(f.Check.Path))
		if f.Check.Document {
			m += " && r.request().isNavigationRequest()"
		}
		return m
	}
	// What the action started must have answered before the check: the
	// page's load state says nothing of a fetch sent after the page loaded
	// (waiting for "networkidle" returns at once once it was reached).
	idle := []string{"await page.waitForTimeout(500); // a request the action sends a moment later",
		"await expect.poll(() => inflight.size, { timeout: 15000 }).toBe(0);"}
	if f.Check.Kind != CheckEffect && f.Check.Kind != CheckVerify {
		pre = append(pre, "const inflight = new Set<object>();",
			"page.on('request', rq => { if (['fetch', 'xhr'].includes(rq.resourceType())) inflight.add(rq); });",
			"page.on('requestfinished', rq => inflight.delete(rq));", "page.on('requestfailed', rq => inflight.delete(rq));")
	}
	switch f.Check.Kind {
	case CheckNoPageError:
		pre = append(pre, "const pageErrors: string[] = [];",
			"page.on('pageerror', e => pageErrors.push(`${e.name}: ${e.message}`));")
		post = append(post, idle...)
		post = append(post, fmt.Sprintf("expect(pageErrors.filter(m => m === %s || %s.endsWith(m) || m.endsWith(%s)), %s).toEqual([]);",
			q(f.Check.Text), q(f.Check.Text), q(strings.TrimPrefix(f.Check.Text, "Error: ")), reason))
	case CheckNoConsoleError:
		pre = append(pre, "const consoleErrors: string[] = [];",
			"page.on('console', m => { if (m.type() === 'error') consoleErrors.push(m.text()); });")
		post = append(post, idle...)
		post = append(post, fmt.Sprintf("expect(consoleErrors.filter(m => m === %s), %s).toEqual([]);", q(f.Check.Text), reason))
	case CheckNoBadResponse:
		pre = append(pre, "const failed: string[] = [];",
			fmt.Sprintf("page.on('response', r => { if (%s && r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });", matcher()),
			fmt.Sprintf("page.on('requestfailed', rq => { const r = { request: () => rq, url: () => rq.url() }; if (%s && !/ERR_ABORTED/.test(rq.failure()?.errorText ?? '')) failed.push(`failed ${rq.url()}`); });", matcher()))
		post = append(post, idle...)
		if !f.Check.Document && f.Check.Method == "GET" {
			// A stylesheet or script that answers 404 as text/plain is
			// refused before its response is reported (ERR_ABORTED): what
			// the page asked for is asked for again.
			pre = append(pre, "const asked = new Set<string>();",
				fmt.Sprintf("page.on('request', rq => { const r = { request: () => rq, url: () => rq.url() }; if (%s) asked.add(rq.url()); });", matcher()))
			post = append(post, "for (const u of asked) { const r = await page.request.get(u); if (r.status() >= 400 && !failed.some(f => f.endsWith(u))) failed.push(`${r.status()} ${u}`); }")
		}
		post = append(post, fmt.Sprintf("expect(failed, %s).toEqual([]);", reason))
	case CheckNoSlowResponse:
		pre = append(pre, "const started = new Map<object, number>();", "const slow: string[] = [];",
			"page.on('request', rq => started.set(rq, Date.now()));",
			fmt.Sprintf("page.on('response', r => { const ms = Date.now() - (started.get(r.request()) ?? Date.now()); if (%s && ms > %d) slow.push(`${ms} ms ${r.url()}`); });",
				matcher(), f.Check.MaxMS))
		post = append(post, idle...)
		post = append(post, fmt.Sprintf("expect(slow, %s).toEqual([]);", reason))
	case CheckEffect:
		pre = append(pre, "let effects = 0;", "page.on('request', () => effects++);",
			"page.on('dialog', d => { effects++; void d.dismiss(); });", "page.on('popup', () => effects++);")
	case CheckAxeRule:
		post = append(post, idle...)
		post = append(post, "await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });",
			fmt.Sprintf("const violations = await page.evaluate(async rule => ((await (window as any).axe.run(document, { runOnly: { type: 'rule', values: [rule] } })).violations as any[]).flatMap(v => v.nodes.map((n: any) => n.target.join(' '))), %s);", q(f.Check.Rule)),
			fmt.Sprintf("expect(violations, %s).toEqual([]);", reason))
	}
	lines = append(lines, pre...)
	lines = append(lines, body...)
	if len(last) > 0 {
		_, tail := orchestrator.SpecBody(sc, []orchestrator.ManifestStep{{Step: 2, Goal: "the finding", Entries: last}}, secretNames)
		tail = tail[1:] // its own page.goto
		if f.Check.Kind == CheckEffect {
			lines = append(lines, "await page.waitForLoadState('networkidle');", "effects = 0; // what the path itself did does not count",
				"await page.evaluate(() => { (window as any).__effects = 0; new MutationObserver(() => (window as any).__effects++).observe(document, { subtree: true, childList: true, attributes: true, characterData: true }); });",
				"const urlBefore = page.url();")
			lines = append(lines, tail...)
			lines = append(lines, "await page.waitForLoadState('networkidle');", "await page.waitForTimeout(700); // an effect behind a short timer",
				"if (page.url() !== urlBefore) effects++; else effects += await page.evaluate(() => (window as any).__effects ?? 1);")
			post = append(post, fmt.Sprintf("expect(effects, %s).toBeGreaterThan(0);", reason))
		} else {
			lines = append(lines, tail...)
			return origin, lines, len(lines) - 1
		}
	}
	lines = append(lines, post...)
	return origin, lines, len(lines) - 1
}

// reproSpec is a finding's reproduction as a spec file of its own, and
// the line (1-based) of its check.
func reproSpec(startURL string, f Finding, path []orchestrator.ManifestEntry, secretNames []string) (string, int) {
	var w specWriter
	w.test(fmt.Sprintf("finding %d: %s", f.Seq, f.Title), startURL, f, path, secretNames)
	return w.String(), w.checks[0]
}

// specWriter writes several tests into one spec file, keeping the line of
// each test's check, so one runner process verifies them all.
type specWriter struct {
	b      strings.Builder
	lines  int
	checks []int
	// expectFail declares each test expected to fail (test.fail()), for
	// a run that verifies reproductions: the runner reports each test's
	// actual status and error line as before, but a failure it expected
	// keeps its worker and browser. An unexpected one makes it start
	// both again, about 3 s of CPU for every reproduction that fails as
	// it should.
	expectFail bool
}

func (w *specWriter) line(s string) {
	if w.lines == 0 {
		w.b.WriteString("import { test, expect } from '@playwright/test';\n\n")
		w.lines = 2
	}
	w.b.WriteString(s + "\n")
	w.lines++
}

func (w *specWriter) test(title, startURL string, f Finding, path []orchestrator.ManifestEntry, secretNames []string) {
	origin, body, check := reproBody(startURL, f, path, secretNames)
	w.line(fmt.Sprintf("test.describe(%s, () => {", orchestrator.JSString(title)))
	w.line(fmt.Sprintf("  test.use({ baseURL: %s });", orchestrator.JSString(origin)))
	w.line("  test('reproduces', async ({ page }) => {")
	w.line(fmt.Sprintf("    test.setTimeout(%d);", ReproTestTimeout.Milliseconds()))
	if w.expectFail {
		w.line("    test.fail(); // verified when it fails at its check")
	}
	for i, l := range body {
		w.line("    " + l)
		if i == check {
			w.checks = append(w.checks, w.lines)
		}
	}
	w.line("  });")
	w.line("});")
}

func (w *specWriter) String() string { return w.b.String() }

// RunFunc runs a spec under @playwright/test and reports each test.
type RunFunc func(ctx context.Context, spec string) ([]specrun.TestResult, error)

// Paths a reproduction may replay, shortest first.
var reproPaths = []string{"shortest", "visit", "trace"}

// candidatePath is a finding's path of the given kind, or nil when it is
// no different from the one tried before it.
func candidatePath(res *Result, f Finding, kind string) []orchestrator.ManifestEntry {
	switch kind {
	case "shortest":
		if f.Base+f.Trigger >= len(f.Path) {
			return f.Path
		}
		return append(append([]orchestrator.ManifestEntry{}, f.Path[:f.Base]...), f.Path[len(f.Path)-f.Trigger:]...)
	case "visit":
		if f.Base+f.Trigger >= len(f.Path) {
			return nil
		}
		return f.Path
	}
	return fullPath(res, f)
}

// MaxReproSpec bounds the spec of reproductions run at once; findings past
// it are left not run, and each says why.
const MaxReproSpec = 1 << 20

// Verification is tuned by these: how many reproductions one runner
// process verifies, the deadline of each, and how often a reproduction
// that did not show its bug is replayed again before it is called
// unconfirmed (a bug that shows some of the time is intermittent).
const (
	ReproBatch       = 8
	ReproTestTimeout = 45 * time.Second
	RecheckRuns      = 4
)

// Verify runs every finding's reproduction and the journey under the real
// runner. A reproduction is verified when it fails at its check. The
// shortest path is tried first (the state's shortest path and the action
// that showed the bug); when the bug does not show, everything done on
// the state since arriving, then the exploration's whole trace up to it.
// Reproductions run in batches of ReproBatch, each test under its own
// deadline; a batch whose runner fails as a whole is run again one
// reproduction at a time, so one slow or broken finding takes only
// itself down, and a finding left unverified says why. One whose bug did
// not show is replayed RecheckRuns more times: a bug that shows on some
// of them is intermittent, at the rate observed. The journey must pass.
// Only a cancelled context is an error.
func Verify(ctx context.Context, run RunFunc, res *Result) error {
	pending := make([]int, 0, len(res.Findings))
	for i := range res.Findings {
		pending = append(pending, i)
	}
	for _, kind := range reproPaths {
		var next []int
		for start := 0; start < len(pending); start += ReproBatch {
			batch := pending[start:min(start+ReproBatch, len(pending))]
			left, err := verifyBatch(ctx, run, res, batch, kind, true)
			if err != nil {
				return err
			}
			next = append(next, left...)
		}
		pending = next
	}
	if err := recheck(ctx, run, res); err != nil {
		return err
	}
	verifyJourney(ctx, run, res)
	res.Verification = verificationSummary(res)
	return ctx.Err()
}

// verifyBatch runs the reproductions of findings (indexes into
// res.Findings) along paths of the kind in one runner process, and
// returns those still not verified.
func verifyBatch(ctx context.Context, run RunFunc, res *Result, batch []int, kind string, split bool) ([]int, error) {
	w := specWriter{expectFail: true}
	var tried []int
	var paths [][]orchestrator.ManifestEntry
	var left []int
	for _, i := range batch {
		f := res.Findings[i]
		path := candidatePath(res, f, kind)
		if path == nil {
			left = append(left, i)
			continue
		}
		if w.b.Len() >= MaxReproSpec {
			if f.Reproduction == nil || f.Reproduction.Outcome == ReproNotRun {
				res.Findings[i].Reproduction = &Reproduction{Outcome: ReproNotRun, Path: kind,
					Detail: fmt.Sprintf("not run: the reproduction spec reached its cap of %d bytes", MaxReproSpec)}
			}
			left = append(left, i)
			continue
		}
		w.test(fmt.Sprintf("finding %d", f.Seq), res.StartURL, f, path, res.SecretNames)
		tried, paths = append(tried, i), append(paths, path)
	}
	if len(tried) == 0 {
		return left, nil
	}
	results, err := run(ctx, w.String())
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil && len(results) == 0 {
		if split && len(tried) > 1 {
			// One of them may have brought the whole process down.
			for _, i := range tried {
				l, err := verifyBatch(ctx, run, res, []int{i}, kind, false)
				if err != nil {
					return nil, err
				}
				left = append(left, l...)
			}
			return left, nil
		}
		for k, i := range tried {
			f := &res.Findings[i]
			if f.Reproduction == nil || !f.Reproduction.Verified && f.Reproduction.Outcome == ReproNotRun {
				spec, _ := reproSpec(res.StartURL, *f, paths[k], res.SecretNames)
				f.Reproduction = &Reproduction{Spec: spec, Path: kind, Actions: len(paths[k]), Outcome: ReproNotRun,
					Detail: "not run: the runner failed: " + clip(err.Error(), 400)}
			}
			f.Confidence = ConfidenceUnconfirmed
		}
		return append(left, tried...), nil
	}
	byTitle := resultsByTitle(results)
	for k, i := range tried {
		f := &res.Findings[i]
		t, ok := byTitle[fmt.Sprintf("finding %d reproduces", f.Seq)]
		spec, line := reproSpec(res.StartURL, *f, paths[k], res.SecretNames)
		rep := &Reproduction{Spec: spec, Path: kind, Actions: len(paths[k]), CheckLine: line}
		switch {
		case !ok:
			rep.Outcome, rep.Detail = ReproNotRun, "the runner did not report the test"
		case t.Status == "passed":
			rep.Outcome, rep.Detail = ReproPasses, "the bug did not show when the path was replayed"
		case t.Status == "timedOut":
			rep.Outcome, rep.Detail = ReproFailsElsewhere, fmt.Sprintf("timed out after %s: %s", ReproTestTimeout, clip(t.Error, 300))
		case t.Line == w.checks[k]:
			rep.Outcome, rep.Verified, rep.Detail = ReproFails, true, clip(t.Error, 400)
		default:
			rep.Outcome, rep.Detail = ReproFailsElsewhere, fmt.Sprintf("line %d: %s", t.Line, clip(t.Error, 400))
		}
		switch {
		case rep.Verified || f.Reproduction == nil || !f.Reproduction.Verified && f.Reproduction.Outcome == ReproNotRun:
			f.Reproduction = rep
		default:
			f.Reproduction.Detail += fmt.Sprintf("; replaying the %s path: %s", kind, rep.Outcome)
		}
		f.Confidence = ConfidenceUnconfirmed
		if f.Reproduction.Verified {
			f.Confidence = ConfidenceConfirmed
		} else {
			left = append(left, i)
		}
	}
	return left, nil
}

// recheck replays, RecheckRuns times each, the reproductions whose bug
// did not show: one that fails at its check some of the time is an
// intermittent finding, with the rate observed.
func recheck(ctx context.Context, run RunFunc, res *Result) error {
	var w specWriter
	var idx []int
	var checks [][]int
	for i, f := range res.Findings {
		rep := f.Reproduction
		if rep == nil || rep.Verified || rep.Outcome != ReproPasses && !strings.Contains(rep.Detail, ReproPasses) {
			continue
		}
		path := candidatePath(res, f, "shortest")
		var lines []int
		for n := 1; n <= RecheckRuns; n++ {
			w.test(fmt.Sprintf("finding %d again %d", f.Seq, n), res.StartURL, f, path, res.SecretNames)
			lines = append(lines, w.checks[len(w.checks)-1])
		}
		idx, checks = append(idx, i), append(checks, lines)
	}
	if len(idx) == 0 {
		return nil
	}
	results, err := run(ctx, w.String())
	if ctx.Err() != nil {
		return ctx.Err()
	}
	byTitle := resultsByTitle(results)
	for k, i := range idx {
		f := &res.Findings[i]
		shown, ran := 0, 0
		for n := 1; n <= RecheckRuns; n++ {
			t, ok := byTitle[fmt.Sprintf("finding %d again %d reproduces", f.Seq, n)]
			if !ok {
				continue
			}
			ran++
			if t.Status != "passed" && t.Line == checks[k][n-1] {
				shown++
			}
		}
		switch {
		case err != nil && ran == 0:
			f.Reproduction.Detail += "; replayed again: the runner failed: " + clip(err.Error(), 200)
		case shown > 0:
			f.Confidence = ConfidenceIntermittent
			f.Reproduction.Rate = fmt.Sprintf("%d/%d", shown, ran+1)
			f.Reproduction.Detail += fmt.Sprintf("; replayed %d more times, the bug showed %d times: intermittent", ran, shown)
		default:
			f.Reproduction.Detail += fmt.Sprintf("; replayed %d more times, the bug never showed", ran)
		}
	}
	return nil
}

// verifyJourney runs the journey spec in a process of its own.
func verifyJourney(ctx context.Context, run RunFunc, res *Result) {
	if res.Journey.Script == "" {
		return
	}
	results, err := run(ctx, res.Journey.Script)
	byTitle := resultsByTitle(results)
	t, ok := byTitle[res.Journey.Name]
	res.Journey.Verified = ok && t.Status == "passed"
	switch {
	case !ok && err != nil:
		res.Journey.Detail = "not run: the runner failed: " + clip(err.Error(), 400)
	case !ok:
		res.Journey.Detail = "the runner did not report the journey"
	case !res.Journey.Verified:
		res.Journey.Detail = fmt.Sprintf("line %d: %s", t.Line, clip(t.Error, 400))
	}
}

// verificationSummary says how many reproductions were verified and,
// when some were not, how many for which reason.
func verificationSummary(res *Result) string {
	verified, why := 0, map[string]int{}
	for _, f := range res.Findings {
		switch {
		case f.Reproduction != nil && f.Reproduction.Verified:
			verified++
		case f.Confidence == ConfidenceIntermittent:
			why["intermittent"]++
		case f.Reproduction == nil:
			why[ReproNotRun]++
		default:
			why[f.Reproduction.Outcome]++
		}
	}
	s := fmt.Sprintf("%d of %d reproductions verified", verified, len(res.Findings))
	for _, k := range slices.Sorted(maps.Keys(why)) {
		s += fmt.Sprintf("; %d %s", why[k], k)
	}
	return s
}

// fullPath is the exploration's trace up to the finding (and the tail its
// path adds), or nil when that is no longer than its path.
func fullPath(res *Result, f Finding) []orchestrator.ManifestEntry {
	if f.Trace > len(res.Trace) {
		return nil
	}
	full := append(append([]orchestrator.ManifestEntry{}, res.Prefix...), res.Trace[:f.Trace]...)
	if f.Tail > 0 && f.Tail <= len(f.Path) {
		full = append(full, f.Path[len(f.Path)-f.Tail:]...)
	}
	if len(full) <= len(f.Path) {
		return nil
	}
	return full
}

// resultsByTitle indexes a run's test results by their titles.
func resultsByTitle(results []specrun.TestResult) map[string]specrun.TestResult {
	out := make(map[string]specrun.TestResult, len(results))
	for _, t := range results {
		out[t.Title] = t
	}
	return out
}
