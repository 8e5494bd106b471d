package suite_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
	"github.com/webpilot/webpilot/internal/testslot"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// modelAsker asks the scripted model through the real client and prices
// each call at the default prices, as the worker's Asker does (which also
// reserves it from the job's hold).
type modelAsker struct{ c *llm.Client }

func (a modelAsker) Ask(ctx context.Context, req llm.Request) (llm.Reply, int64, error) {
	r, err := a.c.Chat(ctx, req)
	return r, llm.DefaultPrices.MicroCredits(r.Model, r.Usage), err
}

// TestWithNothingRecordedTheAgentNamesTheElementAndOnlyAVerifiedHealIsKept:
// a suite red on arrival, with no passing run, baseline or traces: the
// agent is shown each failing call in its source (the page object that
// defines the locator) and the page at the failure, and names the element
// the call meant. The locator is written in the file's idiom (a test id
// stays a test id, a CSS id an id) and kept only if the tests then pass:
// an element named wrongly is taken back with what only its tests used,
// and those tests are refused. Where the page has no such element the agent's regression is
// reported with its evidence, never healed. Each test says what its
// questions cost; no secret is in any question.
func TestWithNothingRecordedTheAgentNamesTheElementAndOnlyAVerifiedHealIsKept(t *testing.T) {
	// Not parallel: the package's longest test runs first, before the
	// parallel tests resume, so that make test does not end on it alone.
	b := setup(t)
	p := shoppingProject(t, false)
	repair := func(t *testing.T, variant demoapp.Variation, misled bool) (suite.RepairReport, []llmtest.Request) {
		if err := b.app.SetVariant(variant); err != nil {
			t.Fatal(err)
		}
		model := llmtest.New(t)
		for range 12 {
			model.Push(llmtest.Reply{Respond: suitetest.ShoppingModel(misled), PromptTokens: 1500, CompletionTokens: 20})
		}
		ask := modelAsker{llm.New(llm.Config{BaseURL: model.BaseURL(), Model: "gpt-4o-mini", APIKey: "test"})}
		rep, err := b.runner.Repair(context.Background(), p, nil, b.repairOptions(t, ask))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range model.Requests() {
			if strings.Contains(r.Text(), demoapp.Password) {
				t.Errorf("a question holds the password")
			}
		}
		return rep, model.Requests()
	}
	verdicts := func(rep suite.RepairReport) map[orchestrator.Verdict]int {
		v := map[orchestrator.Verdict]int{}
		for _, tc := range rep.Tests {
			v[tc.Verdict]++
		}
		return v
	}

	t.Run("drift", func(t *testing.T) {
		rep, asked := repair(t, demoapp.RenamedIDs, false)
		if v := verdicts(rep); v[orchestrator.VerdictHealed] != 3 || len(rep.Tests) != 3 || !rep.Verified {
			t.Fatalf("verdicts %v, verified %v: %+v", v, rep.Verified, rep.Tests)
		}
		changed := map[string]string{}
		for _, c := range rep.Changes {
			changed[c.File+" "+c.Old] = c.New
			if !c.Agent {
				t.Errorf("%+v: not the agent's", c)
			}
		}
		if changed["pages/ListPage.ts #count"] != "'#total-count'" || changed["pages/ListPage.ts add-button"] != "'add-entry-btn'" || len(changed) != 2 {
			t.Fatalf("changes %+v", rep.Changes)
		}
		// One question a locator: the tests failing on it take its answer.
		calls, credits := 0, int64(0)
		for _, tc := range rep.Tests {
			calls += tc.ModelCalls
			credits += tc.ModelCreditsMicro
			if tc.ModelCalls > 0 && tc.ModelCreditsMicro <= 0 {
				t.Errorf("%s: %d calls charged nothing", tc.Title, tc.ModelCalls)
			}
		}
		if calls != 2 || len(asked) != 2 || credits != 2*llm.DefaultPrices.MicroCredits("gpt-4o-mini", llm.Usage{PromptTokens: 1500, CompletionTokens: 20}) {
			t.Errorf("%d calls charged %d, %d asked", calls, credits, len(asked))
		}
		q := asked[0].Text() + asked[1].Text()
		for _, want := range []string{"› shopping list › ", "> ", "this.addButton.click()", "LOCATOR DEFINED AT pages/ListPage.ts:", "page.getByTestId('add-button')", `data-testid="add-entry-btn"`} {
			if !strings.Contains(q, want) {
				t.Errorf("the questions lack %q:\n%s", want, q)
			}
		}
		b.passesAsOwnerRunsIt(t, *rep.Patched)
	})

	t.Run("drift, an element named wrongly", func(t *testing.T) {
		// The list named for the count: every test checking the count
		// still fails with it, and the Add button's element (right) heals
		// no test on its own: nothing is kept.
		rep, asked := repair(t, demoapp.RenamedIDs, true)
		refused := 0
		for _, tc := range rep.Tests {
			if tc.Verdict == orchestrator.VerdictUnrepairable && strings.Contains(tc.Reason, "with the element the agent named it still fails") {
				refused++
			} else if tc.Verdict != orchestrator.VerdictPassed {
				t.Errorf("%s: %s (%s)", tc.Title, tc.Verdict, tc.Reason)
			}
		}
		if refused != 3 || len(rep.Tests) != 3 || len(asked) != 2 || len(rep.Changes) != 0 || rep.Diff != "" || rep.Patched != nil {
			t.Fatalf("%d refused, %d asked, changes %+v:\n%s", refused, len(asked), rep.Changes, rep.Diff)
		}
	})

	t.Run("a field the app now requires", func(t *testing.T) {
		// Adding now needs a quantity: the form does not submit, and the
		// list does not hold the item (a regression, read without a
		// model). The page shows the required field left empty: the
		// agent gives a value, written as a statement before the call
		// that submitted the form, in the page object's idiom.
		rep, asked := repair(t, demoapp.NeedsQty, false)
		if v := verdicts(rep); v[orchestrator.VerdictHealed] != 1 || v[orchestrator.VerdictPassed] != 2 || !rep.Verified {
			t.Fatalf("verdicts %v, verified %v: %+v", v, rep.Verified, rep.Tests)
		}
		want := "await this.page.getByLabel('Quantity').fill('2');"
		if len(rep.Changes) != 1 || rep.Changes[0].File != "pages/ListPage.ts" || rep.Changes[0].New != want || !rep.Changes[0].Agent ||
			rep.Changes[0].Method != "fill" {
			t.Fatalf("changes %+v", rep.Changes)
		}
		if !strings.Contains(rep.Diff, "+    "+want+"\n     await this.addButton.click();") || regexp.MustCompile(`(?m)^-[^-]`).MatchString(rep.Diff) {
			t.Errorf("the step is not written right before the click that submits, or something was taken out:\n%s", rep.Diff)
		}
		if len(asked) != 1 || !strings.Contains(asked[0].Text(), "SUBMITTED BY: ") || !strings.Contains(asked[0].Text(), "this.addButton.click()") {
			t.Errorf("%d asked: %v", len(asked), asked)
		}
		for _, tc := range rep.Tests {
			if tc.Verdict == orchestrator.VerdictHealed && (tc.ModelCalls != 1 || tc.ModelCreditsMicro <= 0 || !strings.Contains(tc.Reason, want)) {
				t.Errorf("%s: %d calls, %d µcredits: %s", tc.Title, tc.ModelCalls, tc.ModelCreditsMicro, tc.Reason)
			}
		}
		gitApply(t, p, rep.Diff)
		b.passesAsOwnerRunsIt(t, *rep.Patched)
	})

	t.Run("a field given a value the form refuses", func(t *testing.T) {
		// A quantity of 0 does not submit the form either: the test
		// still fails, the statement is taken back, and the reading
		// without a model stands, saying what was tried.
		rep, _ := repair(t, demoapp.NeedsQty, true)
		for _, tc := range rep.Tests {
			switch {
			case strings.HasPrefix(tc.Title, "shopping list › adds "):
				if tc.Verdict != orchestrator.VerdictRegression || !strings.Contains(tc.Reason, "fill('0')") || !strings.Contains(tc.Reason, "refused") {
					t.Errorf("%s: %s (%s)", tc.Title, tc.Verdict, tc.Reason)
				}
			case tc.Verdict != orchestrator.VerdictPassed:
				t.Errorf("%s: %s (%s)", tc.Title, tc.Verdict, tc.Reason)
			}
		}
		if len(rep.Changes) != 0 || rep.Diff != "" || rep.Patched != nil {
			t.Fatalf("changes %+v:\n%s", rep.Changes, rep.Diff)
		}
	})

	t.Run("regression", func(t *testing.T) {
		rep, _ := repair(t, demoapp.MissingAdd, false)
		regressions := 0
		for _, tc := range rep.Tests {
			switch tc.Verdict {
			case orchestrator.VerdictHealed:
				t.Errorf("%s was healed", tc.Title)
			case orchestrator.VerdictRegression:
				regressions++
				if tc.Evidence == nil || tc.Evidence.File != "pages/ListPage.ts" || !strings.Contains(tc.Reason, "no button that adds") {
					t.Errorf("%s: %s, evidence %+v", tc.Title, tc.Reason, tc.Evidence)
				}
			}
		}
		if regressions != 1 || rep.Patched != nil {
			t.Fatalf("%d regressions: %+v", regressions, rep.Tests)
		}
	})
}

// TestTheAgentsHealOfASetupProjectRunsTheTestsThatDependOnIt: the corpus's
// auth project signs in once in a setup project the others depend on. The
// sign-in button reworded, the setup fails and every dependent test is
// skipped, seen neither failing nor passing. The agent names the button;
// its trial runs the dependents with the setup, and they are healed with
// it (they were left skipped when only the setup's file ran); the list's
// tests, which then fail on their own reworded field and button, are
// asked about in turn (they were left unrepairable, never asked).
func TestTheAgentsHealOfASetupProjectRunsTheTestsThatDependOnIt(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	b := setup(t)
	p := corpusProject(t, "auth", nil, "tests/signed-out.spec.ts")
	if err := b.app.SetVariant(demoapp.Reworded); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(t)
	for range 6 {
		model.Push(llmtest.Reply{PromptTokens: 1500, CompletionTokens: 20, Respond: func(r llmtest.Request) string {
			switch q := r.Text(); {
			case strings.Contains(q, "LOCATOR: internal:role=button[name=\"Sign in\""):
				return llmtest.JSON(map[string]string{"element": suitetest.PageRef(q, "button", `"Log in"`)})
			case strings.Contains(q, "LOCATOR: internal:role=textbox[name=\"New item\""):
				return llmtest.JSON(map[string]string{"element": suitetest.PageRef(q, `aria-label="Item name"`)})
			case strings.Contains(q, "LOCATOR: internal:role=button[name=\"Add\"s]"):
				return llmtest.JSON(map[string]string{"element": suitetest.PageRef(q, "button", `"Add item"`)})
			}
			return llmtest.JSON(map[string]string{"unsure": "not asked about"})
		}})
	}
	ask := modelAsker{llm.New(llm.Config{BaseURL: model.BaseURL(), Model: "gpt-4o-mini", APIKey: "test"})}
	rep, err := b.runner.Repair(context.Background(), p, nil, b.repairOptions(t, ask))
	if err != nil {
		t.Fatal(err)
	}
	healed := 0
	for _, tc := range rep.Tests {
		if tc.Verdict != orchestrator.VerdictHealed {
			t.Errorf("%s: %s (%s)", tc.Title, tc.Verdict, tc.Reason)
			continue
		}
		healed++
	}
	if healed != 6 || len(model.Requests()) != 3 || !rep.Verified || len(rep.Changes) != 3 {
		t.Fatalf("%d healed, %d asked, verified %v, changes %+v", healed, len(model.Requests()), rep.Verified, rep.Changes)
	}
}
