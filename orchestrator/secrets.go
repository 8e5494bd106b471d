package orchestrator

import (
	"sort"
	"strings"
)

// secrets types secret values from {{NAME}} placeholders and takes them out
// of everything shown or stored: prompts, history, reports, errors.
type secrets struct {
	names  []string // longest value first, so overlapping values redact fully
	values map[string]string
}

func newSecrets(m map[string]string) *secrets {
	s := &secrets{values: map[string]string{}}
	for k, v := range m {
		if v != "" {
			s.values[k] = v
			s.names = append(s.names, k)
		}
	}
	sort.Slice(s.names, func(i, j int) bool { return len(s.values[s.names[i]]) > len(s.values[s.names[j]]) })
	return s
}

// fill replaces {{NAME}} with the secret's value, for typing into the page.
func (s *secrets) fill(v string) string {
	for _, k := range s.names {
		v = strings.ReplaceAll(v, "{{"+k+"}}", s.values[k])
	}
	return v
}

// redact replaces every secret value with its placeholder.
func (s *secrets) redact(text string) string {
	for _, k := range s.names {
		text = strings.ReplaceAll(text, s.values[k], "{{"+k+"}}")
	}
	return text
}

// has reports whether NAME is a secret.
func (s *secrets) has(name string) bool {
	_, ok := s.values[name]
	return ok
}
