package suite

import "testing"

// TestAMiscountIsNeverAMissingElement: an assertion that found its
// elements holding something else (a count of 2 where 3 were expected)
// is an app regression to report (or a wait to try), never a locator to
// re-find, though the runner's call log says it was "waiting for" the
// locator; one that found nothing is a missing element.
func TestAMiscountIsNeverAMissingElement(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, err string
		verdict   string
	}{
		{"a count", "Error: expect(locator).toHaveCount(expected) failed\n\nLocator: getByRole('listitem')\nExpected: 3\nReceived: 2\nCall log:\n  - waiting for getByRole('listitem')", VerdictRegression},
		{"a text", "Error: expect(locator).toHaveText(expected) failed\n\nExpected string: \"3 items\"\nReceived string: \"2 items\"\nCall log:\n  - waiting for locator('#count')", VerdictRegression},
		{"nothing found", "Error: expect(locator).toBeVisible() failed\n\nLocator: locator('#gone')\nExpected: visible\nReceived: <element(s) not found>\nCall log:\n  - waiting for locator('#gone')", VerdictUnrepairable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &TraceAction{API: "expect", Method: "expect", Selector: "internal:role=listitem", Error: tc.err}
			_, _, verdict, why := diagnose(TestOutcome{Status: "failed", Error: tc.err, Failure: f}, nil, nil, nil)
			if verdict != tc.verdict {
				t.Fatalf("verdict %q (%s), want %q", verdict, why, tc.verdict)
			}
		})
	}
}
