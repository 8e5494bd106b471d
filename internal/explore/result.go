package explore

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// result assembles what the exploration produced.
func (r *run) result(status orchestrator.Status, msg string) Result {
	res := Result{Status: status, Error: r.redact(msg), Goal: r.in.Goal, GoalMet: r.goalMet, Stopped: r.stopped, NeedsAuthentication: r.authPages, Noise: r.noiseList(),
		Rejected: r.rejected, Experiences: r.learned, Actions: r.actions, Calls: r.calls, Usage: r.usage, Detectors: r.detectors,
		Trace: r.trace, Prefix: r.prefix, StartURL: r.startURL, SecretNames: r.secretNames()}
	if res.Stopped == "" && status == orchestrator.StatusFailed {
		res.Stopped = "failed"
	}
	for _, what := range slices.Sorted(maps.Keys(r.capped)) {
		res.Capped = append(res.Capped, fmt.Sprintf("%s: the cap was reached; %d more not recorded", what, r.capped[what]))
	}
	res.Coverage = r.coverage()
	res.Suggestions = r.suggestions()
	res.Plans = r.plans()
	res.Journey = r.journey()
	for _, f := range r.findings {
		path := candidatePath(&res, f, "shortest")
		spec, line := reproSpec(res.StartURL, f, path, res.SecretNames)
		f.Reproduction = &Reproduction{Spec: spec, Outcome: ReproNotRun, Path: "shortest", Actions: len(path), CheckLine: line}
		f.Confidence = ConfidenceObserved
		res.Findings = append(res.Findings, f)
	}
	return res
}

func (r *run) secretNames() []string {
	var out []string
	for k := range r.in.Secrets {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// coverage is the map of states, transitions and elements.
func (r *run) coverage() Coverage {
	var c Coverage
	c.Transitions = r.trans
	for _, id := range r.order {
		st := r.states[id]
		sc := StateCoverage{ID: st.ID, URL: st.URL, Title: st.Title, Visits: st.Visits, Seen: len(st.Elements)}
		for _, e := range st.Elements {
			if r.exercised[st.Template+"|"+e.Key] {
				sc.Exercised++
				c.Covered++
			} else if e.Role == "link" && r.visited(e.Href) {
				c.Covered++
			} else if len(sc.Untouched) < 20 {
				sc.Untouched = append(sc.Untouched, fmt.Sprintf("%s %q", e.Role, e.Name))
			}
		}
		c.Seen += sc.Seen
		c.Exercised += sc.Exercised
		c.States = append(c.States, sc)
	}
	c.Frontier = r.frontier()
	c.Pages = r.pages()
	return c
}

// suggestions propose scenarios for what the exploration did not cover:
// pages linked but never visited, and pages whose controls were left alone.
func (r *run) suggestions() []string {
	var out []string
	for _, f := range r.frontier() {
		if len(out) >= 10 {
			break
		}
		out = append(out, fmt.Sprintf("Visit %s and check what it offers", shortURL(f)))
	}
	for _, id := range r.order {
		st := r.states[id]
		var left []string
		for _, e := range st.Elements {
			if !r.exercised[st.Template+"|"+e.Key] && e.Role != "link" && len(left) < 4 {
				left = append(left, fmt.Sprintf("%q", e.Name))
			}
		}
		if len(left) > 0 && len(out) < 20 {
			title := st.Title
			if title == "" {
				title = shortURL(st.URL)
			}
			out = append(out, fmt.Sprintf("On %s (%s), exercise %s", title, shortURL(st.URL), strings.Join(left, ", ")))
		}
	}
	return out
}

// journey writes the exploration's own trace as a spec of what worked:
// every action in order, with a check of the address of each page a
// navigation reached.
func (r *run) journey() Journey {
	var steps []orchestrator.ManifestStep
	cur := orchestrator.ManifestStep{Step: 1, Goal: "sign in and open " + shortURL(r.in.BaseURL)}
	cur.Entries = append(cur.Entries, r.prefix...)
	if len(r.prefix) == 0 {
		cur.Goal = "open " + shortURL(r.in.BaseURL)
	}
	flush := func(goal string) {
		if len(cur.Entries) > 0 {
			steps = append(steps, cur)
		}
		cur = orchestrator.ManifestStep{Step: len(steps) + 1, Goal: goal}
	}
	for i, e := range r.trace {
		cur.Entries = append(cur.Entries, e)
		if to := r.landedAt(i); to != "" {
			u, err := url.Parse(to)
			if err == nil {
				cur.Entries = append(cur.Entries, orchestrator.ManifestEntry{
					Command: browser.Command{Action: browser.ActionVerify, Assert: browser.AssertUrlContains, Value: u.Path}})
			}
			flush("on " + shortURL(to))
		}
	}
	flush("")
	sc := scenario.Scenario{Name: "exploration: " + r.in.Goal, BaseURL: r.startURL}
	return Journey{Name: sc.Name, Script: orchestrator.SpecOf(sc, steps, r.secretNames()...), Manifest: steps}
}

// landedAt is the URL the trace's i-th action navigated to, or "" when it
// stayed on its page.
func (r *run) landedAt(i int) string {
	if i < 0 || i >= len(r.landed) {
		return ""
	}
	return r.landed[i]
}

// noiseList is what other hosts failed to answer and what the egress
// guard refused, once each.
func (r *run) noiseList() []string {
	out := slices.Clone(r.noise)
	for _, u := range r.Page.Denied() {
		if sameHost(u, r.scope.host) {
			continue
		}
		line := pageKey(u) + ": refused by the egress guard"
		if !slices.Contains(out, line) && len(out) < 100 {
			out = append(out, line)
		}
	}
	return out
}
