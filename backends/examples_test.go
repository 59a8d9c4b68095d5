package backends

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

// Every built-in example's backends are known types and build once their keys are set; the
// scripted demos play their first coordination step.
func TestBuiltinExamplesBuild(t *testing.T) {
	keys := map[string]string{"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com"}
	for _, vars := range keyVars {
		for _, v := range vars {
			keys[v] = "k"
		}
	}
	for _, p := range presets {
		for _, v := range p.keyVars {
			keys[v] = "k"
		}
	}
	env := wireEnv(keys)
	names := configs.Examples()
	if len(names) == 0 {
		t.Fatal("no built-in examples")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			cfg, _, err := configs.Load(configs.LoadOptions{Name: "@examples/" + name, BaseDir: t.TempDir(), Home: t.TempDir(), LookupEnv: env})
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			for _, a := range cfg.Agents {
				if err := CheckKey(a.Backend, env); err != nil {
					t.Errorf("agent %s: CheckKey: %v", a.ID, err)
				}
				b, err := New(a.Backend, Options{LookupEnv: env, AgentID: a.ID})
				if err != nil {
					t.Errorf("agent %s: New: %v", a.ID, err)
					continue
				}
				if a.Backend.Type != "scripted" || !strings.HasPrefix(name, "demo/") {
					continue
				}
				vars := map[string]string{"WORKSPACE": t.TempDir(), "TEMP_WORKSPACE": t.TempDir(), "CONTEXT_0": "/ctx", "AGENT_ANON": "agent1"}
				ctx, cancel := context.WithCancel(testContext(t))
				cancel() // steps that wait or block return at once; the others reply
				r, err := b.Generate(ctx, Request{Phase: "coordination", Vars: vars}, nil)
				if err == nil {
					for _, tc := range r.ToolCalls {
						if strings.Contains(string(tc.Arguments), "${") {
							t.Errorf("agent %s: unsubstituted variable in %s %s", a.ID, tc.Name, tc.Arguments)
						}
					}
				}
			}
		})
	}
}
