package configs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runnableTypes are the backend types a config may name and massgen runs.
func runnableTypes() []string {
	var out []string
	for _, bt := range backendTypeTable {
		if bt.Family != "" && bt.Status == Implemented {
			out = append(out, bt.Name)
		}
	}
	return out
}

// keyImplemented reports whether the key table says massgen acts on agents[].backend.NAME for
// a backend type: an implemented entry of its own, or one inside an open mapping (reasoning on
// openai is sent as written).
func keyImplemented(name, btype string) bool {
	path := "agents[].backend." + name
	if k, ok := lookupExact(path, btype); ok {
		return k.Status == Implemented
	}
	parent, _ := splitKeyPath(path)
	if parent == "agents[].backend" {
		return false
	}
	k, ok := lookupExact(parent, btype)
	return ok && k.Status == Implemented && k.Open
}

// notParams are the implemented backend keys that are not option values (the backend's
// identity, its tools, its workspace, its permissions): the param table leaves them out.
var notParams = []string{"type", "model", "api_key", "base_url", "cwd", "cwd_owned", "mcp_servers", "script",
	"custom_tools", "command_line_", "exclude_tools", "permissions", "enable_mcp_command_line"}

func isNotParam(name string) bool {
	for _, p := range notParams {
		if name == p || strings.HasPrefix(name, p+".") || strings.HasPrefix(name, p+"[]") || (strings.HasSuffix(p, "_") && strings.HasPrefix(name, p)) {
			return true
		}
	}
	return false
}

// The param table and the key table agree, for every backend type massgen runs: every option
// the param table types is a key the key table implements for that type, and every implemented
// backend key that is an option value has a param entry.
func TestParamTableMatchesKeyTable(t *testing.T) {
	types := runnableTypes()
	var names []string
	for _, p := range paramTable {
		if !slices.Contains(names, p.Name) {
			names = append(names, p.Name)
		}
	}
	for _, name := range names {
		for _, bt := range types {
			_, isParam := LookupParam(name, bt)
			if isParam && !keyImplemented(name, bt) {
				t.Errorf("param %s on %s: the key table does not implement agents[].backend.%s there", name, bt, name)
			}
		}
	}
	for _, k := range keyTable {
		name, ok := strings.CutPrefix(k.Path, "agents[].backend.")
		if !ok || isNotParam(name) || strings.HasSuffix(name, "*") {
			continue
		}
		for _, bt := range types {
			if !keyImplemented(name, bt) {
				continue
			}
			if _, ok := LookupParam(name, bt); !ok {
				t.Errorf("key agents[].backend.%s is implemented on %s but the param table has no entry for it there", name, bt)
			}
		}
	}
}

// Each option value is checked against the param table when a run would start (Preflight, which
// configs validate and the start of a run call): a wrong one is a problem at its line naming the
// key, the value and what was expected; a right one is typed for the backends.
func TestParamValues(t *testing.T) {
	tests := []struct {
		name, typ, key, value string
		want                  any    // the typed value, when valid
		problem               string // the problem, when not
	}{
		{"temperature word", "openai", "temperature", "hot", nil, `agents[0].backend.temperature: "hot" is not a number (expected a number from 0 to 2)`},
		{"max_tokens word", "openai", "max_tokens", "lots", nil, `agents[0].backend.max_tokens: "lots" is not a whole number (expected a whole number, at least 1)`},
		{"temperature claude range", "claude", "temperature", "1.5", nil, `agents[0].backend.temperature: 1.5 is out of range for claude (expected a number from 0 to 1)`},
		{"temperature gemini 1.5", "gemini", "temperature", "1.5", 1.5, ""},
		{"temperature openai 2", "openai", "temperature", "2", 2.0, ""},
		{"temperature openai 2.1", "openai", "temperature", "2.1", nil, "out of range for openai"},
		{"temperature negative", "grok", "temperature", "-0.1", nil, `-0.1 is out of range for grok (expected a number from 0 to 2)`},
		{"temperature int", "zai", "temperature", "1", 1.0, ""},
		{"temperature quoted", "openai", "temperature", `"0.7"`, 0.7, ""},
		{"temperature nan", "openai", "temperature", ".nan", nil, "is not a number"},
		{"temperature list", "openai", "temperature", "[1]", nil, "a list is not a number"},
		{"top_p above 1", "chatcompletion", "top_p", "1.2", nil, "1.2 is out of range for chatcompletion (expected a number from 0 to 1)"},
		{"max_tokens zero", "claude", "max_tokens", "0", nil, "0 is out of range for claude (expected a whole number, at least 1)"},
		{"max_tokens fraction", "gemini", "max_tokens", "10.5", nil, "10.5 is not a whole number"},
		{"max_tokens float whole", "gemini", "max_tokens", "1000.0", int64(1000), ""},
		{"max_tokens quoted", "openai", "max_tokens", `"4096"`, int64(4096), ""},
		{"top_k vllm off", "vllm", "top_k", "-1", int64(-1), ""},
		{"top_k claude negative", "claude", "top_k", "-1", nil, "out of range for claude"},
		{"presence_penalty", "groq", "presence_penalty", "2.5", nil, "expected a number from -2 to 2"},
		{"top_logprobs", "openai", "top_logprobs", "21", nil, "expected a whole number from 0 to 20"},
		{"boolean", "openai", "enable_web_search", "yes", nil, `agents[0].backend.enable_web_search: "yes" is not true or false`},
		{"boolean ok", "gemini", "enable_code_execution", "true", true, ""},
		{"enum", "openai", "truncation", "sometimes", nil, `"sometimes" is not one of the known values (expected one of auto, disabled)`},
		{"enum nested", "openai", "reasoning", "{effort: extreme}", nil, `agents[0].backend.reasoning.effort: "extreme" is not one of the known values`},
		{"enum codex", "codex", "reasoning", "{effort: none}", nil, "expected one of minimal, low, medium, high, xhigh"},
		{"enum chat default", "groq", "reasoning_effort", "default", "default", ""},
		{"enum codex reasoning_effort", "codex", "reasoning_effort", "max", nil, `"max" is not one of the known values (expected one of minimal, low, medium, high, xhigh)`},
		{"codex reasoning_effort", "codex", "reasoning_effort", "xhigh", "xhigh", ""},
		{"enum fold case", "gemini", "thinking_level", "HIGH", "HIGH", ""},
		{"verbosity", "openai", "text", "{verbosity: loud}", nil, "agents[0].backend.text.verbosity"},
		{"object", "claude", "thinking", "true", nil, "true is not a mapping"},
		{"claude thinking budget", "claude", "thinking", "{type: enabled, budget_tokens: 512}", nil, "agents[0].backend.thinking.budget_tokens: 512 is out of range for claude (expected a whole number, at least 1024)"},
		{"gemini thinking budget dynamic", "gemini", "thinking_budget", "-1", int64(-1), ""},
		{"gemini thinking_config", "gemini", "thinking_config", "{include_thoughts: 1}", nil, "agents[0].backend.thinking_config.include_thoughts: 1 is not true or false"},
		{"strings", "claude", "stop_sequences", "[a, 2]", nil, "item 1, 2, is not a string"},
		{"strings one", "claude", "betas", "files-api-2025-04-14", []string{"files-api-2025-04-14"}, ""},
		{"stop", "chatcompletion", "stop", "{a: b}", nil, "a mapping is not a string or a list of strings"},
		{"tool_choice", "openai", "tool_choice", "[auto]", nil, "a list is not a string or a mapping"},
		{"string from a date", "azure_openai", "api_version", "2024-10-21", "2024-10-21", ""},
		{"claude_code max_turns", "claude_code", "max_turns", "0", nil, "0 is out of range for claude_code"},
		// Not a param of this backend: the key table warns; the value is not checked or sent.
		{"ignored on claude", "claude", "reasoning_effort", "whatever", nil, ""},
		{"scripted", "scripted", "temperature", "hot", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			extra := ""
			switch tt.typ {
			case "scripted":
				extra = "\n    script: [{text: hi}]"
			case "azure_openai":
				extra = "\n    base_url: https://x.openai.azure.com"
			}
			text := fmt.Sprintf("agents:\n  - id: a\n    backend:\n      type: %s\n      model: m%s\n      %s: %s\n",
				tt.typ, strings.ReplaceAll(extra, "\n    ", "\n      "), tt.key, tt.value)
			cfg, _, err := LoadBytes("x.yaml", []byte(text), LoadOptions{BaseDir: t.TempDir()})
			if err != nil {
				t.Fatalf("Load: %v\n%s", err, text)
			}
			probs, _ := cfg.Preflight(func(string) (string, error) { return "/bin/true", nil })
			var msgs []string
			for _, p := range probs {
				msgs = append(msgs, p.String())
			}
			params, perr := cfg.Agents[0].Backend.Params()
			if tt.problem == "" {
				if len(probs) > 0 || perr != nil {
					t.Fatalf("problems %q, Params error %v", msgs, perr)
				}
				if tt.want == nil {
					if params.Has(tt.key) {
						v, _ := params.Value(tt.key)
						t.Errorf("%s typed as %#v on %s, which does not take it", tt.key, v, tt.typ)
					}
					return
				}
				v, _ := params.Value(tt.key)
				if fmt.Sprintf("%#v", v) != fmt.Sprintf("%#v", tt.want) {
					t.Errorf("typed %s = %#v, want %#v", tt.key, v, tt.want)
				}
				return
			}
			line := strings.Count(text[:strings.Index(text, tt.key+":")], "\n") + 1
			if len(probs) != 1 || !strings.Contains(msgs[0], tt.problem) || probs[0].Line != line || !strings.HasPrefix(msgs[0], fmt.Sprintf("x.yaml:%d: agents[0].backend.%s", line, tt.key)) {
				t.Errorf("problems %q, want one at x.yaml:%d containing %q", msgs, line, tt.problem)
			}
			if perr == nil || !strings.Contains(perr.Error(), strings.TrimPrefix(tt.problem, "agents[0].backend.")) {
				t.Errorf("Params error %v, want one containing %q", perr, tt.problem)
			}
		})
	}
}

// Every entry of the param table is well formed: a known kind, a range only on numbers and
// consistent, an enum only on enums, backends that exist, and no two entries for one name and
// backend.
func TestParamTableWellFormed(t *testing.T) {
	kinds := []ParamKind{KindNumber, KindInteger, KindBoolean, KindString, KindEnum, KindObject, KindStrings, KindStringOrList, KindStringOrObject}
	seen := map[string]bool{}
	for _, p := range paramTable {
		if !slices.Contains(kinds, p.Kind) {
			t.Errorf("%s: unknown kind %q", p.Name, p.Kind)
		}
		if (p.Min != nil || p.Max != nil) && p.Kind != KindNumber && p.Kind != KindInteger {
			t.Errorf("%s: a range on a %s", p.Name, p.Kind)
		}
		if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
			t.Errorf("%s: range %v > %v", p.Name, *p.Min, *p.Max)
		}
		if (len(p.Enum) > 0) != (p.Kind == KindEnum) {
			t.Errorf("%s: enum values %v on kind %s", p.Name, p.Enum, p.Kind)
		}
		if len(p.On) == 0 {
			t.Errorf("%s: no backend takes it", p.Name)
		}
		for _, on := range p.On {
			if _, ok := LookupBackendType(on); !ok && !slices.ContainsFunc(backendTypeTable, func(bt BackendType) bool { return bt.Family == on }) {
				t.Errorf("%s: On names %q, neither a backend type nor a family", p.Name, on)
			}
			if seen[p.Name+"/"+on] {
				t.Errorf("%s: two entries for %s", p.Name, on)
			}
			seen[p.Name+"/"+on] = true
		}
	}
}

// docs/configuration.md holds the param table as WriteParamDoc writes it, between its markers.
func TestParamDoc(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteParamDoc(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "docs", "configuration.md")
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- param table: generated from configs/params.go by `go test ./configs -run TestParamDoc -update` -->\n", "<!-- end of param table -->\n"
	i, j := bytes.Index(page, []byte(begin)), bytes.Index(page, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q and %q", path, begin, end)
	}
	got := append(append(append([]byte{}, page[:i+len(begin)]...), buf.Bytes()...), page[j:]...)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, page) {
		t.Errorf("%s's param table is out of date: run go test ./configs -run TestParamDoc -update", path)
	}
}
