package exploretest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
)

// ZooGoal is the open-ended goal of an exploration of the zoo.
const ZooGoal = "Find the bugs a tester would report on this site"

// ZooMessage is what the scripted model types into the contact form.
const ZooMessage = "Hello from the explorer"

// ZooModel is a scripted model for the zoo, to be every answer
// (llmtest.Server.Fallback): it reads each page it is shown as a tester
// would and reports the three defects only judgement finds — a total that
// is not the sum of its lines, a form that empties the message it was
// given, a typo — each with a check, and only where the page shows it.
// Everywhere else it is done with the page at once.
func ZooModel() llmtest.Reply {
	return reply(func(page string) map[string]any {
		url := ""
		if m := regexp.MustCompile(`(?m)^URL: (\S+)`).FindStringSubmatch(page); m != nil {
			url = m[1]
		}
		done := map[string]any{"thinking": "nothing here a crawler cannot judge", "done": true}
		switch {
		case strings.HasSuffix(url, "/zoo/about"):
			if r := lineRef(page, "- paragraph", "missoin"); r != "" {
				done["findings"] = []any{map[string]any{"title": "A typo in the mission statement", "expected": "Our mission is …",
					"observed": "Our missoin is …", "check": verify(r, "textContains", "Our mission")}}
			}
		case strings.HasSuffix(url, "/zoo/invoice"):
			sum := 0
			for _, m := range regexp.MustCompile(`- row "[^"]*\$\d+\.\d\d \$(\d+)\.(\d\d)"`).FindAllStringSubmatch(page, -1) {
				d, _ := strconv.Atoi(m[1])
				c, _ := strconv.Atoi(m[2])
				sum += d*100 + c
			}
			total := regexp.MustCompile(`- status \[ref=([a-z0-9]+)\]: (\$[\d.]+)`).FindStringSubmatch(page)
			if want := fmt.Sprintf("$%d.%02d", sum/100, sum%100); total != nil && total[2] != want {
				done["findings"] = []any{map[string]any{"title": "The invoice total is not the sum of its lines",
					"expected": want + " (the sum of the amounts)", "observed": total[2], "check": verify(total[1], "textEquals", want)}}
			}
		case strings.HasSuffix(url, "/zoo/contact"):
			msg := lineRef(page, `- textbox "Message"`, "")
			if !strings.Contains(page, "Please enter a valid email address") {
				// Send the form with a message and no email: it must say
				// what is missing and keep what was typed.
				return map[string]any{"thinking": "send a message without an email", "commands": []any{
					map[string]any{"action": "fill", "target": map[string]any{"ref": msg}, "value": ZooMessage},
					click(ref(page, `button "Send message"`))}}
			}
			if !strings.Contains(page, ": "+ZooMessage) {
				done["findings"] = []any{map[string]any{"title": "The contact form empties the message when the email is missing",
					"expected": "the message typed is kept beside the error", "observed": "the message field is empty",
					"check": verify(msg, "valueEquals", ZooMessage)}}
			}
		}
		return done
	})
}

func verify(ref, assert, value string) map[string]any {
	return map[string]any{"action": "verify", "target": map[string]any{"ref": ref}, "assert": assert, "value": value}
}

// lineRef is the ref of the first line that starts with prefix (after its
// indentation) and contains text.
func lineRef(page, prefix, text string) string {
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), prefix) && strings.Contains(line, text) {
			if m := refRe.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

// MatchZoo pairs findings with the zoo's seeded defects (each once): how
// many were found, the findings that report none (false positives), and
// the defects missed. Functional defects count only when withModel.
func MatchZoo(findings []explore.Finding, withModel bool) (found int, unexpected []explore.Finding, missed []demoapp.ZooDefect) {
	hit := make([]bool, len(demoapp.ZooDefects))
	for _, f := range findings {
		matched := false
		for i, d := range demoapp.ZooDefects {
			if !hit[i] && ZooReports(f, d) {
				hit[i], matched = true, true
				found++
				break
			}
		}
		if !matched {
			unexpected = append(unexpected, f)
		}
	}
	for i, d := range demoapp.ZooDefects {
		if !hit[i] && (withModel || d.Detector != string(explore.TypeFunctional)) {
			missed = append(missed, d)
		}
	}
	return found, unexpected, missed
}

// ZooReports says a finding reports a seeded defect. A broken link's
// target may be reported by opening it (an error page).
func ZooReports(f explore.Finding, d demoapp.ZooDefect) bool {
	typ := string(f.Type)
	if f.Type == explore.TypeErrorPage && d.Detector == string(explore.TypeBrokenLink) {
		typ = d.Detector
	}
	return typ == d.Detector && strings.Contains(f.Title, d.Title)
}

// ZooDeterministic counts the defects a run without a model must find.
func ZooDeterministic() int {
	n := 0
	for _, d := range demoapp.ZooDefects {
		if d.Detector != string(explore.TypeFunctional) {
			n++
		}
	}
	return n
}
