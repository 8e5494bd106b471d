package scenario

import (
	"strings"
	"testing"
)

// TestASecretTooShortToTakeOutIsRefused: a secret is taken out of all a
// job returns wherever it appears. A value of one character appeared
// everywhere (the whole result was withheld), and where it was taken out
// gave it away ("{{PIN}} of 3"): it is refused at submit, naming it.
func TestASecretTooShortToTakeOutIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value, want string
	}{
		{"empty", "", "must not be empty"},
		{"one character", "1", "at least 4 characters"},
		{"three characters of two bytes each", "äöü", "at least 4 characters"},
		{"four characters", "1234", ""},
		{"a password", "SuperSecretPassword!", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v ValidationError
			ValidateSecrets(&v, "scenario", map[string]string{"PIN": tc.value})
			got := ""
			if len(v) > 0 {
				got = v.Error()
			}
			if tc.want == "" && got != "" || tc.want != "" && (len(v) != 1 || v[0].Field != "scenario.secrets.PIN" || !strings.Contains(got, tc.want)) {
				t.Fatalf("%q: %v, want %q", tc.value, got, tc.want)
			}
		})
	}
}
