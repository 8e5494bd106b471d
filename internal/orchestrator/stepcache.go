package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/scenario"
)

// cacheKey is the step cache's key for step st on the current page, and
// whether the step may be cached at all: a step that reads or extracts
// (its answer is the point) never is.
func (r *run) cacheKey(st scenario.Step) (StepKey, bool) {
	if r.Cache == nil || r.sc.Options.NoStepCache || st.SaveAs != "" || (st.Type != "" && st.Type != scenario.StepAuto && st.Type != scenario.StepAIAction) {
		return StepKey{}, false
	}
	u, err := url.Parse(r.Page.URL())
	if err != nil || u.Host == "" {
		return StepKey{}, false
	}
	return StepKey{Origin: u.Scheme + "://" + u.Host, Path: PathTemplate(u.String()), Text: NormalizeStep(r.expand(st.Text))}, true
}

// NormalizeStep is a step's text as the cache compares it: case, spacing
// and the final punctuation aside.
func NormalizeStep(text string) string {
	return strings.TrimRight(strings.Join(strings.Fields(strings.ToLower(text)), " "), ".!;")
}

// idSegment is a path segment that names a record rather than a page: a
// number, a UUID or hash, or anything with three digits or more.
var idSegment = regexp.MustCompile(`^(\d+|[0-9a-fA-F-]{8,}|.*\d.*\d.*\d.*)$`)

// PathTemplate is a URL's path with its id-like segments replaced:
// /orders/1234 and /orders/98 are one page (to the step cache, and the
// first half of an exploration state's identity).
func PathTemplate(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	segs := strings.Split(u.EscapedPath(), "/")
	for i, s := range segs {
		if s != "" && idSegment.MatchString(s) {
			segs[i] = ":id"
		}
	}
	if p := strings.Join(segs, "/"); p != "" {
		return p
	}
	return "/"
}

// cachedCommand is the command a stored entry replays: by the locator its
// element had, never a ref (which does not outlive its page).
func cachedCommand(e ManifestEntry) (browser.Command, bool) {
	c := e.Command
	if c.Target.Ref != "" {
		if e.Element == nil || e.Element.Locator.IsZero() {
			return c, false
		}
		c.Target = e.Element.Locator
	} else if e.Element != nil && !e.Element.Locator.IsZero() && !byName(c) {
		c.Target = e.Element.Locator
	}
	return c, c.To.Ref == ""
}

// byName reports whether a check is about its target as named rather than
// the one element it found: a count, an absence, or a position (the third
// item of a list, in an order check), which another locator would lose.
func byName(c browser.Command) bool {
	return c.IsVerify() && (c.Assert.Counts() || c.Assert == browser.AssertIsHidden || c.Target.Nth != nil)
}

// toCache stores what the agent did for a step that passed, so the next
// run of it on this app needs no model.
func (r *run) toCache(ctx context.Context, rep *StepReport, key StepKey) {
	if (rep.Status != "" && rep.Status != StepPassed) || rep.Result != nil || len(rep.Manifest) == 0 {
		return
	}
	entries := make([]ManifestEntry, 0, len(rep.Manifest))
	for _, e := range rep.Manifest {
		c, ok := cachedCommand(e)
		if !ok {
			return
		}
		e.Command = c
		entries = append(entries, e)
	}
	red, ok := redactJSON(r.secrets, entries)
	if !ok {
		return
	}
	if err := r.persist(func() error { return r.Cache.CacheStep(ctx, key, red) }); err != nil {
		r.Log.Warn("step cache: store", "step", rep.Index+1, "err", err)
	}
}

// fromCache replays a cached step when every target is still the element
// it was (same tag, role, name and a close fingerprint) and unique. It
// reports whether the step was carried out; when not, the agent takes it
// from where the replay stopped, and the notes say why.
func (r *run) fromCache(ctx context.Context, rep *StepReport, key StepKey) bool {
	var entries []ManifestEntry
	var found bool
	err := r.persist(func() error {
		var err error
		entries, found, err = r.Cache.CachedStep(ctx, key)
		return err
	})
	if err != nil {
		r.Log.Warn("step cache: look up", "step", rep.Index+1, "err", err)
		return false
	}
	if !found || len(entries) == 0 {
		return false
	}
	rep.Tier = TierCached
	for k, e := range entries {
		cmd, ok := cachedCommand(e)
		if !ok {
			rep.Notes = append(rep.Notes, "the cached step cannot be replayed: it has no locators")
			return false
		}
		if cmd.NeedsTarget() && e.Element != nil && !byName(cmd) {
			if why := r.stillThere(ctx, cmd.Target, e.Element); why != "" {
				rep.Notes = append(rep.Notes, fmt.Sprintf("the cached step was not used from command %d on: %s", k+1, why))
				return false
			}
		}
		timeout := e.Timeout
		if timeout == 0 {
			timeout = defaultSpecTimeout
		}
		if b := r.batchWith(ctx, rep, 0, []browser.Command{cmd}, nil, timeout); b.failed >= 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("the cached step failed at command %d: %s", k+1, b.err))
			return false
		}
	}
	return true
}

// stillThere checks that a target finds one element and that it is the
// element recorded, waiting briefly for it to appear; "" when it is.
func (r *run) stillThere(ctx context.Context, t browser.Target, old *browser.Fingerprint) string {
	start := time.Now()
	defer func() { r.timing.Browser += time.Since(start) }()
	deadline := start.Add(3 * time.Second)
	for {
		fp, err := r.Page.Describe(ctx, t)
		switch {
		case err == nil && sameElement(*old, *fp):
			return ""
		case err == nil:
			return fmt.Sprintf("%s is now %s", old.Describe(), fp.Describe())
		case !errors.Is(err, browser.ErrNoMatch) || time.Now().After(deadline) || ctx.Err() != nil:
			return fmt.Sprintf("%s is not found by %s: %s", old.Describe(), t, cleanError(err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sameElement reports whether an element is the one a fingerprint
// recorded: the same kind and name, and otherwise much alike.
func sameElement(old, cur browser.Fingerprint) bool {
	return old.Tag == cur.Tag && old.Role == cur.Role && browser.SameText(old.Name, cur.Name) &&
		old.TestID == cur.TestID && browser.Similarity(old, cur) >= 0.85
}
