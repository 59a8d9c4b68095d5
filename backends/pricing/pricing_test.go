package pricing

import (
	"math"
	"strings"
	"testing"
)

func TestEmbeddedCatalogue(t *testing.T) {
	c := Default()
	if c.Date == "" {
		t.Error("the catalogue has no date")
	}
	for prov, models := range c.providers {
		for name, p := range models {
			if name == "*" {
				continue
			}
			if p.Input <= 0 || p.Output <= 0 || p.ContextWindow <= 0 {
				t.Errorf("%s/%s: %+v: every priced model needs input, output and a context window", prov, name, p)
			}
			if p.CachedInput > p.Input {
				t.Errorf("%s/%s: cached input %v costs more than input %v", prov, name, p.CachedInput, p.Input)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	c := Default().With(map[string]Price{"house-model": {Input: 1, Output: 2}, "gpt-5": {Input: 9, Output: 9}})
	tests := []struct {
		provider, model string
		want            float64 // Input
		ok              bool
	}{
		{"anthropic", "claude-sonnet-4-5", 3, true},
		{"anthropic", "claude-sonnet-4-5-20250929", 3, true}, // dated snapshot
		{"anthropic", "claude-3-5-haiku-latest", 0.8, true},  // -latest
		{"anthropic", "claude-sonnet-4-20250514", 3, true},   // an alias, dated
		{"openai", "gpt-4o-2024-08-06", 2.5, true},
		{"google", "models/gemini-2.5-flash", 0.3, true},
		{"openai", "gpt-5", 9, true},              // the config wins over the catalogue
		{"", "house-model", 1, true},              // config prices apply whatever the provider
		{"openai", "claude-sonnet-4-5", 0, false}, // a model is priced by its own provider only
		{"", "gpt-5-mini", 0, false},              // a custom server: unknown
		{"openai", "gpt-5-mini-new", 0, false},
		{"groq", "llama-3.3-70b", 0, false},
		{"scripted", "anything", 0, true}, // the scripted backend is free
	}
	for _, tt := range tests {
		p, ok := c.Lookup(tt.provider, tt.model)
		if ok != tt.ok || p.Input != tt.want {
			t.Errorf("Lookup(%q, %q) = %+v, %v; want input %v, %v", tt.provider, tt.model, p, ok, tt.want, tt.ok)
		}
	}
}

func TestCost(t *testing.T) {
	sonnet := Price{Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15}
	tests := []struct {
		name string
		p    Price
		t    Tokens
		want float64
	}{
		{"plain", sonnet, Tokens{Input: 1_000_000, Output: 100_000}, 3 + 1.5},
		{"cached read and write", sonnet, Tokens{Input: 1_000_000, CachedInput: 600_000, CacheWrite: 200_000, Output: 0}, 0.2*3 + 0.6*0.3 + 0.2*3.75},
		{"reasoning at the output rate", sonnet, Tokens{Output: 1_000_000, Reasoning: 400_000}, 15},
		{"own reasoning rate", Price{Output: 10, Reasoning: 20}, Tokens{Output: 1_000_000, Reasoning: 500_000}, 5 + 10},
		{"no cache price: billed as input", Price{Input: 2}, Tokens{Input: 1_000_000, CachedInput: 1_000_000}, 2},
		{"inconsistent counts are clamped", sonnet, Tokens{Input: 10, CachedInput: 1_000_000}, 0.3},
	}
	for _, tt := range tests {
		if got := tt.p.Cost(tt.t); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: cost = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCostSumAndString(t *testing.T) {
	var unknown Cost
	if unknown.String() != "unknown" {
		t.Errorf("zero Cost = %q, want unknown", unknown)
	}
	sum := Free.Plus(Known(0.5)).Plus(Known(1.25))
	if !sum.Known || sum.String() != "$1.75" {
		t.Errorf("sum = %+v %q", sum, sum)
	}
	if got := Free.Plus(Known(0.0123)).String(); got != "$0.0123" {
		t.Errorf("small = %q", got)
	}
	part := sum.Plus(unknown)
	if part.Known || part.String() != "unknown (at least $1.75)" {
		t.Errorf("partly unknown = %+v %q", part, part)
	}
}

func TestParseFile(t *testing.T) {
	models, err := ParseFile("p.yaml", []byte("date: 2026-01-01\nmodels:\n  m1: {input: 1, cached_input: 0.1, output: 4, context_window: 1000}\n"))
	if err != nil || models["m1"].CachedInput != 0.1 || models["m1"].ContextWindow != 1000 {
		t.Fatalf("ParseFile = %+v, %v", models, err)
	}
	for _, bad := range []struct{ data, want string }{
		{"models:\n  m1: {input: 1, ouptut: 4}\n", "line 2"},
		{"models:\n  m1: {input: -1, output: 4}\n", `model "m1": input`},
		{"models: [1, 2]\n", "p.yaml"},
	} {
		if _, err := ParseFile("p.yaml", []byte(bad.data)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseFile(%q) = %v, want an error naming %q", bad.data, err, bad.want)
		}
	}
}
