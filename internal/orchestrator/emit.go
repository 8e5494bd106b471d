package orchestrator

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/scenario"
)

// emitSpec assembles the @playwright/test file from the steps' lines.
func emitSpec(sc scenario.Scenario, steps []StepReport) string {
	var b strings.Builder
	origin, body := specBody(sc, steps)
	if d := sc.Options.Device; d != "" {
		// The device's descriptor, as the job emulated it, in the browser
		// the job ran (a phone's descriptor may name WebKit).
		b.WriteString("import { test, expect, devices } from '@playwright/test';\n\n")
		fmt.Fprintf(&b, "test.use({ ...devices[%s], defaultBrowserType: 'chromium', baseURL: %s });\n\n", jsString(d), jsString(origin))
	} else {
		b.WriteString("import { test, expect } from '@playwright/test';\n\n")
		fmt.Fprintf(&b, "test.use({ baseURL: %s });\n\n", jsString(origin))
	}
	name := sc.Name
	if name == "" {
		name = "scenario"
	}
	fmt.Fprintf(&b, "test(%s, async ({ page }) => {\n", jsString(name))
	for _, l := range body {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("});\n")
	return b.String()
}

// specBody is a spec's test body, a line each, and the origin the spec's
// paths are relative to.
func specBody(sc scenario.Scenario, steps []StepReport) (string, []string) {
	var lines []string
	origin, start := sc.BaseURL, "/"
	if u, err := url.Parse(sc.BaseURL); err == nil && u.Host != "" {
		origin = u.Scheme + "://" + u.Host
		start = u.RequestURI()
	}
	if usesDialogs(steps) {
		lines = append(lines, "let lastDialog = ''; // the message of the latest dialog, answered where it opens")
	}
	lines = append(lines, fmt.Sprintf("await page.goto(%s);", jsString(start)))
	for _, s := range steps {
		lines = append(lines, fmt.Sprintf("// step %d: %s", s.Index+1, oneLine(s.Goal)))
		if s.Status == StepFailed {
			lines = append(lines, fmt.Sprintf("// step %d failed during generation: %s", s.Index+1, oneLine(s.Error)))
		}
		lines = append(lines, s.Lines...)
	}
	return origin, lines
}

func usesDialogs(steps []StepReport) bool {
	for _, s := range steps {
		for _, c := range s.Commands {
			if c.OK && (len(c.Dialogs) > 0 || c.Command.Assert == browser.AssertDialogContains) {
				return true
			}
		}
	}
	return false
}

// specWriter writes the spec lines of a run's step reports: values as
// TypeScript (secrets read from the environment, extracted values from the
// variables the spec declares), the job's files inline, and paths relative
// to the scenario's origin.
type specWriter struct {
	sc       scenario.Scenario
	secrets  *secrets
	vars     map[string]string // test data and extracted values, shared with the run
	files    []browser.File
	declared map[string]bool // extracted names the spec has declared
}

func newSpecWriter(sc scenario.Scenario, sec *secrets, vars map[string]string, files []browser.File) *specWriter {
	return &specWriter{sc: sc, secrets: sec, vars: vars, files: files, declared: map[string]bool{}}
}

func (w *specWriter) expand(s string) string { return expandVars(w.vars, s) }

// stepLines writes a spec line for each successful command of a step, and
// declares the variables the step extracted.
func (w *specWriter) stepLines(rep StepReport) []string {
	var lines []string
	for _, c := range rep.Commands {
		if !c.OK {
			continue
		}
		lines = append(lines, dialogLines(c)...)
		for _, n := range c.Opened {
			lines = append(lines, fmt.Sprintf("const %sPromise = %s.waitForEvent('popup');", pageVar(n), pageVar(c.Page)))
		}
		if l := w.commandLine(c); l != "" {
			lines = append(lines, l)
		}
		for _, n := range c.Opened {
			lines = append(lines, fmt.Sprintf("const %s = await %sPromise;", pageVar(n), pageVar(n)),
				fmt.Sprintf("await %s.waitForLoadState();", pageVar(n)))
		}
	}
	if rep.SaveAs != "" && len(rep.Result) > 0 && rep.Status != StepFailed {
		lines = append(lines, "// extracted by the agent when the test was generated:",
			fmt.Sprintf("%s = %s;", w.declare(rep.SaveAs), string(rep.Result)))
	}
	return lines
}

// declare returns the left side that assigns the spec variable of an
// extracted name: "let name" the first time, "name" afterwards.
func (w *specWriter) declare(name string) string {
	id := jsIdent(name)
	if w.declared[name] {
		return id
	}
	w.declared[name] = true
	return "let " + id
}

var reservedIdents = map[string]bool{"page": true, "test": true, "expect": true, "await": true, "const": true,
	"let": true, "var": true, "function": true, "return": true, "new": true, "this": true, "class": true,
	"default": true, "delete": true, "in": true, "of": true, "if": true, "else": true, "for": true, "while": true}

func jsIdent(name string) string {
	if reservedIdents[name] {
		return name + "_"
	}
	return name
}

// jsPath writes name.field.field with the root as its spec identifier.
func jsPath(name string) string {
	root, rest, ok := strings.Cut(name, ".")
	if !ok {
		return jsIdent(root)
	}
	return jsIdent(root) + "." + rest
}

// recall marks the variables earlier steps declared (on resume).
func (w *specWriter) recall(steps []StepReport) {
	for _, s := range steps {
		for _, c := range s.Commands {
			if c.OK && c.Command.Action == actionRead {
				w.declared[c.Command.Value] = true
			}
		}
		if s.SaveAs != "" && s.Status != StepFailed {
			w.declared[s.SaveAs] = true
		}
	}
}

func (w *specWriter) commandLine(cr CommandReport) string {
	c := cr.Command
	pv := pageVar(cr.Page)
	loc := onPage(cr.Locator, pv)
	v := w.valueCode(c.Value)
	to := timeoutOption(cr)
	switch c.Action {
	case actionRead:
		if loc == "" {
			return ""
		}
		left := w.declare(c.Value)
		switch {
		case strings.HasPrefix(string(c.Assert), string(readAttribute)):
			return fmt.Sprintf("%s = (await %s.getAttribute(%s)) ?? '';", left, loc, jsString(strings.TrimPrefix(string(c.Assert), string(readAttribute))))
		case c.Assert == readValue:
			return fmt.Sprintf("%s = await %s.inputValue();", left, loc)
		}
		return fmt.Sprintf("%s = (await %s.innerText()).trim();", left, loc)
	case browser.ActionNavigate:
		return fmt.Sprintf("await %s.goto(%s);", pv, jsString(specPath(w.sc.BaseURL, w.expand(c.Value))))
	case browser.ActionBack:
		return fmt.Sprintf("await %s.goBack();", pv)
	case browser.ActionForward:
		return fmt.Sprintf("await %s.goForward();", pv)
	case browser.ActionReload:
		return fmt.Sprintf("await %s.reload();", pv)
	case browser.ActionDialog:
		return "" // the spec answers each dialog where it opens (see dialogLines)
	case browser.ActionSwitchPage:
		return fmt.Sprintf("await %s.bringToFront();", pageVar(atoi(c.Value)))
	case browser.ActionClosePage:
		n := cr.Page
		if c.Value != "" {
			n = atoi(c.Value)
		}
		return fmt.Sprintf("await %s.close();", pageVar(n))
	case browser.ActionPress:
		if loc == "" {
			return fmt.Sprintf("await %s.keyboard.press(%s);", pv, v)
		}
		return fmt.Sprintf("await %s.press(%s);", loc, args(v, to))
	case browser.ActionWait:
		if loc != "" {
			return fmt.Sprintf("await %s.waitFor(%s);", loc, to)
		}
		return fmt.Sprintf("await %s.waitForTimeout(%s);", pv, strings.TrimSuffix(c.Value, "ms"))
	case browser.ActionScroll:
		if loc != "" {
			return fmt.Sprintf("await %s.scrollIntoViewIfNeeded();", loc)
		}
		dy := 600
		if strings.EqualFold(c.Value, "up") {
			dy = -600
		}
		return fmt.Sprintf("await %s.mouse.wheel(0, %d);", pv, dy)
	}
	if c.Target.IsCoordinate() {
		// Coordinates are relative to the 1280x800 viewport the job ran in.
		x, y := *c.Target.X/100*1280, *c.Target.Y/100*800
		switch c.Action {
		case browser.ActionDblClick:
			return fmt.Sprintf("await %s.mouse.dblclick(%.0f, %.0f);", pv, x, y)
		case browser.ActionHover:
			return fmt.Sprintf("await %s.mouse.move(%.0f, %.0f);", pv, x, y)
		}
		return fmt.Sprintf("await %s.mouse.click(%.0f, %.0f);", pv, x, y)
	}
	if c.Action == browser.ActionVerify && c.Assert == browser.AssertDialogContains {
		return assertionLine(c, loc, v, cr.Via, to)
	}
	if loc == "" {
		// The batch fails such a command; this only marks what a resumed report holds.
		return fmt.Sprintf("// %s %s: no stable locator could be written", c.Describe(), c.Target)
	}
	switch c.Action {
	case browser.ActionClick, browser.ActionDblClick, browser.ActionTap, browser.ActionHover, browser.ActionCheck, browser.ActionUncheck, browser.ActionFocus, browser.ActionBlur:
		return fmt.Sprintf("await %s.%s(%s);", loc, c.Action, to)
	case browser.ActionRightClick:
		return fmt.Sprintf("await %s.click(%s);", loc, options("button: 'right'", to))
	case browser.ActionFill:
		if cr.Via == "range" {
			return fmt.Sprintf("await %s.evaluate(%s, %s);", loc, browser.RangeSetter, v)
		}
		if cr.Via == "editor-document" {
			return fmt.Sprintf("await %s.click(); await %s.fill(%s);", loc, loc, args(v, to))
		}
		return fmt.Sprintf("await %s.fill(%s);", loc, args(v, to))
	case browser.ActionType:
		return fmt.Sprintf("await %s.pressSequentially(%s);", loc, args(v, to))
	case browser.ActionSelect:
		return fmt.Sprintf("await %s.selectOption(%s);", loc, args(v, to))
	case browser.ActionUpload:
		files := w.filesCode(c.Value)
		if cr.Via == "file-chooser" {
			return fmt.Sprintf("{ const chooser = %s.waitForEvent('filechooser'); await %s.click(); await (await chooser).setFiles(%s); }", pv, loc, files)
		}
		return fmt.Sprintf("await %s.setInputFiles(%s);", loc, files)
	case browser.ActionVerify:
		return assertionLine(c, loc, v, cr.Via, to)
	}
	return fmt.Sprintf("// %s is not expressible in the spec", c.Describe())
}

// pageVar is the spec variable of page n: page for the first, page2 for
// the first popup, and so on.
func pageVar(n int) string {
	if n <= 1 {
		return "page"
	}
	return fmt.Sprintf("page%d", n)
}

// onPage moves a locator written for the first page onto page variable pv.
func onPage(loc, pv string) string {
	if pv == "page" || (loc != "page" && !strings.HasPrefix(loc, "page.")) {
		return loc
	}
	return pv + strings.TrimPrefix(loc, "page")
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

// timeoutOption gives a spec line the time its command needed when the
// job was generated, with margin, when that is more than the runner's 5 s
// default could safely cover ("" otherwise).
func timeoutOption(cr CommandReport) string {
	t := specTimeout(cr)
	if t == 0 {
		return ""
	}
	return fmt.Sprintf("{ timeout: %d }", t.Milliseconds())
}

// specTimeout is the timeout a spec line gets for its command: twice what
// it needed at generation plus 5 s, whole seconds, when it needed more
// than 3 s; 0 (the runner's default) otherwise. Replay gives the command
// the same time.
func specTimeout(cr CommandReport) time.Duration {
	if cr.Waited <= 3*time.Second {
		return 0
	}
	ms := (2*cr.Waited + 5*time.Second).Milliseconds()
	return time.Duration((ms+999)/1000*1000) * time.Millisecond
}

// args joins call arguments, leaving out empty ones.
func args(list ...string) string {
	var out []string
	for _, a := range list {
		if a != "" {
			out = append(out, a)
		}
	}
	return strings.Join(out, ", ")
}

// options merges option objects: "button: 'right'" and "{ timeout: 9000 }".
func options(field, opt string) string {
	if opt == "" {
		return "{ " + field + " }"
	}
	return "{ " + field + ", " + strings.TrimPrefix(opt, "{ ")
}

// filesCode writes the job's named files as setFiles payloads, with their
// content, so the spec needs nothing from disk.
func (w *specWriter) filesCode(names string) string {
	var parts []string
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		for _, f := range w.files {
			if f.Name == n {
				mime := f.MimeType
				if mime == "" {
					mime = "application/octet-stream"
				}
				parts = append(parts, fmt.Sprintf("{ name: %s, mimeType: %s, buffer: Buffer.from(%s, 'base64') }",
					jsString(f.Name), jsString(mime), jsString(base64.StdEncoding.EncodeToString(f.Content))))
			}
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// dialogLines answers, before a command, the dialogs it opened the way the
// job answered them, recording each message for dialog checks. Dialogs are
// answered one at a time, each handler installing the next.
func dialogLines(cr CommandReport) []string {
	if len(cr.Dialogs) == 0 {
		return nil
	}
	var handler func(i int) string
	handler = func(i int) string {
		d := cr.Dialogs[i]
		answer := "dialog.dismiss()"
		if d.Answer == "accept" {
			answer = "dialog.accept()"
			if d.Type == "prompt" {
				answer = fmt.Sprintf("dialog.accept(%s)", jsString(d.PromptText))
			}
		}
		target := pageVar(d.Page)
		if d.Page == 0 {
			target = pageVar(cr.Page) + ".context()"
		}
		next := ""
		if i+1 < len(cr.Dialogs) {
			next = " " + handler(i+1)
		}
		return fmt.Sprintf("%s.once('dialog', dialog => { lastDialog = dialog.message();%s return %s; });", target, next, answer)
	}
	return []string{handler(0)}
}

func assertionLine(c browser.Command, loc, v, via, to string) string {
	if m, ok := MatcherOf(c.Assert); ok {
		not, arg := "", to
		if m.Not {
			not = ".not"
		}
		switch m.Arg {
		case ArgText:
			arg = args(v, to)
		case ArgCount:
			arg = args(c.Value, to)
		}
		return fmt.Sprintf("await expect(%s)%s.%s(%s);", loc, not, m.Name, arg)
	}
	switch c.Assert {
	case browser.AssertUrlContains:
		return fmt.Sprintf("await expect(%s).toHaveURL(%s);", loc, args(fmt.Sprintf("/%s/", jsRegex(c.Value)), to))
	case browser.AssertUrlEquals:
		return fmt.Sprintf("await expect(%s).toHaveURL(%s);", loc, args(v, to))
	case browser.AssertTitleContains:
		return fmt.Sprintf("await expect(%s).toHaveTitle(%s);", loc, args(fmt.Sprintf("/%s/", jsRegex(c.Value)), to))
	case browser.AssertTitleEquals:
		return fmt.Sprintf("await expect(%s).toHaveTitle(%s);", loc, args(v, to))
	case browser.AssertDialogContains:
		return fmt.Sprintf("await expect.poll(() => lastDialog%s).toContain(%s);", prefixComma(to), v)
	case browser.AssertValueEmpty:
		return fmt.Sprintf("await expect(%s).toHaveValue(%s);", loc, args("''", to))
	case browser.AssertSelectedLabel:
		return fmt.Sprintf("await expect(%s.locator('option:checked')).toHaveText(%s);", loc, args(v, to))
	case browser.AssertCountGreaterThan:
		return fmt.Sprintf("await expect.poll(() => %s.count()%s).toBeGreaterThan(%s);", loc, prefixComma(to), c.Value)
	case browser.AssertCountLessThan:
		return fmt.Sprintf("await expect.poll(() => %s.count()%s).toBeLessThan(%s);", loc, prefixComma(to), c.Value)
	case browser.AssertHasClass:
		return fmt.Sprintf("await expect(%s).toHaveClass(%s);", loc, args(fmt.Sprintf("/(^|\\s)%s(\\s|$)/", jsRegex(c.Value)), to))
	case browser.AssertHasAttribute:
		name, val, ok := strings.Cut(c.Value, "=")
		if !ok {
			return fmt.Sprintf("await expect(%s).toHaveAttribute(%s);", loc, args(jsString(name), to))
		}
		return fmt.Sprintf("await expect(%s).toHaveAttribute(%s);", loc, args(jsString(name), jsString(val), to))
	case browser.AssertSortedAscending, browser.AssertSortedDescending:
		kind, itemRole, _ := strings.Cut(via, " ")
		cmp, ok := browser.SortComparators[kind]
		if !ok {
			return ""
		}
		items := loc
		if itemRole != "" {
			items += fmt.Sprintf(".getByRole(%s)", jsString(itemRole))
		}
		sorted := "[...values].sort(cmp)"
		if c.Assert == browser.AssertSortedDescending {
			sorted = "[...values].sort((a, b) => cmp(b, a))"
		}
		if to == "" {
			to = "{ timeout: 5000 }"
		}
		return fmt.Sprintf("await expect(async () => { const cmp = %s; const values = (await %s.allTextContents()).map(s => s.trim()); expect(values.length).toBeGreaterThan(1); expect(values).toEqual(%s); }).toPass(%s);",
			cmp, items, sorted, to)
	}
	return ""
}

func prefixComma(opt string) string {
	if opt == "" {
		return ""
	}
	return ", " + opt
}

// locatorCode is the spec's locator for a command's target: the robust one
// found when the element was fingerprinted, else the target as given (never
// a ref, which means nothing outside the run).
func locatorCode(c browser.Command, fp *browser.Fingerprint) string {
	if c.IsPageCheck() && c.Assert != browser.AssertDialogContains {
		return "page"
	}
	// Counts and absence are about the target as named, not one element
	// (a ref names one element, found again by its fingerprint).
	if fp != nil && (c.Target.Ref != "" || !byName(c)) {
		return targetCode(fp.Locator)
	}
	if c.Target.IsZero() || c.Target.Ref != "" || c.Target.IsCoordinate() {
		return ""
	}
	return targetCode(c.Target)
}

// targetCode writes a target as a Playwright locator expression: inside its
// iframe chain, scoped to its parent when it has one, filtered by text.
func targetCode(t browser.Target) string {
	root := "page"
	for _, f := range t.Frames {
		root += fmt.Sprintf(".locator(%s).contentFrame()", jsString(f))
	}
	if t.Within != nil {
		p := *t.Within
		p.Frames = t.Frames
		if root = targetCode(p); root == "" {
			return ""
		}
	}
	expr := byCode(root, t)
	if expr != "" && t.HasText != "" {
		expr += fmt.Sprintf(".filter({ hasText: %s })", jsString(t.HasText))
	}
	switch {
	case expr == "" || t.Nth == nil:
	case *t.Nth < 0:
		expr += ".last()"
	case *t.Nth == 0:
		expr += ".first()"
	default:
		expr += fmt.Sprintf(".nth(%d)", *t.Nth)
	}
	return expr
}

func byCode(root string, t browser.Target) string {
	for _, m := range LocatorMethods {
		v := *m.Field(&t)
		switch {
		case v == "":
			continue
		case m.Name == "getByRole":
			var o []string
			if t.Name != "" {
				o = append(o, "name: "+jsString(t.Name))
			}
			if t.Exact {
				o = append(o, "exact: true")
			}
			if len(o) == 0 {
				return fmt.Sprintf("%s.getByRole(%s)", root, jsString(v))
			}
			return fmt.Sprintf("%s.getByRole(%s, { %s })", root, jsString(v), strings.Join(o, ", "))
		case m.Exact && t.Exact:
			return fmt.Sprintf("%s.%s(%s, { exact: true })", root, m.Name, jsString(v))
		}
		return fmt.Sprintf("%s.%s(%s)", root, m.Name, jsString(v))
	}
	return ""
}

var placeholderRef = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}\}`)

// valueCode writes a value as a TypeScript expression: secrets become
// process.env.NAME, extracted values the spec variable that holds them,
// test data is written literally.
func (w *specWriter) valueCode(v string) string {
	kind := func(name string) string {
		root, _, _ := strings.Cut(name, ".")
		switch {
		case w.secrets.has(name):
			return "secret"
		case w.declared[root]:
			return "var"
		}
		return ""
	}
	if m := placeholderRef.FindStringSubmatch(v); m != nil && m[0] == v {
		switch kind(m[1]) {
		case "secret":
			return fmt.Sprintf("process.env.%s ?? ''", m[1])
		case "var":
			return fmt.Sprintf("String(%s)", jsPath(m[1]))
		}
	}
	dynamic := false
	for _, m := range placeholderRef.FindAllStringSubmatch(v, -1) {
		if kind(m[1]) != "" {
			dynamic = true
		}
	}
	if !dynamic {
		return jsString(w.expand(v))
	}
	var b strings.Builder
	b.WriteByte('`')
	last := 0
	for _, loc := range placeholderRef.FindAllStringSubmatchIndex(v, -1) {
		b.WriteString(templateEscape(w.expand(v[last:loc[0]])))
		name := v[loc[2]:loc[3]]
		switch kind(name) {
		case "secret":
			fmt.Fprintf(&b, "${process.env.%s ?? ''}", name)
		case "var":
			fmt.Fprintf(&b, "${%s}", jsPath(name))
		default:
			b.WriteString(templateEscape(w.expand(v[loc[0]:loc[1]])))
		}
		last = loc[1]
	}
	b.WriteString(templateEscape(w.expand(v[last:])))
	b.WriteByte('`')
	return b.String()
}

// jsString quotes s as a single-quoted TypeScript string literal.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, c := range s {
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\u2028', '\u2029':
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func templateEscape(s string) string {
	return strings.NewReplacer("\\", `\\`, "`", "\\`", "${", "\\${").Replace(s)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// jsRegex escapes s for a TypeScript regular expression literal.
func jsRegex(s string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(s), "/", `\/`)
}
