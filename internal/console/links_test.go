package console

import (
	"strings"
	"testing"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/explore"
)

// TestAFindingLinksOnlyToRuleDocumentation: the addresses a finding
// carries came from a page; only axe-core's own documentation is a link,
// any other address (foreign or javascript:) is shown as text.
func TestAFindingLinksOnlyToRuleDocumentation(t *testing.T) {
	t.Parallel()
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	finding := func(seq int, help string) findingView {
		return findingView{FindingView: api.FindingView{Seq: seq, Title: "rule"}, Evidence: explore.Evidence{Rule: "image-alt", HelpURL: help}}
	}
	var b strings.Builder
	err = pages["job"].ExecuteTemplate(&b, "final", finalView{JobID: "j", Exploration: &explore.Result{}, Findings: []findingView{
		finding(1, "https://dequeuniversity.com/rules/axe/4.10/image-alt"), finding(2, "https://evil.example/phish"),
		finding(3, "javascript:alert(1)"), finding(4, "https://dequeuniversity.com.evil.example/x")}})
	if err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if n := strings.Count(html, `<a href="https://dequeuniversity.com/rules/axe/4.10/image-alt"`); n != 1 {
		t.Errorf("the rule's documentation is linked %d times", n)
	}
	for _, bad := range []string{"evil.example/phish", "alert(1)", "dequeuniversity.com.evil.example"} {
		if i := strings.Index(html, bad); i < 0 || strings.Contains(html[max(0, i-60):i], "href=") {
			t.Errorf("%s is not shown as text: %s", bad, html[max(0, i-80):min(len(html), i+40)])
		}
	}
}
