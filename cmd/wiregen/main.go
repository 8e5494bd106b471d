// Command wiregen writes package client's wire types from the API's own
// Go types (api.ContractTypes, and the results its raw fields carry): the
// server encodes and decodes those, the OpenAPI document is built from
// them, and the client's copies are generated from them, so the three
// cannot drift apart. Each copy keeps its source's JSON tags and doc
// comments and drops what never goes on the wire (json:"-", unexported
// fields, methods); a string type keeps its named constants.
//
// Run it through go generate ./client.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/worker"
)

const module = "github.com/webpilot/webpilot"

// extraRoots are results a job's raw JSON holds beside those the API's
// contract names: what a project job, a scenario written into a project
// and an exploration's plans report.
func extraRoots() []reflect.Type {
	return []reflect.Type{
		reflect.TypeFor[worker.ProjectFileResult](),
		reflect.TypeFor[suite.ProjectRepairResult](),
		reflect.TypeFor[worker.ProjectRunResult](),
		reflect.TypeFor[worker.ProjectListResult](),
		reflect.TypeFor[suite.IntoProject](),
		reflect.TypeFor[explore.Plan](),
		reflect.TypeFor[store.ChildReport](),
		reflect.TypeFor[scenario.ValidationError](),
	}
}

// renamed are the types whose name another package's type also has.
var renamed = map[reflect.Type]string{
	reflect.TypeFor[orchestrator.Evidence](): "StepEvidence",
	reflect.TypeFor[browser.Target]():        "ElementTarget",
	reflect.TypeFor[suite.Report]():          "RepairReport",
	reflect.TypeFor[suite.RepairReport]():    "ProjectRepairReport",
	reflect.TypeFor[suite.File]():            "ProjectFile",
	reflect.TypeFor[explore.Result]():        "ExplorationResult",
	reflect.TypeFor[explore.Type]():          "FindingType",
	reflect.TypeFor[explore.Request]():       "NetworkRequest",
}

func main() {
	out := flag.String("o", "types.go", "the file to write")
	flag.Parse()
	src, err := Generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "wiregen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "wiregen:", err)
		os.Exit(1)
	}
}

// Generate returns the source of client's types.go.
func Generate() ([]byte, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	g := &gen{root: root, docs: map[string]*pkgDocs{}, names: map[string]reflect.Type{}, imports: map[string]bool{}}
	for _, t := range append(api.ContractTypes(), extraRoots()...) {
		if err := g.walk(t); err != nil {
			return nil, err
		}
	}
	return g.source()
}

type gen struct {
	root    string
	docs    map[string]*pkgDocs
	order   []reflect.Type
	names   map[string]reflect.Type
	imports map[string]bool
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}

// ours reports whether t is a named type of this module (to be copied).
func ours(t reflect.Type) bool {
	return t.Name() != "" && strings.HasPrefix(t.PkgPath(), module)
}

func (g *gen) name(t reflect.Type) string {
	if n, ok := renamed[t]; ok {
		return n
	}
	// An unexported type an exported field holds is on the wire too.
	return strings.ToUpper(t.Name()[:1]) + t.Name()[1:]
}

// walk collects t and every type of ours its wire fields reach.
func (g *gen) walk(t reflect.Type) error {
	for t.Name() == "" && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array) {
		t = t.Elem()
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !ours(t) {
		return nil
	}
	n := g.name(t)
	if prev, ok := g.names[n]; ok {
		if prev != t {
			return fmt.Errorf("%s and %s are both named %s: give one a name in renamed", prev, t, n)
		}
		return nil
	}
	g.names[n] = t
	g.order = append(g.order, t)
	switch t.Kind() {
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if wire(f) {
				if err := g.walk(f.Type); err != nil {
					return err
				}
			}
		}
	case reflect.Slice, reflect.Map, reflect.Array:
		return g.walk(t.Elem())
	}
	return nil
}

// wire reports whether a struct field is encoded.
func wire(f reflect.StructField) bool {
	return f.IsExported() && f.Tag.Get("json") != "-"
}

// expr writes t as a Go type expression of package client.
func (g *gen) expr(t reflect.Type) string {
	if ours(t) {
		return g.name(t)
	}
	if t.Name() != "" {
		if t.PkgPath() == "" {
			return t.Name()
		}
		g.imports[t.PkgPath()] = true
		return t.String()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + g.expr(t.Elem())
	case reflect.Slice:
		return "[]" + g.expr(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), g.expr(t.Elem()))
	case reflect.Map:
		return "map[" + g.expr(t.Key()) + "]" + g.expr(t.Elem())
	case reflect.Interface:
		return "any"
	case reflect.Struct:
		var b strings.Builder
		b.WriteString("struct {\n")
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if wire(f) {
				fmt.Fprintf(&b, "%s %s `json:%q`\n", f.Name, g.expr(f.Type), f.Tag.Get("json"))
			}
		}
		b.WriteString("}")
		return b.String()
	}
	return t.String()
}

func (g *gen) source() ([]byte, error) {
	var body bytes.Buffer
	for _, t := range g.order {
		d, err := g.pkg(t.PkgPath())
		if err != nil {
			return nil, err
		}
		n := g.name(t)
		doc := d.types[t.Name()]
		if doc == "" {
			doc = n + " is the wire form of the API's " + t.String() + ".\n"
		} else if n != t.Name() {
			doc = strings.Replace(doc, t.Name()+" ", n+" ", 1)
		}
		comment(&body, doc, "")
		if t.Kind() != reflect.Struct {
			fmt.Fprintf(&body, "type %s %s\n\n", n, g.underlying(t))
			if t.Kind() == reflect.String {
				g.constants(&body, d, t)
			}
			continue
		}
		fmt.Fprintf(&body, "type %s struct {\n", n)
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !wire(f) {
				continue
			}
			comment(&body, d.fields[t.Name()+"."+f.Name], "\t")
			if f.Anonymous {
				fmt.Fprintf(&body, "\t%s\n", g.expr(f.Type))
				continue
			}
			tag := ""
			if j, ok := f.Tag.Lookup("json"); ok {
				tag = fmt.Sprintf(" `json:%q`", j)
			}
			fmt.Fprintf(&body, "\t%s %s%s\n", f.Name, g.expr(f.Type), tag)
		}
		body.WriteString("}\n\n")
	}
	var out bytes.Buffer
	out.WriteString("// Code generated by wiregen from the API's own types; DO NOT EDIT.\n\npackage client\n\n")
	if len(g.imports) > 0 {
		var paths []string
		for p := range g.imports {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		out.WriteString("import (\n")
		for _, p := range paths {
			fmt.Fprintf(&out, "\t%q\n", p)
		}
		out.WriteString(")\n\n")
	}
	out.Write(body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format: %w\n%s", err, out.Bytes())
	}
	return src, nil
}

// underlying writes a named type's underlying type.
func (g *gen) underlying(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice:
		return "[]" + g.expr(t.Elem())
	case reflect.Map:
		return "map[" + g.expr(t.Key()) + "]" + g.expr(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), g.expr(t.Elem()))
	}
	return t.Kind().String()
}

// constants writes the named constants of a string type, as its package
// declares them.
func (g *gen) constants(w *bytes.Buffer, d *pkgDocs, t reflect.Type) {
	cs := d.consts[t.Name()]
	if len(cs) == 0 {
		return
	}
	n := g.name(t)
	w.WriteString("const (\n")
	for _, c := range cs {
		comment(w, c.doc, "\t")
		fmt.Fprintf(w, "\t%s %s = %s\n", c.name, n, strconv.Quote(c.value))
	}
	w.WriteString(")\n\n")
	fmt.Fprintf(w, "// All%s are %s's named values, as declared.\nvar All%s = []%s{", plural(n), n, plural(n), n)
	for i, c := range cs {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteString(c.name)
	}
	w.WriteString("}\n\n")
}

// plural is a type's name in the plural: Kinds, Statuses, Severities.
func plural(n string) string {
	switch {
	case strings.HasSuffix(n, "s"):
		return n + "es"
	case strings.HasSuffix(n, "y") && !strings.ContainsAny(n[len(n)-2:len(n)-1], "aeiou"):
		return n[:len(n)-1] + "ies"
	}
	return n + "s"
}

func comment(w *bytes.Buffer, doc, indent string) {
	doc = strings.TrimRight(doc, "\n")
	if doc == "" {
		return
	}
	for _, l := range strings.Split(doc, "\n") {
		if l == "" {
			fmt.Fprintf(w, "%s//\n", indent)
			continue
		}
		fmt.Fprintf(w, "%s// %s\n", indent, l)
	}
}

// pkgDocs are a package's doc comments: of its types, of their fields
// ("Type.Field"), and its typed string constants by type.
type pkgDocs struct {
	types  map[string]string
	fields map[string]string
	consts map[string][]constant
}

type constant struct{ name, value, doc string }

func (g *gen) pkg(path string) (*pkgDocs, error) {
	if d, ok := g.docs[path]; ok {
		return d, nil
	}
	dir := filepath.Join(g.root, strings.TrimPrefix(strings.TrimPrefix(path, module), "/"))
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	d := &pkgDocs{types: map[string]string{}, fields: map[string]string{}, consts: map[string][]constant{}}
	slices.Sort(files)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					doc := s.Doc.Text()
					if doc == "" && len(gd.Specs) == 1 {
						doc = gd.Doc.Text()
					}
					d.types[s.Name.Name] = doc
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							text := fl.Doc.Text()
							if text == "" {
								text = fl.Comment.Text()
							}
							names := fl.Names
							if len(names) == 0 {
								names = []*ast.Ident{{Name: embeddedName(fl.Type)}}
							}
							for _, n := range names {
								d.fields[s.Name.Name+"."+n.Name] = text
							}
						}
					}
				case *ast.ValueSpec:
					if gd.Tok != token.CONST || s.Type == nil || len(s.Values) != len(s.Names) {
						continue
					}
					typ, ok := s.Type.(*ast.Ident)
					if !ok {
						continue
					}
					for i, n := range s.Names {
						lit, ok := s.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING || !n.IsExported() {
							continue
						}
						v, err := strconv.Unquote(lit.Value)
						if err != nil {
							return nil, err
						}
						text := s.Doc.Text()
						if text == "" {
							text = s.Comment.Text()
						}
						d.consts[typ.Name] = append(d.consts[typ.Name], constant{name: n.Name, value: v, doc: text})
					}
				}
			}
		}
	}
	g.docs[path] = d
	return d, nil
}

func embeddedName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return embeddedName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}
