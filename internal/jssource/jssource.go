// Package jssource is the one home where customers' JavaScript and
// TypeScript sources are parsed: a project's test files and page
// objects. Each source is bounded before any parser sees
// it (a Go stack overflow in a recursive parser cannot be recovered, and
// would end the worker or the dispatcher with every job it holds), then
// stripped of its types by esbuild and parsed by goja.
package jssource

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	esbuild "github.com/evanw/esbuild/pkg/api"
)

// Options say how a source is read.
type Options struct {
	// TypeScript reads the source as TypeScript whatever its name;
	// otherwise its extension says.
	TypeScript bool
	// InlineMap writes esbuild's source map into the code, where goja
	// reads it: positions the parser reports are the file's own lines.
	// Otherwise the map is answered apart (Source.Map) for the caller to
	// map positions itself.
	InlineMap bool
}

// Source is a parsed source: its program, the JavaScript goja parsed, and
// the source map from that code to the file as written (nil when inline).
type Source struct {
	Program *ast.Program
	Code    string
	Map     []byte
}

// Problem is one reason a source is not parsed, at its line in the file
// as written (0: the file as a whole).
type Problem struct {
	Line    int
	Message string
}

// Error lists why a source is not parsed.
type Error struct {
	File     string
	Problems []Problem
	// Nesting is set when the source was refused for its nesting, before
	// any parser saw it.
	Nesting *NestingError
}

// Unwrap answers the nesting refusal, if that is why.
func (e *Error) Unwrap() error {
	if e.Nesting == nil {
		return nil
	}
	return e.Nesting
}

func (e *Error) Error() string {
	if len(e.Problems) == 0 {
		return e.File + ": cannot be parsed"
	}
	p := e.Problems[0]
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, p.Line, p.Message)
	}
	return e.File + ": " + p.Message
}

// Parse bounds and parses the source src of the file name. Its error is
// an *Error; a source nesting deeper than MaxNesting is refused, before
// any parser sees it, with its *NestingError.
func Parse(name, src string, o Options) (s Source, err error) {
	defer func() {
		// A parser library failing on odd input must not take the process down.
		if r := recover(); r != nil {
			s, err = Source{}, &Error{File: name, Problems: []Problem{{Message: fmt.Sprintf("cannot be parsed (%v)", r)}}}
		}
	}()
	if err := checkNesting(src, MaxNesting); err != nil {
		var ne *NestingError
		errors.As(err, &ne)
		return Source{}, &Error{File: name, Problems: []Problem{{Line: ne.Line, Message: ne.Error()}}, Nesting: ne}
	}
	loader := esbuild.LoaderJS
	switch {
	case o.TypeScript || strings.HasSuffix(name, ".ts") || strings.HasSuffix(name, ".mts") || strings.HasSuffix(name, ".cts"):
		loader = esbuild.LoaderTS
	case strings.HasSuffix(name, ".tsx"):
		loader = esbuild.LoaderTSX
	case strings.HasSuffix(name, ".jsx"):
		loader = esbuild.LoaderJSX
	}
	sourcemap := esbuild.SourceMapExternal
	if o.InlineMap {
		sourcemap = esbuild.SourceMapInline
	}
	// UTF-8 output keeps a literal's characters as written (the ASCII
	// default would escape a regular expression's, which then reads
	// differently from the file).
	out := esbuild.Transform(src, esbuild.TransformOptions{Loader: loader, Format: esbuild.FormatCommonJS, Target: esbuild.ES2020,
		Sourcemap: sourcemap, Sourcefile: name, Charset: esbuild.CharsetUTF8})
	if len(out.Errors) > 0 {
		e := &Error{File: name}
		for _, m := range out.Errors {
			line := 0
			if m.Location != nil {
				line = m.Location.Line
			}
			e.Problems = append(e.Problems, Problem{Line: line, Message: "syntax: " + m.Text})
		}
		return Source{}, e
	}
	prog, err := parser.ParseFile(nil, name, string(out.Code), 0)
	if err != nil {
		e := &Error{File: name}
		var list parser.ErrorList
		if errors.As(err, &list) {
			for _, pe := range list {
				e.Problems = append(e.Problems, Problem{Line: pe.Position.Line, Message: "syntax: " + pe.Message})
			}
		} else {
			e.Problems = append(e.Problems, Problem{Message: "syntax: " + err.Error()})
		}
		return Source{}, e
	}
	return Source{Program: prog, Code: string(out.Code), Map: out.Map}, nil
}
