package suitetest

import (
	"strings"

	"github.com/webpilot/webpilot/internal/llm/llmtest"
)

// PageRef is the reference of the first element of a repair question's
// page whose line holds all of has, or "".
func PageRef(question string, has ...string) string {
	_, page, _ := strings.Cut(question, "PAGE AT THE FAILURE:\n")
	for _, l := range strings.Split(page, "\n") {
		ref, rest, ok := strings.Cut(l, " ")
		if !ok || !strings.HasPrefix(ref, "e") {
			continue
		}
		all := true
		for _, h := range has {
			all = all && strings.Contains(rest, h)
		}
		if all {
			return ref
		}
	}
	return ""
}

// ShoppingModel answers a repair's questions about the shopping corpus
// project as a capable model reads them: the renamed Add button and item
// count where the page has them, a regression where the page has no
// button that adds; the quantity the add form now requires; misled, it
// names the list for the count and a quantity the form refuses.
func ShoppingModel(misled bool) func(llmtest.Request) string {
	return func(r llmtest.Request) string {
		q := r.Text()
		locator := ""
		if i := strings.Index(q, "LOCATOR: "); i >= 0 {
			locator, _, _ = strings.Cut(q[i:], "\n")
		}
		switch {
		case strings.Contains(q, "REQUIRED AND EMPTY:"):
			// The form now asks for a quantity; misled, it gives one the
			// field refuses.
			ref := PageRef(q, "input", `label="Quantity"`, "required")
			if ref == "" {
				break
			}
			value := "2"
			if misled {
				value = "0"
			}
			return llmtest.JSON(map[string]any{"fill": []map[string]string{{"element": ref, "value": value}}})
		case strings.Contains(locator, "#count") && misled:
			return llmtest.JSON(map[string]string{"element": PageRef(q, `id="items"`)})
		case strings.Contains(locator, "add-button"):
			if ref := PageRef(q, "button", `"Add"`); ref != "" {
				return llmtest.JSON(map[string]string{"element": ref})
			}
			return llmtest.JSON(map[string]string{"regression": "the form has a field for a new item and no button that adds it"})
		case strings.Contains(locator, "#count"):
			if ref := PageRef(q, `count"`, "item"); ref != "" {
				return llmtest.JSON(map[string]string{"element": ref})
			}
		}
		return llmtest.JSON(map[string]string{"unsure": "nothing on the page is what the call meant"})
	}
}
