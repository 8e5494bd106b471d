package suite

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
)

// A rewritten literal is spelled the way the file spells the one it
// replaces: a name copied from the accessibility tree with an icon font's
// private-use glyph in it may be written as the glyph or as \uF090, and
// either stays as it was. Characters a reader cannot see (private-use
// glyphs, format marks, spaces other than the space) that the literal did
// not already write as they are are written as escapes.

// spelling is how a literal as written spells what is not plain text.
type spelling struct {
	escaped map[rune]bool // runes written as escapes
	raw     map[rune]bool // runes written as themselves
	braces  bool          // \u{…} escapes
	lower   bool          // lower-case hex digits
}

// spellingOf reads a literal's spelling from its text as written (quotes
// or slashes included).
func spellingOf(raw string) spelling {
	sp := spelling{escaped: map[rune]bool{}, raw: map[rune]bool{}}
	rs := []rune(raw)
	for i := 0; i < len(rs); i++ {
		if rs[i] != '\\' || i+1 >= len(rs) {
			sp.raw[rs[i]] = true
			continue
		}
		r, n, form := readEscape(rs[i+1:])
		if n == 0 {
			i++ // a simple escape (\n, \', \\): one character
			continue
		}
		sp.escaped[r] = true
		sp.braces = sp.braces || form == 'b'
		hex := string(rs[i+1 : i+1+n])
		sp.lower = sp.lower || strings.ToLower(hex) == hex && strings.ToUpper(hex) != hex
		i += n
	}
	return sp
}

// readEscape reads a \u or \x escape after its backslash: the rune, how
// many runes it takes (0: not one of these) and its form (u, b for braces,
// x). A surrogate pair written as two \u escapes is one rune.
func readEscape(rs []rune) (rune, int, byte) {
	hexOf := func(s []rune) (rune, bool) {
		v, err := strconv.ParseUint(string(s), 16, 32)
		return rune(v), err == nil && len(s) > 0
	}
	switch {
	case len(rs) >= 3 && rs[0] == 'u' && rs[1] == '{':
		end := 2
		for end < len(rs) && rs[end] != '}' {
			end++
		}
		if r, ok := hexOf(rs[2:min(end, len(rs))]); ok && end < len(rs) {
			return r, end + 1, 'b'
		}
	case len(rs) >= 5 && rs[0] == 'u':
		r, ok := hexOf(rs[1:5])
		if !ok {
			return 0, 0, 0
		}
		if utf16.IsSurrogate(r) && len(rs) >= 11 && rs[5] == '\\' && rs[6] == 'u' {
			if lo, ok := hexOf(rs[7:11]); ok {
				if c := utf16.DecodeRune(r, lo); c != unicode.ReplacementChar {
					return c, 11, 'u'
				}
			}
		}
		return r, 5, 'u'
	case len(rs) >= 3 && rs[0] == 'x':
		if r, ok := hexOf(rs[1:3]); ok {
			return r, 3, 'x'
		}
	}
	return 0, 0, 0
}

// unseen says a rune is one a reader cannot tell apart by looking.
func unseen(r rune) bool {
	return r != ' ' && (unicode.IsSpace(r) || unicode.IsControl(r) || unicode.In(r, unicode.Co, unicode.Cf) || !unicode.IsPrint(r))
}

// escape writes r as an escape in the literal's form (braces only where
// the literal allows them).
func (sp spelling) escape(r rune, braces bool) string {
	f := "%04X"
	if sp.lower {
		f = "%04x"
	}
	switch {
	case r > 0xFFFF && braces:
		return `\u{` + strings.TrimLeft(fmt.Sprintf(f, r), "0") + `}`
	case r > 0xFFFF:
		hi, lo := utf16.EncodeRune(r)
		return `\u` + fmt.Sprintf(f, hi) + `\u` + fmt.Sprintf(f, lo)
	}
	return `\u` + fmt.Sprintf(f, r)
}

// write appends r to b as the literal spells it: as an escape where it
// wrote r as one, or r is unseen and it did not write r as itself.
func (sp spelling) write(b *strings.Builder, r rune, braces bool) {
	if sp.escaped[r] || (unseen(r) && !sp.raw[r]) {
		b.WriteString(sp.escape(r, braces))
		return
	}
	b.WriteRune(r)
}

// quoteLike writes v as a string literal with l's own quote character and
// spelling.
func quoteLike(l Literal, v string) string {
	q := '\''
	if l.Quote != 0 {
		q = rune(l.Quote)
	}
	sp := spellingOf(l.Raw)
	var b strings.Builder
	b.WriteRune(q)
	prev := rune(0)
	for _, r := range v {
		switch {
		case r == '\\' || r == q || (q == '`' && r == '{' && prev == '$'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		default:
			sp.write(&b, r, sp.braces)
		}
		prev = r
	}
	b.WriteRune(q)
	return b.String()
}

// regexLike writes a regular expression literal that matches v, with l's
// flags and spelling.
func regexLike(l Literal, v string) string {
	sp := spellingOf(l.Raw)
	var b strings.Builder
	b.WriteByte('/')
	for _, r := range v {
		if strings.ContainsRune(`\^$.*+?()[]{}|/`, r) {
			b.WriteByte('\\')
			b.WriteRune(r)
			continue
		}
		sp.write(&b, r, sp.braces && strings.Contains(l.Flags, "u"))
	}
	return b.String() + "/" + l.Flags
}

// jsRegex turns a JavaScript pattern and its flags into Go's syntax
// (enough for names: the i, s and m flags, and \u escapes).
func jsRegex(pattern, flags string) string {
	f := ""
	for _, c := range flags {
		if c == 'i' || c == 's' || c == 'm' {
			f += string(c)
		}
	}
	var b strings.Builder
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		if rs[i] == '\\' && i+1 < len(rs) {
			if r, n, form := readEscape(rs[i+1:]); n > 0 && form != 'x' {
				fmt.Fprintf(&b, `\x{%X}`, r)
				i += n
				continue
			}
			b.WriteRune(rs[i])
			i++
		}
		b.WriteRune(rs[i])
	}
	if f != "" {
		return "(?" + f + ")" + b.String()
	}
	return b.String()
}
