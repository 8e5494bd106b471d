package orchestrator

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRedactSecretShapes: whatever a secret looks like and wherever it
// stands, no representation of it (raw, JSON-escaped once or twice, HTML
// entities, URL-encoded) and no truncated copy of at least six characters
// (marked "…", as state captures cut text) survives redaction.
func FuzzRedactSecretShapes(f *testing.F) {
	for _, s := range []string{`pa"ss\word<&>`, "hunter2-very-secret", "tr\u00e4n\u00e4 ÿ 日本語 pass", "a b+c/d?e=f&g", "line\nbreak\ttab", "\u2028sep\u2029"} {
		f.Add(s, "before ", " after")
		f.Add(s, `{"v":"`, `"}`)
	}
	f.Fuzz(func(t *testing.T, secret, before, after string) {
		if utf8.RuneCountInString(secret) < minPrefix || !utf8.ValidString(secret) || strings.ContainsAny(secret, "{}") {
			return
		}
		sec := newSecrets(map[string]string{"S": secret})
		for _, rep := range representations(secret) {
			for _, shown := range []string{rep, prefixRunes(rep, minPrefix) + "…", prefixRunes(rep, max(minPrefix, utf8.RuneCountInString(rep)-1)) + "…"} {
				out := sec.redact(before + shown + after)
				for _, leak := range representations(secret) {
					if len(leak) >= 4 && strings.Contains(out, leak) && !strings.Contains(before+after, leak) {
						t.Fatalf("secret %q shown as %q left %q in %q", secret, shown, leak, out)
					}
					if p := prefixRunes(leak, minPrefix) + "…"; strings.Contains(out, p) && !strings.Contains(before+after, p) {
						t.Fatalf("secret %q shown as %q left the prefix %q in %q", secret, shown, p, out)
					}
				}
			}
		}
	})
}

func TestRedactKeepsTextThatOnlyStartsLikeASecret(t *testing.T) {
	t.Parallel()
	s := newSecrets(map[string]string{"PW": "Password1!"})
	for in, want := range map[string]string{
		"getByLabel('Password')":   "getByLabel('Password')",
		"typed Password1! here":    "typed {{PW}} here",
		`{"to":"Password1…"}`:      `{"to":"{{PW}}…"}`,
		"value=Password1%21":       "value={{PW}}",
		`{"v":"Password1!\u0026"}`: `{"v":"{{PW}}\u0026"}`,
	} {
		if got := s.redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}
