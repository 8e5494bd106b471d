package scenario

import (
	"strings"
	"testing"
)

// TestADeviceIsOnePlaywrightEmulates: a device is named as Playwright names
// it; any other name is refused at options.device with names like it.
func TestADeviceIsOnePlaywrightEmulates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		device string
		hint   string // "" means accepted
	}{
		{"Pixel 7", ""},
		{"iPhone 13 landscape", ""},
		{"Pixel 99", `"Pixel 7"`},
		{"iphone", `"iPhone`},
		{"Nokia 3310", `"Nokia N9"`},
		{"Blorp", `"Pixel 7"`},
	} {
		sc := Scenario{BaseURL: "http://127.0.0.1:8080/", Steps: []Step{{Text: `Verify "x" is visible`}}, Options: Options{Device: tc.device}}
		var v ValidationError
		sc.Validate(&v, "scenario", policy{})
		msg := ""
		for _, f := range v {
			if f.Field == "scenario.options.device" {
				msg = f.Message
			}
		}
		switch {
		case tc.hint == "" && msg != "":
			t.Errorf("%q refused: %s", tc.device, msg)
		case tc.hint != "" && !strings.Contains(msg, tc.hint):
			t.Errorf("%q: %q, want a refusal naming %s", tc.device, msg, tc.hint)
		}
	}
}
