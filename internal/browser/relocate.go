package browser

import (
	"context"
	"fmt"
	"iter"
	"sort"
	"strings"
	"unicode"

	"github.com/playwright-community/playwright-go"
)

// Re-location finds where a recorded element went after the app changed
// (an id renamed, a button reworded, the markup re-wrapped): every
// plausible element of the page is described like the recorded one and
// scored by weighted similarity; the best is accepted only above a
// threshold, with a clear margin over the runner-up, and only when a
// locator unique under the runner's strict mode can be written for it.

// Relocation thresholds.
const (
	// RelocateMinScore is the least similarity an accepted element has.
	RelocateMinScore = 0.5
	// RelocateMinMargin is how much better than the runner-up it must be:
	// two look-alikes (rows of a list) are a guess, not a re-location.
	RelocateMinMargin = 0.15
	maxCandidates     = 1500
)

// RelocateOptions says what the element must be.
type RelocateOptions struct {
	// Visible keeps only visible elements (an action's target).
	Visible bool
	// SameText keeps only elements whose own text is the recorded text: a
	// presence check's text is what it asserts, so it may never be
	// re-pointed at an element that says something else.
	SameText bool
}

// Relocation is where a recorded element went.
type Relocation struct {
	// Element is the accepted element, its Locator unique now; nil when
	// none was accepted (Reason says why).
	Element    *Fingerprint `json:"element,omitempty"`
	Score      float64      `json:"score"`
	RunnerUp   float64      `json:"runner_up"`
	Candidates int          `json:"candidates"`
	Reason     string       `json:"reason,omitempty"`
}

// candidatesScript describes every element that could be the recorded one:
// its tag, its role, or any interactive element, through open shadow roots.
const candidatesScript = `(root, want) => {
  const describe = ` + fingerprintScript + `;
  const interactive = 'a,button,input,select,textarea,summary,label,option,[role],[onclick],[contenteditable],[tabindex],[data-testid]';
  const out = [];
  const walk = (node) => {
    for (const e of node.querySelectorAll('*')) {
      if (out.length >= want.max) return;
      if (e.shadowRoot) walk(e.shadowRoot);
      const tag = e.tagName.toLowerCase();
      if (tag === 'script' || tag === 'style' || tag === 'head' || tag === 'html' || tag === 'body') continue;
      if (tag !== want.tag && !e.matches(interactive) && !(want.role && e.getAttribute('role') === want.role)) continue;
      const visible = !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
      if (want.visible && !visible) continue;
      out.push(describe(e));
    }
  };
  walk(root.ownerDocument);
  return out;
}`

// Relocate looks for the element old describes on the current page, in
// old's frame.
func (s *Session) Relocate(ctx context.Context, old Fingerprint, o RelocateOptions) (Relocation, error) {
	root := s.root(old.Frames)
	v, err := root.Evaluate(candidatesScript, map[string]any{"tag": old.Tag, "role": old.Role, "visible": o.Visible, "max": maxCandidates},
		playwright.LocatorEvaluateOptions{Timeout: actionWait()})
	if err != nil {
		return Relocation{}, fmt.Errorf("describe the page's elements: %w", err)
	}
	list, _ := v.([]any)
	type scored struct {
		fp    *Fingerprint
		score float64
	}
	var all []scored
	for _, x := range list {
		m, _ := x.(map[string]any)
		c := parseFingerprint(m)
		if o.SameText && old.Text != "" && !SameText(c.Text, old.Text) {
			continue
		}
		all = append(all, scored{c, Similarity(old, *c)})
	}
	rel := Relocation{Candidates: len(all)}
	if len(all) == 0 {
		rel.Reason = "no element on the page could be the recorded one"
		return rel, nil
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	best := all[0]
	rel.Score = best.score
	if len(all) > 1 {
		rel.RunnerUp = all[1].score
	}
	switch {
	case rel.Score < RelocateMinScore:
		rel.Reason = fmt.Sprintf("the most similar element (%s) scores %.2f, below %.2f", best.fp.Describe(), rel.Score, RelocateMinScore)
		return rel, nil
	case rel.Score-rel.RunnerUp < RelocateMinMargin:
		pick, ok := byKinship(old, all[0].score, func(yield func(*Fingerprint, float64) bool) {
			for _, c := range all {
				if !yield(c.fp, c.score) {
					return
				}
			}
		})
		if !ok {
			rel.Reason = fmt.Sprintf("two elements are about as similar (%.2f and %.2f): %s and %s", rel.Score, rel.RunnerUp,
				best.fp.Describe(), all[1].fp.Describe())
			return rel, nil
		}
		best.fp = pick
	}
	loc := s.root(old.Frames).Locator(best.fp.Path)
	if n, err := loc.Count(); err != nil || n != 1 {
		rel.Reason = fmt.Sprintf("the most similar element (%s) cannot be found again by its path", best.fp.Describe())
		return rel, nil
	}
	fp, err := s.fingerprint(loc, old.Frames, "")
	if err != nil {
		return rel, err
	}
	if fp.Locator.IsZero() {
		rel.Reason = fmt.Sprintf("no locator unique on the page can be written for the most similar element (%s)", best.fp.Describe())
		return rel, nil
	}
	rel.Element = fp
	return rel, nil
}

// byKinship picks, among look-alikes that score the same as the best
// (within a hair), the one in the recorded element's place, when the
// look-alikes are exactly as many as the recorded element's kin were: the
// form kept its controls, only something around them changed. Anything
// else (one more or one fewer) would be a guess.
func byKinship(old Fingerprint, best float64, all iter.Seq2[*Fingerprint, float64]) (*Fingerprint, bool) {
	if old.Index == 0 || old.Of < 2 {
		return nil, false
	}
	var ties []*Fingerprint
	for fp, score := range all {
		if best-score > 0.01 {
			break
		}
		ties = append(ties, fp)
	}
	if len(ties) != old.Of {
		return nil, false
	}
	for _, fp := range ties {
		if fp.Of == old.Of && fp.Index == old.Index {
			return fp, true
		}
	}
	return nil, false
}

// Describe names an element for a person (a role or tag and its name).
func (f *Fingerprint) Describe() string {
	name := f.Name
	if name == "" {
		name = f.Text
	}
	d := f.Tag
	if f.Role != "" && f.Role != "generic" {
		d = f.Role
	}
	if name != "" {
		d += fmt.Sprintf(" %q", truncate(name, 40))
	}
	return d
}

// Similarity scores, from 0 to 1, how much cand looks like the element old
// described. Only what was recorded counts (an empty recorded field is no
// evidence either way); identity attributes (test id, id, name) weigh most,
// then what a person reads (accessible name, label, text), then structure
// (role, tag, and the longest common subsequence of the root-to-element
// tag path).
func Similarity(old, cand Fingerprint) float64 {
	var got, total float64
	feature := func(weight float64, a, b string, sim func(a, b string) float64) {
		if a == "" {
			return
		}
		total += weight
		if b != "" {
			got += weight * sim(a, b)
		}
	}
	feature(3, old.TestID, cand.TestID, textSimilarity)
	feature(1.5, old.Attributes["id"], cand.Attributes["id"], textSimilarity)
	feature(1, old.Attributes["name"], cand.Attributes["name"], textSimilarity)
	feature(2.5, old.Name, cand.Name, textSimilarity)
	feature(1.5, old.Label, cand.Label, textSimilarity)
	feature(1, old.Placeholder, cand.Placeholder, textSimilarity)
	feature(1.5, old.Text, cand.Text, textSimilarity)
	feature(0.5, old.Alt, cand.Alt, textSimilarity)
	feature(0.5, old.Title, cand.Title, textSimilarity)
	feature(0.5, old.Attributes["type"], cand.Attributes["type"], same)
	feature(0.5, old.Attributes["href"], cand.Attributes["href"], textSimilarity)
	feature(1, old.Attributes["class"], cand.Attributes["class"], classSimilarity)
	feature(1.5, orNone(old.Role), orNone(cand.Role), same)
	feature(1, old.Tag, cand.Tag, same)
	feature(2, tagPath(old), tagPath(cand), pathSimilarity)
	if total == 0 {
		return 0
	}
	return got / total
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func same(a, b string) float64 {
	if a == b {
		return 1
	}
	return 0
}

// SameText reports whether two element texts read the same (case and
// spacing aside).
func SameText(a, b string) bool { return normText(a) == normText(b) }

func normText(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// textSimilarity is the Dice coefficient of the two texts' character
// bigrams, case and spacing ignored: "Add" and "Add item" share much,
// "Add" and "Delete" little.
func textSimilarity(a, b string) float64 {
	a, b = normText(a), normText(b)
	if a == b {
		return 1
	}
	ga, gb := bigrams(a), bigrams(b)
	if len(ga) == 0 || len(gb) == 0 {
		return 0
	}
	common := 0
	for g, n := range ga {
		common += min(n, gb[g])
	}
	return 2 * float64(common) / float64(sum(ga)+sum(gb))
}

func bigrams(s string) map[string]int {
	r := []rune(s)
	out := map[string]int{}
	if len(r) == 1 {
		out[s]++
	}
	for i := 0; i+1 < len(r); i++ {
		out[string(r[i:i+2])]++
	}
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// classSimilarity is the Jaccard index of two class lists.
func classSimilarity(a, b string) float64 {
	sa, sb := map[string]bool{}, map[string]bool{}
	for _, c := range strings.Fields(a) {
		sa[c] = true
	}
	for _, c := range strings.Fields(b) {
		sb[c] = true
	}
	inter := 0
	for c := range sa {
		if sb[c] {
			inter++
		}
	}
	union := len(sa) + len(sb) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// tagPath is the element's root-to-element tag names; fingerprints taken
// before Tags was recorded fall back to the tags of the structural path.
func tagPath(f Fingerprint) string {
	if f.Tags != "" {
		return f.Tags
	}
	var tags []string
	for _, part := range strings.FieldsFunc(f.Path, func(r rune) bool { return r == '>' || unicode.IsSpace(r) }) {
		if t, _, _ := strings.Cut(part, ":"); t != "" && !strings.HasPrefix(t, "#") {
			tags = append(tags, t)
		}
	}
	return strings.Join(tags, " ")
}

// pathSimilarity is the longest common subsequence of two tag paths over
// the longer one's length: re-wrapping a button in a div keeps most of it.
func pathSimilarity(a, b string) float64 {
	x, y := strings.Fields(a), strings.Fields(b)
	if len(x) == 0 || len(y) == 0 {
		return 0
	}
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for i := range x {
		for j := range y {
			if x[i] == y[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return float64(prev[len(y)]) / float64(max(len(x), len(y)))
}
