package display

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/orchestrator"
)

// Spend is what a turn's agents used and cost, as the end-of-run summary and `massgen sessions
// show` print it (SpendLines): per agent, the tokens by kind and the cost; the turn's cost, its
// budget and the date of the prices.
type Spend struct {
	Agents     []AgentSpend // sorted by agent
	Total      pricing.Cost
	MaxCostUSD float64 // the turn's budget (0: none)
	PricesDate string
}

// AgentSpend is one agent's part of a Spend.
type AgentSpend struct {
	Agent string
	Usage backends.Usage
	Cost  pricing.Cost
}

// SpendOf is a result's Spend.
func SpendOf(res *orchestrator.Result) Spend {
	s := Spend{Total: res.TotalCost, MaxCostUSD: res.MaxCostUSD, PricesDate: res.PricesDate}
	for _, id := range slices.Sorted(maps.Keys(res.Usage)) {
		s.Agents = append(s.Agents, AgentSpend{Agent: id, Usage: res.Usage[id], Cost: res.Cost[id]})
	}
	return s
}

// SpendLines are the lines of a Spend: "Tokens: ..." (per agent, the kinds beside the totals when
// there are some), "Cost: ..." (the turn's, then per agent; a model without a price is
// "unknown", never $0) and, with a budget, "Budget: ...". None when no agent used a token.
func SpendLines(s Spend) []string {
	var tokens, costs []string
	var in, out int64
	for _, a := range s.Agents {
		u := a.Usage
		in, out = in+u.InputTokens, out+u.OutputTokens
		tokens = append(tokens, a.Agent+" "+TokenText(u))
		c := a.Cost.String()
		if !a.Cost.Known {
			c = "unknown (no price for its model)"
			if a.Cost.USD > 0 {
				c = "unknown (no price for its model; at least " + pricing.Format(a.Cost.USD) + ")"
			}
		}
		costs = append(costs, a.Agent+" "+c)
	}
	if in == 0 && out == 0 {
		return nil
	}
	lines := []string{
		fmt.Sprintf("Tokens: %s (total %d)", termtext.Line(strings.Join(tokens, ", ")), in+out),
		fmt.Sprintf("Cost: %s (%s)", s.Total, termtext.Line(strings.Join(costs, ", "))),
	}
	if s.PricesDate != "" {
		lines[1] = strings.TrimSuffix(lines[1], ")") + "; prices of " + s.PricesDate + ")"
	}
	if s.MaxCostUSD > 0 {
		lines = append(lines, fmt.Sprintf("Budget: %s, %d%% spent", pricing.Format(s.MaxCostUSD), int(100*s.Total.USD/s.MaxCostUSD)))
	}
	return lines
}

// TokenText is a usage as "1200 in (800 cached, 100 cache write) / 340 out (120 reasoning)", the
// kinds left out when there are none.
func TokenText(u backends.Usage) string {
	var inKinds, outKinds []string
	if u.CachedInputTokens > 0 {
		inKinds = append(inKinds, fmt.Sprintf("%d cached", u.CachedInputTokens))
	}
	if u.CacheWriteTokens > 0 {
		inKinds = append(inKinds, fmt.Sprintf("%d cache write", u.CacheWriteTokens))
	}
	if u.ReasoningTokens > 0 {
		outKinds = append(outKinds, fmt.Sprintf("%d reasoning", u.ReasoningTokens))
	}
	text := fmt.Sprintf("%d in", u.InputTokens)
	if len(inKinds) > 0 {
		text += " (" + strings.Join(inKinds, ", ") + ")"
	}
	text += fmt.Sprintf(" / %d out", u.OutputTokens)
	if len(outKinds) > 0 {
		text += " (" + strings.Join(outKinds, ", ") + ")"
	}
	return text
}

// CostJSON is a cost for JSON output: the amount in USD (rounded to micro-dollars), or null
// when it is unknown (a model without a price), never 0 for unknown.
func CostJSON(c pricing.Cost) json.RawMessage {
	if !c.Known {
		return json.RawMessage("null")
	}
	b, _ := json.Marshal(pricing.Round(c.USD))
	return b
}
