package browser

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// A locator that finds its element on the page as the job left it can
// still miss it on the next load: an id minted per load from words
// (id="maple-heron"), a class a framework hands out in order. The rules in
// generated.go refuse the shapes machines write; what they cannot tell
// apart is checked against the page loaded again, in a context of its own
// that holds the session's cookies and storage and the same egress guard,
// so the job's page and its state are left alone. A structural locator
// (CSS) is kept only if, on the fresh page, it finds exactly the element
// at the same place; when that place is empty on the fresh page (the
// element came from what the job did), the page cannot say, and the rules
// alone decide.

// maxFreshLoads bounds the fresh loads one session makes.
const maxFreshLoads = 12

// freshLoad is the session's current address loaded afresh.
type freshLoad struct {
	url      string
	ctx      playwright.BrowserContext
	page     playwright.Page
	verdicts map[string]bool // target -> survives the reload
}

func (p *freshLoad) close() {
	if p != nil && p.ctx != nil {
		_ = p.ctx.Close()
	}
}

// barePathScript is an element's place in its document: each step's tag
// and index among same-tag siblings, through shadow roots, without ids or
// classes (which are what may change from one load to the next).
const barePathScript = `(e) => {
  const chain = [];
  for (let n = e; n; ) {
    const steps = [];
    for (let m = n; m && m.nodeType === 1; m = m.parentElement) {
      let i = 0; for (let s = m.previousElementSibling; s; s = s.previousElementSibling) if (s.tagName === m.tagName) i++;
      steps.unshift([m.tagName, i]);
    }
    chain.unshift(steps);
    const root = n.getRootNode(); n = root && root.host ? root.host : null;
  }
  return JSON.stringify(chain);
}`

// atBarePathJS finds the element at a bare path, or null.
const atBarePathJS = `((path) => {
  let root = document, el = null;
  for (const steps of JSON.parse(path)) {
    el = null;
    let parent = root;
    for (const [tag, i] of steps) {
      const kids = parent === document ? [document.documentElement] : [...parent.children];
      el = kids.filter((k) => k.tagName === tag)[i] || null;
      if (!el) return null;
      parent = el;
    }
    root = el.shadowRoot;
    if (!root) root = el;
  }
  return el;
})`

// structural reports whether t names its element by markup (an id, a
// class, a path) rather than by what a person reads: only such a locator
// can break on a reload of a page whose content is the same.
func (t Target) structural() bool {
	if t.CSS != "" && !strings.HasPrefix(t.CSS, "[data-test") {
		return true
	}
	return t.Within != nil && t.Within.structural()
}

// survivesReload reports whether t, unique on the page now, finds the same
// element when the page is loaded again. It is false only when the fresh
// page shows the element at the same place and t misses it there or finds
// another; a page that cannot be loaded again, or lacks the element, gives
// no verdict (true), and the rules decide alone.
func (s *Session) survivesReload(t Target) bool {
	if !t.structural() || len(t.Frames) > 0 {
		return true
	}
	loc, err := s.locator(t)
	if err != nil {
		return true
	}
	v, err := evaluate(loc, barePathScript)
	bare, _ := v.(string)
	if err != nil || bare == "" {
		return true
	}
	p := s.freshLoadOf(s.page.URL())
	if p == nil {
		return true
	}
	key := t.String() + "\x00" + bare
	if ok, seen := p.verdicts[key]; seen {
		return ok
	}
	ok := p.survives(t, bare)
	p.verdicts[key] = ok
	if !ok {
		s.log.Info("locator does not survive a reload", "locator", t.String())
	}
	return ok
}

// survives checks t on the fresh page against the element at bare.
func (p *freshLoad) survives(t Target, bare string) bool {
	arg, _ := json.Marshal(bare)
	// A page that renders after load (a client-side app) is given a moment:
	// 5 s, as 2 s ran out on a loaded machine for a page with no script
	// to wait for, and the check then gave no verdict.
	if _, err := p.page.WaitForFunction(`() => !!`+atBarePathJS+`(`+string(arg)+`)`, nil,
		playwright.PageWaitForFunctionOptions{Timeout: actionWait()}); err != nil {
		return true // not there on a fresh load: no verdict
	}
	loc, err := locatorOn(p.page.Locator(":root"), t)
	if err != nil {
		return false
	}
	n, err := loc.Count()
	if err != nil || n != 1 {
		return false
	}
	same, err := loc.Evaluate(`(e, path) => e === `+atBarePathJS+`(path)`, bare, playwright.LocatorEvaluateOptions{Timeout: actionWait()})
	return err == nil && same == true
}

// locatorOn is t under root, its scope found strictly (one match) as the
// runner's strict mode would.
func locatorOn(root playwright.Locator, t Target) (playwright.Locator, error) {
	if t.Within != nil {
		parent, err := locatorOn(root, *t.Within)
		if err != nil {
			return nil, err
		}
		if n, err := parent.Count(); err != nil || n != 1 {
			return nil, fmt.Errorf("scope %s matches %d elements", t.Within, n)
		}
		root = parent
	}
	return under(root, t)
}

// freshLoadOf returns the fresh load of url, loading it if the session's
// load is of another address; nil when it cannot be had.
func (s *Session) freshLoadOf(url string) *freshLoad {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil
	}
	s.mu.Lock()
	p, fresh, made, method := s.reloaded, s.fresh, s.freshLoads, s.navMethod
	s.mu.Unlock()
	if p != nil && p.url == url {
		return p
	}
	// Loading the address again must do nothing the job did not: only a
	// document fetched with GET is fetched again (after a form's POST,
	// even one redirected, the rules decide alone).
	if fresh == nil || made >= maxFreshLoads || (method != "" && method != "GET") {
		return nil
	}
	p.close()
	p = &freshLoad{url: url, verdicts: map[string]bool{}}
	s.mu.Lock()
	s.reloaded, s.freshLoads = nil, s.freshLoads+1
	s.mu.Unlock()
	var err error
	if p.ctx, err = fresh(); err != nil {
		s.log.Warn("no fresh context for a reload check", "err", err)
		return nil
	}
	if p.page, err = p.ctx.NewPage(); err == nil {
		_, err = p.page.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad, Timeout: playwright.Float(10000)})
	}
	if err != nil {
		p.close()
		return nil
	}
	s.mu.Lock()
	s.reloaded = p
	s.mu.Unlock()
	return p
}
