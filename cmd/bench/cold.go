package main

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/sandbox"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"

	"github.com/webpilot/webpilot/internal/orchestrator"
)

// coldModes are the ways a repair gets the elements of a suite red on
// arrival: a baseline, the customer's own traces, the agent. "warm" is
// the reference: a passing run recorded on webpilot.
var coldModes = []string{"warm", "baseline", "traces", "agent"}

// coldModeList limits the suites_cold area to some modes.
var coldModeList string

// measuredModes are the modes the run measures: warm and those asked for.
func measuredModes() []string {
	var ms []string
	for _, m := range coldModes {
		if m == "warm" || slices.Contains(strings.Split(coldModeList, ","), m) {
			ms = append(ms, m)
		}
	}
	return ms
}

// coldVariants are the changes the cold area repairs: locator drift (what
// needs the elements) and regressions (never healed, whatever the mode).
var coldVariants = []struct {
	v     demoapp.Variation
	drift bool
}{
	{demoapp.RenamedIDs, true}, {demoapp.Reworded, true}, {demoapp.WrongCount, false}, {demoapp.MissingAdd, false},
}

// coldRow is one project's figures, by mode.
type coldRow struct {
	name                         string
	drift, healed, flagged, regr map[string]int
	wrong                        int
	notes                        []string
	took                         time.Duration
}

// suitesColdBench repairs each corpus project as uploaded for the first
// time against its drifted and regressed app (no passing run on
// webpilot): from the release as baseline, from the customer's own green
// run's traces, and through the agent (the scripted model answering as a
// capable model reads the question: the element most like the one the
// call acted on in the release, or a regression when nothing is); each
// against the warm repair, which heals from a run recorded on webpilot.
func suitesColdBench(ctx context.Context) error {
	rows, err := eachProject("bench-cold-", corpusNames(), func(pr suite.ProjectRunner, name, work, runner, browsers string) (coldRow, error) {
		start := time.Now()
		r, err := coldProject(ctx, pr, name, work, runner, browsers)
		r.took = time.Since(start)
		fmt.Fprintf(os.Stderr, "suites_cold: %s done in %s: drift %v of %v healed, flagged %v of %v, wrongly %d, err=%v\n",
			name, r.took.Round(time.Second), r.healed, r.drift, r.flagged, r.regr, r.wrong, err)
		for _, n := range r.notes {
			fmt.Fprintf(os.Stderr, "suites_cold: %s: %s\n", name, n)
		}
		return r, err
	})
	if err != nil {
		return err
	}
	fmt.Println("Suites red on arrival (the corpus, first upload, no passing run on webpilot): drift healed and regressions flagged by where the elements came from")
	fmt.Printf("  %-12s %-10s %13s %19s\n", "project", "mode", "drift healed", "regressions flagged")
	total := coldRow{drift: map[string]int{}, healed: map[string]int{}, flagged: map[string]int{}, regr: map[string]int{}}
	for _, r := range rows {
		for _, m := range measuredModes() {
			fmt.Printf("  %-12s %-10s %13s %19s\n", r.name, m, fmt.Sprintf("%d/%d", r.healed[m], r.drift[m]), fmt.Sprintf("%d/%d", r.flagged[m], r.regr[m]))
			total.drift[m] += r.drift[m]
			total.healed[m] += r.healed[m]
			total.flagged[m] += r.flagged[m]
			total.regr[m] += r.regr[m]
		}
		total.wrong += r.wrong
		for _, n := range r.notes {
			fmt.Printf("  note: %s: %s\n", r.name, n)
		}
	}
	cold, coldOf, flagged, regr := 0, 0, 0, 0
	for _, m := range measuredModes() {
		flagged, regr = flagged+total.flagged[m], regr+total.regr[m]
		if m != "warm" {
			cold, coldOf = cold+total.healed[m], coldOf+total.healed["warm"]
		}
	}
	of := func(m string) string {
		if !slices.Contains(measuredModes(), m) {
			return "-" // not measured in this run (-cold-modes)
		}
		return fmt.Sprintf("%d/%d", total.healed[m], total.healed["warm"])
	}
	fmt.Printf("bench suites_cold: projects=%d drift_healed=%d/%d regressions_flagged=%d/%d wrongly_healed=%d baseline_healed=%s traces_healed=%s agent_healed=%s\n\n",
		len(rows), cold, coldOf, flagged, regr, total.wrong, of("baseline"), of("traces"), of("agent"))
	return nil
}

// eachProject measures each named project, two at a time, with a project
// runner on the worker's sandbox and a directory for the runs outside
// webpilot (their browsers laid out in it): the rows in the names' order.
func eachProject[R any](prefix string, names []string, measure func(pr suite.ProjectRunner, name, work, runner, browsers string) (R, error)) ([]R, error) {
	runner := browsertest.RunnerDir()
	sb, err := sandbox.New(sandbox.Config{Runner: runner})
	if err != nil {
		return nil, err
	}
	work, browsers, err := outsideWork(prefix, runner)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	pr := suite.ProjectRunner{Sandbox: sb, Deps: &suite.Deps{Dir: suite.DefaultDepsDir()}}
	rows := make([]R, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rows[i], errs[i] = measure(pr, name, work, runner, browsers)
		}()
	}
	wg.Wait()
	return rows, errors.Join(errs...)
}

// tunnelsTo starts an egress proxy that lets runs reach the servers at
// urls: a function that opens a tunnel through it for each run, and one
// that stops it.
func tunnelsTo(urls ...string) (func() *suite.Proxy, func(), error) {
	var hosts []string
	for _, u := range urls {
		hosts = append(hosts, strings.TrimPrefix(u, "http://"))
	}
	proxy, err := netguard.NewProxy(netguard.New(hosts), nil)
	if err != nil {
		return nil, nil, err
	}
	return func() *suite.Proxy {
		tun := proxy.Open()
		return &suite.Proxy{Addr: strings.TrimPrefix(proxy.Server(), "http://"), Username: tun.User, Password: tun.Password}
	}, func() { _ = proxy.Close() }, nil
}

// coldProject measures one corpus project in every mode.
func coldProject(ctx context.Context, pr suite.ProjectRunner, name, work, runner, browsers string) (coldRow, error) {
	r := coldRow{name: name, drift: map[string]int{}, healed: map[string]int{}, flagged: map[string]int{}, regr: map[string]int{}}
	app := demoapp.New(demoapp.Options{})
	srv := httptest.NewServer(app)
	defer srv.Close()
	release := httptest.NewServer(demoapp.New(demoapp.Options{}))
	defer release.Close()
	tunnel, closeProxy, err := tunnelsTo(srv.URL, release.URL)
	if err != nil {
		return r, err
	}
	defer closeProxy()
	secrets := map[string]string{"E2E_PASSWORD": demoapp.Password}
	p, err := suitetest.Project(name)
	if err != nil {
		return r, err
	}
	listed, err := pr.Run(ctx, p, suite.RunOptions{List: true})
	_ = os.RemoveAll(listed.Dir)
	if err != nil {
		return r, fmt.Errorf("%s: list: %w", name, err)
	}
	projects := map[string]bool{}
	for _, t := range listed.Tests {
		projects[t.Project] = true
	}
	env := map[string]string{"BASE_URL": release.URL, "APP_URL": release.URL, "E2E_PASSWORD": demoapp.Password}
	in, err := recordRelease(ctx, pr, p, listed.Tests, release.URL, secrets, env, keys(projects), tunnel, work, runner, browsers, name)
	if err != nil {
		return r, err
	}
	defer in.model.Close()
	prints := in.prints

	for _, v := range coldVariants {
		if err := app.SetVariant(v.v); err != nil {
			return r, err
		}
		for _, mode := range measuredModes() {
			rep, err := in.repair(ctx, pr, p, mode, suite.RunOptions{BaseURL: srv.URL, Env: secrets, Proxy: tunnel()}, release.URL, tunnel)
			if err != nil {
				return r, fmt.Errorf("%s %s repair under %s: %w", name, mode, v.v, err)
			}
			for _, t := range rep.Tests {
				if t.Verdict == orchestrator.VerdictPassed || t.Verdict == orchestrator.VerdictFlaky || prints[t.ID] == nil {
					continue // passed, or does not pass as written on the release
				}
				switch {
				case v.drift:
					r.drift[mode]++
					if t.Verdict == orchestrator.VerdictHealed {
						r.healed[mode]++
					} else if mode != "warm" {
						r.notes = append(r.notes, fmt.Sprintf("%s, %s: not healed: %s %s: %s: %s", v.v, mode, t.File, t.Title, t.Verdict, firstLine(t.Reason)))
					}
				default:
					r.regr[mode]++
					if t.Verdict == orchestrator.VerdictRegression {
						r.flagged[mode]++
					} else {
						r.notes = append(r.notes, fmt.Sprintf("%s, %s: not flagged: %s %s: %s: %s", v.v, mode, t.File, t.Title, t.Verdict, firstLine(t.Reason)))
					}
					if t.Verdict == orchestrator.VerdictHealed {
						r.wrong++
					}
				}
			}
		}
	}
	return r, nil
}

// released is what a cold repair starts from, recorded on the release: a
// passing run on webpilot (the warm repair's), the customer's own green
// run's traces, and the scripted model that answers from the first.
type released struct {
	prints, traces map[string][]suite.TraceAction
	model          *llmtest.Server
	agent          suite.Asker
}

// recordRelease runs p on the release (at url) on webpilot with traces,
// and outside it as the customer's CI does (env, on projects), and starts
// the model; the caller closes it.
func recordRelease(ctx context.Context, pr suite.ProjectRunner, p suite.Project, listed []suite.TestOutcome, url string, secrets, env map[string]string,
	projects []string, tunnel func() *suite.Proxy, work, runner, browsers, name string) (released, error) {
	var out released
	in, err := pr.Run(ctx, p, suite.RunOptions{BaseURL: url, Env: secrets, Proxy: tunnel(), Trace: true})
	if err != nil {
		return out, fmt.Errorf("%s: %w", name, err)
	}
	out.prints = map[string][]suite.TraceAction{}
	tests := map[string]string{}
	for i := range in.Tests {
		if t := &in.Tests[i]; t.Evidence() == nil && t.Status == "passed" {
			out.prints[t.ID] = t.Actions
			tests[t.File+" › "+t.Title()] = t.ID
		}
	}
	_ = os.RemoveAll(in.Dir)
	ci, err := os.MkdirTemp(work, name+"-ci-")
	if err != nil {
		return out, err
	}
	if _, err := suitetest.Outside(ctx, p, ci, runner, browsers, env, projects, "--trace=on"); err != nil {
		return out, fmt.Errorf("%s: the customer's run: %w", name, err)
	}
	archive, err := suitetest.CIArtifacts(ci)
	if err != nil {
		return out, err
	}
	imp, err := suite.ImportTraces(ctx, archive, listed)
	if err != nil {
		return out, fmt.Errorf("%s: import the customer's run: %w", name, err)
	}
	out.traces = imp.Prints
	out.model = llmtest.Start()
	for range 400 {
		out.model.Push(llmtest.Reply{Respond: releaseReader(out.prints, tests), PromptTokens: 1500, CompletionTokens: 20})
	}
	out.agent = benchAsker{llm.New(llm.Config{BaseURL: out.model.BaseURL(), Model: "gpt-4o-mini", APIKey: "bench"})}
	return out, nil
}

// repair repairs p in a mode: from the passing run (warm), the release as
// baseline, the customer's traces, or the agent.
func (in released) repair(ctx context.Context, pr suite.ProjectRunner, p suite.Project, mode string, o suite.RunOptions, release string,
	tunnel func() *suite.Proxy) (suite.RepairReport, error) {
	var from map[string][]suite.TraceAction
	switch mode {
	case "warm":
		from = in.prints
	case "baseline":
		o.Baseline = &suite.Baseline{BaseURL: release, Proxy: tunnel()}
	case "traces":
		from = in.traces
	case "agent":
		o.Agent = in.agent
	}
	return pr.Repair(ctx, p, from, o)
}

// benchAsker asks the scripted model through the real client.
type benchAsker struct{ c *llm.Client }

func (a benchAsker) Ask(ctx context.Context, req llm.Request) (llm.Reply, int64, error) {
	r, err := a.c.Chat(ctx, req)
	return r, llm.DefaultPrices.MicroCredits(r.Model, r.Usage), err
}

var (
	failingCall = regexp.MustCompile(`(?m)^FAILING CALL: .+ at (\S+):(\d+)$`)
	words       = regexp.MustCompile(`[a-z0-9]+`)
	nthPart     = regexp.MustCompile(`(?m)^LOCATOR: .* >> nth=(\d+)\s*$`)
	nthCSS      = regexp.MustCompile(`(?m)^LOCATOR: .*:nth-(?:of-type|child)\((\d+)\)`)
	firstCSS    = regexp.MustCompile(`(?m)^LOCATOR: .*:first-(?:of-type|child)\b`)
	// content is what a page shows rather than what a person works: its
	// words are what a check of it is about.
	content = map[string]bool{"div": true, "p": true, "span": true, "li": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true}
)

// position is the 0-based position a locator picks among alike elements:
// its nth= part, or a CSS :nth-of-type / :nth-child / :first-child; -1 when
// it names none.
func position(q string) int {
	if m := nthPart.FindStringSubmatch(q); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if m := nthCSS.FindStringSubmatch(q); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n - 1
	}
	if firstCSS.MatchString(q) {
		return 0
	}
	return -1
}

// scored is an element of the page and how like the recorded one it is.
type scored struct {
	ref   string
	score float64
}

// judged is how the page reads against one recorded element: its most
// like element and how clearly.
type judged struct {
	best, second float64
	ref          string
	seen         []scored
	wants        int // the recorded element's words
}

// better says j is a clearer reading than o: a likelier element, or as
// likely and further ahead of the next.
func (j judged) better(o judged) bool {
	if j.best != o.best {
		return j.best > o.best
	}
	if j.best-j.second != o.best-o.second {
		return j.best-j.second > o.best-o.second
	}
	return j.ref < o.ref
}

// judgePage scores each element of page against old, the element the
// call acted on in the release.
func judgePage(old *suite.SnapshotElement, page string) judged {
	want := map[string]bool{old.Tag: true}
	for _, k := range []string{"role", "id", "data-testid", "name", "type", "aria-label", "placeholder", "title", "alt"} {
		for _, w := range words.FindAllString(strings.ToLower(old.Attributes[k]), -1) {
			want[w] = true
		}
	}
	said := map[string]bool{}
	for _, w := range words.FindAllString(strings.ToLower(old.Text), -1) {
		want[w] = true
		if len(w) > 2 { // "a", "to": not what a text is about
			said[w] = true
		}
	}
	var seen []scored
	best, second, ref := 0.0, 0.0, ""
	for _, l := range strings.Split(page, "\n") {
		id, rest, ok := strings.Cut(l, " ")
		if !ok || !strings.HasPrefix(id, "e") {
			continue
		}
		tag, _, _ := strings.Cut(rest, " ")
		if tag != old.Tag {
			continue
		}
		have := map[string]bool{}
		for _, w := range words.FindAllString(strings.ToLower(rest), -1) {
			have[w] = true
		}
		n := 0
		for w := range want {
			if have[w] {
				n++
			}
		}
		score := float64(n) / float64(len(want))
		if content[old.Tag] && len(said) > 0 {
			// Content is read for what it says: half its likeness is
			// its words against the recorded ones, both ways, so that
			// a container that also holds them (a page's intro) or a
			// message that says something else is not taken for it.
			_, text, _ := strings.Cut(rest, `"`)
			shown := map[string]bool{}
			for _, w := range words.FindAllString(strings.ToLower(text), -1) {
				if len(w) > 2 {
					shown[w] = true
				}
			}
			both := 0
			for w := range said {
				if shown[w] {
					both++
				}
			}
			attrs, hits := 0, 0
			for w := range want {
				if !said[w] {
					attrs++
					if have[w] {
						hits++
					}
				}
			}
			score = float64(both) / float64(len(said)+len(shown)-both)
			if attrs > 0 {
				score = (score + float64(hits)/float64(attrs)) / 2
			}
		}
		seen = append(seen, scored{id, score})
		switch {
		case score > best:
			best, second, ref = score, best, id
		case score > second:
			second = score
		}
	}
	return judged{best: best, second: second, ref: ref, seen: seen, wants: len(want)}
}

// testLine is the failing test's name in a repair's question.
var testLine = regexp.MustCompile(`(?m)^TEST: (.+)$`)

// releaseReader answers a repair's question as a capable model reads it,
// knowing what the call did on the release (the run recorded there): the
// element of the page whose description shares the most of the recorded
// element's words, when it is clearly the one; a regression when nothing
// shares half of them; otherwise that it cannot tell.
func releaseReader(prints map[string][]suite.TraceAction, tests map[string]string) func(llmtest.Request) string {
	return func(r llmtest.Request) string {
		q := r.Text()
		m := failingCall.FindStringSubmatch(q)
		if m == nil {
			return llmtest.JSON(map[string]string{"unsure": "no failing call"})
		}
		line, _ := strconv.Atoi(m[2])
		// The line may act on an element in several tests, holding other
		// words in each (a counter's "1 item", "3 items"): the failing
		// test's own is what its call acted on. A test not recorded reads
		// the page against the one it is most like, as a model knowing
		// them all would.
		at := func(acts []suite.TraceAction) (out []*suite.SnapshotElement) {
			for _, a := range acts {
				if a.File == m[1] && a.Line == line && a.Target != nil {
					out = append(out, a.Target)
				}
			}
			return out
		}
		var olds []*suite.SnapshotElement
		if t := testLine.FindStringSubmatch(q); t != nil {
			olds = at(prints[tests[t[1]]])
		}
		if len(olds) == 0 {
			for _, acts := range prints {
				olds = append(olds, at(acts)...)
			}
		}
		if len(olds) == 0 {
			return llmtest.JSON(map[string]string{"unsure": "I cannot tell what the call acted on"})
		}
		_, page, _ := strings.Cut(q, "PAGE AT THE FAILURE:\n")
		var j judged
		for _, old := range olds {
			if c := judgePage(old, page); c.better(j) {
				j = c
			}
		}
		best, second, ref, seen, wants := j.best, j.second, j.ref, j.seen, j.wants
		switch {
		case best < 0.5:
			return llmtest.JSON(map[string]string{"regression": "nothing on the page is what the call acted on"})
		case best-second < 0.15 && best <= 1/float64(wants):
			// Alike only in being of its kind (two links, neither one
			// that logs out): what the call acted on is not there.
			return llmtest.JSON(map[string]string{"regression": "nothing on the page is what the call acted on; only other elements of its kind"})
		case best-second < 0.15:
			// Alike: as a model would, it takes the one the locator picks
			// by position (.first(), .nth(i)), else it cannot tell.
			if n := position(q); n >= 0 {
				var tied []string
				for _, c := range seen {
					if c.score > best-0.15 {
						tied = append(tied, c.ref)
					}
				}
				if n < len(tied) {
					return llmtest.JSON(map[string]string{"element": tied[n]})
				}
			}
			return llmtest.JSON(map[string]string{"unsure": "two elements are about as like it"})
		}
		return llmtest.JSON(map[string]string{"element": ref})
	}
}
