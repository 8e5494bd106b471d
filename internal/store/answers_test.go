package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/webpilot/webpilot/internal/store"
)

// TestTheFilesOfARepairAskTheAgentOnce: the parts of one repair share the
// agent's answer to a question: the first claims it, the others wait for
// what it records; a claim given up, or held by a part that ended
// unanswered, passes to the next part; another tenant reaches nothing.
func TestTheFilesOfARepairAskTheAgentOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupBulk(t)
	if _, err := b.st.ClaimJob(ctx, b.parent.ID, "w1", time.Minute); err != nil {
		t.Fatal(err)
	}
	var children []store.Child
	for _, f := range []string{"tests/a.spec.ts", "tests/b.spec.ts", "tests/c.spec.ts"} {
		children = append(children, store.Child{Key: f, Kind: "project_repair_file", Subject: "jobs.project_repair_file." + b.tenant.ID,
			Input: func(string) (json.RawMessage, error) { return json.Marshal(map[string]any{"files": []string{f}}) }})
	}
	items, err := b.st.FanOutThenResume(ctx, b.parent.ID, 1, children)
	if err != nil || len(items) != 3 {
		t.Fatalf("fan out: %v %v", items, err)
	}
	var parts []store.Claim
	for i, it := range items {
		c, err := b.st.ClaimJob(ctx, it.JobID, "w"+string(rune('a'+i)), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, c)
	}
	claim := func(c store.Claim, key string) (string, bool) {
		t.Helper()
		ans, mine, err := b.st.ClaimAgentAnswer(ctx, b.tenant.ID, c.JobID, c.Attempt, key)
		if err != nil {
			t.Fatal(err)
		}
		return string(ans), mine
	}
	const label, button = "getByLabel('Username')", "getByRole('button', { name: 'Login' })"
	if ans, mine := claim(parts[0], label); !mine || ans != "" {
		t.Fatalf("the first part to need the label: %q, claimed %v", ans, mine)
	}
	if ans, mine := claim(parts[1], label); mine || ans != "" {
		t.Fatalf("a second part while the first asks: %q, claimed %v (want to wait)", ans, mine)
	}
	if ans, mine := claim(parts[1], button); !mine || ans != "" {
		t.Fatalf("another question is another claim: %q %v", ans, mine)
	}
	if err := b.st.SaveAgentAnswer(ctx, b.tenant.ID, parts[0].JobID, parts[0].Attempt, label, json.RawMessage(`{"unsure":"two fields"}`)); err != nil {
		t.Fatal(err)
	}
	for _, c := range parts[1:] {
		if ans, mine := claim(c, label); mine || ans != `{"unsure": "two fields"}` {
			t.Fatalf("after the answer, part %s reads %q, claimed %v", c.JobID, ans, mine)
		}
	}
	// A part that could not ask gives its claim up: the next one asks.
	if err := b.st.ReleaseAgentAnswer(ctx, b.tenant.ID, parts[1].JobID, parts[1].Attempt, button); err != nil {
		t.Fatal(err)
	}
	if _, mine := claim(parts[2], button); !mine {
		t.Fatal("a released question was not passed on")
	}
	// A part that ended with its question unanswered passes it on too.
	if _, err := b.st.FinishJob(ctx, store.Finish{JobID: parts[2].JobID, Attempt: parts[2].Attempt, State: store.JobStateFailed, Error: "killed"}); err != nil {
		t.Fatal(err)
	}
	if _, mine := claim(parts[0], button); !mine {
		t.Fatal("the question of a part that ended unanswered was not taken over")
	}
	// The ended part's late answer is not recorded over the new claim.
	if err := b.st.SaveAgentAnswer(ctx, b.tenant.ID, parts[2].JobID, parts[2].Attempt, button, json.RawMessage(`{"element":"late"}`)); err != nil {
		t.Fatal(err)
	}
	if ans, mine := claim(parts[1], button); mine || ans != "" {
		t.Fatalf("a taken-over question reads %q, claimed %v", ans, mine)
	}
	// A job without a parent has nothing to share: it asks.
	if ans, mine := claim(store.Claim{JobID: b.parent.ID, Attempt: 1}, label); !mine || ans != "" {
		t.Fatalf("a repair of its own: %q %v", ans, mine)
	}
	if _, _, err := b.st.ClaimAgentAnswer(ctx, uuid.NewString(), parts[0].JobID, parts[0].Attempt, label); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another tenant claiming a part's question: %v", err)
	}
}
