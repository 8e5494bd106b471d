package jssource

import (
	"fmt"
	"strings"
)

// MaxNesting bounds the estimated nesting of a file's syntax. Parsers
// recurse once per level of nesting, and a Go stack overflow cannot be
// recovered: one file of 200,000 "!" would end the process. Real suites
// nest a few dozen levels.
const MaxNesting = 200

// NestingError says where a file nests deeper than MaxNesting.
type NestingError struct {
	Line, Depth int
}

func (e *NestingError) Error() string {
	return fmt.Sprintf("nests deeper than %d levels at line %d (brackets, operators and statements nested in one another); split the expression", MaxNesting, e.Line)
}

// checkNesting is a cheap lexical pre-scan (linear time, constant memory per
// open bracket) that bounds from above how deeply a recursive-descent parser
// of JavaScript or TypeScript nests on src. It never parses: it tokenizes
// strings, comments, templates and regular expressions, keeps a stack of open
// brackets, and at each bracket level counts the tokens that may nest the
// parser one level more (operators, prefix and statement keywords) since the
// last point where the parser has provably unwound them: a ',' or ';' at that
// level, or a line break or closing brace after which the next token cannot
// continue an expression (automatic semicolon insertion, or a syntax error,
// at which the parser stops). Where the lexing is ambiguous it chooses the
// reading that scans more, so the estimate errs high, never low.
func checkNesting(src string, limit int) error {
	type level struct {
		open byte // '(' '[' '{' or '$' for a template's ${
		// expr counts the operators and prefix words of the expression
		// under way at this level; stmt the statements that hold the one
		// under way (if, else, for, while, do, with).
		expr, stmt int
	}
	var (
		stack    = []level{{open: 0}}
		line     = 1
		depth    = 0 // len(stack) + sum of chains, kept incrementally
		prev     tokKind
		prevWord string
		newline  bool // a line break since the previous token
	)
	add := func(n int, statement bool) error {
		if statement {
			stack[len(stack)-1].stmt += n
		} else {
			stack[len(stack)-1].expr += n
		}
		depth += n
		if depth > limit {
			return &NestingError{Line: line, Depth: depth}
		}
		return nil
	}
	// endExpression: the expression at this level is complete; with
	// statements too, so is the statement and every one holding it.
	endExpression := func(statements bool) {
		top := &stack[len(stack)-1]
		depth -= top.expr
		top.expr = 0
		if statements {
			depth -= top.stmt
			top.stmt = 0
		}
	}
	push := func(open byte) error {
		stack = append(stack, level{open: open})
		depth++
		if depth > limit {
			return &NestingError{Line: line, Depth: depth}
		}
		return nil
	}
	pop := func() {
		if len(stack) > 1 {
			depth -= stack[len(stack)-1].expr + stack[len(stack)-1].stmt + 1
			stack = stack[:len(stack)-1]
		}
	}
	// beforeToken runs when a token starts: a line break or closed brace
	// after an expression's end, or a semicolon, followed by a token that
	// cannot continue what came before, ends the statement (or the parse).
	pendingBrace, pendingSemi := false, false
	beforeToken := func(k tokKind, word string) {
		switch {
		case pendingSemi:
			endExpression(!continuesStatement(k, word))
		case (newline && operandEnd(prev, prevWord)) || pendingBrace:
			if !continues(k, word) {
				endExpression(!continuesStatement(k, word))
			}
		}
		pendingBrace, pendingSemi = false, false
		newline = false
	}
	i, n := 0, len(src)
	for i < n {
		c := src[i]
		switch {
		case c == '\n':
			line++
			newline = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '/' && i+1 < n && src[i+1] == '/':
			for i < n && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < n && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil // unterminated: the parser reports it
			}
			body := src[i : i+2+end+2]
			if nl := strings.Count(body, "\n"); nl > 0 {
				line += nl
				newline = true
			}
			i += len(body)
			continue
		}
		switch {
		case c == '\'' || c == '"':
			beforeToken(tokOperand, "")
			j := i + 1
			for j < n && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' && j+1 < n {
					if src[j+1] == '\n' {
						line++
					}
					j++
				}
				j++
			}
			i = j + 1
			prev, prevWord = tokOperand, ""
		case c == '`' || (c == '}' && len(stack) > 1 && stack[len(stack)-1].open == '$'):
			// A template's text, from its start or from the } closing a ${.
			if c == '`' {
				beforeToken(tokOperand, "")
				if operandEnd(prev, prevWord) {
					if err := add(1, false); err != nil { // a tagged template
						return err
					}
				}
			} else {
				pop()
			}
			j := i + 1
			closed, nested := false, false
			for j < n {
				if src[j] == '\\' && j+1 < n {
					j += 2
					continue
				}
				if src[j] == '\n' {
					line++
				}
				if src[j] == '`' {
					closed = true
					j++
					break
				}
				if src[j] == '$' && j+1 < n && src[j+1] == '{' {
					nested = true
					j += 2
					break
				}
				j++
			}
			i = j
			switch {
			case nested:
				if err := push('$'); err != nil {
					return err
				}
				prev, prevWord = tokOpen, ""
			case closed:
				prev, prevWord = tokOperand, ""
			default:
				return nil // unterminated template
			}
		case c == '/' && regexAllowed(prev, prevWord):
			beforeToken(tokOperand, "")
			j, class := i+1, false
			for j < n && src[j] != '\n' {
				if src[j] == '\\' && j+1 < n {
					j += 2
					continue
				}
				if src[j] == '[' {
					class = true
				} else if src[j] == ']' {
					class = false
				} else if src[j] == '/' && !class {
					break
				}
				j++
			}
			j++
			for j < n && isWordByte(src[j]) {
				j++ // flags
			}
			i = j
			prev, prevWord = tokOperand, ""
		case isWordByte(c) || c >= 0x80:
			j := i
			for j < n && (isWordByte(src[j]) || src[j] >= 0x80) {
				j++
			}
			word := src[i:j]
			i = j
			if c >= '0' && c <= '9' {
				beforeToken(tokOperand, "")
				prev, prevWord = tokOperand, ""
				continue
			}
			member := prev == tokDot
			beforeToken(tokWord, word)
			switch {
			case member:
				// a property name, whatever its spelling
			case nestsStatement[word]:
				// Only at a statement's start (mid-expression it is a
				// syntax error): the expression before it is done, the
				// statements holding it are not.
				endExpression(false)
				if err := add(1, true); err != nil {
					return err
				}
			case statementStart[word]:
				endExpression(false)
			case keywordOperators[word] || prev == tokWord:
				if err := add(1, false); err != nil {
					return err
				}
			}
			if member {
				prev, prevWord = tokWord, "" // a property is an operand's end
			} else {
				prev, prevWord = tokWord, word
			}
		case c == '(' || c == '[' || c == '{':
			beforeToken(tokOpen, "")
			if c != '{' && operandEnd(prev, prevWord) {
				// A call or an index nests its callee one level.
				if err := add(1, false); err != nil {
					return err
				}
			}
			if err := push(c); err != nil {
				return err
			}
			i++
			prev, prevWord = tokOpen, ""
		case c == ')' || c == ']' || c == '}':
			beforeToken(tokClose, "")
			pop()
			i++
			prev, prevWord = tokClose, ""
			if c == '}' {
				pendingBrace = true
			}
		case c == ',' || c == ';':
			beforeToken(tokSep, "")
			endExpression(false)
			pendingSemi = c == ';'
			i++
			prev, prevWord = tokSep, ""
		default:
			// An operator: each punctuator may nest one level.
			op := punctuator(src[i:])
			beforeToken(tokOp, op)
			i += len(op)
			if err := add(1, false); err != nil {
				return err
			}
			switch {
			case op == "." || op == "?.":
				prev = tokDot
			case op == "++" || op == "--" || (op == "!" && (prev == tokOperand || prev == tokWord || prev == tokClose)):
				prev = tokPostfix // a postfix operator or TypeScript's non-null assertion
			default:
				prev = tokOp
			}
			prevWord = ""
		}
	}
	return nil
}

type tokKind int

const (
	tokNone tokKind = iota
	tokOperand
	tokWord
	tokOpen
	tokClose
	tokSep
	tokOp
	tokDot
	tokPostfix
)

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// statementStart are words that begin a statement and cannot appear inside
// an expression at the same bracket level.
var statementStart = map[string]bool{
	"const": true, "var": true, "return": true, "throw": true, "break": true, "continue": true,
	"if": true, "for": true, "while": true, "do": true, "with": true, "try": true, "switch": true,
	"debugger": true,
}

// nestsStatement are statement words whose statement holds another one.
var nestsStatement = map[string]bool{"if": true, "else": true, "for": true, "while": true, "do": true, "with": true}

// keywordOperators are words that may nest the parser one more level:
// JavaScript's prefix and binary keywords and TypeScript's type operators.
var keywordOperators = map[string]bool{
	"typeof": true, "void": true, "delete": true, "await": true, "new": true, "yield": true,
	"in": true, "instanceof": true, "of": true, "case": true, "default": true,
	"function": true, "class": true, "extends": true, "implements": true, "async": true,
	"keyof": true, "readonly": true, "unique": true, "infer": true, "asserts": true, "is": true,
	"as": true, "satisfies": true, "let": true, "import": true, "export": true, "abstract": true,
	"declare": true, "namespace": true, "module": true, "type": true, "static": true,
	"get": true, "set": true, "public": true, "private": true, "protected": true, "accessor": true,
	"override": true, "out": true, "enum": true, "interface": true,
}

// notOperands are words after which an expression has not ended.
var notOperands = map[string]bool{}

func init() {
	for w := range keywordOperators {
		notOperands[w] = true
	}
	for w := range statementStart {
		notOperands[w] = true
	}
	notOperands["else"] = true
}

// punctuators are JavaScript's and TypeScript's operators, longest first.
var punctuators = []string{">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "%=", "&=", "|=", "^=",
	"**", "<<", ">>"}

// punctuator is the operator token at the start of s (one byte when none of
// the longer ones matches, whatever it is).
func punctuator(s string) string {
	for _, p := range punctuators {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return s[:1]
}

// continuesStatement reports whether a token after a completed statement
// continues the statement holding it (an else, a do's while, a try's catch).
func continuesStatement(k tokKind, word string) bool {
	switch word {
	case "else", "while", "catch", "finally":
		return k == tokWord
	}
	return false
}

// operandEnd reports whether the previous token can end an expression.
func operandEnd(k tokKind, word string) bool {
	switch k {
	case tokOperand, tokClose, tokPostfix:
		return true
	case tokWord:
		return !notOperands[word]
	}
	return false
}

// continues reports whether a token can continue an expression that
// precedes it; erring towards yes keeps the estimate high.
func continues(k tokKind, word string) bool {
	switch k {
	case tokWord:
		switch word {
		case "in", "instanceof", "as", "satisfies", "of", "else", "while", "catch", "finally", "extends", "implements", "is", "keyof":
			return true
		}
		return false
	case tokOperand:
		return false
	}
	return true // operators, brackets, separators and closers
}

// regexAllowed reports whether a '/' after the previous token starts a
// regular expression. Where JavaScript is ambiguous (after ')' or '}') it
// answers no, so the slash and whatever follows are scanned as code.
func regexAllowed(k tokKind, word string) bool {
	switch k {
	case tokNone, tokOpen, tokSep, tokOp:
		return true
	case tokWord:
		return notOperands[word]
	}
	return false
}
