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

//go:embed pages/*.html corpus.json
var files embed.FS

// Case is one corpus step.
type Case struct {
	Page string `json:"page"`
	Step string `json:"step"`
	// Want is the data-corpus mark of the element meant ("a|b" when
	// either is right); empty when no single element is meant and the
	// step must go to the agent.
	Want string `json:"want"`
	// Within says the mark is on the container the target is scoped to
	// (a list whose items are counted).
	Within bool `json:"within,omitempty"`
	// Action or Assert is what the step does to it.
	Action browser.Action    `json:"action,omitempty"`
	Assert browser.Assertion `json:"assert,omitempty"`
}

// Corpus returns the corpus.
func Corpus() []Case {
	raw, err := files.ReadFile("corpus.json")
	if err != nil {
		panic(err)
	}
	var cs []Case
	if err := json.Unmarshal(raw, &cs); err != nil {
		panic(err)
	}
	return cs
}

// Pages serves the corpus pages at /<name>.html.
func Pages() http.Handler {
	sub, err := fs.Sub(files, "pages")
	if err != nil {
		panic(err)
	}
	return http.FileServer(http.FS(sub))
}
