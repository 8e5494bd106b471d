package browser

import (
	"regexp"
	"strings"
)

var (
	// groupLine is an unnamed repeated group: a card, a list item, a row.
	groupLine = regexp.MustCompile(`^(\s*)- (article|listitem|row|group|region)( \[ref=[a-z0-9]+\])?:$`)
	// headingName is a heading's name on its line.
	headingName = regexp.MustCompile(`^\s*- heading "((?:[^"\\]|\\.)*)"`)
)

// nameGroups names each unnamed card, list item or row of a page
// representation by the one heading inside it: "- article [ref=s1e3]
// (card "Mug"):", so a control repeated in every card is told apart by its
// card rather than by its order ({"role": "button", "name": "Add to cart",
// "within": {"ref": "s1e3"}}).
func nameGroups(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		m := groupLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		indent := len(m[1])
		var names []string
		for _, c := range lines[i+1:] {
			if len(c)-len(strings.TrimLeft(c, " ")) <= indent {
				break
			}
			if h := headingName.FindStringSubmatch(c); h != nil {
				names = append(names, h[1])
			}
		}
		if len(names) == 1 {
			lines[i] = strings.TrimSuffix(l, ":") + ` (card "` + names[0] + `"):`
		}
	}
	return strings.Join(lines, "\n")
}
