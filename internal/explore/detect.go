package explore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// clickable roles whose click must have an effect.
var clickable = map[string]bool{"button": true, "link": true, "menuitem": true, "tab": true}

// detect runs the per-action detectors on what the action c (on element
// el, from URL from) caused.
func (r *run) detect(ctx context.Context, t0 time.Time, c browser.Command, el *element, out browser.Outcome,
	before browser.Activity, from string) error {
	path := slices.Clone(r.curPath)
	where := r.cur
	trigger := 1
	if out.Err != nil {
		trigger = 0 // the action did not happen: its page showed the bug
	}
	// What a navigation brings is the new page's: an exception thrown
	// while it loads is a finding on that page.
	at := from
	if now := r.Page.URL(); pageKey(now) != pageKey(from) && r.scope.allows(now) {
		at = now
	}
	if err := r.problems(ctx, t0, describe(c, where), where, from, at, path, trigger); err != nil {
		return err
	}
	if out.Err != nil || el == nil || c.Action != browser.ActionClick || !clickable[el.Role] {
		return nil
	}
	after, err := r.Page.Activity(ctx)
	if err != nil || before.Effect(after, true) != "" {
		return nil
	}
	// Nothing yet: give an effect behind a short timer its chance.
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(r.cfg.DeadClickGrace):
	}
	if after, err = r.Page.Activity(ctx); err != nil || before.Effect(after, true) != "" {
		return nil
	}
	f := &Finding{Type: TypeDeadClick, Severity: SeverityMajor,
		Title:     fmt.Sprintf("Clicking %s %q does nothing", el.Role, el.Name),
		Signature: signature(string(TypeDeadClick), where.Template, el.Role, fold(el.Name)),
		Evidence: Evidence{Message: "no navigation, DOM change, request, dialog or page followed the click",
			Action: describe(c, where), Element: fmt.Sprintf("%s %q", el.Role, el.Name)},
		Check: Check{Kind: CheckEffect}, Trigger: 1}
	return r.report(ctx, f, where, from, path, 0)
}

// problems reports what the browser's detectors saw since the action at
// t0 began (at the page at, where the action led), and what arrived after
// the previous action's detectors ran (at the page from, where it began).
func (r *run) problems(ctx context.Context, t0 time.Time, action string, where *stateNode, from, at string,
	path []orchestrator.ManifestEntry, trigger int) error {
	since := t0
	if !r.seen.IsZero() && r.seen.Before(t0) {
		since = r.seen
	}
	r.seen = time.Now()
	detected := r.Page.Detected(since)
	for _, p := range detected {
		if p.URL != "" && (p.Kind == browser.ProblemClientError || p.Kind == browser.ProblemServerError || p.Kind == browser.ProblemRequestFailed) {
			r.failedURLs[p.URL] = true
		}
	}
	for _, p := range detected {
		if p.Kind == browser.ProblemConsoleError && r.echoesFailure(ctx, p.Text) {
			continue // the browser's words on a failed request: the request is the finding
		}
		if p.Resource == "document" && (needsAuth(p.Status) || authFailed(p)) && sameHost(p.URL, r.scope.host) {
			r.errorDoc = p.URL
			r.needsLogin(p.URL)
			continue
		}
		if p.Resource == "document" && p.Status >= 400 {
			r.errorDoc = p.URL // its page is the error: no accessibility or link checks there
		}
		if p.URL != "" && p.Kind != browser.ProblemPageError && p.Kind != browser.ProblemConsoleError && !sameHost(p.URL, r.scope.host) {
			r.thirdParty(p)
			continue
		}
		f := fromProblem(p, r.scope, r.cfg.SlowResponse)
		if f == nil {
			continue
		}
		if f.Type == TypeSlowResponse && p.Method == "GET" && !r.slowAgain(ctx, p, f) {
			continue
		}
		f.Evidence.Action, f.Trigger = action, trigger
		loc, fpath := at, path
		if p.At.Before(t0) {
			// The previous action's, arrived late: its page, its path.
			loc, fpath = from, path[:len(path)-trigger]
			f.Trigger = min(1, len(fpath))
		}
		if err := r.report(ctx, f, where, loc, fpath, 0); err != nil {
			return err
		}
	}
	return nil
}

// detectLate reports what arrived after the last action's detectors ran.
func (r *run) detectLate(ctx context.Context) error {
	if r.seen.IsZero() || r.cur == nil {
		return nil
	}
	return r.problems(ctx, r.seen, "", r.cur, r.Page.URL(), r.Page.URL(), slices.Clone(r.curPath), 0)
}

// stateChecks runs the detectors that look at a state rather than an
// action: accessibility and the state's same-host links.
func (r *run) stateChecks(ctx context.Context, st *stateNode) {
	if st.Checked {
		return
	}
	st.Checked = true
	if r.errorDoc != "" && r.errorDoc == st.URL || !r.scope.allows(st.URL) {
		return // an error page, or the browser's own (a refused load)
	}
	path := slices.Clone(r.curPath)
	if r.cfg.AxeSource != "" {
		vs, err := r.Page.Axe(ctx, r.cfg.AxeSource)
		if err != nil {
			r.Log.Warn("accessibility check failed", "url", st.URL, "err", err)
		}
		for _, v := range vs {
			f := axeFinding(v, st.URL)
			f.Trigger = max(len(path)-len(st.Path), 0) // what opened the element on the page
			if err := r.report(ctx, f, st, st.URL, path, 0); err != nil {
				r.Log.Warn("finding not recorded", "err", err)
			}
		}
	}
	links, err := r.Page.Links(200)
	if err != nil {
		return
	}
	for _, link := range links {
		if r.linkCount >= r.cfg.MaxLinkChecks {
			return
		}
		if r.linksDone[link] || !r.scope.allows(link) || r.safety.deniesHref(link) != "" {
			continue
		}
		r.linksDone[link] = true
		r.linkCount++
		status, err := r.Page.CheckLink(ctx, link, 5*time.Second)
		if err != nil || status < 400 {
			continue // a network hiccup is not evidence; the page load detector sees real failures
		}
		if needsAuth(status) {
			r.needsLogin(link)
			continue
		}
		el := r.linkElement(link)
		if el == nil {
			continue // no element to click: the reproduction could not follow it
		}
		_, fp, err := r.Page.Read(ctx, browser.Target{Ref: el.Ref}, "")
		if err != nil || fp == nil {
			continue
		}
		click := orchestrator.ManifestEntry{Command: browser.Command{Action: browser.ActionClick, Target: browser.Target{Ref: el.Ref}}, Element: fp}
		f := &Finding{Type: TypeBrokenLink, Severity: SeverityMajor, Trigger: 1,
			Title:     fmt.Sprintf("Link %q leads to %s, which answers %d", el.Name, shortURL(link), status),
			Signature: signature("request", docKey(true), "GET", orchestrator.PathTemplate(link), fmt.Sprint(status/100)),
			Evidence: Evidence{Message: fmt.Sprintf("the link's target answered %d", status), Element: fmt.Sprintf("link %q", el.Name),
				Request: &Request{Method: "GET", URL: link, Status: status, Resource: "document"}},
			Check: Check{Kind: CheckNoBadResponse, Method: "GET", Path: pathPattern(link), Document: true}}
		if err := r.report(ctx, f, st, st.URL, append(slices.Clone(path), click), 1); err != nil {
			r.Log.Warn("finding not recorded", "err", err)
		}
	}
}

func (r *run) linkElement(href string) *element {
	for i := range r.cur.Elements {
		if e := &r.cur.Elements[i]; e.Role == "link" && e.Href == href {
			return e
		}
	}
	return nil
}

// picture stores a picture of the page as a new finding's evidence.
func (r *run) picture(ctx context.Context, f *Finding) {
	switch png, err := r.Page.Screenshot(false); {
	case err == nil:
		sum := sha256.Sum256([]byte(f.Signature))
		name := "finding-" + hex.EncodeToString(sum[:6]) + ".png"
		if r.Recorder.Artifact(ctx, name, "image/png", png) == nil {
			f.Evidence.Screenshot = name
		}
	case errors.Is(err, browser.ErrUnsafePicture):
		f.Evidence.NoScreenshot = r.redact(err.Error())
	}
}

// pageKey is the page a finding was seen on, for the per-page cap: its
// address without query or fragment.
func pageKey(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return u[:i]
	}
	return u
}

// report records a finding seen at state st: a new one with its path and
// a screenshot, or one more occurrence of a known one.
func (r *run) report(ctx context.Context, f *Finding, st *stateNode, at string, path []orchestrator.ManifestEntry, tail int) error {
	f.URL, f.State = at, st.ID
	// Nothing a finding shows may carry a secret the page echoed.
	f.Title, f.Evidence.Message = r.redact(f.Title), r.redact(f.Evidence.Message)
	f.Evidence.Observed, f.Evidence.Expected = r.redact(f.Evidence.Observed), r.redact(f.Evidence.Expected)
	f.Title, f.Evidence.Message = clip(f.Title, 300), clip(f.Evidence.Message, 2000)
	f.Evidence.Observed, f.Evidence.Expected = clip(f.Evidence.Observed, 1000), clip(f.Evidence.Expected, 1000)
	if i, ok := r.bySig[f.Signature]; ok {
		f.Seq = r.findings[i].Seq
		if f.Type == TypeAccessibility && len(f.Evidence.Places) == 1 {
			r.findings[i].addPlace(f.Evidence.Places[0], f.Evidence.Nodes)
		}
	} else {
		page := pageKey(at)
		switch {
		case len(r.findings) >= r.cfg.MaxFindings:
			r.capped["findings per job"]++
			return nil
		case r.perPage[page] >= r.cfg.MaxFindingsPerPage:
			r.capped["findings per page"]++
			return nil
		}
		r.perPage[page]++
		f.Path, f.Trace, f.Tail, f.Base = path, len(r.trace), tail, len(st.Path)
		if r.shots < r.cfg.MaxScreenshots {
			r.shots++
			r.picture(ctx, f)
		} else {
			r.capped["finding pictures per job"]++
			f.Evidence.NoScreenshot = fmt.Sprintf("the job's %d finding pictures were taken", r.cfg.MaxScreenshots)
		}
	}
	seq, isNew, err := r.Recorder.Finding(ctx, *f)
	if err != nil {
		return fmt.Errorf("%w: record finding: %w", errRecorder, err)
	}
	if _, ok := r.bySig[f.Signature]; !ok {
		f.Seq = seq
		r.bySig[f.Signature] = len(r.findings)
		r.findings = append(r.findings, *f)
		if isNew {
			r.history(ctx, orchestrator.Event{Iteration: r.actions, Kind: "finding", Action: string(f.Type), Target: f.Title, OK: false,
				Error: f.Evidence.Message})
		}
	}
	return nil
}

// slowAgain measures a slow GET again before it counts: a machine under
// load answers one request late now and then, a slow endpoint every time.
// The second time goes into the finding's evidence.
func (r *run) slowAgain(ctx context.Context, p browser.Problem, f *Finding) bool {
	again, err := r.Page.Remeasure(ctx, p.URL, 2*r.cfg.SlowResponse+5*time.Second)
	if err != nil {
		r.Log.Warn("slow response not measured again; reported as seen", "url", p.URL, "err", err)
		return true
	}
	if again < r.cfg.SlowResponse {
		r.Log.Info("one slow answer, fast when asked again: not reported", "url", p.URL,
			"first_ms", p.Duration.Milliseconds(), "again_ms", again.Milliseconds())
		return false
	}
	f.Evidence.Message = strings.TrimSpace(f.Evidence.Message + fmt.Sprintf(" (asked again: %d ms)", again.Milliseconds()))
	return true
}

// needsAuth says a status asks for a login (HTTP authentication, or a
// page the session may not see): not a broken page.
func needsAuth(status int) bool { return status == 401 || status == 403 }

// authFailed says a load failed because the page asked for credentials
// the browser does not have (HTTP authentication with no login given).
func authFailed(p browser.Problem) bool {
	return p.Kind == browser.ProblemRequestFailed && strings.Contains(p.Text, "ERR_INVALID_AUTH_CREDENTIALS")
}

// needsLogin notes a page that asked for a login.
func (r *run) needsLogin(u string) {
	u = pageKey(u)
	if !slices.Contains(r.authPages, u) {
		r.authPages = append(r.authPages, u)
	}
}

// thirdParty notes a request to another host that failed or was refused:
// reported apart as noise, never as the app's bug.
func (r *run) thirdParty(p browser.Problem) {
	what := p.Text
	if p.Status > 0 {
		what = fmt.Sprintf("answered %d", p.Status)
	}
	if p.Kind == browser.ProblemSlowResponse {
		what = fmt.Sprintf("took %d ms", p.Duration.Milliseconds())
	}
	line := fmt.Sprintf("%s %s: %s", p.Method, pageKey(p.URL), clip(what, 120))
	if !slices.Contains(r.noise, line) && len(r.noise) < 50 {
		r.noise = append(r.noise, line)
	}
}

// echoesFailure says a console message is about a request that failed
// ("Refused to apply style from 'URL' because its MIME type ('text/plain')"
// after the stylesheet answered 404).
// The request's own problem may be read after the message, so a URL of
// the app not known to have failed is asked for once.
func (r *run) echoesFailure(ctx context.Context, text string) bool {
	for _, u := range urlInMsg.FindAllString(text, -1) {
		u = strings.TrimRight(u, ".,;:")
		if !r.failedURLs[u] && sameHost(u, r.scope.host) && r.safety.deniesHref(u) == "" {
			if status, err := r.Page.CheckLink(ctx, u, 5*time.Second); err == nil && status >= 400 {
				r.failedURLs[u] = true
			}
		}
		if r.failedURLs[u] {
			return true
		}
	}
	return false
}
