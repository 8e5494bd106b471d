package explore

import (
	"strings"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// sweepNext picks the next action of the deterministic sweep, which needs
// no model: on the current page, each control not yet exercised (controls
// that stay on the page first, then links to pages not yet visited); then
// the latest page reached that still has some; false when none is left.
func (r *run) sweepNext() (browser.Command, bool) {
	for _, links := range []bool{false, true} {
		for _, e := range r.cur.Elements {
			if (e.Role == "link") != links || r.exercised[r.cur.Template+"|"+e.Key] {
				continue
			}
			if c, ok := r.sweepCommand(e); ok {
				return c, true
			}
		}
	}
	for i := len(r.order) - 1; i >= 0; i-- {
		st := r.states[r.order[i]]
		if st.ID == r.cur.ID || r.navTries[st.ID] >= 2 || !r.scope.allows(st.URL) || !r.hasWork(st) {
			continue
		}
		r.navTries[st.ID]++
		return browser.Command{Action: browser.ActionNavigate, Value: st.URL}, true
	}
	return browser.Command{}, false
}

// hasWork reports whether a state has a control the sweep would exercise.
func (r *run) hasWork(st *stateNode) bool {
	for _, e := range st.Elements {
		if r.exercised[st.Template+"|"+e.Key] {
			continue
		}
		if _, ok := r.sweepCommand(e); ok {
			return true
		}
	}
	return false
}

// sweepCommand is how the sweep exercises element e; false
// when it does not (out of scope, forbidden by the safety policy, a link
// to a page already visited, a control it has no sensible input for).
func (r *run) sweepCommand(e element) (browser.Command, bool) {
	t := browser.Target{Ref: e.Ref}
	if r.safety.denies(e.Name, e.Href) != "" {
		return browser.Command{}, false
	}
	switch e.Role {
	case "button", "tab", "menuitem", "switch", "menuitemcheckbox", "menuitemradio":
		return browser.Command{Action: browser.ActionClick, Target: t}, true
	case "link":
		if e.Href == "" || !r.scope.allows(e.Href) || r.visited(e.Href) {
			return browser.Command{}, false
		}
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
func (r *run) visited(raw string) bool {
	tmpl := orchestrator.PathTemplate(raw)
	for _, st := range r.states {
		if st.Template == tmpl {
			return true
		}
	}
	return false
}

// sampleValue is what the sweep types into a field: the job's test data
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
