package llm

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Price is what a model costs in credits per million tokens.
type Price struct {
	Prompt     float64 `json:"prompt"`
	Cached     float64 `json:"cached"`
	Completion float64 `json:"completion"`
}

// Prices maps model names (or prefixes ending in *) to prices.
type Prices map[string]Price

// DefaultPrices apply when WEBPILOT_PRICES does not name a model
// ("*" is the fallback).
var DefaultPrices = Prices{
	"gpt-4o-mini": {Prompt: 15, Cached: 7.5, Completion: 60},
	"gpt-4o":      {Prompt: 250, Cached: 125, Completion: 1000},
	"*":           {Prompt: 100, Cached: 50, Completion: 400},
}

// ParsePrices reads a JSON object of model -> price, merged over the defaults.
func ParsePrices(s string) (Prices, error) {
	out := Prices{}
	for k, v := range DefaultPrices {
		out[k] = v
	}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	var p Prices
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, fmt.Errorf("WEBPILOT_PRICES: %w", err)
	}
	for k, v := range p {
		out[k] = v
	}
	return out, nil
}

// Lookup finds a model's price: exact name, then the longest prefix* match, then "*".
func (p Prices) Lookup(model string) Price {
	if pr, ok := p[model]; ok {
		return pr
	}
	best, bestLen := p["*"], -1
	for k, v := range p {
		if pre, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(model, pre) && len(pre) > bestLen {
			best, bestLen = v, len(pre)
		}
	}
	return best
}

// MicroCredits is the cost of a call: credits per million tokens equals
// micro-credits per token. Cached prompt tokens are billed at the cached
// price; the total is rounded up so no call is free.
func (p Prices) MicroCredits(model string, u Usage) int64 {
	pr := p.Lookup(model)
	uncached := max(u.PromptTokens-u.CachedTokens, 0)
	c := float64(uncached)*pr.Prompt + float64(u.CachedTokens)*pr.Cached + float64(u.CompletionTokens)*pr.Completion
	return int64(math.Ceil(c))
}
