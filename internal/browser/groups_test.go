package browser

import (
	"strings"
	"testing"
)

// TestACardIsNamedByItsHeading: each card of a product grid is named by
// its one heading, so which "Add to cart" is whose is written on the page
// the model reads; a group with no heading, or several, stays as it was.
func TestACardIsNamedByItsHeading(t *testing.T) {
	t.Parallel()
	in := `- main [ref=s1e1]:
  - article [ref=s1e2]:
    - heading "Sauce Labs Backpack" [level=2] [ref=s1e3]
    - paragraph [ref=s1e4]: $29.99
    - button "Add to cart" [ref=s1e5]
  - article [ref=s1e6]:
    - heading "Bike Light" [level=2] [ref=s1e7]
    - button "Add to cart" [ref=s1e8]
  - listitem [ref=s1e9]:
    - text: no heading here
  - article [ref=s1e10]:
    - heading "One" [ref=s1e11]
    - heading "Two" [ref=s1e12]`
	out := nameGroups(in)
	for _, want := range []string{`- article [ref=s1e2] (card "Sauce Labs Backpack"):`, `- article [ref=s1e6] (card "Bike Light"):`,
		"- listitem [ref=s1e9]:\n", "- article [ref=s1e10]:\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}
