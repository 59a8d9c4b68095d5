package configs

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The param table: every backend option that is a value sent to a provider or passed to a CLI
// (temperature, max_tokens, reasoning.effort, ...), with its type, the range its provider
// documents, and the backends that take it. Validation checks each value against it (a wrong
// one is an error naming file:line, key, value and what was expected); the backends read the
// typed values (Backend.Params) instead of the YAML as written. The key table says what massgen
// does with each key; TestParamTableMatchesKeyTable keeps the two in step.

// ParamKind is the type of an option's value.
type ParamKind string

const (
	KindNumber  ParamKind = "number"
	KindInteger ParamKind = "integer"
	KindBoolean ParamKind = "boolean"
	KindString  ParamKind = "string"
	KindEnum    ParamKind = "enum"
	KindObject  ParamKind = "object"
	// KindStrings is a list of strings; a single string is read as a list of one.
	KindStrings ParamKind = "list of strings"
	// KindStringOrList is a string or a list of strings, sent as written (stop).
	KindStringOrList ParamKind = "string or list of strings"
	// KindStringOrObject is a string or a mapping, sent as written (tool_choice).
	KindStringOrObject ParamKind = "string or object"
)

// Param is one entry of the param table.
type Param struct {
	// Name is the key under agents[].backend: "temperature", or "reasoning.effort" for a key
	// inside a mapping.
	Name string
	Kind ParamKind
	// Min and Max bound a number or integer (nil: unbounded on that side).
	Min, Max *float64
	// Enum lists the values of an enum; FoldCase accepts them in any case.
	Enum     []string
	FoldCase bool
	// On lists the backend families or types that take the option (see Key.On). The same name
	// may have several entries with disjoint On (temperature is 0-2 on openai, 0-1 on claude).
	On []string
}

func num(x float64) *float64 { return &x }

// Backend families and types that take the common sampling options.
var (
	openaiChat  = []string{famOpenAI, famChat}
	chatGemini  = []string{famChat, famGemini}
	claudeFam   = []string{famClaude}
	geminiFam   = []string{famGemini}
	openaiFam   = []string{famOpenAI}
	webSearchOn = []string{famOpenAI, famClaude, famGemini, "grok", "xai"}
	azureOnly   = []string{"azure_openai"}
	efforts     = []string{"none", "minimal", "low", "medium", "high", "xhigh"}
)

// geminiThinking are the keys of Gemini's thinking settings, at the top of the backend or
// inside thinking_config (or thinking) on gemini.
func geminiThinking(prefix string) []Param {
	return []Param{
		// -1: dynamic, 0: off; 32768 is the largest budget Gemini 2.5 Pro takes.
		{Name: prefix + "thinking_budget", Kind: KindInteger, Min: num(-1), Max: num(32768), On: geminiFam},
		{Name: prefix + "budget_tokens", Kind: KindInteger, Min: num(-1), Max: num(32768), On: geminiFam},
		{Name: prefix + "include_thoughts", Kind: KindBoolean, On: geminiFam},
		{Name: prefix + "thinking_level", Kind: KindEnum, Enum: []string{"minimal", "low", "medium", "high"}, FoldCase: true, On: geminiFam},
	}
}

var paramTable = concatParams(
	[]Param{
		// Sampling. OpenAI, Gemini and the OpenAI-compatible servers take temperature 0-2,
		// Anthropic 0-1; top_p is 0-1 everywhere.
		{Name: "temperature", Kind: KindNumber, Min: num(0), Max: num(2), On: []string{famOpenAI, famChat, famGemini}},
		{Name: "temperature", Kind: KindNumber, Min: num(0), Max: num(1), On: claudeFam},
		{Name: "top_p", Kind: KindNumber, Min: num(0), Max: num(1), On: apiBackends},
		// vLLM and SGLang read top_k -1 as "off"; Anthropic and Gemini take 0 and up.
		{Name: "top_k", Kind: KindInteger, Min: num(-1), On: chatOnly},
		{Name: "top_k", Kind: KindInteger, Min: num(0), On: []string{famClaude, famGemini}},
		{Name: "max_tokens", Kind: KindInteger, Min: num(1), On: apiBackends},
		{Name: "max_output_tokens", Kind: KindInteger, Min: num(1), On: []string{famOpenAI, famClaude, famGemini}},
		{Name: "max_completion_tokens", Kind: KindInteger, Min: num(1), On: chatOnly},
		{Name: "stop_sequences", Kind: KindStrings, On: []string{famClaude, famGemini}},
		{Name: "stop", Kind: KindStringOrList, On: chatOnly},
		{Name: "seed", Kind: KindInteger, On: chatGemini},
		{Name: "presence_penalty", Kind: KindNumber, Min: num(-2), Max: num(2), On: chatGemini},
		{Name: "frequency_penalty", Kind: KindNumber, Min: num(-2), Max: num(2), On: chatGemini},
		{Name: "min_p", Kind: KindNumber, Min: num(0), Max: num(1), On: chatOnly},
		{Name: "repetition_penalty", Kind: KindNumber, Min: num(0), On: chatOnly},
		{Name: "logit_bias", Kind: KindObject, On: chatOnly},
		{Name: "logprobs", Kind: KindBoolean, On: chatOnly},
		{Name: "top_logprobs", Kind: KindInteger, Min: num(0), Max: num(20), On: openaiChat},

		// Request options.
		{Name: "tool_choice", Kind: KindStringOrObject, On: []string{famOpenAI, famChat, famClaude}},
		{Name: "metadata", Kind: KindObject, On: []string{famOpenAI, famChat, famClaude}},
		// Tiers differ by provider and change often: any string.
		{Name: "service_tier", Kind: KindString, On: []string{famOpenAI, famChat, famClaude}},
		{Name: "user", Kind: KindString, On: openaiChat},
		{Name: "parallel_tool_calls", Kind: KindBoolean, On: openaiChat},
		{Name: "max_tool_calls", Kind: KindInteger, Min: num(1), On: openaiFam},
		{Name: "store", Kind: KindBoolean, On: openaiFam},
		{Name: "truncation", Kind: KindEnum, Enum: []string{"auto", "disabled"}, On: openaiFam},
		{Name: "include", Kind: KindStrings, On: openaiFam},
		{Name: "prompt_cache_key", Kind: KindString, On: openaiFam},
		{Name: "prompt_cache_retention", Kind: KindEnum, Enum: []string{"in-memory", "24h"}, On: openaiFam},
		{Name: "safety_identifier", Kind: KindString, On: openaiFam},
		{Name: "background", Kind: KindBoolean, On: openaiFam},
		{Name: "response_format", Kind: KindObject, On: chatOnly},
		{Name: "extra_body", Kind: KindObject, On: apiBackends},
		{Name: "chat_template_kwargs", Kind: KindObject, On: chatOnly},

		// Reasoning. Groq's Qwen models take "default" as well.
		{Name: "reasoning", Kind: KindObject, On: []string{famOpenAI, famChat, "codex"}},
		{Name: "reasoning.effort", Kind: KindEnum, Enum: efforts, On: openaiFam},
		{Name: "reasoning.effort", Kind: KindEnum, Enum: append(slices.Clone(efforts), "default"), On: chatOnly},
		{Name: "reasoning.effort", Kind: KindEnum, Enum: []string{"minimal", "low", "medium", "high", "xhigh"}, On: []string{"codex"}},
		{Name: "reasoning.summary", Kind: KindEnum, Enum: []string{"auto", "concise", "detailed"}, On: openaiFam},
		{Name: "reasoning_effort", Kind: KindEnum, Enum: append(slices.Clone(efforts), "default"), On: chatOnly},
		{Name: "reasoning_effort", Kind: KindEnum, Enum: []string{"minimal", "low", "medium", "high", "xhigh"}, On: []string{"codex"}},
		{Name: "text", Kind: KindObject, On: openaiChat},
		{Name: "text.verbosity", Kind: KindEnum, Enum: []string{"low", "medium", "high"}, On: openaiChat},
		{Name: "verbosity", Kind: KindEnum, Enum: []string{"low", "medium", "high"}, On: chatOnly},
		{Name: "thinking", Kind: KindObject, On: []string{famClaude, famGemini}},
		// Anthropic: a budget of at least 1024 tokens.
		{Name: "thinking.budget_tokens", Kind: KindInteger, Min: num(1024), On: claudeFam},
		{Name: "thinking_budget", Kind: KindInteger, Min: num(1024), On: claudeFam},
		{Name: "budget_tokens", Kind: KindInteger, Min: num(1024), On: claudeFam},
		{Name: "thinking_config", Kind: KindObject, On: geminiFam},
	},
	geminiThinking(""),
	geminiThinking("thinking_config."),
	geminiThinking("thinking."),
	[]Param{
		// MassGen's switches and provider settings.
		{Name: "enable_web_search", Kind: KindBoolean, On: webSearchOn},
		{Name: "enable_code_interpreter", Kind: KindBoolean, On: openaiFam},
		{Name: "enable_code_execution", Kind: KindBoolean, On: []string{famClaude, famGemini}},
		{Name: "betas", Kind: KindStrings, On: claudeFam},
		{Name: "api_version", Kind: KindString, On: azureOnly},
		{Name: "azure_endpoint", Kind: KindString, On: azureOnly},
		{Name: "endpoint", Kind: KindString, On: azureOnly},

		// Claude Code's CLI flags.
		{Name: "max_turns", Kind: KindInteger, Min: num(1), On: []string{famClaudeCode}},
		{Name: "max_thinking_tokens", Kind: KindInteger, Min: num(1), On: []string{famClaudeCode}},
	},
)

func concatParams(parts ...[]Param) []Param {
	var out []Param
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// ParamTable returns the param table, in documentation order.
func ParamTable() []Param { return slices.Clone(paramTable) }

// LookupParam returns the entry for an option name as it applies to a backend type: the one
// naming the type, else the one naming its family. ok is false when the backend does not take
// the option.
func LookupParam(name, backendType string) (Param, bool) {
	family := backendFamily(backendType)
	var fam *Param
	for i := range paramTable {
		p := &paramTable[i]
		if p.Name != name {
			continue
		}
		if slices.Contains(p.On, backendType) {
			return *p, true
		}
		if fam == nil && family != "" && slices.Contains(p.On, family) {
			fam = p
		}
	}
	if fam == nil {
		return Param{}, false
	}
	return *fam, true
}

// Expected describes the values the param takes: "a number from 0 to 2", "one of low, high".
func (p Param) Expected() string {
	switch p.Kind {
	case KindNumber, KindInteger:
		what := "a number"
		if p.Kind == KindInteger {
			what = "a whole number"
		}
		switch {
		case p.Min != nil && p.Max != nil:
			return fmt.Sprintf("%s from %s to %s", what, fmtNum(*p.Min), fmtNum(*p.Max))
		case p.Min != nil:
			return fmt.Sprintf("%s, at least %s", what, fmtNum(*p.Min))
		case p.Max != nil:
			return fmt.Sprintf("%s, at most %s", what, fmtNum(*p.Max))
		}
		return what
	case KindBoolean:
		return "true or false"
	case KindString:
		return "a string"
	case KindEnum:
		return "one of " + strings.Join(p.Enum, ", ")
	case KindObject:
		return "a mapping"
	case KindStrings:
		return "a list of strings"
	case KindStringOrList:
		return "a string or a list of strings"
	case KindStringOrObject:
		return "a string or a mapping"
	}
	return string(p.Kind)
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// typed checks a value against the param and returns it as the Go type backends read:
// float64 (number), int64 (integer), bool, string (string, enum), []string (list of strings),
// map[string]any (object), or the value as written (string or list, string or object).
// The error says what the value is and what was expected, without the key; an out-of-range
// one names the backend type (btype), since ranges differ between providers.
func (p Param) typed(v any, btype string) (any, error) {
	bad := func(what string) error {
		if what == p.Expected() {
			return fmt.Errorf("%s is not %s", showValue(v), what)
		}
		return fmt.Errorf("%s is not %s (expected %s)", showValue(v), what, p.Expected())
	}
	switch p.Kind {
	case KindNumber, KindInteger:
		f, ok := toFloat(v)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			if p.Kind == KindInteger {
				return nil, bad("a whole number")
			}
			return nil, bad("a number")
		}
		if p.Kind == KindInteger && (f != math.Trunc(f) || math.Abs(f) > 1<<53) {
			return nil, bad("a whole number")
		}
		if (p.Min != nil && f < *p.Min) || (p.Max != nil && f > *p.Max) {
			return nil, fmt.Errorf("%s is out of range for %s (expected %s)", showValue(v), btype, p.Expected())
		}
		if p.Kind == KindInteger {
			return int64(f), nil
		}
		return f, nil
	case KindBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, bad("true or false")
		}
		return b, nil
	case KindString:
		s, ok := scalarString(v)
		if !ok {
			return nil, bad("a string")
		}
		return s, nil
	case KindEnum:
		s, ok := v.(string)
		if !ok {
			return nil, bad("one of the known values")
		}
		for _, e := range p.Enum {
			if s == e || (p.FoldCase && strings.EqualFold(s, e)) {
				return s, nil
			}
		}
		return nil, fmt.Errorf("%s is not one of the known values (expected %s)", showValue(v), p.Expected())
	case KindObject:
		m, ok := normalizeValue(v).(map[string]any)
		if !ok {
			return nil, bad("a mapping")
		}
		return m, nil
	case KindStrings:
		if s, ok := v.(string); ok {
			return []string{s}, nil
		}
		l, ok := v.([]any)
		if !ok {
			return nil, bad("a list of strings")
		}
		out := make([]string, 0, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("item %d, %s, is not a string (expected %s)", i, showValue(e), p.Expected())
			}
			out = append(out, s)
		}
		return out, nil
	case KindStringOrList:
		if _, ok := v.(string); ok {
			return v, nil
		}
		l, ok := v.([]any)
		if !ok {
			return nil, bad("a string or a list of strings")
		}
		for i, e := range l {
			if _, ok := e.(string); !ok {
				return nil, fmt.Errorf("item %d, %s, is not a string (expected %s)", i, showValue(e), p.Expected())
			}
		}
		return slices.Clone(l), nil
	case KindStringOrObject:
		if _, ok := v.(string); ok {
			return v, nil
		}
		m, ok := normalizeValue(v).(map[string]any)
		if !ok {
			return nil, bad("a string or a mapping")
		}
		return m, nil
	}
	return nil, fmt.Errorf("unknown kind %q", p.Kind)
}

// toFloat reads a YAML number; a quoted number ("0.7", or ${VAR} in quotes) counts too, and is
// sent as a number.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return f, err == nil
	}
	return 0, false
}

// scalarString reads a string option; a plain number or date (api_version: 2024-10-21, which
// YAML reads as a date) is read as the text written.
func scalarString(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case int, int64, uint64:
		return fmt.Sprint(s), true
	case float64:
		return fmtNum(s), true
	case time.Time:
		if s.Equal(s.Truncate(24 * time.Hour)) {
			return s.Format(time.DateOnly), true
		}
		return s.Format(time.RFC3339), true
	}
	return "", false
}

// showValue prints a value as a message quotes it: strings quoted, mappings and lists by kind.
func showValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case nil:
		return "nothing"
	case map[string]any, map[any]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}

// normalizeValue turns map[any]any into map[string]any, recursively, so a value marshals to
// JSON.
func normalizeValue(v any) any {
	switch x := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = normalizeValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeValue(e)
		}
		return out
	}
	return v
}

// Params are a backend's option values, typed by the param table. Only options the backend
// type takes are present; each has the Go type of its kind (see Param.typed).
type Params struct {
	vals map[string]any
}

// ParamError is an option value the param table refuses.
type ParamError struct {
	Key string // under agents[].backend: "temperature", "reasoning.effort"
	Err error
}

func (e *ParamError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *ParamError) Unwrap() error { return e.Err }

// Params types the backend's options by the param table. A loaded config has been validated,
// so its errors are nil; a Backend built in code gets each wrong value as a *ParamError.
func (b Backend) Params() (Params, error) {
	p, errs := b.typedParams()
	var all []error
	for _, e := range errs {
		all = append(all, e)
	}
	return p, errors.Join(all...)
}

// typedParams types every option of the table the backend's type takes, in name order.
func (b Backend) typedParams() (Params, []*ParamError) {
	p := Params{vals: map[string]any{}}
	var errs []*ParamError
	names := make([]string, 0, len(b.Extra))
	for k := range b.Extra {
		names = append(names, k)
	}
	sort.Strings(names)
	check := func(name string, v any) {
		par, ok := LookupParam(name, b.Type)
		if !ok {
			return
		}
		tv, err := par.typed(v, b.Type)
		if err != nil {
			errs = append(errs, &ParamError{Key: name, Err: err})
			return
		}
		p.vals[name] = tv
	}
	for _, k := range names {
		v := b.Extra[k]
		check(k, v)
		m, ok := normalizeValue(v).(map[string]any)
		if !ok {
			continue
		}
		sub := make([]string, 0, len(m))
		for sk := range m {
			sub = append(sub, sk)
		}
		sort.Strings(sub)
		for _, sk := range sub {
			check(k+"."+sk, m[sk])
		}
	}
	return p, errs
}

// Has reports whether the option is set.
func (p Params) Has(name string) bool { _, ok := p.vals[name]; return ok }

// Value returns the option's typed value.
func (p Params) Value(name string) (any, bool) { v, ok := p.vals[name]; return v, ok }

// Float returns a number option.
func (p Params) Float(name string) (float64, bool) { f, ok := p.vals[name].(float64); return f, ok }

// Int returns an integer option.
func (p Params) Int(name string) (int64, bool) { n, ok := p.vals[name].(int64); return n, ok }

// Bool returns a boolean option (false when unset).
func (p Params) Bool(name string) bool { b, _ := p.vals[name].(bool); return b }

// String returns a string or enum option.
func (p Params) String(name string) (string, bool) { s, ok := p.vals[name].(string); return s, ok }

// Strings returns a list-of-strings option.
func (p Params) Strings(name string) ([]string, bool) { l, ok := p.vals[name].([]string); return l, ok }

// Object returns a mapping option.
func (p Params) Object(name string) (map[string]any, bool) {
	m, ok := p.vals[name].(map[string]any)
	return m, ok
}

// Names returns the options set, sorted.
func (p Params) Names() []string {
	out := make([]string, 0, len(p.vals))
	for k := range p.vals {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// WriteParamDoc writes the param table as the Markdown table docs/configuration.md holds
// (TestParamDoc keeps the page in step).
func WriteParamDoc(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| key | type | values | backends |\n| --- | --- | --- | --- |\n")
	for _, p := range paramTable {
		kind := string(p.Kind)
		values := "any"
		switch p.Kind {
		case KindNumber, KindInteger:
			values = strings.TrimPrefix(strings.TrimPrefix(p.Expected(), "a whole number"), "a number")
			values = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(values, ","), " from"))
			if values == "" {
				values = "any"
			}
		case KindEnum:
			quoted := make([]string, len(p.Enum))
			for i, e := range p.Enum {
				quoted[i] = "`" + e + "`"
			}
			values = strings.Join(quoted, ", ")
			if p.FoldCase {
				values += " (any case)"
			}
		case KindBoolean:
			values = "`true`, `false`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", p.Name, kind, values, strings.Join(p.On, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
