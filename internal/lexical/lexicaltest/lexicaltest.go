// Package lexicaltest holds the lexical tier's corpus: pages written like
// real apps' and the steps people write against them, each with the
// element it means. The tier's test and `make bench` both measure on it.
package lexicaltest

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"

	"github.com/webpilot/webpilot/internal/browser"
)

//go:embed pages/*.html corpus.json fresh/*.html fresh/corpus.json
var files embed.FS

// Case is one corpus step: what its first clause means, and what each
// further clause of a compound step means, in order.
type Case struct {
	Page string `json:"page"`
	Step string `json:"step"`
	// After is the step before it, when the step points back at what
	// that one named ("untick the third one").
	After string `json:"after,omitempty"`
	Part
	// Then are the meanings of the step's further clauses ("… and press
	// Enter"); a compound step is right only when every clause is.
	Then []Part `json:"then,omitempty"`
}

// Part is what one clause of a step means.
type Part struct {
	// Want is the data-corpus mark of the element meant ("a|b" when
	// either is right); empty when the clause names no element: then
	// Action says what it does without one (a key press), and with no
	// Action either no single element is meant and the clause must go to
	// the agent.
	Want string `json:"want"`
	// Within says the mark is on the container the target is scoped to
	// (a list whose items are counted).
	Within bool `json:"within,omitempty"`
	// Action or Assert is what the step does to it.
	Action browser.Action    `json:"action,omitempty"`
	Assert browser.Assertion `json:"assert,omitempty"`
	// Value is the value the command must carry (the text a fill types,
	// the option chosen, the key pressed, the text checked), when the
	// clause gives one: never the sentence's leftover words.
	Value *string `json:"value,omitempty"`
}

// ForAgent reports whether the clause is meant for the agent.
func (p Part) ForAgent() bool { return p.Want == "" && p.Action == "" && p.Assert == "" }

// Parts are the meanings of every clause of the step, in order.
func (c Case) Parts() []Part { return append([]Part{c.Part}, c.Then...) }

// Corpus returns the first corpus, written alongside the fast tiers.
func Corpus() []Case { return cases("corpus.json") }

// Pages serves the first corpus's pages at /<name>.html.
func Pages() http.Handler { return serve("pages") }

// Fresh returns the second corpus: steps written the way manual test
// cases, Gherkin feature files and QA checklists phrase them, for apps of
// other kinds than the first corpus's (a bank, a clinic, hotels, a
// library, a job application, an issue tracker). It is kept apart from
// the first and measured on its own.
func Fresh() []Case { return cases("fresh/corpus.json") }

// FreshPages serves the second corpus's pages at /<name>.html.
func FreshPages() http.Handler { return serve("fresh") }

func cases(name string) []Case {
	raw, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	var cs []Case
	if err := json.Unmarshal(raw, &cs); err != nil {
		panic(err)
	}
	return cs
}

func serve(dir string) http.Handler {
	sub, err := fs.Sub(files, dir)
	if err != nil {
		panic(err)
	}
	return http.FileServer(http.FS(sub))
}
