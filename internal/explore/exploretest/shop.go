// Package exploretest scripts the model of an exploration of the demo
// app's shop, for tests and the bench: it reads the page it is shown the
// way a model does (refs are only known at run time), walks the journey
// and reports the shop's two functional bugs with their checks. On the
// bug-free shop it makes the same claims, which the explorer must reject.
package exploretest

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
)

// ShopGoal is the journey the scripted model walks.
const ShopGoal = "Add two products to the cart, check the cart's total, then try the Fruit category filter"

// ShopModel is the scripted model's replies, in order.
func ShopModel() []llmtest.Reply {
	return []llmtest.Reply{
		reply(func(page string) map[string]any {
			return map[string]any{"thinking": "add two products, then open the cart", "commands": []any{
				click(ref(page, `button "Add Apple to cart"`)),
				click(ref(page, `button "Add Sourdough bread to cart"`)),
				click(ref(page, `link "Cart (`))}}
		}),
		reply(func(page string) map[string]any {
			// Add up the rows' prices and compare with the total shown.
			sum := 0.0
			for _, m := range regexp.MustCompile(`row "[^"]* (\d+) \$(\d+\.\d\d)"`).FindAllStringSubmatch(page, -1) {
				p, _ := strconv.ParseFloat(m[2], 64)
				sum += p
			}
			total := regexp.MustCompile(`status \[ref=([a-z0-9]+)\]: (\$[\d.]+)`).FindStringSubmatch(page)
			d := map[string]any{"thinking": "check the total, then back to the products",
				"commands": []any{map[string]any{"action": "navigate", "value": "/shop/"}}}
			if total != nil {
				want := "$" + strconv.FormatFloat(sum, 'f', 2, 64)
				d["findings"] = []any{map[string]any{"title": "The cart's total does not add up", "expected": want + " (the sum of the lines)",
					"observed": total[2], "check": map[string]any{"action": "verify", "target": map[string]any{"ref": total[1]},
						"assert": "textEquals", "value": want}}}
			}
			return d
		}),
		reply(func(page string) map[string]any {
			return map[string]any{"thinking": "filter the fruit", "commands": []any{
				map[string]any{"action": "select", "target": map[string]any{"ref": ref(page, `combobox "Category"`)}, "value": "Fruit"},
				click(ref(page, `button "Apply filter"`))}}
		}),
		reply(func(page string) map[string]any {
			target := map[string]any{"text": "Sourdough bread, $4.00"}
			if r := itemRef(page, "Sourdough bread, $4.00"); r != "" {
				target = map[string]any{"ref": r}
			}
			return map[string]any{"thinking": "the bread is not a fruit", "done": true, "goal_met": true,
				"findings": []any{map[string]any{"title": "The Fruit filter shows a bakery product", "expected": "only fruit after filtering by Fruit",
					"observed": "Sourdough bread is listed", "check": map[string]any{"action": "verify", "target": target, "assert": "isHidden"}}}}
		}),
	}
}

func reply(f func(page string) map[string]any) llmtest.Reply {
	return llmtest.Reply{PromptTokens: 1500, CompletionTokens: 80, Respond: func(r llmtest.Request) string { return llmtest.JSON(f(r.Text())) }}
}

func click(ref string) map[string]any {
	return map[string]any{"action": "click", "target": map[string]any{"ref": ref}}
}

var refRe = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)

// ref finds the ref of the first line that starts with what.
func ref(page, what string) string {
	for _, line := range strings.Split(page, "\n") {
		if strings.Contains(line, "- "+what) {
			if m := refRe.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	return "missing"
}

// itemRef is the ref of the list item whose text is text.
func itemRef(page, text string) string {
	item := ""
	for _, line := range strings.Split(page, "\n") {
		if strings.Contains(line, "- listitem") {
			if m := refRe.FindStringSubmatch(line); m != nil {
				item = m[1]
			}
		}
		if strings.Contains(line, text) && item != "" {
			return item
		}
	}
	return ""
}

// SeededBug is one of the shop's seeded bugs as the finding that reports
// it: its type and a fragment of its title.
type SeededBug struct {
	Type  explore.Type
	Title string
}

// Seeded are the shop's seeded bugs (demoapp.ShopSeededBugs of them).
var Seeded = []SeededBug{
	{explore.TypePageError, "TypeError"},
	{explore.TypeFailedRequest, "POST /shop/api/stock answered 500"},
	{explore.TypeBrokenLink, "/shop/size-guide-old"},
	{explore.TypeAccessibility, "image-alt"},
	{explore.TypeAccessibility, "(label,"},
	{explore.TypeDeadClick, `"Compare products"`},
	{explore.TypeSlowResponse, "GET /shop/api/delivery"},
	{explore.TypeFunctional, "total does not add up"},
	{explore.TypeFunctional, "Fruit filter"},
}

// Match counts the seeded bugs the findings report (each once) and
// returns the findings that report none: false positives.
func Match(findings []explore.Finding) (found int, unexpected []explore.Finding) {
	hit := make([]bool, len(Seeded))
	for _, f := range findings {
		matched := false
		for i, s := range Seeded {
			if f.Type == s.Type && strings.Contains(f.Title, s.Title) && !hit[i] {
				hit[i], matched = true, true
				found++
				break
			}
		}
		if !matched {
			unexpected = append(unexpected, f)
		}
	}
	return found, unexpected
}
