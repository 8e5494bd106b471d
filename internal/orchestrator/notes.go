package orchestrator

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Learned notes (experiences) are written by a model reading pages, so they
// are untrusted: before they are kept or shown to a later job they are read
// as a reader would see them (compatibility forms folded, look-alike
// letters mapped to Latin, invisible characters dropped), and refused when
// they pose as a message of the conversation anywhere, name a place other
// than the app (a URL, a protocol-relative //host, a bare host name or an
// IP address) or carry a code or local scheme.
var (
	// roleMarker is a role word followed by a colon, wherever it stands
	// (behind a fake boundary too), or a chat template's token.
	roleMarker = regexp.MustCompile(`(?i)(\b(system|assistant|developer|user|tool|human|ai)\s*[\]):>|*]*\s*:|<\||\|>|\[/?inst\]|<</?sys>>|</?s>|<\s*/?\s*(system|assistant|instructions?)\b)`)
	// anyURL finds URLs and code or local schemes.
	anyURL = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^\s"'<>]+|(javascript|data|file|chrome|view-source|about|vbscript|blob):\S*)`)
	// hostRef finds what names a host without a scheme: //host, a dotted
	// name ending in a top-level domain, an IPv4 address or [IPv6].
	hostRef = regexp.MustCompile(`(?i)(?:^|[^a-z0-9@._/-])(//[^\s"'<>/]+|(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}\b|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\])(:\d+)?`)
)

// fileExtensions end names that look like hosts but are files or
// properties ("cart.html", "window.location").
var fileExtensions = map[string]bool{"html": true, "htm": true, "php": true, "js": true, "mjs": true, "ts": true, "css": true,
	"json": true, "png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true, "webp": true, "ico": true, "asp": true,
	"aspx": true, "jsp": true, "txt": true, "xml": true, "pdf": true, "csv": true, "md": true, "zip": true, "length": true,
	"value": true, "href": true, "click": true, "location": true, "textcontent": true, "innertext": true}

// confusables maps letters that look like Latin ones (Cyrillic, Greek,
// full-width forms are folded by NFKC) to the Latin letter.
var confusables = strings.NewReplacer(
	"а", "a", "е", "e", "о", "o", "р", "p", "с", "c", "у", "y", "х", "x", "ѕ", "s", "і", "i", "ј", "j", "ԁ", "d", "ɡ", "g",
	"һ", "h", "ո", "n", "ԛ", "q", "ѡ", "w", "ᴠ", "v", "ʏ", "y", "ɪ", "i", "ʟ", "l", "ᴍ", "m", "ɴ", "n", "ᴛ", "t",
	"А", "A", "В", "B", "Е", "E", "К", "K", "М", "M", "Н", "H", "О", "O", "Р", "P", "С", "C", "Т", "T", "Х", "X",
	"Ѕ", "S", "І", "I", "Ј", "J", "Ү", "Y", "Ԛ", "Q", "Ԝ", "W",
	"α", "a", "ο", "o", "ρ", "p", "τ", "t", "ν", "v", "υ", "u", "ι", "i", "κ", "k", "ε", "e", "χ", "x", "γ", "y",
	"Α", "A", "Β", "B", "Ε", "E", "Ζ", "Z", "Η", "H", "Ι", "I", "Κ", "K", "Μ", "M", "Ν", "N", "Ο", "O", "Ρ", "P",
	"Τ", "T", "Υ", "Y", "Χ", "X",
)

// readAsShown is a note as a reader sees it, for matching.
func readAsShown(e string) string {
	e = norm.NFKC.String(e)
	e = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) {
			return -1 // zero-width and bidi controls, combining marks
		}
		if unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, e)
	return confusables.Replace(e)
}

// safeExperience says whether a learned note may be kept and shown to later
// jobs: short, no role markers, no place but the app's own origin (allowed
// decides), no code schemes.
func (r *run) safeExperience(e string) bool { return safeExperience(e, r.origins.allow) }

func safeExperience(e string, allowed func(*url.URL) bool) bool {
	if e == "" || len(e) > maxExperience {
		return false
	}
	shown := readAsShown(e)
	if roleMarker.MatchString(shown) {
		return false
	}
	for _, m := range anyURL.FindAllString(shown, -1) {
		u, err := url.Parse(strings.TrimRight(m, ".,;:!?)]}"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !allowed(u) {
			return false
		}
	}
	// Hosts named without a scheme are allowed only when they are the
	// app's (over either scheme the app allows).
	withoutURLs := anyURL.ReplaceAllString(shown, " ")
	for _, sm := range hostRef.FindAllStringSubmatch(withoutURLs, -1) {
		h := strings.TrimPrefix(strings.TrimRight(sm[1], ".,;:!?)]}"), "//")
		if i := strings.LastIndexByte(h, '.'); i >= 0 && !strings.HasPrefix(h, "[") && fileExtensions[strings.ToLower(h[i+1:])] && !isIPv4(h) {
			continue
		}
		hostPort := h + sm[2]
		ok := false
		for _, scheme := range []string{"http", "https"} {
			if u, err := url.Parse(scheme + "://" + hostPort); err == nil && allowed(u) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func isIPv4(h string) bool {
	for _, r := range h {
		if r != '.' && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
