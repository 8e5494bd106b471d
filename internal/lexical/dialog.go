package lexical

import (
	"regexp"
	"strings"
)

// A native dialog (alert, confirm, prompt) is not an element: a clause
// about one ("… and OK the popup message", "then dismiss it", "decline the
// confirmation", "answer the prompt with Bob") says how the dialog that the
// clause before opens is answered.
var (
	// dialogNoun names the dialog: a word for a native dialog, or "it",
	// which only the action before can have opened.
	dialogNoun = `(?:(?:the|this|that)\s+)?(?:(?:popup|pop-up|browser|js|javascript|confirmation|warning|alert)\s+)?` +
		`(?:popup|pop-up|alert|dialog|confirmation|confirm(?:\s+box)?|prompt|warning|message|box|window)(?:\s+(?:message|dialog|box|window))?|it|that`
	acceptDialog  = regexp.MustCompile(`(?i)^(?:ok|okay|accept|confirm|approve|agree\s+to|say\s+yes\s+to|(?:click|press|hit|tap)\s+(?:ok|okay|yes)\s+(?:on|in))\s+(?:` + dialogNoun + `)$`)
	dismissDialog = regexp.MustCompile(`(?i)^(?:dismiss|cancel|decline|reject|refuse|close|say\s+no\s+to|(?:click|press|hit|tap)\s+(?:cancel|no)\s+(?:on|in))\s+(?:` + dialogNoun + `)$`)
	answerDialog  = regexp.MustCompile(`(?i)^(?:answer|fill(?:\s+in)?|reply\s+to|respond\s+to)\s+(?:the\s+)?(?:prompt|popup|pop-up|dialog|prompt\s+box)\s+with\s+(.+)$`)
	typeInDialog  = regexp.MustCompile(`(?i)^(?:enter|type|write)\s+(.+?)\s+(?:in|into)\s+(?:the\s+)?(?:prompt|popup|pop-up|dialog|prompt\s+box)(?:\s+and\s+(?:ok|okay|accept|confirm)(?:\s+it)?)?$`)
)

// DialogAnswer reads a clause that answers a native dialog and gives the
// dialog command's value: "accept", "dismiss" or "accept:TEXT" (a prompt
// answered with TEXT, written quoted or as a plain value). The dialog is
// the one the clause before opens; the caller checks that one did. trail
// is the punctuation the sentence ended with: an unquoted answer before
// it may own it ("Bob!"), which no page shows, so such a clause is not
// read.
func DialogAnswer(clause, trail string) (string, bool) {
	masked, quotes := mask(strings.TrimSpace(clause))
	switch {
	case acceptDialog.MatchString(masked):
		return "accept", true
	case dismissDialog.MatchString(masked):
		return "dismiss", true
	}
	for _, re := range []*regexp.Regexp{answerDialog, typeInDialog} {
		if m := re.FindStringSubmatch(masked); m != nil {
			v := strings.TrimSpace(m[1])
			if q, ok := onlyQuote(v, quotes); ok {
				return "accept:" + q, true
			}
			if strings.Contains(v, "⟦") || !plainValue(v) || trail != "" {
				return "", false // more than a value, or a value whose end is not sure
			}
			return "accept:" + v, true
		}
	}
	return "", false
}
