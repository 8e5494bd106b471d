package explore

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// The crawl is the exploration's backbone and needs no model. Its
// frontier holds every in-scope page linked from a state reached and every
// control of those states, deduplicated by page template: a page template
// not reached comes first, nearest the start first (breadth), then the
// controls of the states reached, the current one first. The model, when
// there is one, probes each page the crawl reaches; the run ends when the
// budget is spent or the frontier is empty, never on the model's word.

// pageItem is a page of the frontier: a link to a template not reached.
type pageItem struct {
	URL, Template string
	Depth         int
}

// frontierPages lists the in-scope page templates linked from the states
// reached but neither reached nor tried, nearest first, first seen first.
func (r *run) frontierPages() []pageItem {
	var out []pageItem
	seen := map[string]bool{}
	for _, id := range r.order {
		st := r.states[id]
		for _, e := range st.Elements {
			if e.Role != "link" || e.Href == "" {
				continue
			}
			t := orchestrator.PathTemplate(e.Href)
			if seen[t] || r.tried[t] || r.reached(t) || !r.crawlable(e.Href) {
				continue
			}
			seen[t] = true
			out = append(out, pageItem{URL: e.Href, Template: t, Depth: st.Depth + 1})
		}
	}
	slices.SortStableFunc(out, func(a, b pageItem) int { return a.Depth - b.Depth })
	return out
}

// crawlable says a link leads to a page the crawl may open: in scope, not
// refused by the safety policy, and a document rather than a download.
func (r *run) crawlable(href string) bool {
	if !r.scope.allows(href) || r.safety.deniesHref(href) != "" {
		return false
	}
	u, err := url.Parse(href)
	if err != nil {
		return false
	}
	switch ext := strings.ToLower(path.Ext(u.Path)); ext {
	case "", ".html", ".htm", ".php", ".asp", ".aspx", ".jsp", ".cgi":
		return true
	}
	return false // a file: its link is checked, not opened
}

// reached says a state of the template was reached.
func (r *run) reached(template string) bool {
	for _, st := range r.states {
		if st.Template == template {
			return true
		}
	}
	return false
}

// crawlNext picks the crawl's next action; false when its frontier is
// empty. A page is opened by its link when the current page has one (the
// click is what a user does) and by its address otherwise.
func (r *run) crawlNext() (browser.Command, bool) {
	if pages := r.frontierPages(); len(pages) > 0 {
		p := pages[0]
		r.tried[p.Template] = true
		for _, e := range r.cur.Elements {
			if e.Role == "link" && orchestrator.PathTemplate(e.Href) == p.Template && r.crawlable(e.Href) {
				r.exercised[r.cur.Template+"|"+e.Key] = true
				return browser.Command{Action: browser.ActionClick, Target: browser.Target{Ref: e.Ref}}, true
			}
		}
		return browser.Command{Action: browser.ActionNavigate, Value: p.URL}, true
	}
	if c, ok := r.controlOf(r.cur); ok {
		return c, true
	}
	for _, id := range r.order {
		st := r.states[id]
		if st.ID == r.cur.ID || r.navTries[st.URL] >= 2 || !r.scope.allows(st.URL) || !r.hasWork(st) {
			continue
		}
		r.navTries[st.URL]++
		return browser.Command{Action: browser.ActionNavigate, Value: st.URL}, true
	}
	return browser.Command{}, false
}

// controlOf is the next control of a state to exercise: fields and
// choices before the buttons that submit them.
func (r *run) controlOf(st *stateNode) (browser.Command, bool) {
	for _, buttons := range []bool{false, true} {
		for _, e := range st.Elements {
			if e.Role == "link" || actsAlone(e.Role) != buttons || r.exercised[st.Template+"|"+e.Key] {
				continue
			}
			if c, ok := r.sweepCommand(e, st.URL); ok {
				return c, true
			}
		}
	}
	return browser.Command{}, false
}

// actsAlone says a role's control does something when clicked by itself.
func actsAlone(role string) bool {
	switch role {
	case "button", "tab", "menuitem", "switch", "menuitemcheckbox", "menuitemradio":
		return true
	}
	return false
}

// hasWork reports whether a state has a control the crawl would exercise.
func (r *run) hasWork(st *stateNode) bool {
	for _, e := range st.Elements {
		if e.Role == "link" || r.exercised[st.Template+"|"+e.Key] {
			continue
		}
		if _, ok := r.sweepCommand(e, st.URL); ok {
			return true
		}
	}
	return false
}

// leftOver names what the frontier still holds, for the stop reason.
func (r *run) leftOver() string {
	pages := r.frontierPages()
	controls, on := 0, map[string]bool{}
	for _, id := range r.order {
		st := r.states[id]
		for _, e := range st.Elements {
			if e.Role == "link" || r.exercised[st.Template+"|"+e.Key] || on[st.Template+"|"+e.Key] {
				continue
			}
			if _, ok := r.sweepCommand(e, st.URL); ok {
				on[st.Template+"|"+e.Key] = true
				controls++
			}
		}
	}
	if len(pages) == 0 && controls == 0 {
		return ""
	}
	var names []string
	for i, p := range pages {
		if i == 8 {
			names = append(names, fmt.Sprintf("and %d more", len(pages)-i))
			break
		}
		names = append(names, shortURL(p.URL))
	}
	s := fmt.Sprintf("%d page(s) not visited", len(pages))
	if len(names) > 0 {
		s += " (" + strings.Join(names, ", ") + ")"
	}
	return s + fmt.Sprintf(" and %d control(s) not exercised", controls)
}

// sweepCommand is how the crawl exercises element e; false when it does
// not (forbidden by the safety policy, a control it has no sensible input
// for) on the page at address page. Links are the frontier's pages.
func (r *run) sweepCommand(e element, page string) (browser.Command, bool) {
	t := browser.Target{Ref: e.Ref}
	if r.safety.refuses(e, page) != "" {
		return browser.Command{}, false
	}
	switch e.Role {
	case "button", "tab", "menuitem", "switch", "menuitemcheckbox", "menuitemradio":
		return browser.Command{Action: browser.ActionClick, Target: t}, true
	case "textbox", "searchbox":
		return browser.Command{Action: browser.ActionFill, Target: t, Value: r.sampleValue(e.Name)}, true
	case "spinbutton":
		return browser.Command{Action: browser.ActionFill, Target: t, Value: "2"}, true
	case "checkbox", "radio":
		return browser.Command{Action: browser.ActionCheck, Target: t}, true
	case "combobox", "listbox":
		if len(e.Options) > 1 {
			return browser.Command{Action: browser.ActionSelect, Target: t, Value: e.Options[1]}, true
		}
	}
	return browser.Command{}, false
}

// visited reports whether a page with the URL's path template was reached.
func (r *run) visited(raw string) bool { return r.reached(orchestrator.PathTemplate(raw)) }

// sampleValue is what the crawl types into a field: the job's test data
// when a name matches, otherwise a plausible value for the field's name.
func (r *run) sampleValue(name string) string {
	n := strings.ToLower(name)
	for k, v := range r.in.Data {
		if strings.Contains(n, strings.ToLower(k)) || strings.Contains(strings.ToLower(k), n) && n != "" {
			return v
		}
	}
	switch {
	case strings.Contains(n, "mail"):
		return "explorer@example.com"
	case strings.Contains(n, "phone"):
		return "+1 555 0100"
	case strings.Contains(n, "zip") || strings.Contains(n, "postal"):
		return "10001"
	case strings.Contains(n, "qty") || strings.Contains(n, "quantity") || strings.Contains(n, "amount"):
		return "2"
	}
	return "test"
}

// depthOf is the depth of a new state at pageURL: one more than the
// shallowest state linking to its template, the start's 0 otherwise.
func (r *run) depthOf(pageURL string) int {
	t := orchestrator.PathTemplate(pageURL)
	best := -1
	for _, st := range r.states {
		if st.Template == t {
			if best < 0 || st.Depth < best {
				best = st.Depth
			}
			continue
		}
		for _, e := range st.Elements {
			if e.Role == "link" && e.Href != "" && orchestrator.PathTemplate(e.Href) == t && (best < 0 || st.Depth+1 < best) {
				best = st.Depth + 1
			}
		}
	}
	return max(best, 0)
}

// probing says the model is to take the next turn: it has not finished
// with the current page template and has turns left on it.
func (r *run) probing() bool {
	t := r.cur.Template
	return !r.pageDone[t] && r.probed[t] < r.cfg.ProbeTurns
}
