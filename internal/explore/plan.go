package explore

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// Plan is a scenario the exploration suggests, grounded in what it did:
// a flow it went through on one page (a form filled and submitted, a
// widget used) or a path of links, written in the product's own step
// language, so that it can become a stored test with one call.
type Plan struct {
	Name  string   `json:"name"`
	Kind  string   `json:"kind"` // form, widget, navigation
	Steps []string `json:"steps"`
}

// Plan kinds.
const (
	PlanForm       = "form"
	PlanWidget     = "widget"
	PlanNavigation = "navigation"
)

// maxPlans bounds the plans one exploration suggests.
const maxPlans = 30

var announcedRe = regexp.MustCompile(`(?m)^\s*- (?:status|alert)(?: "[^"]*")? \[ref=[a-z0-9]+\]: (.+)$`)

// announced is what a page's status and alert regions say, the first one.
func announced(full string) string {
	if m := announcedRe.FindStringSubmatch(full); m != nil {
		return strings.TrimSpace(strings.Trim(m[1], `"`))
	}
	return ""
}

var textLine = regexp.MustCompile(`^(?:paragraph|text|status|alert|heading|cell|listitem|generic)(?: "[^"]*")?(?: \[[^\]]*\])*: (.+)$`)

// appearedText is the first text a change made appear (or rewrote), as
// a plan's check.
func appearedText(d browser.Delta) string {
	for _, a := range d.Appeared {
		if m := textLine.FindStringSubmatch(a); m != nil && len(m[1]) >= 3 {
			return strings.Trim(m[1], `"`)
		}
	}
	for _, c := range d.Changed {
		switch m := textLine.FindStringSubmatch(c.To); {
		case c.Field == "text" && len(c.To) >= 3:
			return c.To
		case c.Field == "" && m != nil && len(m[1]) >= 3:
			return strings.Trim(m[1], `"`)
		}
	}
	return ""
}

// plans turns what the exploration did into suggested scenarios: each
// run of actions on one page that used its controls, from the page's
// address to what the page then said (or where it led), one per page and
// kind; then the paths of links to the pages two or more clicks deep.
func (r *run) plans() []Plan {
	var out []Plan
	seen := map[string]bool{}
	for i := 0; i < len(r.trace); {
		page := r.onAt(i)
		j := i
		var steps []string
		kind := PlanWidget
		for ; j < len(r.trace) && r.onAt(j) == page; j++ {
			e := r.trace[j]
			step, ok := planStep(e)
			if !ok {
				if e.Command.Action == browser.ActionNavigate || e.Element == nil || e.Element.Role == "link" || r.landedAt(j) != "" {
					break
				}
				continue // a control nothing names: a plan cannot say which
			}
			if e.Command.Action == browser.ActionFill || e.Command.Action == browser.ActionSelect {
				kind = PlanForm
			}
			steps = append(steps, step)
			if r.landedAt(j) != "" || r.shown[j] != "" {
				j++ // the page said something, or another page came: the flow's end
				break
			}
		}
		if len(steps) > 0 {
			end := j - 1
			check := ""
			switch to := r.landedAt(end); {
			case to != "" && orchestrator.PathTemplate(to) != orchestrator.PathTemplate(page):
				check = "Verify URL contains " + shortPath(to)
			case r.shown[end] != "":
				check = fmt.Sprintf("Verify %q is visible", clip(r.shown[end], 80))
			}
			key := orchestrator.PathTemplate(page) + "|" + kind
			if check != "" && !seen[key] && len(out) < maxPlans {
				seen[key] = true
				name := "Use the controls on " + shortPath(page)
				if kind == PlanForm {
					name = "Fill in and submit the form on " + shortPath(page)
				}
				out = append(out, Plan{Name: name, Kind: kind,
					Steps: append(append([]string{"Go to " + shortPath(page)}, steps...), check)})
			}
		}
		i = max(j, i+1)
	}
	// Paths of links to pages the start page does not link to.
	direct := map[string]bool{}
	if len(r.order) > 0 {
		for _, e := range r.states[r.order[0]].Elements {
			if e.Role == "link" && e.Href != "" {
				direct[orchestrator.PathTemplate(e.Href)] = true
			}
		}
	}
	for _, id := range r.order {
		if direct[r.states[id].Template] {
			continue
		}
		st := r.states[id]
		var steps []string
		for _, e := range st.Path[min(len(r.prefix), len(st.Path)):] {
			if e.Command.Action != browser.ActionClick || e.Element == nil || e.Element.Role != "link" || e.Element.Name == "" {
				steps = nil
				break
			}
			steps = append(steps, fmt.Sprintf("Click %q", e.Element.Name))
		}
		if len(steps) < 2 || len(out) >= maxPlans || !r.scope.allows(st.URL) {
			continue
		}
		out = append(out, Plan{Name: "Reach " + shortPath(st.URL) + " by its links", Kind: PlanNavigation,
			Steps: append(append([]string{"Go to " + shortPath(r.in.BaseURL)}, steps...), "Verify URL contains "+shortPath(st.URL))})
	}
	return out
}

// onAt is the page the trace's i-th action was taken on.
func (r *run) onAt(i int) string {
	if i < len(r.on) {
		return r.on[i]
	}
	return ""
}

// planStep writes a control's action as a step of the small grammar;
// false for what a plan does not hold (a navigation, a link, an element
// without a name).
func planStep(e orchestrator.ManifestEntry) (string, bool) {
	el := e.Element
	if el == nil {
		return "", false
	}
	name := el.Label
	if name == "" {
		name = el.Name
	}
	if name == "" || el.Role == "link" {
		return "", false
	}
	c := e.Command
	switch c.Action {
	case browser.ActionFill:
		return fmt.Sprintf("Fill %q with %q", name, c.Value), true
	case browser.ActionSelect:
		return fmt.Sprintf("Select %q from %q", c.Value, name), true
	case browser.ActionCheck:
		return fmt.Sprintf("Check %q", name), true
	case browser.ActionUncheck:
		return fmt.Sprintf("Uncheck %q", name), true
	case browser.ActionClick:
		return fmt.Sprintf("Click %q", name), true
	}
	return "", false
}

// shortPath is a URL's path and query.
func shortPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return raw
	}
	return u.RequestURI()
}
