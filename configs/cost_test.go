package configs

import (
	"strings"
	"testing"
)

// pricing: and the budget caps load into the catalogue; bad values are problems naming the
// line and the value.
func TestCostKeys(t *testing.T) {
	base := t.TempDir()
	write(t, base, "prices.yaml", "models:\n  house: {input: 2, output: 8}\n  shared: {input: 1, output: 1}\n")
	cfg, warnings := mustLoad(t, base, `agents:
  - id: a
    backend: {type: openai, model: house}
    max_cost_usd: 0.5
pricing:
  file: prices.yaml
  models:
    shared: {input: 3, cached_input: 0.3, output: 9, context_window: 1000}
    gpt-4.1: {input: 7, output: 7}
orchestrator:
  max_cost_usd: 2.5
`, env{})
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	if cfg.Orchestrator.MaxCostUSD != 2.5 || cfg.Agents[0].MaxCostUSD != 0.5 {
		t.Errorf("caps = %v, %v", cfg.Orchestrator.MaxCostUSD, cfg.Agents[0].MaxCostUSD)
	}
	cat := cfg.PriceCatalog()
	for _, tt := range []struct {
		model string
		input float64
	}{{"house", 2}, {"shared", 3}, {"gpt-4.1", 7}, {"gpt-5", 1.25}} {
		if p, ok := cat.Lookup("openai", tt.model); !ok || p.Input != tt.input {
			t.Errorf("%s: %+v %v, want input %v (config over file over catalogue)", tt.model, p, ok, tt.input)
		}
	}

	for _, bad := range []struct{ yaml, want string }{
		{"orchestrator:\n  max_cost_usd: -1\n", "config.yaml:5: orchestrator.max_cost_usd: -1"},
		{"pricing:\n  models:\n    m: {input: -2, output: 1}\n", "config.yaml:6: pricing.models.m: input: -2"},
		{"pricing:\n  models:\n    m:\n      input: 1\n      ouptut: 1\n", "config.yaml:8: pricing.models.m.ouptut: unknown price key"},
		{"pricing:\n  file: missing.yaml\n", "pricing.file: open " + base},
		{"pricing:\n  file: prices.yaml\n", ""}, // fine
	} {
		_, _, err := load(t, base, "agents:\n  - id: a\n    backend: {type: openai, model: m}\n"+bad.yaml, env{})
		switch {
		case bad.want == "" && err != nil:
			t.Errorf("%q: %v", bad.yaml, err)
		case bad.want != "" && (err == nil || !strings.Contains(err.Error(), bad.want)):
			t.Errorf("%q: error %v, want %q", bad.yaml, err, bad.want)
		}
	}
}
