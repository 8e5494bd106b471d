package client

import "strings"

// Title is a test's title path as the runner prints it: its describe
// titles, then its own, joined by " › ".
func (t TestOutcome) Title() string { return strings.Join(t.Titles, " › ") }
