package lexical

import (
	"errors"
	"slices"
	"testing"
)

// TestASentenceIsSplitIntoItsClauses: a compound step is read as the
// clauses it is made of, so no clause's words become another's value or
// name; values and names that merely contain "and" stay whole.
func TestASentenceIsSplitIntoItsClauses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		step string
		want []string
	}{
		{`Fill the search field with hello and press Enter`, []string{`Fill the search field with hello`, `press Enter`}},
		{`Type "John" in the name field and pick the first contact`, []string{`Type "John" in the name field`, `pick the first contact`}},
		{`Click Login, then verify the dashboard is shown`, []string{`Click Login`, `verify the dashboard is shown`}},
		{`Click Login and the dashboard should appear`, []string{`Click Login`, `the dashboard should appear`}},
		{`Click Login; the message "Welcome" is shown`, []string{`Click Login`, `the message "Welcome" is shown`}},
		{`Enter tomsmith into Username. Click Login.`, []string{`Enter tomsmith into Username`, `Click Login`}},
		{`When I enter "tom" in the username field and I click Login`, []string{`enter "tom" in the username field`, `click Login`}},
		{`And the user clicks on "Login"`, []string{`click on "Login"`}},
		{`The customer ticks "Remember me"`, []string{`tick "Remember me"`}},
		{`Then I should see "Welcome"`, []string{`I should see "Welcome"`}},
		{`Fill the first name with Ada and the last name with Lovelace`, []string{`Fill the first name with Ada`, `Fill the last name with Lovelace`}},
		{`Enter "tom" in the username field and "secret" in the password field`, []string{`Enter "tom" in the username field`, `Enter "secret" in the password field`}},
		{`Type Tom and Jerry into the full name field`, []string{`Type Tom and Jerry into the full name field`}},
		{`Fill the message with bread and butter`, []string{`Fill the message with bread and butter`}},
		{`Click Save and Continue`, []string{`Click Save and Continue`}},
		{`Write "Click here and then press Enter" in the message`, []string{`Write "Click here and then press Enter" in the message`}},
		{`Fill in the street address with 1 Main St, Springfield`, []string{`Fill in the street address with 1 Main St, Springfield`}},
		{`Type "Ada" in Full name, type "ada@x.io" in Email and click Send`, []string{`Type "Ada" in Full name`, `type "ada@x.io" in Email`, `click Send`}},
		{`Enter "555" in the phone field; press Tab; type "1 Main St" into the street`, []string{`Enter "555" in the phone field`, `press Tab`, `type "1 Main St" into the street`}},
	} {
		t.Run(tc.step, func(t *testing.T) {
			cs, err := Clauses(tc.step)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cs {
				got = append(got, c.Text)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("clauses %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAConditionIsTheAgents: a step whose meaning depends on what the page
// shows is never taken by the fast tiers.
func TestAConditionIsTheAgents(t *testing.T) {
	t.Parallel()
	for _, step := range []string{
		`If a cookie banner appears, click Accept`,
		`When the page loads, click Login`,
		`Click Login unless you are already signed in`,
		`Click Place order if the total is $12.00`,
		`Once the page has loaded, click Place order`,
	} {
		if _, err := Clauses(step); !errors.Is(err, ErrNotUnderstood) {
			t.Errorf("%q: %v, want it left to the agent", step, err)
		}
		if _, ok := Parse(step); ok {
			t.Errorf("%q was parsed", step)
		}
	}
}

// TestNoValueIsASentencesLeftoverWords: a clause's unquoted value is only a
// value; words that name another element or refer back leave the step to
// the agent rather than being typed.
func TestNoValueIsASentencesLeftoverWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		step  string
		ok    bool
		value string
	}{
		{`Fill the search field with hello and press Enter`, false, ""}, // two clauses: never parsed whole
		{`Fill the search field with hello`, true, "hello"},
		{`Fill the note with bread and butter`, true, "bread and butter"},
		{`Fill the note with milk in the fridge`, false, ""},
		{`Set the name to Ada and the age to 3`, false, ""},
		{`Search the help center for "refund"`, true, "refund"},
		{`Type hello into it`, false, ""},
		{`Click it`, false, ""},
		{`Select the first one`, false, ""},
		{`Mark it as done`, false, ""},
	} {
		t.Run(tc.step, func(t *testing.T) {
			it, ok := Parse(tc.step)
			if ok != tc.ok {
				t.Fatalf("parsed %v (%+v), want %v", ok, it, tc.ok)
			}
			if ok && (len(it.Values) != 1 || it.Values[0] != tc.value) {
				t.Fatalf("values %q, want %q", it.Values, tc.value)
			}
		})
	}
}
