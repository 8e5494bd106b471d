package worker

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/suite"
)

// TestATestsTitleIsLoggedWithoutTheJobsSecrets: a run's test named for a
// secret ("signs in with hunter22-secret") whose trace could not be read
// was logged in clear by the worker. The log line takes the secret out,
// in its title and in its error.
func TestATestsTitleIsLoggedWithoutTheJobsSecrets(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := &Worker{log: slog.New(slog.NewTextHandler(&buf, nil))}
	const secret = "hunter22-secret"
	tests := []suite.TestOutcome{{File: "tests/login.spec.ts", Titles: []string{"signs in with " + secret}, Status: "failed",
		RunDir: t.TempDir(), Trace: "test-results/" + secret + "/trace.zip"}}
	w.readEvidence(tests, map[string]string{"PASSWORD": secret})
	if out := buf.String(); !strings.Contains(out, "trace unreadable") || strings.Contains(out, secret) || !strings.Contains(out, "signs in with") {
		t.Fatalf("the log:\n%s", out)
	}
}
