package suite_test

import (
	"net/http/httptest"
	"testing"

	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/suite"
)

// TestASuiteRedOnArrivalIsHealedFromItsBaseline: a suite no run on
// webpilot ever saw pass (its first upload is its first failing run) is
// repaired with a baseline where it still passes, the release before the
// drift: each failing test runs there first for the elements it acts on,
// then the repair heals the target as a warm repair does. Without the
// baseline the same repair heals nothing; a regression is flagged with its
// evidence whatever the baseline, never healed.
func TestASuiteRedOnArrivalIsHealedFromItsBaseline(t *testing.T) {
	t.Parallel()
	release := httptest.NewServer(demoapp.New(demoapp.Options{}))
	t.Cleanup(release.Close)
	b := setup(t, release.URL)
	p := loadProject(t, "shopping")

	t.Run("drift", func(t *testing.T) {
		if err := b.app.SetVariant(demoapp.RenamedIDs); err != nil {
			t.Fatal(err)
		}
		cold := b.repairFrom(t, p, nil, "")
		for _, tc := range cold.Tests {
			if tc.Verdict == suite.VerdictHealed {
				t.Errorf("healed with nothing to heal from: %s", tc.Title)
			}
		}
		rep := b.repairFrom(t, p, nil, release.URL)
		verdicts := map[string]int{}
		for _, tc := range rep.Tests {
			verdicts[tc.Verdict]++
		}
		if verdicts[suite.VerdictHealed] != 5 || verdicts[suite.VerdictPassed] != 2 || !rep.Verified {
			t.Fatalf("verdicts %v, verified %v: %+v", verdicts, rep.Verified, rep.Tests)
		}
		changed := map[string]string{}
		for _, c := range rep.Changes {
			changed[c.File+" "+c.Old] = c.New
		}
		if changed["pages/ListPage.ts #count"] != "'#total-count'" || changed["pages/ListPage.ts add-button"] != "'add-entry-btn'" || len(changed) != 2 {
			t.Fatalf("changes %+v", rep.Changes)
		}
		gitApply(t, p, rep.Diff)
	})

	t.Run("regression", func(t *testing.T) {
		if err := b.app.SetVariant(demoapp.WrongCount); err != nil {
			t.Fatal(err)
		}
		rep := b.repairFrom(t, p, nil, release.URL)
		regressions := 0
		for _, tc := range rep.Tests {
			switch tc.Verdict {
			case suite.VerdictHealed:
				t.Errorf("%s was healed", tc.Title)
			case suite.VerdictRegression:
				regressions++
				if tc.Evidence == nil || tc.Evidence.Target == nil || tc.Evidence.File != "pages/ListPage.ts" {
					t.Errorf("%s: a regression without its evidence: %+v", tc.Title, tc.Evidence)
				}
			}
		}
		if regressions != 5 || rep.Patched != nil {
			t.Fatalf("%d regressions: %+v", regressions, rep.Tests)
		}
	})
}
