package browser

import "regexp"

// generatedRule says an id or a class was made by a machine, not written by
// a person: it changes on the next build or page load, so a locator must
// never use it. It is written in the subset of regular expressions Go and
// JavaScript read alike, because the page's path script tests it too. Its
// alternatives, in order: a long number; digits among letters (a hash:
// x5KMr); a counter at the end (item-3, field12); a random case mix
// (pSwnKMrok); a run of consonants no word has; hex; CSS-in-JS and
// framework prefixes; a module suffix (title_x7Ab2).
const generatedRule = `[0-9]{3,}` +
	`|[A-Za-z][0-9]+[A-Za-z]` +
	`|[0-9]$` +
	`|[a-z][A-Z]{2,}[a-z]` +
	`|[bcdfghjklmnpqrstvwxzBCDFGHJKLMNPQRSTVWXZ]{6,}` +
	`|^[0-9a-fA-F]{6,}$` +
	`|^(css|sc|jsx|emotion|svelte|ember|astro|tw)-` +
	`|^_?ng(content|host)|^radix-|^headlessui-|^mui-[0-9]|^react-select-|^:r|^__` +
	`|_[A-Za-z0-9]*[0-9][A-Za-z0-9]*$`

// personalRule is the shape of an id or class a person writes.
const personalRule = `^[A-Za-z][A-Za-z0-9_-]*$`

var (
	generatedRe = regexp.MustCompile(generatedRule)
	personalRe  = regexp.MustCompile(personalRule)
)

// LooksGenerated reports whether an id or class looks made by a machine
// (see generatedRule): such a token is never written into a locator.
func LooksGenerated(token string) bool {
	return !personalRe.MatchString(token) || generatedRe.MatchString(token)
}

// generatedJS is LooksGenerated as a page script's function expression.
const generatedJS = `((t) => !/` + personalRule + `/.test(t) || /` + generatedRule + `/.test(t))`
