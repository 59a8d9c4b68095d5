package backends

import (
	"encoding/json"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

func TestFinishArguments(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `{}`},
		{"  ", `{}`},
		{`{"path":"a"}`, `{"path":"a"}`},
		// A model that emits broken JSON must not break logging or the tool layer: the raw
		// text is kept as a string, and the tool reports the bad arguments.
		{`{"path":"a"`, `{"_raw":"{\"path\":\"a\""}`},
	}
	for _, tt := range tests {
		got := finishArguments(tt.in)
		if string(got) != tt.want || !json.Valid(got) {
			t.Errorf("finishArguments(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestToolParametersNeverNil(t *testing.T) {
	p := toolParameters(ToolSpec{Name: "list"})
	if p["type"] != "object" {
		t.Errorf("schema = %v", p)
	}
	if callArguments(ToolCall{}) != "{}" {
		t.Errorf("empty arguments not sent as {}")
	}
}

func TestOpenAIIdentity(t *testing.T) {
	env := wireEnv(map[string]string{"OPENAI_API_KEY": "k", "XAI_API_KEY": "x"})
	for _, tt := range []struct{ typ, provider string }{{"openai", "openai"}, {"grok", "grok"}, {"chatcompletion", "chatcompletion"}} {
		b, err := New(wireConfig(tt.typ, "m-1"), Options{LookupEnv: env})
		if err != nil {
			t.Fatal(err)
		}
		if b.Provider() != tt.provider || b.Model() != "m-1" {
			t.Errorf("%s: Provider/Model = %s/%s", tt.typ, b.Provider(), b.Model())
		}
	}
}

func wireConfig(typ, model string) configs.Backend { return configs.Backend{Type: typ, Model: model} }
