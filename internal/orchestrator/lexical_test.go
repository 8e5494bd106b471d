package orchestrator_test

import (
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/lexical"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// TestPlainSentencesRunWithoutAModel: steps written the way people write
// them (not in the grammar) are taken by the lexical tier with no model
// configured at all, and the spec checks what the job checked.
func TestPlainSentencesRunWithoutAModel(t *testing.T) {
	t.Parallel()
	app := httptest.NewServer(demoapp.Handler(demoapp.Options{}))
	t.Cleanup(app.Close)
	sc := scenario.Scenario{Name: "plain sentences", BaseURL: app.URL + "/login",
		Data: map[string]string{"EMAIL": demoapp.Email}, Secrets: map[string]string{"PASSWORD": demoapp.Password},
		Steps: []scenario.Step{
			{Text: "Type {{EMAIL}} into the email field"},
			{Text: "Enter {{PASSWORD}} in the password field"},
			{Text: "Press the Sign in button"},
			{Text: `Check that "Welcome back" appears`},
			{Text: "Open the Shopping list"},
			{Text: `Add the items "Oat milk", "Eggs" and "Tea"`},
			{Text: "Verify the list has 4 items"},
			{Text: `Delete "Bread"`},
			{Text: `Verify the items are "Oat milk", "Eggs" and "Tea" in that order`},
			{Text: `The item count should read "3 items"`},
		}}
	res := runWithoutModel(t, sc, nil)
	mustSucceed(t, res)
	if res.Tiers[orchestrator.TierLexical] != len(sc.Steps) || res.Usage.PromptTokens != 0 {
		t.Fatalf("tiers %v, %d tokens: want every step lexical at 0 tokens", res.Tiers, res.Usage.PromptTokens)
	}
	// A check may carry a timeout (the wait its step took, on a loaded
	// machine): the value checked is what must be there.
	for _, want := range []string{"toHaveCount(4", ".nth(2)).toContainText('Tea'", "process.env.PASSWORD", "press('Enter')"} {
		if !strings.Contains(res.Script, want) {
			t.Errorf("the spec lacks %q:\n%s", want, res.Script)
		}
	}
	if strings.Contains(res.Script, demoapp.Password) {
		t.Fatal("the spec holds the password")
	}
	mustPassSpec(t, res, map[string]string{"PASSWORD": demoapp.Password})
}

// TestACompoundStepRunsClauseByClause: a sentence of several clauses is
// taken at 0 tokens only as its clauses, each resolved on the page the one
// before left; its spec does each of them, and each command's report says
// which words it carried out. A value never takes the next clause's words.
func TestACompoundStepRunsClauseByClause(t *testing.T) {
	t.Parallel()
	app := httptest.NewServer(demoapp.Handler(demoapp.Options{}))
	t.Cleanup(app.Close)
	sc := scenario.Scenario{Name: "compound sentences", BaseURL: app.URL + "/login",
		Data: map[string]string{"EMAIL": demoapp.Email}, Secrets: map[string]string{"PASSWORD": demoapp.Password},
		Steps: []scenario.Step{
			{Text: "When I type {{EMAIL}} into the email field and enter {{PASSWORD}} in the password field, then I press the Sign in button"},
			{Text: `Welcome back should be shown and then open the Shopping list`},
			{Text: `Add the item "Jam" and verify the list has 2 items`},
			{Text: `Delete "Bread"; "Bread" should be gone and the list has 1 item`},
		}}
	res := runWithoutModel(t, sc, nil)
	mustSucceed(t, res)
	if res.Usage.PromptTokens != 0 {
		t.Fatalf("%d tokens, want 0", res.Usage.PromptTokens)
	}
	first := res.Steps[0].Commands
	if len(first) != 3 || first[0].Command.Value != "{{EMAIL}}" || first[1].Command.Value != "{{PASSWORD}}" {
		t.Fatalf("the first step ran %+v, want a fill of the email, one of the password and a click", first)
	}
	for i, want := range []string{"type {{EMAIL}} into the email field", "enter {{PASSWORD}} in the password field", "press the Sign in button"} {
		if first[i].Words != want {
			t.Errorf("command %d carried out %q, want %q", i+1, first[i].Words, want)
		}
	}
	for _, want := range []string{"toHaveCount(2", "toHaveCount(1", "getByText('Bread')"} { // a timeout may follow the count
		if !strings.Contains(res.Script, want) {
			t.Errorf("the spec lacks %q:\n%s", want, res.Script)
		}
	}
	mustPassSpec(t, res, map[string]string{"PASSWORD": demoapp.Password})
}

// TestACompoundStepWithAClauseNoTierReadsRunsNothing: when one clause of a
// sentence is not one the fast tiers read, none of it runs without the
// agent: the rest of the sentence is not typed into the field, and the
// first clause is not done while the second is dropped.
func TestACompoundStepWithAClauseNoTierReadsRunsNothing(t *testing.T) {
	t.Parallel()
	app := httptest.NewServer(demoapp.Handler(demoapp.Options{}))
	t.Cleanup(app.Close)
	sc := scenario.Scenario{Name: "unread clause", BaseURL: app.URL + "/login",
		Steps: []scenario.Step{{Text: "Type someone@example.com into the email field and make sure everything looks right"}}}
	res := runWithoutModel(t, sc, nil)
	st := res.Steps[0]
	if res.Status == orchestrator.StatusSucceeded || st.Status != orchestrator.StepFailed {
		t.Fatalf("the step %s (job %s), want it failed for want of the agent", st.Status, res.Status)
	}
	if len(st.Commands) != 0 {
		t.Fatalf("the step ran %+v without the agent", st.Commands)
	}
	if !strings.Contains(st.Error, `"make sure everything looks right"`) {
		t.Fatalf("the failure does not name the clause no tier reads: %s", st.Error)
	}
}

// TestTheGrammarNeverReadsTwoClausesAsOne: the strict grammar's quoted
// value ends at its own closing quote, so a sentence of two quoted clauses
// is not one fill of `hello" and press "Enter`; split, each is grammatical.
func TestTheGrammarNeverReadsTwoClausesAsOne(t *testing.T) {
	t.Parallel()
	step := `Fill "Search" with "hello" and press "Enter"`
	if orchestrator.Grammatical(step) {
		t.Fatalf("%q is read as one step", step)
	}
	cs, err := lexical.Clauses(step)
	if err != nil || len(cs) != 2 {
		t.Fatalf("clauses %+v, %v", cs, err)
	}
	for _, c := range cs {
		if !orchestrator.Grammatical(c.Text) {
			t.Errorf("%q is not grammatical", c.Text)
		}
	}
}

// TestAFastTierActionThePageRefusesGoesToTheAgent: a sentence the fast
// tiers read whose action the page will not take (a cookie wall over the
// form) is the agent's to work around when a model is configured, after
// what the fast tier did; without a model the step fails, and a check
// that fails is the step's verdict either way: the model is never asked
// to find something else that passes.
func TestAFastTierActionThePageRefusesGoesToTheAgent(t *testing.T) {
	t.Parallel()
	base := pages(t)
	subscribe := scenario.Step{Text: "Subscribe to the newsletter with ada@example.com"}
	t.Run("with a model", func(t *testing.T) {
		t.Parallel()
		sc := scenario.Scenario{Name: "walled newsletter", BaseURL: base + "/cookie.html", Steps: []scenario.Step{
			subscribe, {Text: `Verify "Subscribed ada@example.com" is visible`}}}
		res, _, model := runAgent(t, sc,
			respond(func(req llmtest.Request) map[string]any {
				return map[string]any{"status": "continue", "reasoning": "a cookie dialog covers the form",
					"blocker": map[string]any{"description": "cookie consent dialog", "commands": []any{cmd("click", refTarget(ref(req, "button", "Accept all")), "")}}}
			}),
			respond(func(req llmtest.Request) map[string]any {
				return map[string]any{"status": "complete", "commands": []any{cmd("click", refTarget(ref(req, "button", "Subscribe")), "")}}
			}),
		)
		if res.Status != orchestrator.StatusSucceeded {
			t.Fatalf("%s: %s", res.Status, res.Error)
		}
		if st := res.Steps[0]; st.Tier != orchestrator.TierAgent || len(model.Requests()) != 2 {
			t.Fatalf("tier %s after %d model calls", st.Tier, len(model.Requests()))
		}
		first := model.Requests()[0].Text()
		if !strings.Contains(first, "was resolved without a model, but") || !strings.Contains(first, "Subscribe") {
			t.Fatalf("the model is not told why the fast tier gave the step up:\n%s", first)
		}
		accept := strings.Index(res.Script, "name: 'Accept all' }).click()")
		submit := strings.LastIndex(res.Script, "name: 'Subscribe' }).click()")
		if accept < 0 || submit < accept {
			t.Fatalf("the spec must clear the wall before subscribing:\n%s", res.Script)
		}
	})
	t.Run("without a model", func(t *testing.T) {
		t.Parallel()
		res := runWithoutModel(t, scenario.Scenario{Name: "walled newsletter", BaseURL: base + "/cookie.html",
			Steps: []scenario.Step{subscribe}}, nil)
		if res.Status != orchestrator.StatusFailed || res.Steps[0].Status != orchestrator.StepFailed || !strings.Contains(res.Steps[0].Error, "Subscribe") {
			t.Fatalf("%s: %+v", res.Status, res.Steps[0])
		}
	})
	t.Run("a failed check", func(t *testing.T) {
		t.Parallel()
		sc := scenario.Scenario{Name: "unsubscribed", BaseURL: base + "/cookie.html", Steps: []scenario.Step{
			{Text: "Verify the Email field has the value ada@example.com"}}}
		res, _, model := runAgent(t, sc)
		if res.Status != orchestrator.StatusFailed || len(model.Requests()) != 0 || res.Steps[0].Tier == orchestrator.TierAgent {
			t.Fatalf("%s at tier %s after %d model calls: %s", res.Status, res.Steps[0].Tier, len(model.Requests()), res.Error)
		}
	})
}

// TestAStepPointsBackAtWhatTheStepBeforeNamed: "Delete the item you just
// added" is the row of the value the step before added, and "clear it"
// the field the clause before filled, with no model; a pointer after a
// step the fast tiers did not read is the agent's.
func TestAStepPointsBackAtWhatTheStepBeforeNamed(t *testing.T) {
	t.Parallel()
	app := httptest.NewServer(demoapp.Handler(demoapp.Options{}))
	t.Cleanup(app.Close)
	login := []scenario.Step{
		{Text: "When I type {{EMAIL}} into the email field and enter {{PASSWORD}} in the password field, then I press the Sign in button"},
		{Text: `Welcome back should be shown and then open the Shopping list`},
	}
	sc := scenario.Scenario{Name: "pointing back", BaseURL: app.URL + "/login",
		Data: map[string]string{"EMAIL": demoapp.Email}, Secrets: map[string]string{"PASSWORD": demoapp.Password},
		Steps: append(slices.Clone(login),
			scenario.Step{Text: `Add the item "Jam"`},
			scenario.Step{Text: "Delete the item you just added"},
			scenario.Step{Text: `"Jam" should be gone and the list has 1 item`},
		)}
	res := runWithoutModel(t, sc, nil)
	mustSucceed(t, res)
	if res.Usage.PromptTokens != 0 || res.Steps[3].Tier != orchestrator.TierLexical {
		t.Fatalf("%d tokens, the pointer's tier %s", res.Usage.PromptTokens, res.Steps[3].Tier)
	}
	mustPassSpec(t, res, map[string]string{"PASSWORD": demoapp.Password})

	sc.Steps = append(slices.Clone(login),
		scenario.Step{Type: scenario.StepAction, Action: "click", Target: &scenario.Target{Text: "Bread"}},
		scenario.Step{Text: "Delete the item you just added"})
	res = runWithoutModel(t, sc, nil)
	if last := res.Steps[len(res.Steps)-1]; last.Status != orchestrator.StepFailed || !strings.Contains(last.Error, "not one thing the step or the one before names") {
		t.Fatalf("a pointer after a step the fast tiers did not read: %+v", last)
	}
}
