package orchestrator

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/webpilot/webpilot/browser"
	"github.com/webpilot/webpilot/scenario"
)

// emitSpec assembles the @playwright/test file from the steps' lines.
func emitSpec(sc scenario.Scenario, steps []StepReport) string {
	var b strings.Builder
	b.WriteString("import { test, expect } from '@playwright/test';\n\n")
	origin, start := sc.BaseURL, "/"
	if u, err := url.Parse(sc.BaseURL); err == nil && u.Host != "" {
		origin = u.Scheme + "://" + u.Host
		start = u.RequestURI()
	}
	fmt.Fprintf(&b, "test.use({ baseURL: %s });\n\n", jsString(origin))
	name := sc.Name
	if name == "" {
		name = "scenario"
	}
	fmt.Fprintf(&b, "test(%s, async ({ page }) => {\n", jsString(name))
	fmt.Fprintf(&b, "  await page.goto(%s);\n", jsString(start))
	for _, s := range steps {
		fmt.Fprintf(&b, "  // step %d: %s\n", s.Index+1, oneLine(s.Goal))
		if s.Status == StepFailed {
			fmt.Fprintf(&b, "  // step %d failed during generation: %s\n", s.Index+1, oneLine(s.Error))
		}
		for _, l := range s.Lines {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("});\n")
	return b.String()
}

// stepLines writes a spec line for each successful command of a step, and
// declares the variables the step extracted.
func (r *run) stepLines(rep StepReport) []string {
	var lines []string
	for _, c := range rep.Commands {
		if !c.OK {
			continue
		}
		if l := r.commandLine(c); l != "" {
			lines = append(lines, l)
		}
	}
	if rep.SaveAs != "" && len(rep.Result) > 0 && rep.Status != StepFailed {
		lines = append(lines, "// extracted by the agent when the test was generated:",
			fmt.Sprintf("%s = %s;", r.declare(rep.SaveAs), string(rep.Result)))
	}
	return lines
}

// declare returns the left side that assigns the spec variable of an
// extracted name: "let name" the first time, "name" afterwards.
func (r *run) declare(name string) string {
	id := jsIdent(name)
	if r.specVars[name] {
		return id
	}
	r.specVars[name] = true
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

// rebuildSpecVars recalls the variables earlier steps declared (on resume).
func (r *run) rebuildSpecVars() {
	for _, s := range r.steps {
		for _, c := range s.Commands {
			if c.OK && c.Command.Action == "read" {
				r.specVars[c.Command.Value] = true
			}
		}
		if s.SaveAs != "" && s.Status != StepFailed {
			r.specVars[s.SaveAs] = true
		}
	}
}

func (r *run) commandLine(cr CommandReport) string {
	c := cr.Command
	loc := cr.Locator
	v := r.valueCode(c.Value)
	switch c.Action {
	case "read":
		if loc == "" {
			return ""
		}
		left := r.declare(c.Value)
		switch {
		case strings.HasPrefix(c.Assert, "attribute:"):
			return fmt.Sprintf("%s = (await %s.getAttribute(%s)) ?? '';", left, loc, jsString(strings.TrimPrefix(c.Assert, "attribute:")))
		case c.Assert == "value":
			return fmt.Sprintf("%s = await %s.inputValue();", left, loc)
		}
		return fmt.Sprintf("%s = (await %s.innerText()).trim();", left, loc)
	case "navigate":
		return fmt.Sprintf("await page.goto(%s);", jsString(specPath(r.sc.BaseURL, r.expand(c.Value))))
	case "back":
		return "await page.goBack();"
	case "forward":
		return "await page.goForward();"
	case "reload":
		return "await page.reload();"
	case "press":
		if loc == "" {
			return fmt.Sprintf("await page.keyboard.press(%s);", v)
		}
		return fmt.Sprintf("await %s.press(%s);", loc, v)
	case "wait":
		if loc != "" {
			return fmt.Sprintf("await %s.waitFor();", loc)
		}
		return fmt.Sprintf("await page.waitForTimeout(%s);", strings.TrimSuffix(c.Value, "ms"))
	case "scroll":
		if loc != "" {
			return fmt.Sprintf("await %s.scrollIntoViewIfNeeded();", loc)
		}
		dy := 600
		if strings.EqualFold(c.Value, "up") {
			dy = -600
		}
		return fmt.Sprintf("await page.mouse.wheel(0, %d);", dy)
	}
	if c.Target.IsCoordinate() {
		// Coordinates are relative to the 1280x800 viewport the job ran in.
		x, y := *c.Target.X/100*1280, *c.Target.Y/100*800
		switch c.Action {
		case "dblclick":
			return fmt.Sprintf("await page.mouse.dblclick(%.0f, %.0f);", x, y)
		case "hover":
			return fmt.Sprintf("await page.mouse.move(%.0f, %.0f);", x, y)
		}
		return fmt.Sprintf("await page.mouse.click(%.0f, %.0f);", x, y)
	}
	if loc == "" {
		return fmt.Sprintf("// %s %s: no stable locator could be written", c.Describe(), c.Target)
	}
	switch c.Action {
	case "click", "dblclick", "hover", "check", "uncheck", "focus", "blur":
		return fmt.Sprintf("await %s.%s();", loc, c.Action)
	case "rightclick":
		return fmt.Sprintf("await %s.click({ button: 'right' });", loc)
	case "fill":
		return fmt.Sprintf("await %s.fill(%s);", loc, v)
	case "type":
		return fmt.Sprintf("await %s.pressSequentially(%s);", loc, v)
	case "select":
		return fmt.Sprintf("await %s.selectOption(%s);", loc, v)
	case "verify":
		return assertionLine(c, loc, v)
	}
	return fmt.Sprintf("// %s is not expressible in the spec", c.Describe())
}

func assertionLine(c browser.Command, loc, v string) string {
	switch c.Assert {
	case "urlContains":
		return fmt.Sprintf("await expect(page).toHaveURL(/%s/);", jsRegex(c.Value))
	case "titleContains":
		return fmt.Sprintf("await expect(page).toHaveTitle(/%s/);", jsRegex(c.Value))
	case "textContains":
		return fmt.Sprintf("await expect(%s).toContainText(%s);", loc, v)
	case "textEquals":
		return fmt.Sprintf("await expect(%s).toHaveText(%s);", loc, v)
	case "valueEquals":
		return fmt.Sprintf("await expect(%s).toHaveValue(%s);", loc, v)
	case "valueEmpty":
		return fmt.Sprintf("await expect(%s).toHaveValue('');", loc)
	case "isVisible":
		return fmt.Sprintf("await expect(%s).toBeVisible();", loc)
	case "isHidden":
		return fmt.Sprintf("await expect(%s).toBeHidden();", loc)
	case "isEnabled":
		return fmt.Sprintf("await expect(%s).toBeEnabled();", loc)
	case "isDisabled":
		return fmt.Sprintf("await expect(%s).toBeDisabled();", loc)
	case "isChecked":
		return fmt.Sprintf("await expect(%s).toBeChecked();", loc)
	case "isUnchecked":
		return fmt.Sprintf("await expect(%s).not.toBeChecked();", loc)
	case "countEquals":
		return fmt.Sprintf("await expect(%s).toHaveCount(%s);", loc, c.Value)
	case "countGreaterThan":
		return fmt.Sprintf("await expect.poll(() => %s.count()).toBeGreaterThan(%s);", loc, c.Value)
	case "countLessThan":
		return fmt.Sprintf("await expect.poll(() => %s.count()).toBeLessThan(%s);", loc, c.Value)
	case "hasClass":
		return fmt.Sprintf("await expect(%s).toHaveClass(/(^|\\s)%s(\\s|$)/);", loc, jsRegex(c.Value))
	case "hasAttribute":
		name, val, ok := strings.Cut(c.Value, "=")
		if !ok {
			return fmt.Sprintf("await expect(%s).toHaveAttribute(%s);", loc, jsString(name))
		}
		return fmt.Sprintf("await expect(%s).toHaveAttribute(%s, %s);", loc, jsString(name), jsString(val))
	}
	return ""
}

// locatorCode is the spec's locator for a command's target: the robust one
// found when the element was fingerprinted, else the target as given (never
// a ref, which means nothing outside the run).
func locatorCode(c browser.Command, fp *browser.Fingerprint) string {
	if c.Action == "verify" && (c.Assert == "urlContains" || c.Assert == "titleContains") {
		return "page"
	}
	// Counts and absence are about the target as named, not one element.
	if fp != nil && !strings.HasPrefix(c.Assert, "count") && c.Assert != "isHidden" {
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
	return expr
}

func byCode(root string, t browser.Target) string {
	opt := ""
	if t.Exact {
		opt = ", { exact: true }"
	}
	switch {
	case t.TestID != "":
		return fmt.Sprintf("%s.getByTestId(%s)", root, jsString(t.TestID))
	case t.Role != "":
		var o []string
		if t.Name != "" {
			o = append(o, "name: "+jsString(t.Name))
		}
		if t.Exact {
			o = append(o, "exact: true")
		}
		if len(o) == 0 {
			return fmt.Sprintf("%s.getByRole(%s)", root, jsString(t.Role))
		}
		return fmt.Sprintf("%s.getByRole(%s, { %s })", root, jsString(t.Role), strings.Join(o, ", "))
	case t.Placeholder != "":
		return fmt.Sprintf("%s.getByPlaceholder(%s%s)", root, jsString(t.Placeholder), opt)
	case t.Label != "":
		return fmt.Sprintf("%s.getByLabel(%s%s)", root, jsString(t.Label), opt)
	case t.Alt != "":
		return fmt.Sprintf("%s.getByAltText(%s%s)", root, jsString(t.Alt), opt)
	case t.Text != "":
		return fmt.Sprintf("%s.getByText(%s%s)", root, jsString(t.Text), opt)
	case t.Title != "":
		return fmt.Sprintf("%s.getByTitle(%s%s)", root, jsString(t.Title), opt)
	case t.CSS != "":
		return fmt.Sprintf("%s.locator(%s)", root, jsString(t.CSS))
	}
	return ""
}

var placeholderRef = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}\}`)

// valueCode writes a value as a TypeScript expression: secrets become
// process.env.NAME, extracted values the spec variable that holds them,
// test data is written literally.
func (r *run) valueCode(v string) string {
	kind := func(name string) string {
		root, _, _ := strings.Cut(name, ".")
		switch {
		case r.secrets.has(name):
			return "secret"
		case r.specVars[root]:
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
		return jsString(r.expand(v))
	}
	var b strings.Builder
	b.WriteByte('`')
	last := 0
	for _, loc := range placeholderRef.FindAllStringSubmatchIndex(v, -1) {
		b.WriteString(templateEscape(r.expand(v[last:loc[0]])))
		name := v[loc[2]:loc[3]]
		switch kind(name) {
		case "secret":
			fmt.Fprintf(&b, "${process.env.%s ?? ''}", name)
		case "var":
			fmt.Fprintf(&b, "${%s}", jsPath(name))
		default:
			b.WriteString(templateEscape(r.expand(v[loc[0]:loc[1]])))
		}
		last = loc[1]
	}
	b.WriteString(templateEscape(r.expand(v[last:])))
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
