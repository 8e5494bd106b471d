// Package docs_test checks the README and the pages under docs/ against
// what they describe: the commands they show run, their JSON examples are
// accepted by the API's own validation, the routes, variables and make
// targets they name exist, and their links land.
package docs_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/store"
)

// pages are the README and every page of docs/, by path from the module
// root.
func pages(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	paths, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(paths, "../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel := "docs/" + p
		if p == "../README.md" {
			rel = "README.md"
		}
		out[rel] = string(b)
	}
	if len(out) < 8 {
		t.Fatalf("only %d pages found", len(out))
	}
	return out
}

// block is a fenced code block of a page.
type block struct {
	page, lang, text string
	line             int
}

var fence = regexp.MustCompile("(?m)^```([a-z]*)\n((?s:.*?))^```")

func blocks(pages map[string]string) []block {
	var out []block
	for page, text := range pages {
		for _, m := range fence.FindAllStringSubmatchIndex(text, -1) {
			out = append(out, block{page: page, lang: text[m[2]:m[3]], text: text[m[4]:m[5]], line: strings.Count(text[:m[0]], "\n") + 1})
		}
	}
	return out
}

// TestTheFrontPageIsShortAndLeadsToEveryPage: the README is a front page
// (at most 150 lines) with a link to each page of docs/.
func TestTheFrontPageIsShortAndLeadsToEveryPage(t *testing.T) {
	t.Parallel()
	ps := pages(t)
	readme := ps["README.md"]
	if n := strings.Count(readme, "\n"); n > 150 {
		t.Errorf("the README has %d lines, want at most 150", n)
	}
	for page := range ps {
		if page != "README.md" && !strings.Contains(readme, "]("+page+")") {
			t.Errorf("the README does not link %s", page)
		}
	}
	for _, want := range []string{"make demo", "make test", "A first scenario", "A first project repair", "Read on"} {
		if !strings.Contains(readme, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
}

var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// slug is a heading's anchor as GitHub makes it.
func slug(heading string) string {
	h := strings.ToLower(strings.TrimSpace(heading))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ' || r == '-':
			b.WriteRune('-')
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func anchors(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "#") {
			out = append(out, slug(strings.TrimLeft(l, "# ")))
		}
	}
	return out
}

// TestEveryLinkLands: each relative link names a file of the module, and
// each anchor a heading of its page.
func TestEveryLinkLands(t *testing.T) {
	t.Parallel()
	ps := pages(t)
	for page, text := range ps {
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
			}
			if _, err := os.Stat(filepath.Join("..", dest)); err != nil {
				t.Errorf("%s links %s: %v", page, target, err)
				continue
			}
			if anchor != "" && !slices.Contains(anchors(ps[dest]), anchor) {
				t.Errorf("%s links %s: no heading of %s has the anchor %q", page, target, dest, anchor)
			}
		}
	}
}

// anyURL takes every URL: the examples name hosts of their own, and what
// is checked here is their shape, not where they lead.
type anyURL struct{}

func (anyURL) CheckURL(string) error { return nil }

// strict decodes raw into v as the API does: unknown fields refused.
func strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// TestEveryJSONExampleIsAccepted: each JSON example parses; a job, a
// scenario or an exploration is one the API's own validation accepts; a
// webhook's body is what deliveries carry.
func TestEveryJSONExampleIsAccepted(t *testing.T) {
	t.Parallel()
	checked := map[string]int{}
	for _, b := range blocks(pages(t)) {
		if b.lang != "json" {
			continue
		}
		where := b.page + ":" + strconv.Itoa(b.line)
		var top map[string]json.RawMessage
		if err := json.Unmarshal([]byte(b.text), &top); err != nil {
			t.Errorf("%s: not JSON: %v", where, err)
			continue
		}
		var err error
		switch {
		case top["kind"] != nil:
			var s jobs.Submission
			if err = strict([]byte(b.text), &s); err == nil {
				err = s.Validate(anyURL{})
			}
			checked["job"]++
		case top["steps"] != nil:
			var s jobs.Submission
			if err = strict([]byte(`{"kind":"scenario","scenario":`+b.text+`}`), &s); err == nil {
				err = s.Validate(anyURL{})
			}
			checked["scenario"]++
		case top["event"] != nil:
			var p store.EventPayload
			if err = strict([]byte(b.text), &p); err == nil && !p.Event.Valid() {
				err = errString("unknown event " + string(p.Event))
			}
			checked["event"]++
		case top["mcpServers"] != nil:
			checked["mcp"]++
		default:
			t.Errorf("%s: a JSON example of nothing this test knows: say what it is checked as", where)
		}
		if err != nil {
			t.Errorf("%s: the API refuses its own example: %v", where, err)
		}
	}
	for _, kind := range []string{"job", "scenario", "event", "mcp"} {
		if checked[kind] == 0 {
			t.Errorf("no %s example was checked", kind)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

var (
	cliOnce sync.Once
	cliBin  string
	cliErr  error
)

// cli builds the webpilot CLI once.
func cli(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "webpilot-docs-")
		if err != nil {
			cliErr = err
			return
		}
		cliBin = filepath.Join(dir, "webpilot")
		out, err := exec.Command("go", "build", "-o", cliBin, "../cmd/webpilot").CombinedOutput()
		if err != nil {
			cliErr = errString(string(out))
		}
	})
	if cliErr != nil {
		t.Fatalf("build the CLI: %v", cliErr)
	}
	return cliBin
}

// commandLines are the CLI commands a page shows: lines of its shell and
// plain code blocks, and inline code, that start with webpilot.
func commandLines(ps map[string]string) map[string]string {
	out := map[string]string{} // command → where
	add := func(line, where string) {
		line = strings.Join(strings.Fields(line), " ") // inline code wraps with the text
		line = strings.TrimPrefix(line, "bin/")
		if strings.HasPrefix(line, "webpilot ") {
			out[line] = where
		}
	}
	for _, b := range blocks(ps) {
		if b.lang != "sh" && b.lang != "" {
			continue
		}
		for i, l := range strings.Split(b.text, "\n") {
			add(l, b.page+":"+strconv.Itoa(b.line+1+i))
		}
	}
	inline := regexp.MustCompile("`((?:bin/)?webpilot [^`]+)`")
	for page, text := range ps {
		for _, m := range inline.FindAllStringSubmatch(text, -1) {
			add(m[1], page)
		}
	}
	return out
}

// words splits a command line as the shell would, up to a comment or
// an operator; a word of alternatives (list|clear) is its first.
func words(line string) []string {
	var out []string
	var cur strings.Builder
	quote := rune(0)
	inWord := false
	flush := func() {
		if inWord {
			w := cur.String()
			if a, _, ok := strings.Cut(w, "|"); ok && !strings.HasPrefix(w, "-") {
				w = a
			}
			out = append(out, w)
		}
		cur.Reset()
		inWord = false
	}
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case !inWord && (r == '#' || r == '>' || r == '&' || r == ';' || r == '|'):
			flush()
			return out
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return out
}

var usageLine = regexp.MustCompile(`(?m)^Usage:\n\s+(webpilot[^\n]*)`)

// TestEveryCommandShownRuns: each webpilot command a page shows is a
// command of the CLI with flags it has (its --help runs), and no word the
// page means as a subcommand is taken for an argument.
func TestEveryCommandShownRuns(t *testing.T) {
	t.Parallel()
	bin := cli(t)
	lines := commandLines(pages(t))
	if len(lines) < 20 {
		t.Fatalf("only %d commands found in the pages", len(lines))
	}
	for line, where := range lines {
		args := words(line)[1:]
		if len(args) > 0 && args[0] == strings.ToUpper(args[0]) {
			continue // `webpilot COMMAND --help`: any command
		}
		commandRuns(t, bin, line, where)
	}
}

// commandRuns checks that a webpilot command line is one of the CLI's,
// with flags it has: its --help runs and is the command's own.
func commandRuns(t *testing.T, bin, line, where string) {
	t.Helper()
	args := words(line)[1:]
	cmd := exec.Command(bin, append(args, "--help")...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("%s: `%s` does not run: %v\n%s", where, line, err, out)
		return
	}
	m := usageLine.FindStringSubmatch(string(out))
	if m == nil {
		t.Errorf("%s: `%s --help` printed no usage:\n%s", where, line, out)
		return
	}
	// The command that answered: its path's words (lower case, before
	// placeholders and [flags]).
	var path []string
	for _, w := range strings.Fields(m[1])[1:] {
		if w != strings.ToLower(w) || strings.HasPrefix(w, "[") {
			break
		}
		path = append(path, w)
	}
	if len(path) > len(args) || !slices.Equal(path, args[:len(path)]) {
		t.Errorf("%s: `%s` is answered by `webpilot %s`", where, line, strings.Join(path, " "))
		return
	}
	if rest := args[len(path):]; len(rest) > 0 && !strings.HasPrefix(rest[0], "-") && strings.Contains(string(out), "Available Commands:") {
		t.Errorf("%s: `%s`: %q is no subcommand of `webpilot %s`", where, line, rest[0], strings.Join(path, " "))
	}
}

// TestWhatThePagesNameExists: each make target, route and environment
// variable a page names is one the module has; every route the API
// serves and every variable its configuration reads is in a page.
func TestWhatThePagesNameExists(t *testing.T) {
	t.Parallel()
	ps := pages(t)
	all := ""
	for _, text := range ps {
		all += text + "\n"
	}

	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("`make ([a-z-]+)").FindAllStringSubmatch(all, -1) {
		if !regexp.MustCompile(`(?m)^` + m[1] + `:`).Match(makefile) {
			t.Errorf("make %s: no such target in the Makefile", m[1])
		}
	}

	// Routes: those the OpenAPI document serves, against those named.
	srv := httptest.NewServer(api.New(api.Config{}, nil, nil, anyURL{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	norm := regexp.MustCompile(`\{[^}]*\}`)
	served := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			served[strings.ToUpper(method)+" "+norm.ReplaceAllString(path, "{}")] = true
		}
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("\\b(GET|POST|DELETE|PUT|PATCH) (/[^\\s`|,)?]*)").FindAllStringSubmatch(all, -1) {
		r := m[1] + " " + norm.ReplaceAllString(m[2], "{}")
		named[r] = true
		if !served[r] {
			t.Errorf("the pages name %s %s, which the API does not serve", m[1], m[2])
		}
	}
	for r := range served {
		if !named[r] {
			t.Errorf("the API serves %s, which no page names", r)
		}
	}

	// Variables: each named is read somewhere in the module; each the
	// configuration reads is named.
	var code strings.Builder
	for _, glob := range []string{"../internal/*/*.go", "../cmd/*/*.go", "../scripts/*.sh", "../Makefile", "../docker-compose.yml", "../e2e/*.go"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, _ := os.ReadFile(f)
			code.Write(b)
		}
	}
	for _, v := range uniq(regexp.MustCompile(`\b(?:WEBPILOT|OPENAI|NATS|OTEL|PLAYWRIGHT)_[A-Z0-9_]+\b`).FindAllString(all, -1)) {
		if !strings.Contains(code.String(), v) {
			t.Errorf("the pages name %s, which nothing in the module reads", v)
		}
	}
	cfg, err := os.ReadFile("../internal/config/config.go")
	if err != nil {
		t.Fatal(err)
	}
	ops := ps["docs/operations.md"]
	for _, m := range regexp.MustCompile(`env:"([A-Z0-9_]+)"`).FindAllStringSubmatch(string(cfg), -1) {
		if !regexp.MustCompile(`\b` + m[1] + `\b`).MatchString(ops) {
			t.Errorf("the configuration reads %s, which docs/operations.md does not name", m[1])
		}
	}
}

func uniq(in []string) []string {
	slices.Sort(in)
	return slices.Compact(in)
}

// TestEveryGoExampleBuilds: each Go example is a program that compiles
// and passes go vet against this module as it is.
func TestEveryGoExampleBuilds(t *testing.T) {
	t.Parallel()
	n := 0
	for _, b := range blocks(pages(t)) {
		if b.lang != "go" {
			continue
		}
		n++
		where := b.page + ":" + strconv.Itoa(b.line)
		file := filepath.Join(t.TempDir(), "main.go")
		if err := os.WriteFile(file, []byte(b.text), 0o644); err != nil {
			t.Fatal(err)
		}
		// Run from the module, so that its packages resolve as they are.
		cmd := exec.Command("go", "vet", file)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: the example does not build: %v\n%s", where, err, out)
		}
	}
	if n == 0 {
		t.Fatal("no Go example found: the Go client's page lost it")
	}
}
