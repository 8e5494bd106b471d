package client

import (
	"bytes"
	"encoding/json"
	"strings"
)

// UnmarshalJSON reads a step written as a bare sentence ("Click Add") as
// well as an object, as the API does; an object's unknown field is an
// error here too.
func (s *Step) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err == nil {
		*s = Step{Text: text}
		return nil
	}
	type step Step
	var p step
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*s = Step(p)
	return nil
}

// ScenarioFromText reads a plain-text scenario: a step a line, blank lines
// and lines starting with # left out, and a first line "base: URL" setting
// its base URL (baseURL otherwise).
func ScenarioFromText(name, text, baseURL string) Scenario {
	sc := Scenario{Name: name, BaseURL: baseURL}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "base:"); ok && len(sc.Steps) == 0 {
			sc.BaseURL = strings.TrimSpace(rest)
			continue
		}
		sc.Steps = append(sc.Steps, Step{Text: line})
	}
	return sc
}
