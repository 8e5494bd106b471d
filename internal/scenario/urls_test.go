package scenario

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
)

// policy allows http(s) to 127.0.0.1:8080 and public-looking hosts only.
type policy struct{}

func (policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("scheme not allowed")
	}
	if u.Host == "127.0.0.1:8080" || u.Host == "example.com" {
		return nil
	}
	return fmt.Errorf("host %s not allowed", u.Hostname())
}

func TestStepURLsAreCheckedAtSubmit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		step  Step
		field string // "" means accepted
	}{
		{Step{Text: "Go to /login"}, ""},
		{Step{Text: "Go to http://127.0.0.1:8080/x"}, ""},
		{Step{Text: `Verify "data: 5 rows" is visible`}, ""},
		{Step{Text: "Go to http://169.254.169.254/latest/meta-data"}, "steps[0].text"},
		{Step{Text: "Open file:///etc/passwd"}, "steps[0].text"},
		{Step{Text: "Navigate to javascript:alert(document.cookie)"}, "steps[0].text"},
		{Step{Text: "Open data:text/html,<script>x</script>"}, "steps[0].text"},
		{Step{Text: "Open chrome://history please"}, "steps[0].text"},
		{Step{Type: StepAIAction, Text: "then visit http://10.0.0.1/admin."}, "steps[0].text"},
		{Step{Type: StepAction, Action: browser.ActionNavigate, Value: "/dashboard"}, ""},
		{Step{Type: StepAction, Action: browser.ActionNavigate, Value: "http://[::1]:8080/"}, "steps[0].value"},
		{Step{Type: StepAction, Action: browser.ActionNavigate, Value: "javascript:alert(1)"}, "steps[0].value"},
	}
	for _, c := range cases {
		sc := Scenario{BaseURL: "http://127.0.0.1:8080/", Steps: []Step{c.step}}
		var v ValidationError
		sc.Validate(&v, "scenario", policy{})
		got := ""
		for _, f := range v {
			if strings.HasPrefix(f.Field, "scenario.steps[0]") {
				got = strings.TrimPrefix(f.Field, "scenario.")
			}
		}
		if got != c.field {
			t.Errorf("%+v: field %q, want %q (%v)", c.step, got, c.field, v)
		}
	}
}
