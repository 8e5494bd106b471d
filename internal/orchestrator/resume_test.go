package orchestrator_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// TestResumeRebuildsInPageState stops a run between a fill and the click
// that submits it, then resumes from the checkpoint in a new browser
// context: the filled value and the items added before must be there again
// (they live only in the page), and the spec must be the one an
// uninterrupted run writes.
func TestResumeRebuildsInPageState(t *testing.T) {
	t.Parallel()
	base := demo(t)
	steps := func(texts ...string) []scenario.Step {
		out := make([]scenario.Step, len(texts))
		for i, s := range texts {
			out[i] = scenario.Step{Text: s}
		}
		return out
	}
	list := []string{`Fill "New item" with "Oat milk"`, `Click "Add"`, `Fill "New item" with "Rye"`,
		`Click "Add"`, `Verify "Rye" is visible`, `Verify "3 items" is visible`}
	cases := []struct {
		name      string
		sc        scenario.Scenario
		stopAfter int  // completed steps when the run is interrupted
		restore   bool // whether the resumed context must get the checkpoint's storage
	}{
		// The page is still the job's first document: rebuilt from a clean context.
		{"first document", scenario.Scenario{Name: "list", BaseURL: base + "/list", Steps: steps(list...)}, 3, false},
		// After a login and a navigation: the session cookie is restored and
		// only the commands run on the last document are replayed.
		{"after login", scenario.Scenario{Name: "login then list", BaseURL: base + "/login",
			Data: map[string]string{"EMAIL": demoapp.Email}, Secrets: map[string]string{"PASSWORD": demoapp.Password},
			Steps: steps(append([]string{`Fill "Email" with "{{EMAIL}}"`, `Fill "Password" with "{{PASSWORD}}"`, `Click "Sign in"`,
				`Go to /list`}, list...)...)}, 7, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			whole := &orchestrator.Agent{Page: browsertest.Session(t), Recorder: &memRecorder{}}
			want, err := whole.Run(context.Background(), orchestrator.Input{Scenario: c.sc, Secrets: c.sc.Secrets})
			if err != nil || want.Status != orchestrator.StatusSucceeded {
				t.Fatalf("uninterrupted run: %v %s %s", err, want.Status, want.Error)
			}

			rec := &memRecorder{}
			done := 0
			first := &orchestrator.Agent{Page: browsertest.Session(t), Recorder: rec}
			_, err = first.Run(context.Background(), orchestrator.Input{Scenario: c.sc, Secrets: c.sc.Secrets,
				Yield: func() bool { done++; return done > c.stopAfter }})
			if !errors.Is(err, orchestrator.ErrYielded) {
				t.Fatalf("interrupted run did not stop: %v", err)
			}
			cp := rec.checkpoints[len(rec.checkpoints)-1]
			if cp.NextStep != c.stopAfter || cp.RestoreStorage() != c.restore {
				t.Fatalf("checkpoint: next step %d, restore storage %v", cp.NextStep, cp.RestoreStorage())
			}
			opts := browser.SessionOptions{Policy: netguard.New([]string{"127.0.0.1"})}
			if cp.RestoreStorage() {
				opts.StorageState = cp.StorageState
			}
			sess, err := browsertest.Browser(t).NewSession(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sess.Close() })
			second := &orchestrator.Agent{Page: sess, Recorder: &memRecorder{}}
			got, err := second.Run(context.Background(), orchestrator.Input{Scenario: c.sc, Secrets: c.sc.Secrets, Resume: &cp})
			if err != nil || got.Status != orchestrator.StatusSucceeded {
				t.Fatalf("resumed run: %v %s %s", err, got.Status, got.Error)
			}
			// How long a command waited (and so the timeout its spec line
			// allows) depends on the machine's load, not on the resume.
			if noTimeouts(got.Script) != noTimeouts(want.Script) {
				t.Fatalf("the resumed job's spec differs:\n%s\n--- want ---\n%s", got.Script, want.Script)
			}
			if !strings.Contains(got.Script, "Rye") {
				t.Fatalf("spec lacks the resumed steps:\n%s", got.Script)
			}
			mustPassSpec(t, got, c.sc.Secrets)
		})
	}
}

var specTimeout = regexp.MustCompile(`(?:, )?\{ timeout: \d+ \}`)

func noTimeouts(spec string) string { return specTimeout.ReplaceAllString(spec, "") }
