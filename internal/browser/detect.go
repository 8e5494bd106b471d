package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Activity is what the page has done so far, for telling whether an action
// had any effect: compare the Activity before and after it.
type Activity struct {
	URL       string
	Mutations int    // DOM mutations of the current document
	Focus     string // a path to the focused element
	Requests  int    // requests the page started
	Dialogs   int
	Pages     int
	Document  string
}

const activityScript = `() => {
  const path = (e) => { if (!e || e === document.body) return 'body'; if (e.id) return '#' + e.id; const parts = [];
    for (let n = e; n && n.nodeType === 1 && n !== document.body; n = n.parentElement) {
      let i = 1; for (let s = n.previousElementSibling; s; s = s.previousElementSibling) i++;
      parts.unshift(n.tagName.toLowerCase() + ':' + i); }
    return parts.join('>'); };
  return { n: (window.__wp && window.__wp.n) || 0, focus: path(document.activeElement) };
}`

// Activity reads the page's activity counters.
func (s *Session) Activity(ctx context.Context) (Activity, error) {
	a := Activity{URL: s.page.URL()}
	v, err := s.page.Evaluate(activityScript)
	if err != nil {
		return a, fmt.Errorf("read activity: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		a.Mutations = int(toFloat(m["n"]))
		a.Focus, _ = m["focus"].(string)
	}
	if d, err := s.Document(ctx); err == nil {
		a.Document = d.ID
	}
	s.net.mu.Lock()
	a.Requests = s.net.started
	s.net.mu.Unlock()
	s.mu.Lock()
	a.Dialogs, a.Pages = len(s.dialogs), len(s.pages)
	s.mu.Unlock()
	return a, nil
}

// Effect describes what changed between two Activity readings; empty
// means the action between them did nothing anyone could see.
func (a Activity) Effect(after Activity, focusedTarget bool) string {
	switch {
	case a.URL != after.URL || a.Document != after.Document:
		return "navigated"
	case after.Mutations != a.Mutations:
		return "changed the page"
	case after.Requests != a.Requests:
		return "sent a request"
	case after.Dialogs != a.Dialogs:
		return "opened a dialog"
	case after.Pages != a.Pages:
		return "opened a page"
	case a.Focus != after.Focus && !focusedTarget:
		return "moved focus"
	}
	return ""
}

// AxeViolation is one accessibility rule axe-core found broken.
type AxeViolation struct {
	Rule    string    `json:"rule"`
	Impact  string    `json:"impact"`
	Help    string    `json:"help"`
	HelpURL string    `json:"help_url"`
	Nodes   []AxeNode `json:"nodes"`
}

// AxeNode is one element breaking a rule.
type AxeNode struct {
	Target string `json:"target"` // a CSS selector
	HTML   string `json:"html"`
}

// checkHeader marks webpilot's own link checks in the app's logs.
const checkHeader = "x-webpilot-check"

// axeRunScript runs the WCAG 2 A/AA rules on the whole document. Only the
// violations come back, a few nodes each.
const axeRunScript = `async () => {
  if (!window.axe) return null;
  const r = await window.axe.run(document, { resultTypes: ['violations'],
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
  return r.violations.map(v => ({ rule: v.id, impact: v.impact || '', help: v.help, help_url: v.helpUrl,
    nodes: v.nodes.slice(0, 10).map(n => ({ target: n.target.map(String).join(' '), html: n.html.slice(0, 200) })) }));
}`

// Axe runs axe-core's WCAG 2 rules on the current document. source is
// axe-core's own file (axe.min.js as the npm package ships it), run in an
// isolated world of its own (created over the DevTools protocol): the page
// cannot reach it, so a page defining its own window.axe, or changing the
// prototypes axe-core relies on, cannot stand in for it. Nothing model- or
// page-produced is ever run.
func (s *Session) Axe(ctx context.Context, source string) ([]AxeViolation, error) {
	if source == "" {
		return nil, errors.New("axe-core is not installed (run make setup)")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.axeMu.Lock()
	defer s.axeMu.Unlock()
	w := s.axeWorld
	if w == nil || w.page != s.page {
		if w != nil {
			w.close()
		}
		var err error
		if w, err = newIsolatedWorld(s.bctx, s.page, "webpilot-axe"); err != nil {
			return nil, fmt.Errorf("axe-core: %w", err)
		}
		s.axeWorld = w
	}
	// A navigation destroys the world; axe-core is injected once per
	// document ("typeof" answers only while the world lives).
	if has, err := w.eval("typeof axe === 'object'", false); err != nil || string(has) != "true" {
		if err != nil {
			if err = w.create(); err != nil {
				return nil, fmt.Errorf("axe-core: %w", err)
			}
		}
		// The file defines axe on the world's own window; ";0" keeps its
		// completion value out of the answer.
		if _, err := w.eval(source+"\n;0", false); err != nil {
			return nil, fmt.Errorf("inject axe-core: %w", err)
		}
	}
	v, err := w.eval("("+axeRunScript+")()", true)
	if err != nil {
		return nil, fmt.Errorf("run axe-core: %w", err)
	}
	if len(v) == 0 || string(v) == "null" {
		return nil, errors.New("axe-core did not load on this page")
	}
	var out []AxeViolation
	if err := json.Unmarshal(v, &out); err != nil {
		return nil, fmt.Errorf("decode axe-core results: %w", err)
	}
	return out, nil
}

// isolatedWorld is a JavaScript world of a page's main frame that the
// page's own scripts cannot reach (same DOM, own globals and prototypes).
type isolatedWorld struct {
	page playwright.Page
	cdp  playwright.CDPSession
	name string
	id   int // the execution context
}

func newIsolatedWorld(bctx playwright.BrowserContext, page playwright.Page, name string) (*isolatedWorld, error) {
	cdp, err := bctx.NewCDPSession(page)
	if err != nil {
		return nil, fmt.Errorf("devtools session: %w", err)
	}
	w := &isolatedWorld{page: page, cdp: cdp, name: name}
	if err := w.create(); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// create makes the world in the frame's current document.
func (w *isolatedWorld) create() error {
	tree, err := w.cdp.Send("Page.getFrameTree", nil)
	if err != nil {
		return fmt.Errorf("frame tree: %w", err)
	}
	var ft struct {
		FrameTree struct {
			Frame struct {
				ID string `json:"id"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	if err := remarshal(tree, &ft); err != nil || ft.FrameTree.Frame.ID == "" {
		return fmt.Errorf("no main frame (%v)", err)
	}
	world, err := w.cdp.Send("Page.createIsolatedWorld", map[string]any{"frameId": ft.FrameTree.Frame.ID, "worldName": w.name})
	if err != nil {
		return fmt.Errorf("isolated world: %w", err)
	}
	var c struct {
		ID int `json:"executionContextId"`
	}
	if err := remarshal(world, &c); err != nil || c.ID == 0 {
		return fmt.Errorf("isolated world has no context (%v)", err)
	}
	w.id = c.ID
	return nil
}

// eval evaluates an expression of ours in the world, answering its value
// as JSON.
func (w *isolatedWorld) eval(expr string, await bool) (json.RawMessage, error) {
	res, err := w.cdp.Send("Runtime.evaluate", map[string]any{"expression": expr, "contextId": w.id,
		"awaitPromise": await, "returnByValue": true, "timeout": 30000})
	if err != nil {
		return nil, err
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := remarshal(res, &r); err != nil {
		return nil, err
	}
	if r.Exception != nil {
		return nil, errors.New(r.Exception.Text)
	}
	return r.Result.Value, nil
}

func (w *isolatedWorld) close() { _ = w.cdp.Detach() }

// remarshal converts a DevTools answer (maps from JSON) into a struct.
func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// Links lists the absolute http(s) targets of the document's links, in
// page order, each once.
func (s *Session) Links(limit int) ([]string, error) {
	v, err := s.page.Evaluate(`(limit) => { const seen = new Set(); const out = [];
	  for (const a of document.querySelectorAll('a[href]')) {
	    let u; try { u = new URL(a.getAttribute('href'), document.baseURI); } catch { continue; }
	    if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
	    u.hash = ''; const h = u.href; if (seen.has(h)) continue; seen.add(h); out.push(h);
	    if (out.length >= limit) break; }
	  return out; }`, limit)
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	var out []string
	if list, ok := v.([]any); ok {
		for _, x := range list {
			if u, ok := x.(string); ok {
				out = append(out, u)
			}
		}
	}
	return out, nil
}

// CheckLink asks for a link's target without loading it in the page (a
// HEAD request, GET when HEAD is not allowed) and returns its status. The
// URL policy is checked first and the request goes out through the
// context's egress proxy, like every connection of the job.
func (s *Session) CheckLink(ctx context.Context, raw string, timeout time.Duration) (int, error) {
	if _, err := url.Parse(raw); err != nil {
		return 0, err
	}
	if err := s.policy.CheckURL(raw); err != nil {
		s.deny(raw)
		return 0, fmt.Errorf("link not checked: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ms := playwright.Float(float64(timeout.Milliseconds()))
	req := s.bctx.Request()
	r, err := req.Head(raw, playwright.APIRequestContextHeadOptions{Timeout: ms, MaxRedirects: playwright.Int(5),
		FailOnStatusCode: playwright.Bool(false), Headers: map[string]string{checkHeader: "1"}})
	if err == nil && (r.Status() == 405 || r.Status() == 501) {
		_ = r.Dispose()
		r, err = req.Get(raw, playwright.APIRequestContextGetOptions{Timeout: ms, MaxRedirects: playwright.Int(5),
			FailOnStatusCode: playwright.Bool(false), Headers: map[string]string{checkHeader: "1"}})
	}
	if err != nil {
		return 0, fmt.Errorf("check link %s: %w", raw, err)
	}
	defer r.Dispose()
	return r.Status(), nil
}

// Remeasure asks for raw again (GET, with the context's cookies, through
// its egress proxy, the URL policy checked first) and returns how long the
// whole answer took: one slow answer is not a slow endpoint.
func (s *Session) Remeasure(ctx context.Context, raw string, timeout time.Duration) (time.Duration, error) {
	if err := s.policy.CheckURL(raw); err != nil {
		s.deny(raw)
		return 0, fmt.Errorf("not measured again: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	start := time.Now()
	r, err := s.bctx.Request().Get(raw, playwright.APIRequestContextGetOptions{Timeout: playwright.Float(float64(timeout.Milliseconds())),
		MaxRedirects: playwright.Int(0), FailOnStatusCode: playwright.Bool(false), Headers: map[string]string{checkHeader: "1"}})
	if err != nil {
		return 0, fmt.Errorf("measure %s again: %w", raw, err)
	}
	defer r.Dispose()
	if _, err := r.Body(); err != nil {
		return 0, fmt.Errorf("measure %s again: %w", raw, err)
	}
	return time.Since(start), nil
}
