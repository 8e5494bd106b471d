package suite

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/go-sourcemap/sourcemap"

	"github.com/webpilot/webpilot/internal/jssource"
)

// Literal is a string or regular-expression literal in a project's source,
// at its exact byte range in the file as written.
type Literal struct {
	Start, End int // bytes [Start, End) of the literal, quotes or slashes included
	Value      string
	Regex      bool
	Flags      string
	Quote      byte // a string's quote character as written
	// Raw is the literal as written (its escapes as they are spelled): a
	// rewrite spells its new value the same way.
	Raw string
}

// LocatorSite is where the project's source builds a locator: a call such
// as this.page.getByTestId('add-button') whose literal arguments make the
// selector a test's call ran with. A repair patches these literals, where
// the locator is defined (a page object's constructor, a const, a helper's
// call), in the project's own idiom.
type LocatorSite struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Method string `json:"method"` // locator, getByTestId, getByRole, …
	// Arg is the first argument (the CSS, test id, role, label, text…);
	// Name is getByRole's name option, Exact its exact option.
	Arg   Literal  `json:"-"`
	Name  *Literal `json:"-"`
	Exact bool     `json:"exact,omitempty"`
	// Selector is the selector Playwright makes of the call.
	Selector string `json:"selector"`
}

// locatorMethods are the calls that build a locator from literals.
var locatorMethods = map[string]bool{"locator": true, "getByTestId": true, "getByRole": true, "getByLabel": true,
	"getByPlaceholder": true, "getByText": true, "getByAltText": true, "getByTitle": true}

// selectorMethods are the page's (and frame's) calls that take a selector
// string first: page.fill('#email', …), page.click('text=Save').
var selectorMethods = map[string]bool{"click": true, "dblclick": true, "fill": true, "type": true, "check": true,
	"uncheck": true, "selectOption": true, "hover": true, "press": true, "focus": true, "tap": true, "textContent": true,
	"innerText": true, "inputValue": true, "isVisible": true, "isHidden": true, "isChecked": true, "isEnabled": true,
	"getAttribute": true, "waitForSelector": true, "setInputFiles": true, "dispatchEvent": true, "$": true, "$$": true,
	"$eval": true, "$$eval": true}

// onPage reports whether a call's receiver is a page or a frame (page,
// this.page, newPage, frame…): only their selector methods take selectors.
func onPage(e ast.Expression) bool {
	name := ""
	switch v := e.(type) {
	case *ast.Identifier:
		name = string(v.Name)
	case *ast.DotExpression:
		name = string(v.Identifier.Name)
	}
	n := strings.ToLower(name)
	return strings.HasSuffix(n, "page") || strings.HasSuffix(n, "frame")
}

// FindLocatorSites lists the locator-building calls of one source file
// (.ts or .js, ESM or CommonJS), parsed by jssource (bounded, its types
// stripped), every literal mapped back through the source map to its
// place in the file as written. A file nesting deeper than any suite does
// is refused before a parser sees it.
func FindLocatorSites(name string, src []byte) ([]LocatorSite, error) {
	sf, err := readSource(name, src)
	if err != nil {
		return nil, err
	}
	var sites []LocatorSite
	walk(sf.prog, func(call *ast.CallExpression) {
		if site, ok := sf.site(call); ok {
			sites = append(sites, site)
		}
	})
	return sites, nil
}

// parsedSource is a parsed source file with what maps its program's nodes
// back to the file as written.
type parsedSource struct {
	name  string
	src   []byte
	prog  *ast.Program
	lines []int
	// original maps a position of the parsed code to the file's bytes.
	original func(file.Idx) (int, bool)
	// consts are the file's constants and object literals of constants,
	// so a locator built from selectors.input or a const is patched where
	// the value is written.
	consts map[string]Literal
}

// readSource parses one source file (see FindLocatorSites).
func readSource(name string, src []byte) (*parsedSource, error) {
	parsed, err := jssource.Parse(name, string(src), jssource.Options{})
	if err != nil {
		return nil, err
	}
	sm, err := sourcemap.Parse("", parsed.Map)
	if err != nil {
		return nil, fmt.Errorf("%s: source map: %w", name, err)
	}
	gen := parsed.Code
	text := string(src)
	sf := &parsedSource{name: name, src: src, prog: parsed.Program, lines: lineStarts(text), consts: map[string]Literal{}}
	// A source map counts columns in UTF-16 units, on both sides.
	sf.original = func(idx file.Idx) (int, bool) {
		off := int(idx) - 1
		if off < 0 || off > len(gen) {
			return 0, false
		}
		line := lineOf(gen, off)
		start := strings.LastIndex(gen[:off], "\n") + 1
		_, _, l, c, ok := sm.Source(line, utf16Len(gen[start:off]))
		if !ok || l < 1 || l > len(sf.lines) {
			return 0, false
		}
		return byteAt(text, sf.lines[l-1], c), true
	}
	walkNodes(sf.prog, func(n any) {
		b, ok := n.(*ast.Binding)
		if !ok {
			return
		}
		id, ok := b.Target.(*ast.Identifier)
		if !ok || b.Initializer == nil {
			return
		}
		if l, ok := literalAt(b.Initializer, src, sf.original); ok {
			sf.consts[string(id.Name)] = l
		}
		if obj, ok := b.Initializer.(*ast.ObjectLiteral); ok {
			for _, p := range obj.Value {
				if kv, ok := p.(*ast.PropertyKeyed); ok {
					if l, ok := literalAt(kv.Value, src, sf.original); ok {
						sf.consts[string(id.Name)+"."+keyName(kv.Key)] = l
					}
				}
			}
		}
	})
	return sf, nil
}

// argument is a call's argument as a literal of the file: written there,
// or a constant's.
func (sf *parsedSource) argument(e ast.Expression) (Literal, bool) {
	if l, ok := literalAt(e, sf.src, sf.original); ok {
		return l, true
	}
	switch v := e.(type) {
	case *ast.Identifier:
		l, ok := sf.consts[string(v.Name)]
		return l, ok
	case *ast.DotExpression:
		if left, ok := v.Left.(*ast.Identifier); ok {
			l, ok := sf.consts[string(left.Name)+"."+string(v.Identifier.Name)]
			return l, ok
		}
	}
	return Literal{}, false
}

// site is the locator a call builds from literals, if it builds one.
func (sf *parsedSource) site(call *ast.CallExpression) (LocatorSite, bool) {
	dot, ok := call.Callee.(*ast.DotExpression)
	if !ok || len(call.ArgumentList) == 0 {
		return LocatorSite{}, false
	}
	method := string(dot.Identifier.Name)
	if !locatorMethods[method] && !(selectorMethods[method] && onPage(dot.Left)) {
		return LocatorSite{}, false
	}
	arg, ok := sf.argument(call.ArgumentList[0])
	if !ok {
		return LocatorSite{}, false
	}
	site := LocatorSite{File: sf.name, Method: method, Arg: arg}
	if len(call.ArgumentList) > 1 {
		if obj, ok := call.ArgumentList[1].(*ast.ObjectLiteral); ok {
			for _, p := range obj.Value {
				kv, ok := p.(*ast.PropertyKeyed)
				if !ok {
					continue
				}
				switch keyName(kv.Key) {
				case "name":
					if l, ok := literalAt(kv.Value, sf.src, sf.original); ok {
						site.Name = &l
					}
				case "exact":
					if b, ok := kv.Value.(*ast.BooleanLiteral); ok {
						site.Exact = b.Value
					}
				}
			}
		}
	}
	site.Line, site.Column = lineCol(sf.lines, arg.Start)
	site.Selector = site.selector()
	return site, true
}

func keyName(e ast.Expression) string {
	switch k := e.(type) {
	case *ast.Identifier:
		return string(k.Name)
	case *ast.StringLiteral:
		return string(k.Value)
	}
	return ""
}

// literalAt finds a string or regex literal argument in the file as
// written: its start through the source map, its end by reading it there.
func literalAt(e ast.Expression, src []byte, original func(file.Idx) (int, bool)) (Literal, bool) {
	switch v := e.(type) {
	case *ast.StringLiteral:
		start, ok := original(v.Idx)
		if !ok || start >= len(src) || (src[start] != '\'' && src[start] != '"' && src[start] != '`') {
			return Literal{}, false
		}
		end, ok := scanString(src, start)
		if !ok {
			return Literal{}, false
		}
		return Literal{Start: start, End: end, Value: v.Value.String(), Quote: src[start], Raw: string(src[start:end])}, true
	case *ast.TemplateLiteral:
		// A template with no substitution is a string.
		if len(v.Expressions) > 0 || len(v.Elements) != 1 {
			return Literal{}, false
		}
		start, ok := original(v.OpenQuote)
		if !ok || start >= len(src) || src[start] != '`' {
			return Literal{}, false
		}
		end, ok := scanString(src, start)
		if !ok {
			return Literal{}, false
		}
		return Literal{Start: start, End: end, Value: v.Elements[0].Parsed.String(), Quote: '`', Raw: string(src[start:end])}, true
	case *ast.RegExpLiteral:
		lit := strings.TrimRightFunc(v.Literal, unicode.IsSpace)
		start, ok := original(v.Idx)
		if !ok || start >= len(src) || src[start] != '/' || !strings.HasPrefix(string(src[start:]), lit) {
			return Literal{}, false
		}
		return Literal{Start: start, End: start + len(lit), Value: v.Pattern, Regex: true, Flags: v.Flags, Raw: lit}, true
	}
	return Literal{}, false
}

// utf16Len is how many UTF-16 units s takes (a source map's columns).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// byteAt is the byte offset of the UTF-16 column col of the line that
// starts at byte start of text.
func byteAt(text string, start, col int) int {
	i := start
	for i < len(text) && col > 0 && text[i] != '\n' {
		r, size := utf8.DecodeRuneInString(text[i:])
		col -= max(utf16.RuneLen(r), 1)
		i += size
	}
	return i
}

// scanString finds the end of the quoted string starting at start.
func scanString(src []byte, start int) (int, bool) {
	q := src[start]
	for i := start + 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case q:
			return i + 1, true
		case '\n':
			if q != '`' {
				return 0, false
			}
		}
	}
	return 0, false
}

func lineStarts(s string) []int {
	starts := []int{0}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOf is the line (1-based) of src that the byte offset off is on.
func lineOf[S ~string | ~[]byte](src S, off int) int {
	return 1 + strings.Count(string(src[:off]), "\n")
}

func lineCol(starts []int, off int) (int, int) {
	line := 0
	for line+1 < len(starts) && starts[line+1] <= off {
		line++
	}
	return line + 1, off - starts[line] + 1
}

// walk calls fn on every call expression of the program.
func walk(n any, fn func(*ast.CallExpression)) {
	walkNodes(n, func(x any) {
		if c, ok := x.(*ast.CallExpression); ok {
			fn(c)
		}
	})
}

// walkNodes calls fn on every node (pointer) of the program.
func walkNodes(n any, fn func(any)) {
	seen := 0
	var visit func(v reflect.Value)
	visit = func(v reflect.Value) {
		if seen++; seen > 2_000_000 {
			return
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			if v.Kind() == reflect.Pointer {
				fn(v.Interface())
			}
			visit(v.Elem())
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					visit(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				visit(v.Index(i))
			}
		}
	}
	visit(reflect.ValueOf(n))
}

// selector is what Playwright makes of the call (its internal selector
// language, as traces record it).
func (s LocatorSite) selector() string {
	text := func(l Literal, exact bool) string {
		if l.Regex {
			return "/" + l.Value + "/" + l.Flags
		}
		if exact {
			return quoteSelector(l.Value) + "s"
		}
		return quoteSelector(l.Value) + "i"
	}
	if selectorMethods[s.Method] {
		return s.Arg.Value // page.fill('#email', …): the selector as written
	}
	switch s.Method {
	case "locator":
		if s.Arg.Regex {
			return ""
		}
		return s.Arg.Value
	case "getByTestId":
		if s.Arg.Regex {
			return "internal:testid=[data-testid=/" + s.Arg.Value + "/" + s.Arg.Flags + "]"
		}
		return "internal:testid=[data-testid=" + quoteSelector(s.Arg.Value) + "s]"
	case "getByRole":
		sel := "internal:role=" + s.Arg.Value
		if s.Name != nil {
			sel += "[name=" + text(*s.Name, s.Exact) + "]"
		}
		return sel
	case "getByLabel":
		return "internal:label=" + text(s.Arg, s.Exact)
	case "getByText":
		return "internal:text=" + text(s.Arg, s.Exact)
	case "getByPlaceholder":
		return "internal:attr=[placeholder=" + text(s.Arg, s.Exact) + "]"
	case "getByAltText":
		return "internal:attr=[alt=" + text(s.Arg, s.Exact) + "]"
	case "getByTitle":
		return "internal:attr=[title=" + text(s.Arg, s.Exact) + "]"
	}
	return ""
}

// quoteSelector quotes a value as Playwright's selectors do.
func quoteSelector(v string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), `"`, `\"`) + `"`
}

// selectorParts splits a chained selector ("#list >> internal:role=…
// >> nth=0") into its parts, positions (nth=) left out.
func selectorParts(sel string) []string {
	var out []string
	for _, p := range strings.Split(sel, " >> ") {
		if !strings.HasPrefix(p, "nth=") && p != "" {
			out = append(out, p)
		}
	}
	return out
}

// errNoSite means no literal in the project builds a selector.
var errNoSite = errors.New("no locator in the project's source builds this selector from literals")
