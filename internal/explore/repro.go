package explore

import (
	"context"
	"fmt"
	"strings"

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

// Verify runs every finding's reproduction and the journey under the real
// runner. A reproduction is verified when it fails at its check. The
// shortest path is tried first (the state's shortest path and the action
// that showed the bug); when the bug does not show, everything done on
// the state since arriving, then the exploration's whole trace up to it.
// The journey must pass.
func Verify(ctx context.Context, run RunFunc, res *Result) error {
	pending := make([]int, 0, len(res.Findings))
	for i := range res.Findings {
		pending = append(pending, i)
	}
	for round, kind := range reproPaths {
		if len(pending) == 0 {
			break
		}
		var w specWriter
		var tried []int
		var paths [][]orchestrator.ManifestEntry
		for _, i := range pending {
			f := res.Findings[i]
			path := candidatePath(res, f, kind)
			if path == nil {
				continue
			}
			if w.b.Len() >= MaxReproSpec {
				if f.Reproduction == nil || f.Reproduction.Outcome == ReproNotRun {
					res.Findings[i].Reproduction = &Reproduction{Outcome: ReproNotRun, Path: kind,
						Detail: fmt.Sprintf("not run: the reproduction spec reached its cap of %d bytes", MaxReproSpec)}
				}
				continue
			}
			w.test(fmt.Sprintf("finding %d", f.Seq), res.StartURL, f, path, res.SecretNames)
			tried, paths = append(tried, i), append(paths, path)
		}
		if len(tried) == 0 {
			continue
		}
		spec := w.String()
		if round == 0 && res.Journey.Script != "" {
			spec += "\n" + strings.TrimPrefix(res.Journey.Script, "import { test, expect } from '@playwright/test';\n")
		}
		results, err := run(ctx, spec)
		if err != nil && len(results) == 0 {
			return fmt.Errorf("run reproductions: %w", err)
		}
		byTitle := map[string]specrun.TestResult{}
		for _, t := range results {
			byTitle[t.Title] = t
		}
		pending = pending[:0]
		for k, i := range tried {
			f := &res.Findings[i]
			t, ok := byTitle[fmt.Sprintf("finding %d reproduces", f.Seq)]
			spec, _ := reproSpec(res.StartURL, *f, paths[k], res.SecretNames)
			rep := &Reproduction{Spec: spec, Path: kind, Actions: len(paths[k])}
			switch {
			case !ok:
				rep.Outcome, rep.Detail = ReproNotRun, "the runner did not report the test"
			case t.Status == "passed":
				rep.Outcome, rep.Detail = ReproPasses, "the bug did not show when the path was replayed"
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
			if !rep.Verified {
				pending = append(pending, i)
			}
			f.Confidence = ConfidenceUnconfirmed
			if f.Reproduction.Verified {
				f.Confidence = ConfidenceConfirmed
			}
		}
		if round == 0 && res.Journey.Script != "" {
			t, ok := byTitle[res.Journey.Name]
			res.Journey.Verified = ok && t.Status == "passed"
			switch {
			case !ok:
				res.Journey.Detail = "the runner did not report the journey"
			case !res.Journey.Verified:
				res.Journey.Detail = fmt.Sprintf("line %d: %s", t.Line, clip(t.Error, 400))
			}
		}
	}
	return nil
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
