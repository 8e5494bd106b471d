package lexical

import (
	"fmt"
	"testing"
)

func TestScratch(t *testing.T) {
	for _, s := range []string{"Go back to all jobs", "Search by title", "Set adults to 1 and children to 2", "Set the status to Done and the priority to Low"} {
		cs, _ := Clauses(s)
		for _, c := range cs {
			it, ok := parseClause(c.Text)
			fmt.Printf("%-40s ok=%v verb=%s check=%s values=%q", c.Text, ok, it.Verb, it.Check, it.Values)
			if it.Target != nil {
				fmt.Printf(" target=%+v", *it.Target)
			}
			fmt.Println()
		}
	}
}
