package suite

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// StoredTest is a generated test of a tenant's: its accepted spec and the
// manifest of its steps (each step's commands with the elements they
// reached and how to find them again).
type StoredTest struct {
	ID       string
	Name     string
	Script   string
	Manifest json.RawMessage
}

// storedTestsDir is where a project of stored tests keeps them.
const storedTestsDir = "tests"

// storedConfig runs a project of generated tests as the runner would run
// any: each spec names its own URLs and reads its secrets from the
// environment, so the config adds nothing of the app's.
const storedConfig = `import { defineConfig } from '@playwright/test';

// The tests webpilot generated from scenarios: each tests/NAME.spec.ts with
// its steps' manifest beside it (tests/NAME.steps.json).
export default defineConfig({
  testDir: './tests',
  fullyParallel: true,
  retries: 0,
  reporter: 'list',
  use: { trace: 'retain-on-failure' },
});
`

const storedPackage = `{
  "name": "webpilot-generated-tests",
  "private": true,
  "scripts": { "test": "playwright test" },
  "devDependencies": { "@playwright/test": "^1.52.0" }
}
`

// StoredTestsProject writes stored tests as a project the runner runs as
// it runs a customer's: each test's accepted spec as
// tests/NAME.spec.ts, named after the test (its id's first characters
// added where two names meet), with its manifest beside it as
// tests/NAME.steps.json, a playwright.config.ts, a package.json and
// webpilot-tests.json (which test each spec is). A test
// with no accepted spec yet is left out; the files are as NewProject
// bounds any project's.
func StoredTestsProject(tests []StoredTest) (Project, map[string]string, error) {
	files := map[string][]byte{
		"playwright.config.ts": []byte(storedConfig),
		"package.json":         []byte(storedPackage),
	}
	where := map[string]string{}
	taken := map[string]bool{}
	for _, t := range tests {
		if strings.TrimSpace(t.Script) == "" {
			continue
		}
		base := fileSlug(t.Name)
		if taken[base] {
			id := strings.ReplaceAll(t.ID, "-", "")
			base += "-" + id[:min(8, len(id))]
		}
		for n, stem := 2, base; taken[base]; n++ {
			base = fmt.Sprintf("%s-%d", stem, n)
		}
		taken[base] = true
		spec := path.Join(storedTestsDir, base+".spec.ts")
		files[spec] = []byte(t.Script)
		if len(t.Manifest) > 0 {
			files[path.Join(storedTestsDir, base+".steps.json")] = t.Manifest
		}
		where[t.ID] = spec
	}
	if len(where) == 0 {
		return Project{}, nil, &ProjectError{Problem: "no stored test has a passing version to write"}
	}
	index := map[string]string{}
	for id, spec := range where {
		index[spec] = id
	}
	files[storedIndex], _ = json.MarshalIndent(index, "", "  ")
	p, err := NewProject(files)
	return p, where, err
}

// fileSlug is a test's name as a file's: lower case, words joined by '-',
// at most 60 characters.
func fileSlug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	if b.Len() == 0 {
		return "test"
	}
	return b.String()
}

// IsStoredTestsProject reports whether p is a project StoredTestsProject
// wrote (its config is the one it writes): one that stored tests may be
// written over again, where a customer's own never is.
func IsStoredTestsProject(p Project) bool {
	f, ok := p.File("playwright.config.ts")
	return ok && string(f.Content) == storedConfig
}
