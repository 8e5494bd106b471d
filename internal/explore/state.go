package explore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// element is one interactive element of a page representation.
type element struct {
	Role string `json:"role"`
	Name string `json:"name"`
	Ref  string `json:"ref"`
	Href string `json:"href,omitempty"` // a link's target, absolute
	// Key names the element within its page template across visits: role,
	// name with digits folded, and its rank among elements so named.
	Key string `json:"key"`
	// Options are a combobox's or listbox's choices.
	Options []string `json:"options,omitempty"`
}

// interactive roles an exploration exercises.
var interactive = map[string]bool{"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true,
	"radio": true, "combobox": true, "listbox": true, "tab": true, "menuitem": true, "switch": true, "spinbutton": true,
	"slider": true, "menuitemcheckbox": true, "menuitemradio": true, "option": false}

// structural roles keep their names in a state's identity.
var named = map[string]bool{"heading": true, "button": true, "link": true, "textbox": true, "searchbox": true,
	"checkbox": true, "radio": true, "combobox": true, "tab": true, "menuitem": true, "dialog": true,
	"alertdialog": true, "navigation": true, "form": true, "switch": true, "table": true, "columnheader": true}

var (
	lineRe   = regexp.MustCompile(`^(\s*)- ([a-z]+)(?: "((?:[^"\\]|\\.)*)")?(.*)$`)
	refRe    = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)
	urlRe    = regexp.MustCompile(`^\s*- /url: (.+)$`)
	digitsRe = regexp.MustCompile(`\d+([.,]\d+)*`)
	spaceRe  = regexp.MustCompile(`\s+`)
)

// parsed is what an exploration reads from a page representation.
type parsed struct {
	Elements []element
	Hash     string // structural: names of structure, not contents or values
}

// parseRepresentation reads the interactive elements and the structural
// hash of a page representation (the whole page, not the trimmed view).
func parseRepresentation(text, pageURL string) parsed {
	var p parsed
	base, _ := url.Parse(pageURL)
	seen := map[string]int{}
	var shape []string
	last := -1
	lastIndent := -1
	for _, line := range strings.Split(text, "\n") {
		if m := urlRe.FindStringSubmatch(line); m != nil {
			if last >= 0 && p.Elements[last].Role == "link" && p.Elements[last].Href == "" {
				if u, err := resolve(base, strings.Trim(strings.TrimSpace(m[1]), `"`)); err == nil {
					p.Elements[last].Href = u
				}
			}
			continue
		}
		m := lineRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent, role, name, rest := len(m[1]), m[2], unquote(m[3]), m[4]
		if role == "option" && last >= 0 && indent > lastIndent {
			e := &p.Elements[last]
			if (e.Role == "combobox" || e.Role == "listbox") && len(e.Options) < 50 {
				e.Options = append(e.Options, name)
			}
		}
		if named[role] {
			shape = append(shape, fmt.Sprintf("%d %s %q", indent, role, fold(name)))
		} else if role != "text" {
			shape = append(shape, fmt.Sprintf("%d %s", indent, role))
		}
		ref := refRe.FindStringSubmatch(rest)
		if ref == nil || !interactive[role] {
			continue
		}
		key := role + "|" + fold(name)
		seen[key]++
		if n := seen[key]; n > 1 {
			key += fmt.Sprintf("|%d", n)
		}
		p.Elements = append(p.Elements, element{Role: role, Name: name, Ref: ref[1], Key: key})
		last, lastIndent = len(p.Elements)-1, indent
	}
	// Repeated rows are one shape: a list of three items is the state a
	// list of four is.
	var compact []string
	for i, s := range shape {
		if i > 0 && s == shape[i-1] {
			continue
		}
		compact = append(compact, s)
	}
	sum := sha256.Sum256([]byte(strings.Join(compact, "\n")))
	p.Hash = hex.EncodeToString(sum[:4])
	return p
}

func unquote(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\"`, `"`), `\\`, `\`)
}

// fold is a name with its digits folded and its spacing normalised, so
// "Cart (2)" and "Cart (3)" are the same control.
func fold(s string) string {
	return strings.ToLower(strings.TrimSpace(spaceRe.ReplaceAllString(digitsRe.ReplaceAllString(s, "#"), " ")))
}

func resolve(base *url.URL, ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	u.Fragment = ""
	return u.String(), nil
}

// stateNode is one state of the app the exploration reached.
type stateNode struct {
	ID       string `json:"id"`
	Template string `json:"template"`
	URL      string `json:"url"`
	Title    string `json:"title,omitempty"`
	// Path is the shortest known action path from the start URL here.
	Path   []orchestrator.ManifestEntry `json:"path"`
	Visits int                          `json:"visits"`
	// Depth is how many pages away from the start the state's page was
	// first linked (the crawl's breadth order).
	Depth int `json:"depth"`
	// Elements are the interactive elements last seen here.
	Elements []element `json:"elements"`
	// Checked says the state-level detectors (accessibility, links) ran.
	Checked bool `json:"checked,omitempty"`
}

// transition is an action that moved the app from one state to another.
type transition struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Action string `json:"action"`
}

// stateID is a state's identity: the path template and the structure hash.
func stateID(pageURL, hash string) string { return orchestrator.PathTemplate(pageURL) + "#" + hash }

// scope decides which URLs an exploration may visit: the base URL's host,
// and under it the listed path prefixes (all paths when none).
type scope struct {
	host     string
	prefixes []string
}

func (s scope) allows(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, s.host) {
		return false
	}
	if len(s.prefixes) == 0 {
		return true
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	for _, pre := range s.prefixes {
		if strings.HasPrefix(p, pre) || strings.TrimSuffix(pre, "/") == p {
			return true
		}
	}
	return false
}

// safety refuses what suggests an irreversible act (deleting data,
// paying, signing out): controls that act by the whole words of their
// names, links that navigate by where they lead.
type safety struct {
	words []*regexp.Regexp
	list  []string // the words, lower case
}

func newSafety(words []string) safety {
	var s safety
	for _, w := range words {
		s.words = append(s.words, regexp.MustCompile(`(?i)(^|[^\pL\pN])`+regexp.QuoteMeta(w)+`($|[^\pL\pN])`))
		s.list = append(s.list, strings.Join(strings.FieldsFunc(strings.ToLower(w), notWordRune), " "))
	}
	return s
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }

// denies returns the deny word a text matches as whole words, or "".
func (s safety) denies(texts ...string) string {
	for _, t := range texts {
		if t == "" {
			continue
		}
		// A target's address speaks through its path: /account/delete-me.
		t = strings.NewReplacer("/", " ", "-", " ", "_", " ", ".", " ", "?", " ", "=", " ", "&", " ").Replace(t)
		for _, re := range s.words {
			if m := re.FindString(t); m != "" {
				return strings.Trim(strings.ToLower(m), " ")
			}
		}
	}
	return ""
}

// refuses returns the deny word that keeps anyone from acting on e (on the
// page at address page), or "". A link that loads another page is a GET:
// it is judged by where it leads, not by its name ("Add/Remove Elements"
// is a page about removing, not a removal). Every other control acts, and
// is judged by the whole words of its name and target.
func (s safety) refuses(e element, page string) string {
	if e.Role == "link" && e.Href != "" && pageKey(e.Href) != pageKey(page) {
		return s.deniesHref(e.Href)
	}
	return s.denies(e.Name, e.Href)
}

// deniesHref returns the deny word an address acts by, or "": a path
// segment or query value that is the word or starts with it
// (/logout, /items/3/delete, /delete-account, ?action=remove), not one
// that merely contains it (/add_remove_elements/).
func (s safety) deniesHref(href string) string {
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	parts := strings.Split(u.Path, "/")
	for k, vs := range u.Query() {
		parts = append(append(parts, k), vs...)
	}
	for _, p := range parts {
		words := strings.FieldsFunc(strings.ToLower(p), notWordRune)
		phrase := strings.Join(words, " ")
		if phrase == "" {
			continue
		}
		for _, w := range s.list {
			if phrase == w || strings.HasPrefix(phrase, w+" ") || strings.ReplaceAll(w, " ", "") == strings.Join(words, "") {
				return w
			}
		}
	}
	return ""
}
