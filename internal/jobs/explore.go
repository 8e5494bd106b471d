package jobs

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/webpilot/webpilot/internal/scenario"
)

// Limits of an exploration request.
const (
	MaxJourneys      = 10
	MaxExploreActs   = 500
	MaxExploreMins   = 60
	MaxScopePrefixes = 20
	MaxSafetyWords   = 50
	// DefaultExploreActs and DefaultExploreMins are the budget when none is given.
	DefaultExploreActs = 60
	DefaultExploreMins = 10
)

// DenyWords are what an element's name must not suggest for an exploration
// to click it unless the request allows the word: destroying data, paying,
// signing out or deleting the account.
var DenyWords = []string{"delete", "remove", "destroy", "erase", "wipe", "purge", "drop", "reset", "clear all",
	"pay", "pay now", "purchase", "buy now", "place order", "confirm order", "submit order", "checkout now",
	"sign out", "signout", "log out", "logout", "log off", "sign off",
	"delete account", "close account", "deactivate", "unsubscribe", "cancel subscription"}

// ExplorationRequest is the input of an exploration job: a journey goal (or
// several, one child job each) on an app, under a budget, a scope and a
// safety policy.
type ExplorationRequest struct {
	BaseURL string `json:"base_url"`
	Goal    string `json:"goal"`
	// Journeys are several goals explored as child jobs of one report.
	Journeys []string `json:"journeys,omitempty"`
	// Data is test data the agent may type (shown to it by name and value).
	Data map[string]string `json:"data,omitempty"`
	// Secrets are typed only by webpilot (the login); the model never sees them.
	Secrets       map[string]string `json:"secrets,omitempty"`
	SealedSecrets string            `json:"sealed_secrets,omitempty"`
	Login         *Login            `json:"login,omitempty"`
	Budget        Budget            `json:"budget"`
	// Scope lists the path prefixes the exploration may visit ("/shop/");
	// empty means the whole host. The host is never left.
	Scope   []string         `json:"scope,omitempty"`
	Safety  Safety           `json:"safety"`
	Options scenario.Options `json:"options"`
}

// Login says how an exploration signs in before it starts: the page with
// the sign-in form and the names of the secrets holding the credentials.
type Login struct {
	URL      string `json:"url,omitempty"`      // default: the base URL
	Username string `json:"username,omitempty"` // secret name; default USERNAME
	Password string `json:"password,omitempty"` // secret name; default PASSWORD
}

// Budget bounds an exploration; zero fields take the defaults.
type Budget struct {
	MaxActions int     `json:"max_actions,omitempty"`
	MaxMinutes int     `json:"max_minutes,omitempty"`
	MaxCredits float64 `json:"max_credits,omitempty"` // the job's credit hold
}

// Safety is the policy for what an exploration never clicks. Deny adds
// words to DenyWords (unless NoDefaults); Allow exempts words from it.
type Safety struct {
	Deny       []string `json:"deny,omitempty"`
	Allow      []string `json:"allow,omitempty"`
	NoDefaults bool     `json:"no_defaults,omitempty"`
}

// Words returns the deny words in force.
func (s Safety) Words() []string {
	var out []string
	if !s.NoDefaults {
		out = append(out, DenyWords...)
	}
	out = append(out, s.Deny...)
	var kept []string
	for _, w := range out {
		w = strings.ToLower(strings.TrimSpace(w))
		allowed := false
		for _, a := range s.Allow {
			allowed = allowed || strings.EqualFold(strings.TrimSpace(a), w)
		}
		if w != "" && !allowed {
			kept = append(kept, w)
		}
	}
	return kept
}

// WithDefaults fills the budget's zero fields.
func (b Budget) WithDefaults() Budget {
	if b.MaxActions == 0 {
		b.MaxActions = DefaultExploreActs
	}
	if b.MaxMinutes == 0 {
		b.MaxMinutes = DefaultExploreMins
	}
	return b
}

// UsernameSecret and PasswordSecret name the login's secrets.
func (l Login) UsernameSecret() string { return or(l.Username, "USERNAME") }

// PasswordSecret names the secret holding the login's password.
func (l Login) PasswordSecret() string { return or(l.Password, "PASSWORD") }

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

var dataName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

var safetyWord = regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N} '&-]{0,39}$`)

// Validate checks an exploration request at JSON path at.
func (r *ExplorationRequest) Validate(v *scenario.ValidationError, at string, urls scenario.URLPolicy) {
	base, err := url.Parse(r.BaseURL)
	switch {
	case strings.TrimSpace(r.BaseURL) == "":
		v.Add(at+".base_url", "is required")
	case err != nil || base.Host == "":
		v.Add(at+".base_url", "must be an absolute http(s) URL")
	default:
		if err := urls.CheckURL(r.BaseURL); err != nil {
			v.Add(at+".base_url", "%v", err)
		}
	}
	switch {
	case strings.TrimSpace(r.Goal) == "" && len(r.Journeys) == 0:
		v.Add(at+".goal", "is required (the journey to explore, e.g. \"check out as a guest\"), or give journeys")
	case r.Goal != "" && len(r.Journeys) > 0:
		v.Add(at+".journeys", "give a goal or journeys, not both")
	case len(r.Goal) > 500:
		v.Add(at+".goal", "at most 500 characters")
	}
	if len(r.Journeys) > MaxJourneys {
		v.Add(at+".journeys", "at most %d journeys", MaxJourneys)
	}
	for i, j := range r.Journeys {
		if strings.TrimSpace(j) == "" || len(j) > 500 {
			v.Add(fmt.Sprintf("%s.journeys[%d]", at, i), "must be a goal of 1 to 500 characters")
		}
	}
	for k := range r.Data {
		if !dataName.MatchString(k) {
			v.Add(at+".data", "name %q must be letters, digits and underscores", k)
		}
	}
	scenario.ValidateSecrets(v, at, r.Secrets)
	if r.SealedSecrets != "" {
		v.Add(at+".sealed_secrets", "is set by the server; send secrets instead")
	}
	if l := r.Login; l != nil {
		if l.URL != "" && base != nil {
			// Resolved as the browser will load it: a javascript: or data:
			// address, or one on another host, is refused here.
			target, ok := scenario.ResolveAgainst(r.BaseURL, l.URL)
			u, err := url.Parse(target)
			switch {
			case !ok || err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, base.Host):
				v.Add(at+".login.url", "must be a path or an http(s) URL on the base URL's host")
			default:
				if err := urls.CheckURL(target); err != nil {
					v.Add(at+".login.url", "%v", err)
				}
			}
		}
		for field, name := range map[string]string{"username": l.UsernameSecret(), "password": l.PasswordSecret()} {
			if _, ok := r.Secrets[name]; !ok {
				v.Add(at+".login."+field, "names the secret %q, which the request does not carry in secrets", name)
			}
		}
	}
	b := r.Budget
	if b.MaxActions < 0 || b.MaxActions > MaxExploreActs {
		v.Add(at+".budget.max_actions", "must be between 1 and %d", MaxExploreActs)
	}
	if b.MaxMinutes < 0 || b.MaxMinutes > MaxExploreMins {
		v.Add(at+".budget.max_minutes", "must be between 1 and %d", MaxExploreMins)
	}
	if b.MaxCredits < 0 {
		v.Add(at+".budget.max_credits", "must not be negative")
	}
	if b.MaxCredits > 0 && r.Options.MaxCredits > 0 {
		v.Add(at+".budget.max_credits", "give budget.max_credits or options.max_credits, not both")
	}
	if len(r.Scope) > MaxScopePrefixes {
		v.Add(at+".scope", "at most %d path prefixes", MaxScopePrefixes)
	}
	for i, p := range r.Scope {
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#* \t\n") {
			v.Add(fmt.Sprintf("%s.scope[%d]", at, i), "must be a path prefix such as /shop/ (the host is never left)")
		}
	}
	for field, words := range map[string][]string{"deny": r.Safety.Deny, "allow": r.Safety.Allow} {
		if len(words) > MaxSafetyWords {
			v.Add(at+".safety."+field, "at most %d words", MaxSafetyWords)
		}
		for i, w := range words {
			if !safetyWord.MatchString(strings.TrimSpace(w)) {
				v.Add(fmt.Sprintf("%s.safety.%s[%d]", at, field, i), "must be a word or short phrase (letters, digits, spaces)")
			}
		}
	}
	r.Options.Validate(v, at+".options", urls)
}

// Goals are the journeys of the request: its goal, or each of its journeys.
func (r *ExplorationRequest) Goals() []string {
	if len(r.Journeys) > 0 {
		return r.Journeys
	}
	return []string{r.Goal}
}

// Credits is the request's credit budget, wherever it was given.
func (r *ExplorationRequest) Credits() float64 {
	if r.Budget.MaxCredits > 0 {
		return r.Budget.MaxCredits
	}
	return r.Options.MaxCredits
}

// Seal replaces the request's secrets by their sealed form, for storing.
func (r *ExplorationRequest) Seal(sealed string) { r.SealedSecrets, r.Secrets = sealed, nil }

// Sealed is the request's sealed secrets, as stored.
func (r *ExplorationRequest) Sealed() string { return r.SealedSecrets }
