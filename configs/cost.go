package configs

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/backends/pricing"
)

// priceKeys are the keys of one model's price.
var priceKeys = []string{"input", "cached_input", "cache_write", "output", "reasoning", "context_window"}

// checkCost checks the budget caps and pricing: (prices 0 or more, only known keys), and
// reads pricing.file once, so a run never finds it missing or malformed half-way.
func (c *Config) checkCost(d *document, home string) []Problem {
	var probs []Problem
	add := func(path, format string, args ...any) {
		probs = append(probs, Problem{File: d.file, Line: d.lineOf(path), Key: path, Message: path + ": " + fmt.Sprintf(format, args...)})
	}
	if v := c.Orchestrator.MaxCostUSD; v < 0 {
		add("orchestrator.max_cost_usd", "%v: a budget in USD must not be negative (0: no cap)", v)
	}
	for i, a := range c.Agents {
		if a.MaxCostUSD < 0 {
			add(fmt.Sprintf("agents[%d].max_cost_usd", i), "%v: a budget in USD must not be negative (0: no cap)", a.MaxCostUSD)
		}
	}
	for _, m := range slices.Sorted(maps.Keys(c.Pricing.Models)) {
		p := "pricing.models." + m
		if err := c.Pricing.Models[m].Check(); err != nil {
			add(p, "%v", err)
		}
		// The decoder ignores unknown keys: a misspelt price would silently be 0.
		for key := range d.lines {
			rest, ok := strings.CutPrefix(key, p+".")
			if ok && !strings.Contains(rest, ".") && !slices.Contains(priceKeys, rest) {
				add(key, "unknown price key (known: %s)", strings.Join(priceKeys, ", "))
			}
		}
	}
	if f := c.Pricing.File; f != "" {
		c.Pricing.File = resolveAgainst(f, c.BaseDir, home)
		data, err := os.ReadFile(c.Pricing.File)
		if err != nil {
			add("pricing.file", "%v", err)
			return probs
		}
		if c.prices, err = pricing.ParseFile(c.Pricing.File, data); err != nil {
			add("pricing.file", "%v", err)
		}
	}
	return probs
}

// PriceCatalog is the price catalogue of the run: the embedded one, with pricing.file's models
// and then pricing.models added or replacing its entries.
func (c *Config) PriceCatalog() *pricing.Catalog {
	return pricing.Default().With(c.prices).With(c.Pricing.Models)
}
