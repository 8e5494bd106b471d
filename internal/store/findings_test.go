package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// TestFindingsMergeBySignatureAndStayWithTheirTenant records the same bug
// from several places and attempts: one finding, each place once, numbers
// kept; a stale attempt cannot write; another tenant cannot read.
func TestFindingsMergeBySignatureAndStayWithTheirTenant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.InTx(t)
	tn, _ := storetest.Tenant(t, st, "explorer", 10)
	other, _ := storetest.Tenant(t, st, "other", 10)
	job, err := st.SubmitJob(ctx, store.NewJob{TenantID: tn.ID, Kind: "exploration", Input: json.RawMessage(`{}`), Hold: 1000,
		Subject: "jobs.exploration." + tn.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimJob(ctx, job.ID, "w1", time.Minute); err != nil {
		t.Fatal(err)
	}
	rec := func(attempt int, sig, url string) (int, bool, error) {
		return st.RecordFinding(ctx, attempt, store.FindingRecord{JobID: job.ID, Type: "console_error", Severity: "minor",
			Title: "Console error: boom", URL: url, State: url + "#1", Signature: sig, Evidence: json.RawMessage(`{"message":"boom"}`)},
			store.Occurrence{URL: url, State: url + "#1"})
	}
	for i, c := range []struct {
		sig, url string
		seq      int
		isNew    bool
	}{
		{"console:a", "/a", 1, true},
		{"console:a", "/b", 1, false}, // another page: an occurrence
		{"console:a", "/a", 1, false}, // the same place again: nothing
		{"page:b", "/a", 2, true},
	} {
		seq, isNew, err := rec(1, c.sig, c.url)
		if err != nil || seq != c.seq || isNew != c.isNew {
			t.Errorf("record %d: seq %d new %v err %v, want seq %d new %v", i, seq, isNew, err, c.seq, c.isNew)
		}
	}
	fs, err := st.Findings(ctx, tn.ID, job.ID)
	if err != nil || len(fs) != 2 {
		t.Fatalf("findings: %d %v", len(fs), err)
	}
	var places []store.Occurrence
	_ = json.Unmarshal(fs[0].Occurrences, &places)
	if len(places) != 2 || places[0].URL != "/a" || places[1].URL != "/b" {
		t.Errorf("places of the console error: %+v", places)
	}
	if _, _, err := rec(7, "page:c", "/c"); !errors.Is(err, store.ErrFenced) {
		t.Errorf("a stale attempt recorded a finding: %v", err)
	}
	if err := st.SetFindingOutcome(ctx, job.ID, 1, 2, store.FindingOutcome{Title: "seen on 2 pages", Evidence: json.RawMessage(`{"places":2}`),
		Reproduction: json.RawMessage(`{"verified":true}`), Confidence: "confirmed", Status: "new"}); err != nil {
		t.Fatal(err)
	}
	if fs, _ := st.Findings(ctx, tn.ID, job.ID); string(fs[1].Reproduction) != `{"verified": true}` || fs[1].Title != "seen on 2 pages" ||
		string(fs[1].Evidence) != `{"places": 2}` || fs[1].Confidence != "confirmed" || fs[1].Status != "new" || fs[0].Confidence != "observed" {
		t.Errorf("outcome: %+v", fs[1])
	}
	if fs, err := st.Findings(ctx, other.ID, job.ID); err != nil || len(fs) != 0 {
		t.Errorf("another tenant reads %d findings (%v)", len(fs), err)
	}
}
