package browser

import (
	"fmt"
	"strings"
	"testing"
)

// TestWhatOpenedLeadsWhatChanged: a menu that opens below many other new
// lines is listed first, and the list stays capped with a count of the rest.
func TestWhatOpenedLeadsWhatChanged(t *testing.T) {
	t.Parallel()
	before := Snapshot{Full: "- heading \"Shop\" [ref=s1e1]\n- button \"Account\" [ref=s1e2]\n"}
	var b strings.Builder
	b.WriteString("- heading \"Shop\" [ref=s2e1]\n- button \"Account\" [ref=s2e2]\n")
	for i := range 30 {
		fmt.Fprintf(&b, "- paragraph [ref=s2e%d]:\n  - text: promo %d\n", 10+i, i)
	}
	b.WriteString("- menu \"Account\" [ref=s2e90]\n- menuitem \"Sign out\" [ref=s2e91]\n")
	d := DiffSnapshots(before, Snapshot{Full: b.String()}, 10)
	if len(d.Appeared) != 10 || !strings.HasPrefix(d.Appeared[0], `menu "Account"`) || !strings.HasPrefix(d.Appeared[1], `menuitem "Sign out"`) {
		t.Fatalf("appeared %q", d.Appeared)
	}
	if d.More != 22 {
		t.Fatalf("%d more, want 22", d.More)
	}
}
