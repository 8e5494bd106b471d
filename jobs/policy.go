package jobs

// URLPolicy decides whether a URL may be reached; netguard.Policy is one.
type URLPolicy interface {
	CheckURL(raw string) error
}
