// Package pricing turns tokens into money: one embedded, dated catalogue of what each provider
// charges per model (input, cached input read and written, output and reasoning tokens) and
// each model's context window, extended or overridden per model from the config. A model the
// catalogue does not know has an unknown cost, never a cost of 0.
package pricing

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed catalog.json
var catalogJSON []byte

// Price is what a model costs, in USD per million tokens. CachedInput and CacheWrite left at 0
// are billed as Input (no discount is assumed), Reasoning left at 0 as Output (every provider in
// the catalogue bills reasoning tokens as output).
type Price struct {
	Input       float64 `json:"input" yaml:"input"`
	CachedInput float64 `json:"cached_input,omitempty" yaml:"cached_input,omitempty"`
	CacheWrite  float64 `json:"cache_write,omitempty" yaml:"cache_write,omitempty"`
	Output      float64 `json:"output" yaml:"output"`
	Reasoning   float64 `json:"reasoning,omitempty" yaml:"reasoning,omitempty"`
	// ContextWindow is the model's context window in tokens (0: not known).
	ContextWindow int64 `json:"context_window,omitempty" yaml:"context_window,omitempty"`
}

// Check reports the first negative value of p.
func (p Price) Check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"input", p.Input}, {"cached_input", p.CachedInput}, {"cache_write", p.CacheWrite}, {"output", p.Output}, {"reasoning", p.Reasoning}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s: %v is not a price (USD per million tokens, 0 or more)", f.name, f.v)
		}
	}
	if p.ContextWindow < 0 {
		return fmt.Errorf("context_window: %d must not be negative", p.ContextWindow)
	}
	return nil
}

// Tokens are the tokens of one or more model calls, by kind. Input counts every input token,
// cached ones included; Output every output token, reasoning included (as the providers report
// them once normalised by the backends).
type Tokens struct {
	Input       int64 // every input token
	CachedInput int64 // of Input: read from the provider's prompt cache
	CacheWrite  int64 // of Input: written to the prompt cache
	Output      int64 // every output token
	Reasoning   int64 // of Output: reasoning ("thinking") tokens
}

// Cost is what tokens cost at p, in USD.
func (p Price) Cost(t Tokens) float64 {
	cachedRate := orElse(p.CachedInput, p.Input)
	writeRate := orElse(p.CacheWrite, p.Input)
	reasonRate := orElse(p.Reasoning, p.Output)
	cached, written := max(t.CachedInput, 0), max(t.CacheWrite, 0)
	plain := max(t.Input-cached-written, 0)
	reasoning := min(max(t.Reasoning, 0), max(t.Output, 0))
	out := max(t.Output-reasoning, 0)
	usd := float64(plain)*p.Input + float64(cached)*cachedRate + float64(written)*writeRate +
		float64(out)*p.Output + float64(reasoning)*reasonRate
	return usd / 1e6
}

func orElse(v, fallback float64) float64 {
	if v == 0 {
		return fallback
	}
	return v
}

// Catalog maps provider and model to a price. It is immutable: With returns a new one.
type Catalog struct {
	// Date is when the embedded prices were taken from the providers' price lists.
	Date      string
	providers map[string]map[string]Price // provider -> model (aliases included) -> price
	overrides map[string]Price            // model -> price, whatever the provider (the config's)
}

type catalogFile struct {
	Date      string                                 `json:"date"`
	Providers map[string]map[string]catalogFileEntry `json:"providers"`
}

type catalogFileEntry struct {
	Price
	Aliases []string `json:"aliases,omitempty"`
}

// Default is the embedded catalogue.
func Default() *Catalog {
	c, err := parseCatalog(catalogJSON)
	if err != nil { // the embedded file is tested: this cannot happen in a built binary
		panic("pricing: the embedded catalogue: " + err.Error())
	}
	return c
}

func parseCatalog(raw []byte) (*Catalog, error) {
	var f catalogFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	c := &Catalog{Date: f.Date, providers: map[string]map[string]Price{}}
	for prov, models := range f.Providers {
		m := map[string]Price{}
		for name, e := range models {
			if err := e.Check(); err != nil {
				return nil, fmt.Errorf("%s/%s: %w", prov, name, err)
			}
			m[name] = e.Price
			for _, a := range e.Aliases {
				m[a] = e.Price
			}
		}
		c.providers[prov] = m
	}
	return c, nil
}

// With returns the catalogue with the prices of models (by model name, for every provider)
// added or replacing the catalogue's.
func (c *Catalog) With(models map[string]Price) *Catalog {
	if len(models) == 0 {
		return c
	}
	n := *c
	n.overrides = maps.Clone(c.overrides)
	if n.overrides == nil {
		n.overrides = map[string]Price{}
	}
	maps.Copy(n.overrides, models)
	return &n
}

// Lookup is the price of model at provider (a provider name as ProviderOf-style mappings give:
// "openai", "anthropic", "google", "xai", "scripted", ...; "" when unknown). A model the config
// prices is found whatever the provider; catalogue entries match the model name as given or
// without a date suffix ("-20250929", "-2024-08-06") or "-latest", and a leading "models/".
func (c *Catalog) Lookup(provider, model string) (Price, bool) {
	names := candidates(model)
	for _, n := range names {
		if p, ok := c.overrides[n]; ok {
			return p, true
		}
	}
	models := c.providers[provider]
	for _, n := range names {
		if p, ok := models[n]; ok {
			return p, true
		}
	}
	if p, ok := models["*"]; ok { // a provider whose every model is priced alike (scripted)
		return p, true
	}
	return Price{}, false
}

var dateSuffix = regexp.MustCompile(`-(?:[0-9]{8}|[0-9]{4}-[0-9]{2}-[0-9]{2}|latest)$`)

// candidates are the names a model is looked up by, most specific first.
func candidates(model string) []string {
	names := []string{model}
	base := strings.TrimPrefix(model, "models/")
	if base != model {
		names = append(names, base)
	}
	if s := dateSuffix.ReplaceAllString(base, ""); s != base {
		names = append(names, s)
	}
	return names
}

// Cost is an amount of money that may be unknown (a model without a price). The zero value is
// unknown, so a cost never reads as $0 by accident; Free is the known $0.
type Cost struct {
	USD   float64
	Known bool
}

// Free is a known cost of $0, the start of a sum.
var Free = Cost{Known: true}

// Known makes a known cost of usd.
func Known(usd float64) Cost { return Cost{USD: usd, Known: true} }

// Plus adds o: the sum is known only when both are; USD sums what is known.
func (c Cost) Plus(o Cost) Cost { return Cost{USD: c.USD + o.USD, Known: c.Known && o.Known} }

// String is "$1.23", "$0.0123" (four decimals below a dollar) or "unknown"; a cost partly
// unknown is "unknown (at least $0.0123)".
func (c Cost) String() string {
	switch {
	case c.Known:
		return Format(c.USD)
	case c.USD > 0:
		return "unknown (at least " + Format(c.USD) + ")"
	}
	return "unknown"
}

// Format writes usd as money: two decimals from a dollar up, four below.
func Format(usd float64) string {
	if usd >= 1 {
		return fmt.Sprintf("$%.2f", usd)
	}
	return fmt.Sprintf("$%.4f", usd)
}

// Round rounds usd to micro-dollars, for machine-readable output (no float noise).
func Round(usd float64) float64 { return math.Round(usd*1e6) / 1e6 }

// File is a prices file (config `pricing.file`): YAML or JSON, the same shape as the config's
// `pricing.models`, under `models:`.
//
//	date: 2026-01-15          # optional: when the prices were taken
//	models:
//	  my-model: {input: 1.0, cached_input: 0.1, output: 4.0, context_window: 128000}
type File struct {
	Date   string           `yaml:"date,omitempty"`
	Models map[string]Price `yaml:"models"`
}

// ParseFile reads a prices file; name is used in messages. Unknown keys and negative prices
// are errors naming the line or the model.
func ParseFile(name string, data []byte) (map[string]Price, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f File
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("pricing file %s: %w", name, err)
	}
	for _, m := range slices.Sorted(maps.Keys(f.Models)) {
		if err := f.Models[m].Check(); err != nil {
			return nil, fmt.Errorf("pricing file %s: model %q: %w", name, m, err)
		}
	}
	return f.Models, nil
}
