package suite

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/dop251/goja/ast"

	"github.com/webpilot/webpilot/internal/browser"
)

// PageObject is a class of a project's own that its tests build over a
// page, with the locators its constructor defines
// (this.addButton = page.getByTestId('add-button')).
type PageObject struct {
	Class string `json:"class"`
	File  string `json:"file"`
	// Props are the constructor's locators, in the order it defines them.
	Props []PageProp `json:"props"`
	// Fixture is the test fixture that gives the object (loginPage), from
	// the module FixtureFile whose test is extended with it; "" when tests
	// build it themselves.
	Fixture     string `json:"fixture,omitempty"`
	FixtureFile string `json:"fixture_file,omitempty"`
}

// PageProp is one locator a page object's constructor defines.
type PageProp struct {
	Name string      `json:"name"`
	Site LocatorSite `json:"site"`
}

// sourceExt are the sources page objects and fixtures are read from.
var sourceExt = regexp.MustCompile(`\.(c|m)?(j|t)s$`)

// FindPageObjects lists a project's page objects: the exported classes
// of its sources (test files and its config aside) whose constructor
// takes a page and defines locators on it from literals, with the
// fixture that gives each, where one does. A source that cannot be
// parsed is passed over.
func FindPageObjects(p Project) []PageObject {
	var pos []PageObject
	parsed := map[string]*parsedSource{}
	for _, f := range p.Files {
		if !sourceExt.MatchString(f.Path) || IsSpec(f.Path) || strings.HasPrefix(path.Base(f.Path), "playwright.config.") {
			continue
		}
		sf, err := readSource(f.Path, f.Content)
		if err != nil {
			continue
		}
		parsed[f.Path] = sf
		names := exported(f.Content)
		walkNodes(sf.prog, func(n any) {
			if c, ok := n.(*ast.ClassLiteral); ok && c.Name != nil && names[string(c.Name.Name)] {
				if po := pageObjectOf(sf, c); len(po.Props) > 0 {
					pos = append(pos, po)
				}
			}
		})
	}
	for _, f := range p.Files {
		sf := parsed[f.Path]
		if sf == nil || !exported(f.Content)["test"] {
			continue
		}
		walk(sf.prog, func(call *ast.CallExpression) {
			dot, ok := call.Callee.(*ast.DotExpression)
			if !ok || dot.Identifier.Name != "extend" || len(call.ArgumentList) == 0 {
				return
			}
			obj, ok := call.ArgumentList[0].(*ast.ObjectLiteral)
			if !ok {
				return
			}
			for _, prop := range obj.Value {
				kv, ok := prop.(*ast.PropertyKeyed)
				if !ok {
					continue
				}
				built := builtIn(kv.Value)
				for i := range pos {
					if pos[i].Fixture == "" && slices.Contains(built, pos[i].Class) {
						pos[i].Fixture, pos[i].FixtureFile = keyName(kv.Key), f.Path
					}
				}
			}
		})
	}
	return pos
}

// pageObjectOf reads a class's locators: each this.name = page.getBy…(…)
// (or this.page.…) its constructor assigns, its first parameter being the
// page, and each getter that returns one (get counter() { return
// this.page.locator('#count') }). A member the class keeps private
// (private, protected, #name) is not the tests' to use.
func pageObjectOf(sf *parsedSource, c *ast.ClassLiteral) PageObject {
	po := PageObject{Class: string(c.Name.Name), File: sf.name}
	param := ""
	for _, el := range c.Body {
		if m, ok := el.(*ast.MethodDefinition); ok && !m.Static && keyName(m.Key) == "constructor" && m.Body != nil &&
			m.Body.ParameterList != nil && len(m.Body.ParameterList.List) > 0 {
			if id, ok := m.Body.ParameterList.List[0].Target.(*ast.Identifier); ok {
				param = string(id.Name)
			}
		}
	}
	if param == "" {
		return po
	}
	privates := privateMembers(sf.src)
	add := func(name string, e ast.Expression) {
		call, ok := e.(*ast.CallExpression)
		if !ok || name == "" || strings.HasPrefix(name, "#") || privates[name] {
			return
		}
		dot, ok := call.Callee.(*ast.DotExpression)
		if !ok || !locatorMethods[string(dot.Identifier.Name)] || !onThePage(dot.Left, param) {
			return
		}
		if site, ok := sf.site(call); ok && !slices.ContainsFunc(po.Props, func(p PageProp) bool { return p.Name == name }) {
			po.Props = append(po.Props, PageProp{Name: name, Site: site})
		}
	}
	for _, el := range c.Body {
		m, ok := el.(*ast.MethodDefinition)
		if !ok || m.Static || m.Body == nil || m.Body.Body == nil {
			continue
		}
		switch {
		case keyName(m.Key) == "constructor":
			for _, st := range m.Body.Body.List {
				es, ok := st.(*ast.ExpressionStatement)
				if !ok {
					continue
				}
				as, ok := es.Expression.(*ast.AssignExpression)
				if !ok {
					continue
				}
				if left, ok := as.Left.(*ast.DotExpression); ok {
					if _, this := left.Left.(*ast.ThisExpression); this {
						add(string(left.Identifier.Name), as.Right)
					}
				}
			}
		case m.Kind == ast.PropertyKindGet && len(m.Body.Body.List) == 1:
			if ret, ok := m.Body.Body.List[0].(*ast.ReturnStatement); ok && ret.Argument != nil {
				add(keyName(m.Key), ret.Argument)
			}
		}
	}
	return po
}

// privateMember is a member TypeScript's modifiers keep private or
// protected (gone once its types are stripped).
var privateMember = regexp.MustCompile(`\b(?:private|protected)\s+(?:readonly\s+|override\s+)*(?:get\s+)?([A-Za-z_$][\w$]*)\s*[:;=(!?]`)

// privateMembers lists the members the classes of src declare private or
// protected.
func privateMembers(src []byte) map[string]bool {
	out := map[string]bool{}
	for _, m := range privateMember.FindAllSubmatch(src, -1) {
		out[string(m[1])] = true
	}
	return out
}

// onThePage reports whether e is the constructor's page: its parameter,
// or the member of that name (this.page).
func onThePage(e ast.Expression, param string) bool {
	switch v := e.(type) {
	case *ast.Identifier:
		return string(v.Name) == param
	case *ast.DotExpression:
		_, this := v.Left.(*ast.ThisExpression)
		return this && string(v.Identifier.Name) == param
	}
	return false
}

// builtIn lists the classes a fixture's function builds (new X(page)).
func builtIn(e ast.Expression) []string {
	var out []string
	walkNodes(e, func(n any) {
		ne, ok := n.(*ast.NewExpression)
		if !ok {
			return
		}
		// An imported class is a module's property once the source is
		// read as CommonJS (new import_LoginPage.LoginPage(page)).
		switch c := ne.Callee.(type) {
		case *ast.Identifier:
			out = append(out, string(c.Name))
		case *ast.DotExpression:
			out = append(out, string(c.Identifier.Name))
		}
	})
	return out
}

// The ways a module exports a name: a declaration (export class X, export
// default function X), a list (export { X, Y as Z }, module.exports = { X }),
// or one name (module.exports = X, exports.X = …).
var (
	exportDecl = regexp.MustCompile(`export\s+(?:default\s+)?(?:abstract\s+)?(?:class|const|let|var|function)\s+([A-Za-z_$][\w$]*)`)
	exportList = regexp.MustCompile(`export\s*\{([^}]*)\}|module\.exports\s*=\s*\{([^}]*)\}`)
	exportOne  = regexp.MustCompile(`module\.exports\s*=\s*([A-Za-z_$][\w$]*)|exports\.([A-Za-z_$][\w$]*)\s*=`)
	identifier = regexp.MustCompile(`[A-Za-z_$][\w$]*`)
)

// exported lists the names a module's source exports, in either module
// system: one pass over it, whatever the number of names asked about.
func exported(src []byte) map[string]bool {
	out := map[string]bool{}
	for _, m := range exportDecl.FindAllSubmatch(src, -1) {
		out[string(m[1])] = true
	}
	for _, m := range exportList.FindAllSubmatch(src, -1) {
		for _, id := range identifier.FindAll(append(m[1], m[2]...), -1) {
			out[string(id)] = true
		}
	}
	for _, m := range exportOne.FindAllSubmatch(src, -1) {
		out[string(m[1])+string(m[2])] = true
	}
	return out
}

// Matches reports whether the prop's locator finds the element a run
// fingerprinted, as Playwright would: a test id, a role and its name, a
// label, a placeholder, a text, an alt or title, or a CSS selector of one
// compound (tag, id, attributes). Anything wider (a role with no name, a
// tag alone, combinators) is not taken for one element.
func (pp PageProp) Matches(fp browser.Fingerprint) bool {
	s := pp.Site
	if s.Arg.Regex && s.Method != "getByTestId" && s.Method != "getByLabel" && s.Method != "getByText" &&
		s.Method != "getByPlaceholder" && s.Method != "getByAltText" && s.Method != "getByTitle" {
		return false
	}
	switch s.Method {
	case "getByTestId":
		return fp.TestID != "" && textMatches(s.Arg, true, fp.TestID)
	case "getByRole":
		return s.Name != nil && fp.Role == s.Arg.Value && textMatches(*s.Name, s.Exact, fp.Name)
	case "getByLabel":
		return fp.Label != "" && textMatches(s.Arg, s.Exact, fp.Label)
	case "getByPlaceholder":
		return fp.Placeholder != "" && textMatches(s.Arg, s.Exact, fp.Placeholder)
	case "getByText":
		return fp.Text != "" && textMatches(s.Arg, s.Exact, fp.Text)
	case "getByAltText":
		return fp.Alt != "" && textMatches(s.Arg, s.Exact, fp.Alt)
	case "getByTitle":
		return fp.Title != "" && textMatches(s.Arg, s.Exact, fp.Title)
	case "locator":
		return cssMatches(s.Arg.Value, fp)
	}
	return false
}

// textMatches is Playwright's text matching: a regular expression
// searched; a string whole (exact) or, by default, a substring with case
// and whitespace ignored.
func textMatches(l Literal, exact bool, got string) bool {
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if l.Regex {
		flags := ""
		if strings.Contains(l.Flags, "i") {
			flags = "(?i)"
		}
		re, err := regexp.Compile(flags + l.Value)
		return err == nil && re.MatchString(got)
	}
	if exact {
		return norm(got) == norm(l.Value)
	}
	return l.Value != "" && strings.Contains(strings.ToLower(norm(got)), strings.ToLower(norm(l.Value)))
}

// compoundCSS is one compound selector: a tag, an id, attributes.
var compoundCSS = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9-]*)?((?:#[A-Za-z_][\w-]*|\[[A-Za-z_:][\w:.-]*(?:=(?:"[^"]*"|'[^']*'|[\w-]+))?\])+)$`)

// cssPart is one id or attribute of a compound selector.
var cssPart = regexp.MustCompile(`#([A-Za-z_][\w-]*)|\[([A-Za-z_:][\w:.-]*)(?:=("[^"]*"|'[^']*'|[\w-]+))?\]`)

// cssMatches reports whether a CSS selector of one compound, with an id
// or an attribute, finds the fingerprinted element.
func cssMatches(css string, fp browser.Fingerprint) bool {
	m := compoundCSS.FindStringSubmatch(strings.TrimSpace(css))
	if m == nil || (m[1] != "" && !strings.EqualFold(m[1], fp.Tag)) {
		return false
	}
	for _, p := range cssPart.FindAllStringSubmatch(m[2], -1) {
		if p[1] != "" {
			if fp.Attributes["id"] != p[1] {
				return false
			}
			continue
		}
		got, ok := fp.Attributes[p[2]]
		if p[2] == "data-testid" && fp.TestID != "" {
			got, ok = fp.TestID, true
		}
		if !ok || (p[3] != "" && got != strings.Trim(p[3], `"'`)) {
			return false
		}
	}
	return true
}
