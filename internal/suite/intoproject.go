package suite

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// WrittenTest is a generated test written into a project as one of its
// own files.
type WrittenTest struct {
	// File is the new test file's path in the project.
	File   string `json:"file"`
	Source string `json:"source"`
	// Uses names what of the project's own the test calls: its page
	// objects' locators (ListPage.addButton) and the fixtures that give
	// them (fixture loginPage).
	Uses []string `json:"uses,omitempty"`
}

// IntoProject is what a scenario's job wrote into the customer's project
// it named: the test file, in the project's idiom, the runner's verdict of
// it in the sandbox, and the version proposed with it when it passed.
type IntoProject struct {
	Project string `json:"project"`
	// Parent is the version the file was written into (the project's
	// current one when the job ran).
	Parent string `json:"parent,omitempty"`
	File   string `json:"file,omitempty"`
	Source string `json:"source,omitempty"`
	// Uses names the project's page objects and fixtures the test calls.
	Uses []string `json:"uses,omitempty"`
	// Verdict is the runner's verdict of the written test; Proposed the
	// version holding it, proposed (accepted as any proposal is).
	Verdict  TestStatus `json:"verdict,omitempty"`
	Proposed string     `json:"proposed,omitempty"`
	// Error says why nothing was proposed.
	Error          string  `json:"error,omitempty"`
	BrowserSeconds float64 `json:"browser_seconds,omitempty"`
	CreditsMicro   int64   `json:"credits_micro,omitempty"`
}

// WriteOptions say what WriteTest knows beside the project.
type WriteOptions struct {
	// SecretNames are the scenario's secrets: values naming one are read
	// from the environment.
	SecretNames []string
	// TestFiles are the project's test files as its runner lists them
	// (its config's testMatch); nil: those the runner's default takes.
	TestFiles []string
}

// ErrNoTestFiles is WriteTest's error for a project with no test file to
// take its idiom from.
var ErrNoTestFiles = errors.New("the project has no test file to write beside")

// WriteTest writes a scenario's recorded steps (its manifest) as a test
// file of p in the project's own idiom: beside its test files, in their
// language and module system, its paths relative to the config's baseURL
// when it has one, and each element its page objects define reached
// through them (a fixture's where one gives the object, else one the test
// builds over its page), except in a check that the element is visible or
// hidden, which asserts the name it was found by. Every other line is
// what the scenario's own spec says.
func WriteTest(p Project, sc scenario.Scenario, manifest []orchestrator.ManifestStep, o WriteOptions) (WrittenTest, error) {
	dir, suffix, cjs, ok := testIdiom(p, o.TestFiles)
	if !ok {
		return WrittenTest{}, ErrNoTestFiles
	}
	pos := FindPageObjects(p)
	used := map[int]bool{} // by index in pos
	var uses []string
	locate := func(c browser.Command, el browser.Fingerprint) string {
		if c.Assert == browser.AssertIsVisible || c.Assert == browser.AssertIsHidden {
			// What such a check asserts is how its target was named ("2
			// items" is visible): the page object's locator of the same
			// element (#count) would assert less.
			return ""
		}
		for i, po := range pos {
			for _, prop := range po.Props {
				if prop.Matches(el) {
					used[i] = true
					if u := po.Class + "." + prop.Name; !slices.Contains(uses, u) {
						uses = append(uses, u)
					}
					return objectVar(po) + "." + prop.Name
				}
			}
		}
		return ""
	}
	origin, body := orchestrator.SpecBodyLocated(sc, manifest, o.SecretNames, locate)

	w := WrittenTest{File: freePath(p, dir, slug(sc.Name), suffix), Uses: uses}
	var imports []string
	importFrom := func(names []string, file string) {
		mod := file
		if !strings.HasPrefix(file, "@") {
			mod = relPath(dir, strings.TrimSuffix(file, path.Ext(file)))
		}
		if cjs {
			imports = append(imports, fmt.Sprintf("const { %s } = require(%s);", strings.Join(names, ", "), orchestrator.JSString(mod)))
		} else {
			imports = append(imports, fmt.Sprintf("import { %s } from %s;", strings.Join(names, ", "), orchestrator.JSString(mod)))
		}
	}
	// The test comes from the fixtures' module when one of its fixtures
	// is used, as the project's own tests take it.
	params := []string{"page"}
	testFrom := "@playwright/test"
	var built []PageObject
	for i, po := range pos {
		if !used[i] {
			continue
		}
		if po.Fixture != "" && (testFrom == "@playwright/test" || testFrom == po.FixtureFile) {
			testFrom = po.FixtureFile
			params = append(params, po.Fixture)
			w.Uses = append(w.Uses, "fixture "+po.Fixture)
			continue
		}
		built = append(built, po)
	}
	if testFrom == "@playwright/test" {
		importFrom([]string{"test", "expect"}, testFrom)
	} else if src, _ := p.File(testFrom); exported(src.Content)["expect"] {
		importFrom([]string{"test", "expect"}, testFrom)
	} else {
		importFrom([]string{"test"}, testFrom)
		importFrom([]string{"expect"}, "@playwright/test")
	}
	for _, po := range built {
		importFrom([]string{po.Class}, po.File)
	}
	device := sc.Options.Device
	if device != "" {
		importFrom([]string{"devices"}, "@playwright/test")
	}

	var b strings.Builder
	if cjs {
		b.WriteString("// @ts-check\n")
	}
	for _, l := range imports {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
	// The device the scenario emulated, in the browser it ran (a phone's
	// descriptor may name WebKit); the scenario's origin where the config
	// gives no baseURL.
	var use []string
	if device != "" {
		use = append(use, fmt.Sprintf("...devices[%s]", orchestrator.JSString(device)), "defaultBrowserType: 'chromium'")
	}
	if !configHasBaseURL(p) {
		use = append(use, "baseURL: "+orchestrator.JSString(origin))
	}
	if len(use) > 0 {
		fmt.Fprintf(&b, "test.use({ %s });\n\n", strings.Join(use, ", "))
	}
	fmt.Fprintf(&b, "test(%s, async ({ %s }) => {\n", orchestrator.JSString(cmp.Or(sc.Name, "scenario")), strings.Join(params, ", "))
	for _, po := range built {
		fmt.Fprintf(&b, "  const %s = new %s(page);\n", objectVar(po), po.Class)
	}
	for _, l := range body {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("});\n")
	w.Source = b.String()
	return w, nil
}

// objectVar is the test's name for a page object: its fixture's, or the
// class's in lower camel case (ListPage: listPage).
func objectVar(po PageObject) string {
	if po.Fixture != "" {
		return po.Fixture
	}
	r := []rune(po.Class)
	return string(unicode.ToLower(r[0])) + string(r[1:])
}

// testIdiom reads how a project's tests are written: the directory most
// of them are in, how most are named (spec.ts, test.js, e2e.ts: the
// language most are in, TypeScript on a tie), and whether they require
// the runner (CommonJS) rather than import it. listed are the test files
// as the runner lists them; nil: those its default testMatch takes.
func testIdiom(p Project, listed []string) (dir, suffix string, cjs, ok bool) {
	dirs := map[string]int{}
	suffixes := map[string]int{}
	tsFiles, files, requires := 0, 0, 0
	for _, f := range p.Files {
		if strings.HasPrefix(f.Path, "node_modules/") || (listed == nil && !IsSpec(f.Path)) || (listed != nil && !slices.Contains(listed, f.Path)) {
			continue
		}
		files++
		dirs[path.Dir(f.Path)]++
		if _, sfx, found := strings.Cut(path.Base(f.Path), "."); found {
			suffixes[sfx]++
		}
		if strings.HasSuffix(f.Path, "ts") || strings.HasSuffix(f.Path, "tsx") {
			tsFiles++
		}
		if requireRunner.Match(f.Content) {
			requires++
		}
	}
	if files == 0 {
		return "", "", false, false
	}
	for d, n := range dirs {
		if n > dirs[dir] || (n == dirs[dir] && d < dir) {
			dir = d
		}
	}
	ts := tsFiles*2 >= files
	suffix = "spec.js"
	if ts {
		suffix = "spec.ts"
	}
	best := 0
	for sfx, n := range suffixes {
		lang := strings.HasSuffix(sfx, "ts") || strings.HasSuffix(sfx, "tsx")
		if lang == ts && (n > best || (n == best && sfx < suffix)) {
			suffix, best = sfx, n
		}
	}
	return dir, suffix, !ts && requires*2 > files, true
}

// requireRunner is a CommonJS test file's way to the runner.
var requireRunner = regexp.MustCompile(`require\(\s*['"]@playwright/test['"]\s*\)`)

// configBaseURL finds a baseURL in a project's config.
var configBaseURL = regexp.MustCompile(`\bbaseURL\s*:`)

// configHasBaseURL reports whether the project's config gives its tests
// a baseURL (the run's base_url, when given, is every test's instead).
func configHasBaseURL(p Project) bool {
	for _, f := range p.Files {
		if !strings.Contains(f.Path, "/") && strings.HasPrefix(f.Path, "playwright.config.") && configBaseURL.Match(f.Content) {
			return true
		}
	}
	return false
}

// slug makes a file name of a scenario's name.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	return cmp.Or(strings.Trim(b.String(), "-"), "scenario")
}

// freePath is a test file's path in dir named for base, with the
// project's test suffix, that no file of the project has.
func freePath(p Project, dir, base, suffix string) string {
	name := path.Join(dir, base+"."+suffix)
	for i := 2; ; i++ {
		if _, taken := p.File(name); !taken {
			return name
		}
		name = path.Join(dir, fmt.Sprintf("%s-%d.%s", base, i, suffix))
	}
}

// relPath is the module path from a file in dir to target (both relative
// to the project's root), as an import writes it ("./x", "../pages/x").
func relPath(dir, target string) string {
	from := strings.Split(path.Clean(dir), "/")
	to := strings.Split(path.Clean(target), "/")
	if from[0] == "." {
		from = nil
	}
	i := 0
	for i < len(from) && i < len(to)-1 && from[i] == to[i] {
		i++
	}
	up := len(from) - i
	rel := strings.Repeat("../", up) + strings.Join(to[i:], "/")
	if up == 0 {
		rel = "./" + rel
	}
	return rel
}
