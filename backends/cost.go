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

// costReporter is a backend whose provider reports what each reply cost (Usage.CostUSD).
type costReporter interface{ reportsCost() bool }

// ReportsCost says whether b's provider reports the cost of its replies itself (the claude CLI's
// total_cost_usd), so its spending is known without a catalogue price.
func ReportsCost(b Backend) bool {
	r, ok := b.(costReporter)
	return ok && r.reportsCost()
}
