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

// MaxImageTokens bounds what one attached image can count as prompt tokens.
// An OpenAI-compatible endpoint prices a high-detail viewport screenshot at
// about 1,100 tokens; the bound leaves margin for larger tilings.
const MaxImageTokens = 2000

// maxTokensPerMessage bounds the framing tokens around each message.
const maxTokensPerMessage = 8

// MaxUsage is the most a request can count as usage: every byte of text a
// prompt token (no tokenizer makes a token of less than one byte), a bound
// per image and per message, and the full completion allowance. Reserving
// a call at this usage means its reported cost can never exceed the
// reservation unless the endpoint reports more than it could have used.
func MaxUsage(r Request) Usage {
	prompt := 0
	for _, m := range r.Messages {
		prompt += len(m.Text) + maxTokensPerMessage + len(m.Images)*MaxImageTokens
	}
	completion := r.MaxTokens
	if completion <= 0 {
		completion = DefaultMaxTokens
	}
	return Usage{PromptTokens: prompt, CompletionTokens: completion}
}
