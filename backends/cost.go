package backends

import (
	"net/url"
	"strings"

	"github.com/massgen-go/massgen/configs"
)

// pricingHosts are the providers' own API hosts, by the name the price catalogue
// (backends/pricing) files their models under.
var pricingHosts = map[string]string{
	"api.openai.com":                    "openai",
	"api.anthropic.com":                 "anthropic",
	"generativelanguage.googleapis.com": "google",
	"api.x.ai":                          "xai",
}

// typeProvider is the catalogue provider of each backend type talking to its provider's own
// API (no base_url, or one on that provider's host).
var typeProvider = map[string]string{
	"openai":         "openai",
	"chatcompletion": "openai",
	"claude":         "anthropic",
	"claude_code":    "anthropic",
	"codex":          "openai",
	"gemini_cli":     "google",
	"gemini":         "google",
	"grok":           "xai",
	"xai":            "xai",
	"scripted":       "scripted",
}

// PricingProvider names whose price list applies to an agent's model calls, as the price
// catalogue files providers: "openai", "anthropic", "google", "xai", "scripted", another preset's
// type (groq, cerebras, ...: not in the catalogue), or "" for a server massgen cannot tell (a
// custom or local base_url). Models the config prices (pricing:) are found whatever it is.
func PricingProvider(cfg configs.Backend) string {
	if cfg.BaseURL != "" {
		u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
		if err != nil {
			return ""
		}
		return pricingHosts[strings.ToLower(u.Hostname())]
	}
	if p, ok := typeProvider[cfg.Type]; ok {
		return p
	}
	if _, ok := presets[cfg.Type]; ok {
		return cfg.Type
	}
	return ""
}

// costReporter is a backend (or a CLI driver) whose provider reports what each reply cost
// (Usage.CostUSD).
type costReporter interface{ reportsCost() bool }

// reportsCost: the claude CLI's result carries total_cost_usd.
func (d *claudeDriver) reportsCost() bool { return true }

func (b *cliBackend) reportsCost() bool {
	r, ok := b.drv.(costReporter)
	return ok && r.reportsCost()
}

// maxUsage is the larger of each count (a CLI repeats a message's running usage).
func maxUsage(a, b Usage) Usage {
	return Usage{InputTokens: max(a.InputTokens, b.InputTokens), OutputTokens: max(a.OutputTokens, b.OutputTokens),
		CachedInputTokens: max(a.CachedInputTokens, b.CachedInputTokens), CacheWriteTokens: max(a.CacheWriteTokens, b.CacheWriteTokens),
		ReasoningTokens: max(a.ReasoningTokens, b.ReasoningTokens), CostUSD: max(a.CostUSD, b.CostUSD)}
}

// subUsage is a - b, count by count.
func subUsage(a, b Usage) Usage {
	return Usage{InputTokens: a.InputTokens - b.InputTokens, OutputTokens: a.OutputTokens - b.OutputTokens,
		CachedInputTokens: a.CachedInputTokens - b.CachedInputTokens, CacheWriteTokens: a.CacheWriteTokens - b.CacheWriteTokens,
		ReasoningTokens: a.ReasoningTokens - b.ReasoningTokens, CostUSD: a.CostUSD - b.CostUSD}
}

// ReportsCost says whether b's provider reports the cost of its replies itself (the claude CLI's
// total_cost_usd), so its spending is known without a catalogue price.
func ReportsCost(b Backend) bool {
	r, ok := b.(costReporter)
	return ok && r.reportsCost()
}
