package browser

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// Mark is one labelled box of a Set-of-Marks screenshot.
type Mark struct {
	Ref  string  `json:"ref"`
	Role string  `json:"role"`
	Name string  `json:"name,omitempty"`
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	W    float64 `json:"w"`
	H    float64 `json:"h"`
}

var interactiveRoles = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true, "radio": true,
	"combobox": true, "listbox": true, "option": true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, "tab": true, "switch": true, "slider": true, "spinbutton": true, "treeitem": true,
	"clickable": true, // a role-less element that responds to clicks (see clickableScript)
}

// snapshotLine matches `- role "name" ... [ref=x]` lines.
var snapshotLine = regexp.MustCompile(`^\s*- ([a-z]+)(?: "((?:[^"\\]|\\.)*)")?.*\[ref=([a-z0-9]+)\]`)

// markOverlay draws the boxes in the page; its input is data we computed,
// never anything a model or page produced as code.
const markOverlay = `(marks) => {
  const root = document.createElement('div');
  root.id = '__webpilot_marks';
  root.style.cssText = 'position:fixed;inset:0;pointer-events:none;z-index:2147483647';
  const colors = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#008080', '#9a6324', '#800000'];
  marks.forEach((m, i) => {
    const c = colors[i % colors.length];
    const box = document.createElement('div');
    box.style.cssText = 'position:fixed;border:2px solid ' + c + ';left:' + m.x + 'px;top:' + m.y + 'px;width:' + m.w + 'px;height:' + m.h + 'px';
    const label = document.createElement('span');
    label.textContent = m.ref;
    label.style.cssText = 'position:absolute;left:-2px;top:-16px;background:' + c + ';color:#fff;font:11px monospace;padding:0 2px';
    box.appendChild(label);
    root.appendChild(box);
  });
  document.documentElement.appendChild(root);
}`

const markRemove = `() => { const r = document.getElementById('__webpilot_marks'); if (r) r.remove(); }`

// SetOfMarks takes a viewport screenshot with a coloured, labelled box on
// each interactive element of the snapshot that is in view (at most limit),
// and returns the marks as the element map sent with it.
func (s *Session) SetOfMarks(ctx context.Context, snap Snapshot, limit int) ([]byte, []Mark, error) {
	vp := s.page.ViewportSize()
	var marks []Mark
	for _, line := range strings.Split(snap.Text, "\n") {
		if len(marks) >= limit {
			break
		}
		m := snapshotLine.FindStringSubmatch(line)
		if m == nil || !interactiveRoles[m[1]] {
			continue
		}
		loc, err := s.locator(Target{Ref: m[3]})
		if err != nil {
			continue
		}
		// The element exists (its ref resolved): the wait only matters on
		// a loaded machine, where 2 s once dropped a button's mark; a
		// timed-out box is asked for once more, for longer, before its
		// mark is left out.
		box, err := loc.BoundingBox(playwright.LocatorBoundingBoxOptions{Timeout: playwright.Float(2000)})
		if errors.Is(err, playwright.ErrTimeout) && ctx.Err() == nil {
			box, err = loc.BoundingBox(playwright.LocatorBoundingBoxOptions{Timeout: playwright.Float(10000)})
		}
		if err != nil || box == nil || box.Width == 0 || (vp != nil && (box.Y+box.Height < 0 || box.Y > float64(vp.Height))) {
			continue
		}
		marks = append(marks, Mark{Ref: m[3], Role: m[1], Name: m[2], X: box.X, Y: box.Y, W: box.Width, H: box.Height})
	}
	// playwright-go passes maps, not structs, to page scripts.
	arg := make([]map[string]any, len(marks))
	for i, m := range marks {
		arg[i] = map[string]any{"ref": m.Ref, "x": m.X, "y": m.Y, "w": m.W, "h": m.H}
	}
	if _, err := s.page.Evaluate(markOverlay, arg); err != nil {
		return nil, nil, fmt.Errorf("draw marks: %w", err)
	}
	img, err := s.picture(playwright.PageScreenshotOptions{Timeout: playwright.Float(10000)}, 0, false)
	if _, rerr := s.page.Evaluate(markRemove); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return nil, nil, fmt.Errorf("marked screenshot: %w", err)
	}
	return img, marks, nil
}
