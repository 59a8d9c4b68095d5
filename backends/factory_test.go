package backends

import (
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

func TestKnownTypes(t *testing.T) {
	types := KnownTypes()
	for _, want := range []string{"openai", "chatcompletion", "claude", "gemini", "claude_code", "scripted", "grok", "lmstudio", "vllm", "sglang", "zai", "azure_openai"} {
		if !slices.Contains(types, want) {
			t.Errorf("KnownTypes() lacks %q", want)
		}
	}
	if !slices.IsSorted(types) {
		t.Errorf("KnownTypes() not sorted: %v", types)
	}
}

func TestNewUnknownTypeListsKnownTypes(t *testing.T) {
	_, err := New(configs.Backend{Type: "gpt4all", Model: "x"}, Options{LookupEnv: wireEnv(nil)})
	if err == nil || !strings.Contains(err.Error(), `"gpt4all"`) || !strings.Contains(err.Error(), "chatcompletion") || !strings.Contains(err.Error(), "scripted") {
		t.Fatalf("err = %v", err)
	}
	if err := CheckKey(configs.Backend{Type: "gpt4all"}, wireEnv(nil)); err == nil || !strings.Contains(err.Error(), "known types") {
		t.Fatalf("CheckKey err = %v", err)
	}
}

func TestCheckKey(t *testing.T) {
	tests := []struct {
		name    string
		cfg     configs.Backend
		env     map[string]string
		wantErr []string // substrings; nil = no error
	}{
		{name: "openai missing", cfg: configs.Backend{Type: "openai"}, wantErr: []string{`"openai"`, "OPENAI_API_KEY"}},
		{name: "openai from env", cfg: configs.Backend{Type: "openai"}, env: map[string]string{"OPENAI_API_KEY": "sk"}},
		{name: "openai blank env var counts as missing", cfg: configs.Backend{Type: "openai"}, env: map[string]string{"OPENAI_API_KEY": "  "}, wantErr: []string{"OPENAI_API_KEY"}},
		{name: "api_key in config", cfg: configs.Backend{Type: "openai", APIKey: "sk-cfg"}},
		{name: "unexpanded api_key reference is no key", cfg: configs.Backend{Type: "openai", APIKey: "${MY_OPENAI_KEY}"}, wantErr: []string{"OPENAI_API_KEY"}},
		{name: "claude missing", cfg: configs.Backend{Type: "claude"}, wantErr: []string{`"claude"`, "ANTHROPIC_API_KEY"}},
		{name: "gemini missing names both variables", cfg: configs.Backend{Type: "gemini"}, wantErr: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}},
		{name: "gemini from GOOGLE_API_KEY", cfg: configs.Backend{Type: "gemini"}, env: map[string]string{"GOOGLE_API_KEY": "g"}},
		{name: "grok missing", cfg: configs.Backend{Type: "grok"}, env: map[string]string{"OPENAI_API_KEY": "sk"}, wantErr: []string{`"grok"`, "XAI_API_KEY"}},
		{name: "zai", cfg: configs.Backend{Type: "zai"}, env: map[string]string{"ZAI_API_KEY": "z"}},
		{name: "lmstudio needs none", cfg: configs.Backend{Type: "lmstudio"}},
		{name: "vllm needs none", cfg: configs.Backend{Type: "vllm", BaseURL: "http://gpu-box:8000/v1"}},
		{name: "chatcompletion on localhost needs none", cfg: configs.Backend{Type: "chatcompletion", BaseURL: "http://localhost:11434/v1"}},
		{name: "chatcompletion remote missing", cfg: configs.Backend{Type: "chatcompletion", BaseURL: "https://llm.example.com/v1"}, wantErr: []string{`"chatcompletion"`, "OPENAI_API_KEY"}},
		{name: "chatcompletion cerebras wants its own key", cfg: configs.Backend{Type: "chatcompletion", BaseURL: "https://api.cerebras.ai/v1"}, env: map[string]string{"OPENAI_API_KEY": "sk"}, wantErr: []string{"CEREBRAS_API_KEY"}},
		{name: "azure without endpoint", cfg: configs.Backend{Type: "azure_openai"}, env: map[string]string{"AZURE_OPENAI_API_KEY": "a"}, wantErr: []string{"AZURE_OPENAI_ENDPOINT"}},
		{name: "azure without key", cfg: configs.Backend{Type: "azure_openai", BaseURL: "https://r.openai.azure.com"}, wantErr: []string{"AZURE_OPENAI_API_KEY"}},
		{name: "azure complete", cfg: configs.Backend{Type: "azure_openai"}, env: map[string]string{"AZURE_OPENAI_API_KEY": "a", "AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com"}},
		{name: "scripted needs none", cfg: configs.Backend{Type: "scripted"}},
		{name: "claude_code needs none", cfg: configs.Backend{Type: "claude_code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckKey(tt.cfg, wireEnv(tt.env))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("CheckKey: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("CheckKey: want an error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestKeyInfo(t *testing.T) {
	tests := []struct {
		name string
		cfg  configs.Backend
		env  map[string]string
		want KeySource
	}{
		{"openai missing", configs.Backend{Type: "openai"}, nil, KeySource{Vars: []string{"OPENAI_API_KEY"}, Needed: true}},
		{"openai from env", configs.Backend{Type: "openai"}, map[string]string{"OPENAI_API_KEY": "sk"}, KeySource{Vars: []string{"OPENAI_API_KEY"}, Needed: true, From: "OPENAI_API_KEY"}},
		{"blank variable is no key", configs.Backend{Type: "openai"}, map[string]string{"OPENAI_API_KEY": " "}, KeySource{Vars: []string{"OPENAI_API_KEY"}, Needed: true}},
		{"api_key in config wins", configs.Backend{Type: "claude", APIKey: "k"}, map[string]string{"ANTHROPIC_API_KEY": "x"}, KeySource{Vars: []string{"ANTHROPIC_API_KEY"}, Needed: true, From: "api_key"}},
		{"unexpanded api_key is no key", configs.Backend{Type: "claude", APIKey: "${K}"}, nil, KeySource{Vars: []string{"ANTHROPIC_API_KEY"}, Needed: true}},
		{"gemini second variable", configs.Backend{Type: "gemini"}, map[string]string{"GOOGLE_API_KEY": "g"}, KeySource{Vars: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, Needed: true, From: "GOOGLE_API_KEY"}},
		{"cerebras by host", configs.Backend{Type: "chatcompletion", BaseURL: "https://api.cerebras.ai/v1"}, nil, KeySource{Vars: []string{"CEREBRAS_API_KEY"}, Needed: true}},
		{"local server needs none", configs.Backend{Type: "chatcompletion", BaseURL: "http://localhost:1/v1"}, nil, KeySource{Vars: []string{"OPENAI_API_KEY"}}},
		{"scripted needs none", configs.Backend{Type: "scripted"}, nil, KeySource{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := KeyInfo(tt.cfg, wireEnv(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Vars, tt.want.Vars) || got.Needed != tt.want.Needed || got.From != tt.want.From {
				t.Errorf("KeyInfo = %+v, want %+v", got, tt.want)
			}
		})
	}
	if _, err := KeyInfo(configs.Backend{Type: "opnai"}, wireEnv(nil)); err == nil {
		t.Error("unknown type: no error")
	}
}

// New fails the same way CheckKey does, so a caller that skipped CheckKey still gets the
// variable name.
func TestNewWithoutKeyNamesVariable(t *testing.T) {
	for _, typ := range []string{"openai", "grok", "chatcompletion"} {
		_, err := New(configs.Backend{Type: typ, Model: "m"}, Options{LookupEnv: wireEnv(nil)})
		if err == nil || !strings.Contains(err.Error(), "_API_KEY") {
			t.Errorf("%s: err = %v", typ, err)
		}
	}
}

func TestNewRequiresModel(t *testing.T) {
	for _, typ := range []string{"openai", "lmstudio"} {
		_, err := New(configs.Backend{Type: typ, APIKey: "k"}, Options{LookupEnv: wireEnv(nil)})
		if err == nil || !strings.Contains(err.Error(), "model") {
			t.Errorf("%s: err = %v", typ, err)
		}
	}
}
