package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// secrets types secret values from {{NAME}} placeholders and takes them out
// of everything shown or stored: prompts, titles, URLs, deltas, history,
// checkpoints, reports, errors and logs.
type secrets struct {
	names  []string // longest value first, so overlapping values redact fully
	values map[string]string
	forms  []form // every way a value can be written, longest first
}

// form is one representation of a secret's value.
type form struct {
	text, placeholder string
}

// minPrefix is the shortest part of a secret's beginning that is redacted
// on its own when it is a truncated copy (followed by a truncation mark, as
// the browser's state captures write them): a value cut to fit a line still
// carries its first characters. A prefix without the mark is left alone, so
// that page text that merely starts like a secret ("Password" for
// "Password1!") keeps its meaning in locators and the spec.
const minPrefix = 6

// truncationMarks end a truncated copy of a text.
var truncationMarks = []string{"…", "..."}

func newSecrets(m map[string]string) *secrets {
	s := &secrets{values: map[string]string{}}
	for k, v := range m {
		if v != "" {
			s.values[k] = v
			s.names = append(s.names, k)
		}
	}
	sort.Slice(s.names, func(i, j int) bool { return len(s.values[s.names[i]]) > len(s.values[s.names[j]]) })
	seen := map[string]bool{}
	for _, k := range s.names {
		for _, f := range representations(s.values[k]) {
			if f != "" && !seen[f] {
				seen[f] = true
				s.forms = append(s.forms, form{text: f, placeholder: "{{" + k + "}}"})
			}
		}
	}
	sort.SliceStable(s.forms, func(i, j int) bool { return len(s.forms[i].text) > len(s.forms[j].text) })
	return s
}

// representations are the ways a value reaches text: as it is, escaped for
// JSON (once, and twice: a JSON document inside a quoted string), for HTML,
// and encoded for a URL's query or path.
func representations(v string) []string {
	jsonEsc := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b[1 : len(b)-1])
	}
	plainJSON := func(s string) string { // without Go's HTML-safe escapes
		r := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")
		return r.Replace(jsonEsc(s))
	}
	out := []string{v, jsonEsc(v), plainJSON(v), jsonEsc(jsonEsc(v)), plainJSON(plainJSON(v)),
		html.EscapeString(v), strings.NewReplacer("&#34;", "&quot;", "&#39;", "&apos;").Replace(html.EscapeString(v)),
		url.QueryEscape(v), url.PathEscape(v), strings.ReplaceAll(url.QueryEscape(v), "+", "%20")}
	return out
}

// SecretText is, for a job's secret values by name, the redaction every
// text it shows goes through (each value in every representation, and
// truncated copies, replaced by its placeholder) and whether a text shows a
// secret at all, which pictures paint over. With no secrets shows is nil.
func SecretText(values map[string]string) (redact func(string) string, shows func(string) bool) {
	s := newSecrets(values)
	if len(s.forms) == 0 {
		return func(t string) string { return t }, nil
	}
	return s.redact, s.shows
}

// shows reports whether text holds a secret in any form redact replaces.
func (s *secrets) shows(text string) bool { return text != "" && s.redact(text) != text }

// fill replaces {{NAME}} with the secret's value, for typing into the page.
func (s *secrets) fill(v string) string {
	for _, k := range s.names {
		v = strings.ReplaceAll(v, "{{"+k+"}}", s.values[k])
	}
	return v
}

// redact replaces every representation of every secret value, and every
// truncated copy of one (at least minPrefix characters of its beginning
// followed by a truncation mark), with the secret's placeholder.
func (s *secrets) redact(text string) string {
	if len(s.forms) == 0 || text == "" {
		return text
	}
	for _, f := range s.forms {
		text = redactForm(text, f)
	}
	return text
}

// redactForm replaces whole and truncated occurrences of one form.
func redactForm(text string, f form) string {
	seed := f.text
	if utf8.RuneCountInString(seed) > minPrefix {
		seed = prefixRunes(seed, minPrefix)
	}
	// Seeds are matched byte-wise; a seed that ends inside a character of
	// the text cannot match, since the form is valid UTF-8.
	if !strings.Contains(text, seed) {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, seed)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		// Extend the match as far as the text follows the form.
		n := len(seed)
		for n < len(f.text) && i+n < len(text) && text[i+n] == f.text[n] {
			n++
		}
		// A match that stopped inside a multi-byte character ends before it.
		for n > len(seed) && n < len(f.text) && !utf8.RuneStart(f.text[n]) {
			n--
		}
		if n < len(f.text) && !truncated(text[i+n:]) {
			// Only the beginning, and not a truncated copy: keep it.
			b.WriteString(text[:i+1])
			text = text[i+1:]
			continue
		}
		b.WriteString(text[:i])
		b.WriteString(f.placeholder)
		text = text[i+n:]
	}
}

func truncated(rest string) bool {
	for _, m := range truncationMarks {
		if strings.HasPrefix(rest, m) {
			return true
		}
	}
	return false
}

func prefixRunes(s string, n int) string {
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// has reports whether NAME is a secret.
func (s *secrets) has(name string) bool {
	_, ok := s.values[name]
	return ok
}

// redactJSON redacts v's JSON form and decodes it back, so that every
// string inside (URLs, titles, settle reports, notes) is covered, however
// deeply it sits. ok is false if the redacted form no longer decodes.
func redactJSON[T any](s *secrets, v T) (out T, ok bool) {
	if len(s.forms) == 0 {
		return v, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return out, false
	}
	if err := json.Unmarshal([]byte(s.redact(string(b))), &out); err != nil {
		return out, false
	}
	return out, true
}

// RedactLogger returns a logger that writes what l writes with every
// representation of the secret values replaced by their placeholders, for
// everything logged on a job's behalf (the browser's blocked URLs included).
func RedactLogger(l *slog.Logger, secretValues map[string]string) *slog.Logger {
	s := newSecrets(secretValues)
	if len(s.forms) == 0 {
		return l
	}
	return slog.New(redactHandler{inner: l.Handler(), s: s})
}

type redactHandler struct {
	inner slog.Handler
	s     *secrets
}

func (h redactHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h redactHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.redact(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		red := make([]any, len(attrs))
		for i, g := range attrs {
			red[i] = h.attr(g)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		return slog.String(a.Key, h.s.redact(fmt.Sprint(v.Any())))
	}
	return a
}

func (h redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return redactHandler{inner: h.inner.WithAttrs(red), s: h.s}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{inner: h.inner.WithGroup(name), s: h.s}
}
