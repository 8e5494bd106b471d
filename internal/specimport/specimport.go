// Package specimport reads existing @playwright/test specs into stored
// tests: straight-line tests written with Playwright's locators, actions
// and web-first assertions become scenarios with recorded commands, which
// replay, repair and bulk runs treat like generated ones. TypeScript is
// stripped by esbuild; the JavaScript is parsed by goja's parser (with
// esbuild's source map, so every problem names its line in the original
// file). Nothing is ever evaluated: a construct outside the subset is a
// problem reported by line, not a guess.
package specimport

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/jssource"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// Problem is one construct of a spec that cannot be imported.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Code    string `json:"code,omitempty"` // the line as written
	Message string `json:"message"`
}

// Error lists every problem of the files of one import.
type Error struct{ Problems []Problem }

// Error names the first problems.
func (e *Error) Error() string {
	var parts []string
	for i, p := range e.Problems {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Problems)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message))
	}
	return "cannot import: " + strings.Join(parts, "; ")
}

// Test is one imported test, ready to store.
type Test struct {
	Name     string
	Scenario scenario.Scenario
	Manifest []orchestrator.ManifestStep
	Script   string // the spec as webpilot writes it for these commands
}

// MaxFileBytes is the largest spec file that is imported.
const MaxFileBytes = 256 << 10

// Options tune an import.
type Options struct {
	// BaseURL, when set, replaces the specs' own baseURL (test.use), so
	// specs written for one environment import against another.
	BaseURL string
	Tags    []string
}

// Parse reads the tests of one spec file.
func Parse(name, src string, o Options) (tests []Test, err error) {
	defer func() {
		// A parser library failing on odd input must not take the request down.
		if r := recover(); r != nil {
			tests, err = nil, &Error{Problems: []Problem{{File: name, Message: fmt.Sprintf("the file cannot be parsed (%v)", r)}}}
		}
	}()
	// Bound the input before any parser sees it: parsers recurse per level
	// of nesting, and a Go stack overflow ends the process.
	if len(src) > MaxFileBytes {
		return nil, &Error{Problems: []Problem{{File: name, Message: fmt.Sprintf("the file is larger than %d bytes", MaxFileBytes)}}}
	}
	p := &importer{file: name, lines: strings.Split(src, "\n"), opts: o}
	parsed, err := jssource.Parse(name, src, jssource.Options{TypeScript: true, InlineMap: true})
	if err != nil {
		var je *jssource.Error
		if !errors.As(err, &je) {
			return nil, err
		}
		for _, pr := range je.Problems {
			p.problem(pr.Line, pr.Message)
		}
		return nil, &Error{Problems: p.problems}
	}
	prog := parsed.Program
	p.prog = prog
	p.scope(prog.Body, suiteScope{base: o.BaseURL})
	if len(p.problems) > 0 {
		return nil, &Error{Problems: p.problems}
	}
	if len(p.tests) == 0 {
		p.problem(1, "no test(...) found")
		return nil, &Error{Problems: p.problems}
	}
	return p.tests, nil
}

type importer struct {
	// from is the origin the specs were written for (their baseURL's, or
	// the first absolute URL's); with Options.BaseURL its URLs move there.
	from     string
	file     string
	lines    []string
	opts     Options
	prog     *ast.Program
	tests    []Test
	problems []Problem
	more     int // problems past maxProblems, counted
}

// suiteScope is what a describe block passes to the tests inside it.
type suiteScope struct {
	prefix     string
	base       string
	beforeEach []ast.Statement
}

func (p *importer) line(n ast.Node) int {
	if st, ok := n.(*ast.IfStatement); ok && st.If == 0 {
		n = st.Test // the parser leaves an if's own position unset
	}
	f := p.prog.File
	return f.Position(int(n.Idx0()) - f.Base()).Line
}

// Bounds on what a refusal quotes, so that its answer stays small whatever
// the file: the first problems of a file, each quoting a line's start.
const (
	maxProblems = 20
	maxCode     = 200
)

func (p *importer) problem(line int, msg string) {
	switch {
	case len(p.problems) > maxProblems:
		p.problems[maxProblems].Message = fmt.Sprintf("and %d more problems", p.more+1)
		p.more++
		return
	case len(p.problems) == maxProblems:
		p.problems = append(p.problems, Problem{File: p.file, Line: line, Message: "and 1 more problem"})
		p.more = 1
		return
	}
	code := ""
	if line > 0 && line <= len(p.lines) {
		code = strings.TrimSpace(p.lines[line-1])
		if len(code) > maxCode {
			code = strings.ToValidUTF8(code[:maxCode], "") + "…"
		}
	}
	p.problems = append(p.problems, Problem{File: p.file, Line: line, Code: code, Message: msg})
}

func (p *importer) unsupported(n ast.Node, what string) {
	p.problem(p.line(n), "not supported: "+what)
}

// generated reports whether a statement is esbuild's module plumbing (its
// helpers and the require of @playwright/test) rather than the spec's own.
func generated(st ast.Statement) bool {
	switch s := st.(type) {
	case *ast.VariableStatement:
		for _, b := range s.List {
			id, ok := b.Target.(*ast.Identifier)
			if !ok || !(strings.HasPrefix(string(id.Name), "__") || strings.HasPrefix(string(id.Name), "import_")) {
				return false
			}
		}
		return true
	case *ast.ExpressionStatement:
		name := calleeName(s.Expression)
		if strings.HasPrefix(name, "__") || strings.HasPrefix(name, "module.") {
			return true
		}
		if a, ok := s.Expression.(*ast.AssignExpression); ok {
			return strings.HasPrefix(calleeName(a.Left), "module.")
		}
		if str, ok := s.Expression.(*ast.StringLiteral); ok {
			return str.Value == "use strict"
		}
	}
	return false
}

// calleeName is the dotted name of a callee or a call's callee, with
// esbuild's "(0, import_x.name)" indirection and module prefix removed.
func calleeName(e ast.Expression) string {
	switch x := e.(type) {
	case *ast.Identifier:
		return string(x.Name)
	case *ast.DotExpression:
		left := calleeName(x.Left)
		if strings.HasPrefix(left, "import_") && !strings.Contains(left, ".") {
			return string(x.Identifier.Name)
		}
		if left == "" {
			return ""
		}
		return left + "." + string(x.Identifier.Name)
	case *ast.SequenceExpression:
		return calleeName(x.Sequence[len(x.Sequence)-1])
	case *ast.CallExpression:
		return calleeName(x.Callee)
	}
	return ""
}

// scope reads the statements of the file or of a describe block.
func (p *importer) scope(list []ast.Statement, sc suiteScope) {
	for _, st := range list {
		if generated(st) {
			continue
		}
		es, ok := st.(*ast.ExpressionStatement)
		call, isCall := exprOf(es).(*ast.CallExpression)
		if !ok || !isCall {
			p.unsupported(st, "only test(...), test.describe(...), test.use({ baseURL }) and test.beforeEach(...) at this level")
			continue
		}
		switch name := calleeName(call.Callee); name {
		case "test.use":
			if b, ok := p.useBase(call); ok {
				if p.from == "" {
					p.from = origin(b)
				}
				if p.opts.BaseURL == "" {
					sc.base = b
				}
			}
		case "test.describe", "test.describe.serial", "test.describe.parallel":
			title, body, ok := p.titled(call)
			if !ok {
				continue
			}
			inner := sc
			inner.prefix = sc.prefix + title + " › "
			inner.beforeEach = append([]ast.Statement(nil), sc.beforeEach...)
			p.scope(body, inner)
		case "test.beforeEach":
			if len(call.ArgumentList) != 1 {
				p.unsupported(call, "test.beforeEach takes one function")
				continue
			}
			body, ok := p.fnBody(call.ArgumentList[0])
			if ok {
				sc.beforeEach = append(sc.beforeEach, body...)
			}
		case "test":
			title, body, ok := p.titled(call)
			if ok {
				p.test(sc, sc.prefix+title, append(append([]ast.Statement(nil), sc.beforeEach...), body...), call)
			}
		default:
			p.unsupported(call, fmt.Sprintf("%s(...) at this level", orText(name, "this call")))
		}
	}
}

func exprOf(es *ast.ExpressionStatement) ast.Expression {
	if es == nil {
		return nil
	}
	return es.Expression
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// useBase reads test.use({ baseURL: '…' }).
func (p *importer) useBase(call *ast.CallExpression) (string, bool) {
	if len(call.ArgumentList) != 1 {
		p.unsupported(call, "test.use takes one object")
		return "", false
	}
	obj, ok := call.ArgumentList[0].(*ast.ObjectLiteral)
	if !ok {
		p.unsupported(call, "test.use takes an object literal")
		return "", false
	}
	base := ""
	for _, prop := range obj.Value {
		k, v, ok := p.keyed(prop)
		if !ok {
			continue
		}
		if k != "baseURL" {
			p.unsupported(call, "test.use option "+k+" (only baseURL)")
			continue
		}
		base, _ = p.str(v)
	}
	return base, base != ""
}

// titled reads a test or describe call: a literal title and a function.
func (p *importer) titled(call *ast.CallExpression) (string, []ast.Statement, bool) {
	args := call.ArgumentList
	if len(args) == 3 {
		args = []ast.Expression{args[0], args[2]} // test(title, details, body)
	}
	if len(args) != 2 {
		p.unsupported(call, "a test or describe takes a title and a function")
		return "", nil, false
	}
	title, ok := p.str(args[0])
	if !ok {
		return "", nil, false
	}
	body, ok := p.fnBody(args[1])
	return title, body, ok
}

// fnBody is the statement list of a function literal taking ({ page }).
func (p *importer) fnBody(e ast.Expression) ([]ast.Statement, bool) {
	var params *ast.ParameterList
	var body ast.ConciseBody
	switch f := e.(type) {
	case *ast.ArrowFunctionLiteral:
		params, body = f.ParameterList, f.Body
	case *ast.FunctionLiteral:
		params, body = f.ParameterList, f.Body
	default:
		p.unsupported(e, "expected a function")
		return nil, false
	}
	if params != nil {
		for _, b := range params.List {
			if pat, ok := b.Target.(*ast.ObjectPattern); ok {
				for _, prop := range pat.Properties {
					if ps, ok := prop.(*ast.PropertyShort); !ok || ps.Name.Name != "page" {
						p.unsupported(e, "fixtures other than { page }")
						return nil, false
					}
				}
				continue
			}
			p.unsupported(e, "fixtures other than { page }")
			return nil, false
		}
	}
	switch b := body.(type) {
	case *ast.BlockStatement:
		return b.List, true
	case *ast.ExpressionBody:
		return []ast.Statement{&ast.ExpressionStatement{Expression: b.Expression}}, true
	}
	p.unsupported(e, "this function body")
	return nil, false
}

// test turns one test's statements into scenario steps with their commands.
func (p *importer) test(sc suiteScope, name string, body []ast.Statement, at ast.Node) {
	before := len(p.problems)
	t := Test{Name: name}
	start := ""
	for _, st := range body {
		cmds, ok := p.statement(st, sc.base)
		if !ok {
			continue
		}
		// The first navigation is where the test starts.
		if start == "" && len(t.Manifest) == 0 && len(cmds) == 1 && cmds[0].Action == browser.ActionNavigate {
			start = cmds[0].Value
			continue
		}
		line := p.line(st)
		goal := ""
		if line > 0 && line <= len(p.lines) {
			goal = strings.TrimSpace(p.lines[line-1])
		}
		step := orchestrator.ManifestStep{Step: len(t.Manifest) + 1, Goal: goal}
		for _, c := range cmds {
			step.Entries = append(step.Entries, orchestrator.ManifestEntry{Command: c})
		}
		t.Manifest = append(t.Manifest, step)
		t.Scenario.Steps = append(t.Scenario.Steps, scenario.Step{Text: goal})
	}
	if len(p.problems) > before {
		return
	}
	if start == "" {
		p.problem(p.line(at), "the test must start with await page.goto(url)")
		return
	}
	if len(t.Manifest) == 0 {
		p.problem(p.line(at), "the test does nothing after page.goto")
		return
	}
	t.Scenario.Name, t.Scenario.BaseURL, t.Scenario.Tags = name, start, p.opts.Tags
	t.Script = orchestrator.SpecOf(t.Scenario, t.Manifest)
	p.tests = append(p.tests, t)
}

// statement reads one `await …;` line of a test.
func (p *importer) statement(st ast.Statement, base string) ([]browser.Command, bool) {
	es, ok := st.(*ast.ExpressionStatement)
	if !ok {
		p.unsupported(st, "only `await page…;` and `await expect(…)…;` statements (no variables, conditions or loops)")
		return nil, false
	}
	aw, ok := es.Expression.(*ast.AwaitExpression)
	if !ok {
		p.unsupported(st, "a statement without await")
		return nil, false
	}
	call, ok := aw.Argument.(*ast.CallExpression)
	if !ok {
		p.unsupported(st, "only awaited calls")
		return nil, false
	}
	dot, ok := call.Callee.(*ast.DotExpression)
	if !ok {
		p.unsupported(st, "this call")
		return nil, false
	}
	method := string(dot.Identifier.Name)
	if id, ok := dot.Left.(*ast.Identifier); ok && id.Name == "page" {
		switch method {
		case "goto":
			u, ok := p.oneString(call, "page.goto")
			if !ok {
				return nil, false
			}
			abs, err := p.resolve(base, u)
			if err != nil {
				p.unsupported(call, err.Error())
				return nil, false
			}
			return []browser.Command{{Action: browser.ActionNavigate, Value: abs}}, true
		case "reload", "goBack", "goForward":
			if len(call.ArgumentList) > 0 {
				p.unsupported(call, "options of page."+method)
				return nil, false
			}
			return []browser.Command{{Action: map[string]browser.Action{"reload": browser.ActionReload, "goBack": browser.ActionBack,
				"goForward": browser.ActionForward}[method]}}, true
		}
	}
	if id, ok := dot.Left.(*ast.Identifier); ok && id.Name == "page" {
		why := ""
		if method == "waitForTimeout" {
			why = " (a fixed sleep; an assertion waits for what it checks)"
		}
		p.unsupported(call, "page."+method+"(…)"+why)
		return nil, false
	}
	if isExpect(dot) {
		c, ok := p.expectation(call, dot, base)
		return []browser.Command{c}, ok
	}
	target, ok := p.locator(dot.Left)
	if !ok {
		return nil, false
	}
	c, ok := p.action(call, method, target)
	if !ok {
		return nil, false
	}
	return []browser.Command{c}, true
}

// origin is a URL's scheme://host.
func origin(u string) string {
	x, err := url.Parse(u)
	if err != nil || !x.IsAbs() {
		return ""
	}
	return x.Scheme + "://" + x.Host
}

// resolve makes a spec's URL absolute; with Options.BaseURL, URLs of the
// origin the specs were written for move to it.
func (p *importer) resolve(base, ref string) (string, error) {
	r, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("the URL %q", ref)
	}
	if r.IsAbs() {
		if p.from == "" {
			p.from = origin(ref)
		}
		if p.opts.BaseURL != "" && origin(ref) == p.from {
			to, err := url.Parse(p.opts.BaseURL)
			if err != nil || !to.IsAbs() {
				return "", fmt.Errorf("the base URL %q", p.opts.BaseURL)
			}
			r.Scheme, r.Host = to.Scheme, to.Host
		}
		return r.String(), nil
	}
	b, err := url.Parse(base)
	if err != nil || !b.IsAbs() {
		return "", fmt.Errorf("a relative URL %q without a baseURL (add test.use({ baseURL }) or give base_url)", ref)
	}
	return b.ResolveReference(r).String(), nil
}

// action reads locator.method(args).
func (p *importer) action(call *ast.CallExpression, method string, t browser.Target) (browser.Command, bool) {
	simple := map[string]browser.Action{"click": browser.ActionClick, "dblclick": browser.ActionDblClick, "hover": browser.ActionHover,
		"check": browser.ActionCheck, "uncheck": browser.ActionUncheck, "focus": browser.ActionFocus, "blur": browser.ActionBlur}
	valued := map[string]browser.Action{"fill": browser.ActionFill, "type": browser.ActionType, "pressSequentially": browser.ActionType,
		"press": browser.ActionPress, "selectOption": browser.ActionSelect}
	if a, ok := simple[method]; ok {
		if method == "click" && len(call.ArgumentList) == 1 {
			if obj, ok := call.ArgumentList[0].(*ast.ObjectLiteral); ok && len(obj.Value) == 1 {
				if k, v, ok := p.keyed(obj.Value[0]); ok && k == "button" {
					if b, ok := p.str(v); ok && b == "right" {
						return browser.Command{Action: browser.ActionRightClick, Target: t}, true
					}
				}
			}
		}
		if len(call.ArgumentList) > 0 {
			p.unsupported(call, "options of "+method+"()")
			return browser.Command{}, false
		}
		return browser.Command{Action: a, Target: t}, true
	}
	if a, ok := valued[method]; ok {
		if method == "selectOption" && len(call.ArgumentList) == 1 {
			if obj, ok := call.ArgumentList[0].(*ast.ObjectLiteral); ok && len(obj.Value) == 1 {
				if k, v, ok := p.keyed(obj.Value[0]); ok && (k == "label" || k == "value") {
					s, ok := p.str(v)
					return browser.Command{Action: a, Target: t, Value: s}, ok
				}
			}
		}
		v, ok := p.oneString(call, method)
		return browser.Command{Action: a, Target: t, Value: v}, ok
	}
	if method == "setInputFiles" {
		p.unsupported(call, "setInputFiles (files are given to a scenario with their content; upload steps are not imported)")
		return browser.Command{}, false
	}
	p.unsupported(call, "the action "+method+"()")
	return browser.Command{}, false
}

// isExpect reports whether a call chain starts with expect(…).
func isExpect(dot *ast.DotExpression) bool {
	for e := dot.Left; e != nil; {
		switch x := e.(type) {
		case *ast.CallExpression:
			if calleeName(x.Callee) == "expect" {
				return true
			}
			e = nil
		case *ast.DotExpression:
			e = x.Left
		default:
			e = nil
		}
	}
	return false
}

// expectation reads expect(page|locator)[.not].matcher(args); every form
// it cannot read is reported, never skipped.
func (p *importer) expectation(call *ast.CallExpression, dot *ast.DotExpression, base string) (browser.Command, bool) {
	subject := dot.Left
	negated := false
	if d, ok := subject.(*ast.DotExpression); ok && d.Identifier.Name == "not" {
		subject, negated = d.Left, true
	}
	ec, ok := subject.(*ast.CallExpression)
	if !ok || calleeName(ec.Callee) != "expect" {
		p.unsupported(call, "this form of assertion (write await expect(…).matcher(…);)")
		return browser.Command{}, false
	}
	matcher := string(dot.Identifier.Name)
	if len(ec.ArgumentList) != 1 {
		p.unsupported(call, "expect takes one subject")
		return browser.Command{}, false
	}
	if id, ok := ec.ArgumentList[0].(*ast.Identifier); ok && id.Name == "page" {
		if negated {
			p.unsupported(call, "expect(page).not")
			return browser.Command{}, false
		}
		v, ok := p.oneString(call, matcher)
		if !ok {
			return browser.Command{}, false
		}
		switch matcher {
		case "toHaveURL":
			abs, err := p.resolve(base, v)
			if err != nil {
				p.unsupported(call, err.Error())
				return browser.Command{}, false
			}
			return browser.Command{Action: browser.ActionVerify, Assert: browser.AssertUrlEquals, Value: abs}, true
		case "toHaveTitle":
			return browser.Command{Action: browser.ActionVerify, Assert: browser.AssertTitleEquals, Value: v}, true
		}
		p.unsupported(call, "expect(page)."+matcher)
		return browser.Command{}, false
	}
	t, ok := p.locator(ec.ArgumentList[0])
	if !ok {
		return browser.Command{}, false
	}
	verify := func(assert browser.Assertion, value string) (browser.Command, bool) {
		return browser.Command{Action: browser.ActionVerify, Assert: assert, Target: t, Value: value}, true
	}
	noArgs := func() bool {
		if len(call.ArgumentList) > 0 {
			p.unsupported(call, "options of "+matcher+"()")
			return false
		}
		return true
	}
	m, ok := orchestrator.MatcherNamed(matcher, negated)
	switch {
	case !ok && negated:
		p.unsupported(call, "expect(…).not."+matcher+" (only not."+strings.Join(negatable(), " and not.")+")")
		return browser.Command{}, false
	case !ok:
		p.unsupported(call, "the assertion "+matcher)
		return browser.Command{}, false
	}
	switch m.Arg {
	case orchestrator.ArgText:
		v, ok := p.oneString(call, matcher)
		if !ok {
			return browser.Command{}, false
		}
		if m.Assert == browser.AssertValueEquals && v == "" {
			return verify(browser.AssertValueEmpty, "")
		}
		return verify(m.Assert, v)
	case orchestrator.ArgCount:
		if len(call.ArgumentList) != 1 {
			p.unsupported(call, matcher+" takes one number")
			return browser.Command{}, false
		}
		n, ok := p.integer(call.ArgumentList[0])
		if !ok {
			return browser.Command{}, false
		}
		return verify(m.Assert, strconv.Itoa(n))
	}
	if !noArgs() {
		return browser.Command{}, false
	}
	return verify(m.Assert, "")
}

// negatable are the matchers read with .not, in the table's order.
func negatable() []string {
	var out []string
	for _, m := range orchestrator.Matchers {
		if m.Not {
			out = append(out, m.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// locator reads a locator expression rooted at page.
func (p *importer) locator(e ast.Expression) (browser.Target, bool) {
	call, ok := e.(*ast.CallExpression)
	if !ok {
		p.unsupported(e, "a locator must be written out from page (no variables)")
		return browser.Target{}, false
	}
	dot, ok := call.Callee.(*ast.DotExpression)
	if !ok {
		p.unsupported(e, "this locator")
		return browser.Target{}, false
	}
	method := string(dot.Identifier.Name)
	// The root: page, or a locator this one is scoped to or filters.
	var parent *browser.Target
	var frames []string
	switch left := dot.Left.(type) {
	case *ast.Identifier:
		if left.Name != "page" {
			p.unsupported(e, "a locator must be written out from page (no variables)")
			return browser.Target{}, false
		}
	default:
		if fr, ok := p.frameChain(left); ok {
			frames = fr
		} else {
			pt, ok := p.locator(left)
			if !ok {
				return browser.Target{}, false
			}
			parent = &pt
		}
	}
	switch method {
	case "first", "last", "nth":
		if parent == nil || parent.Nth != nil {
			p.unsupported(call, method+"() here")
			return browser.Target{}, false
		}
		n := 0
		switch method {
		case "last":
			n = -1
		case "nth":
			if len(call.ArgumentList) != 1 {
				p.unsupported(call, "nth takes one number")
				return browser.Target{}, false
			}
			if n, ok = p.integer(call.ArgumentList[0]); !ok || n < 0 {
				if ok {
					p.unsupported(call, "a negative nth")
				}
				return browser.Target{}, false
			}
		}
		if method != "nth" && len(call.ArgumentList) > 0 {
			p.unsupported(call, method+"() takes no arguments")
			return browser.Target{}, false
		}
		t := *parent
		t.Nth = &n
		return t, true
	case "filter":
		if parent == nil || parent.HasText != "" || parent.Nth != nil || len(call.ArgumentList) != 1 {
			p.unsupported(call, "filter() here")
			return browser.Target{}, false
		}
		obj, ok := call.ArgumentList[0].(*ast.ObjectLiteral)
		if !ok || len(obj.Value) != 1 {
			p.unsupported(call, "filter({ hasText: '…' }) only")
			return browser.Target{}, false
		}
		k, v, ok := p.keyed(obj.Value[0])
		if !ok || k != "hasText" {
			p.unsupported(call, "filter({ hasText: '…' }) only")
			return browser.Target{}, false
		}
		s, ok := p.str(v)
		if !ok {
			return browser.Target{}, false
		}
		t := *parent
		t.HasText = s
		return t, true
	}
	t, ok := p.byMethod(call, method)
	if !ok {
		return browser.Target{}, false
	}
	t.Frames = frames
	if parent != nil {
		t.Frames = parent.Frames
		scope := *parent
		scope.Frames = nil
		t.Within = &scope
	}
	return t, true
}

// frameChain reads page.frameLocator(sel)… or page.locator(sel).contentFrame()….
func (p *importer) frameChain(e ast.Expression) ([]string, bool) {
	call, ok := e.(*ast.CallExpression)
	if !ok {
		return nil, false
	}
	dot, ok := call.Callee.(*ast.DotExpression)
	if !ok {
		return nil, false
	}
	// page.frameLocator(sel), or page.locator(sel).contentFrame(); either
	// may hang off an outer frame.
	sel := call
	switch dot.Identifier.Name {
	case "frameLocator":
	case "contentFrame":
		inner, ok := dot.Left.(*ast.CallExpression)
		if !ok {
			return nil, false
		}
		if dot, ok = inner.Callee.(*ast.DotExpression); !ok || dot.Identifier.Name != "locator" {
			return nil, false
		}
		sel = inner
	default:
		return nil, false
	}
	var outer []string
	if id, ok := dot.Left.(*ast.Identifier); !ok || id.Name != "page" {
		if outer, ok = p.frameChain(dot.Left); !ok {
			return nil, false
		}
	}
	css, ok := p.oneString(sel, string(dot.Identifier.Name))
	if !ok {
		return nil, false
	}
	return append(outer, css), true
}

// byMethod reads getByRole/Label/Placeholder/Text/TestId/AltText/Title and locator.
func (p *importer) byMethod(call *ast.CallExpression, method string) (browser.Target, bool) {
	args := call.ArgumentList
	if len(args) == 0 || len(args) > 2 {
		p.unsupported(call, method+" takes a value and options")
		return browser.Target{}, false
	}
	v, ok := p.str(args[0])
	if !ok {
		return browser.Target{}, false
	}
	var t browser.Target
	m, ok := orchestrator.LocatorMethodNamed(method)
	if !ok {
		p.unsupported(call, "the locator "+method)
		return browser.Target{}, false
	}
	*m.Field(&t) = v
	if len(args) == 2 {
		obj, ok := args[1].(*ast.ObjectLiteral)
		if !ok {
			p.unsupported(call, "options must be an object literal")
			return browser.Target{}, false
		}
		for _, prop := range obj.Value {
			k, val, ok := p.keyed(prop)
			if !ok {
				return browser.Target{}, false
			}
			switch {
			case k == "exact" && method != "locator":
				b, ok := val.(*ast.BooleanLiteral)
				if !ok {
					p.unsupported(call, "exact must be true or false")
					return browser.Target{}, false
				}
				t.Exact = b.Value
			case k == "name" && method == "getByRole":
				if t.Name, ok = p.str(val); !ok {
					return browser.Target{}, false
				}
			case k == "hasText" && method == "locator":
				if t.HasText, ok = p.str(val); !ok {
					return browser.Target{}, false
				}
			default:
				p.unsupported(call, fmt.Sprintf("the option %s of %s", k, method))
				return browser.Target{}, false
			}
		}
	}
	return t, true
}

// keyed reads a `key: value` property.
func (p *importer) keyed(prop ast.Property) (string, ast.Expression, bool) {
	kv, ok := prop.(*ast.PropertyKeyed)
	if !ok || kv.Computed {
		p.unsupported(prop, "only key: value properties")
		return "", nil, false
	}
	switch k := kv.Key.(type) {
	case *ast.StringLiteral:
		return k.Value.String(), kv.Value, true
	case *ast.Identifier:
		return string(k.Name), kv.Value, true
	}
	p.unsupported(prop, "this property key")
	return "", nil, false
}

// oneString reads the single string argument of a call.
func (p *importer) oneString(call *ast.CallExpression, what string) (string, bool) {
	if len(call.ArgumentList) != 1 {
		p.unsupported(call, what+" with other than one argument")
		return "", false
	}
	return p.str(call.ArgumentList[0])
}

// str reads a string literal (or a template without substitutions).
func (p *importer) str(e ast.Expression) (string, bool) {
	switch x := e.(type) {
	case *ast.StringLiteral:
		return x.Value.String(), true
	case *ast.TemplateLiteral:
		if len(x.Expressions) == 0 && x.Tag == nil && len(x.Elements) == 1 {
			return x.Elements[0].Parsed.String(), true
		}
	case *ast.RegExpLiteral:
		p.unsupported(e, "a regular expression (write the exact text)")
		return "", false
	}
	p.unsupported(e, "a value that is not a literal string")
	return "", false
}

// integer reads a whole-number literal.
func (p *importer) integer(e ast.Expression) (int, bool) {
	if u, ok := e.(*ast.UnaryExpression); ok && u.Operator == token.MINUS {
		n, ok := p.integer(u.Operand)
		return -n, ok
	}
	if n, ok := e.(*ast.NumberLiteral); ok {
		switch v := n.Value.(type) {
		case int64:
			return int(v), true
		case float64:
			if v == float64(int(v)) {
				return int(v), true
			}
		}
	}
	p.unsupported(e, "a value that is not a whole number")
	return 0, false
}
