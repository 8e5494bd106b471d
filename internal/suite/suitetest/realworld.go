package suitetest

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/webpilot/webpilot/internal/suite"
)

// The real-world corpus: suites written the ways public suites for
// practice apps are (full-page screenshots and videos in hooks,
// test.step, icon glyphs in names as they are copied from the
// accessibility tree, expect(locator).toBeVisible() on controls, a test
// flaky by nature beside drifted ones, regular expressions, serial files,
// beforeAll logins, storage state, legacy selector strings), against
// demoapp.Practice, each test's outcome marked by hand.
//
//go:embed all:realworld
var realworld embed.FS

// RealWorld names the real-world corpus projects.
func RealWorld() []string {
	entries, _ := fs.ReadDir(realworld, "realworld")
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// RealWorldProject is a real-world corpus project as an upload carries it.
func RealWorldProject(name string) (suite.Project, error) {
	root := path.Join("realworld", name)
	files := map[string][]byte{}
	err := fs.WalkDir(realworld, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := realworld.ReadFile(p)
		files[strings.TrimPrefix(p, root+"/")] = b
		return err
	})
	if err != nil {
		return suite.Project{}, err
	}
	return suite.NewProject(files)
}

// Mark is what a test of the real-world corpus is against the changed app.
type Mark string

// Marks.
const (
	// Passes: the change does not touch the test.
	Passes Mark = "passes"
	// Drift: the test fails because the app renamed or reworded what it
	// uses; a repair heals it and the healed test passes.
	Drift Mark = "drift"
	// Regression: the test fails because the app no longer does what it
	// checks (drifted on its way there or not); never healed.
	Regression Mark = "regression"
	// Flaky: the test fails or passes by the app's nature, whatever the
	// change.
	Flaky Mark = "flaky"
)

// Marks are a real-world project's tests by title, each as it is marked
// against demoapp.Practice with PracticeDrift alone (drift) and with
// PracticeDrift and PracticeRejectsLogin (regressed).
type Marks struct{ Drift, Regressed map[string]Mark }

// RealWorldMarks are the hand marks of every real-world project.
var RealWorldMarks = map[string]Marks{
	"formauth-ts": {
		Drift: map[string]Mark{"should login with valid credentials": Drift, "should show an error for an invalid password": Drift,
			"should show an error for an unknown user": Drift, "should logout": Drift},
		Regressed: map[string]Mark{"should login with valid credentials": Regression, "should show an error for an invalid password": Regression,
			"should show an error for an unknown user": Drift, "should logout": Regression},
	},
	"serial-escaped": {
		// The beforeAll's login fails: the serial file's tests all fail with it.
		Drift:     map[string]Mark{"lands on the secure area": Drift, "has a logout button": Drift, "logs out": Drift},
		Regressed: map[string]Mark{"lands on the secure area": Regression, "has a logout button": Regression, "logs out": Regression},
	},
	"pom-fixtures": {
		Drift: map[string]Mark{"user can sign in": Drift, "user can sign out again": Drift, "wrong password is refused": Drift,
			"selects Option 1": Drift, "selects Option 2": Drift},
		Regressed: map[string]Mark{"user can sign in": Regression, "user can sign out again": Regression, "wrong password is refused": Regression,
			"selects Option 1": Drift, "selects Option 2": Drift},
	},
	"storage-state": {
		// The setup's login drifts; the tests that depend on it are skipped until it passes.
		Drift: map[string]Mark{"authenticate": Drift, "opens the secure area without logging in again": Drift,
			"the logout link is offered": Drift, "checkbox 1 can be ticked while signed in": Drift},
		Regressed: map[string]Mark{"authenticate": Regression, "opens the secure area without logging in again": Regression,
			"the logout link is offered": Regression, "checkbox 1 can be ticked while signed in": Regression},
	},
	"add-remove": {
		Drift: map[string]Mark{"the add button is there": Drift, "adds an element": Drift,
			"adds five elements and removes them all": Drift, "removing one element leaves the others": Drift},
		Regressed: map[string]Mark{"the add button is there": Drift, "adds an element": Drift,
			"adds five elements and removes them all": Drift, "removing one element leaves the others": Drift},
	},
	"flaky-neighbour": {
		Drift: map[string]Mark{"menu shows the gallery link": Flaky, "dropdown selects option 2": Drift, "checkboxes toggle": Drift,
			"dynamic content appears": Passes, "table lists Jason Doe": Passes},
		Regressed: map[string]Mark{"menu shows the gallery link": Flaky, "dropdown selects option 2": Drift, "checkboxes toggle": Drift,
			"dynamic content appears": Passes, "table lists Jason Doe": Passes},
	},
	"hooks-media": {
		Drift: map[string]Mark{"checks the first checkbox": Drift, "picks option 1": Drift, "types a number": Passes, "closes the entry ad": Passes},
		Regressed: map[string]Mark{"checks the first checkbox": Drift, "picks option 1": Drift, "types a number": Passes,
			"closes the entry ad": Passes},
	},
	"steps-bdd": {
		Drift:     map[string]Mark{"Scenario: a valid user logs in": Drift, "Scenario: an unknown user is told so": Drift},
		Regressed: map[string]Mark{"Scenario: a valid user logs in": Regression, "Scenario: an unknown user is told so": Drift},
	},
	"legacy-selectors": {
		Drift: map[string]Mark{"logs in": Drift, "checkbox 2 starts checked": Drift, "dropdown starts unselected": Drift},
		Regressed: map[string]Mark{"logs in": Regression, "checkbox 2 starts checked": Drift,
			"dropdown starts unselected": Drift},
	},
	"esm-mixed": {
		Drift: map[string]Mark{"lists the examples": Passes, "the login button carries its icon": Drift, "logs in and out": Drift,
			"offers two options": Passes},
		Regressed: map[string]Mark{"lists the examples": Passes, "the login button carries its icon": Drift, "logs in and out": Regression,
			"offers two options": Passes},
	},
}
