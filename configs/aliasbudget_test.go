package configs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// laughs is a "billion laughs" YAML fragment: nine levels, each naming the level below nine
// times (9^9 nodes once expanded). Each level is a line indent+key(l)+"&l<l> "+value: level 0
// is first; above it a list of aliases ("list") or a mapping merging the level below nine times
// ("merge", its merge key repeated).
func laughs(indent string, key func(l int) string, first, style string) string {
	var b strings.Builder
	for l := 0; l < 9; l++ {
		v := first
		switch {
		case l == 0:
		case style == "merge":
			v = "{" + strings.TrimSuffix(strings.Repeat(fmt.Sprintf("<<: *l%d, ", l-1), 9), ", ") + "}"
		default:
			v = "[" + strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", l-1), 9), ", ") + "]"
		}
		fmt.Fprintf(&b, "%s%s&l%d %s\n", indent, key(l), l, v)
	}
	return b.String()
}

func entry(l int) string { return fmt.Sprintf("l%d: ", l) }
func item(int) string    { return "- " }

// within runs f, failing the test if it has not returned in a time a linear walk never needs
// (the exponential walks it guards against take hours). No speed is measured: a goroutine
// still expanding is left behind only when the test fails.
func finishes(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s: still expanding aliases after 2 minutes", what)
		return nil
	}
}

// TestAliasBombRefused: a billion-laughs document, under a typed section, an untyped one
// (orchestrator.coordination's extra keys, a map[string]any) and with repeated merge keys in
// typed mappings, is refused (not expanded) with the file and line of the alias at fault.
func TestAliasBombRefused(t *testing.T) {
	const agent = "agents:\n  - id: a\n    backend: {type: openai, model: gpt-4o-mini}\n"
	cases := []struct {
		name, text string
	}{
		{"untyped coordination", agent + "orchestrator:\n  coordination:\n    bomb:\n" +
			laughs("      ", entry, "[lol, lol, lol, lol, lol, lol, lol, lol, lol]", "list")},
		{"untyped backend key", "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o-mini\n      bomb:\n" +
			laughs("        ", entry, "[lol, lol, lol, lol, lol, lol, lol, lol, lol]", "list")},
		{"typed agents list", "agents:\n" + laughs("  ", item, "{id: a, backend: {type: openai, model: gpt-4o-mini}}", "list")},
		{"typed merge keys", agent + "orchestrator:\n  context_paths:\n" + laughs("    ", item, "{path: ., permission: read}", "merge")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			var cfg *Config
			var warns []Warning
			err := finishes(t, "Load", func() error {
				var err error
				cfg, warns, err = load(t, base, c.text, nil)
				return err
			})
			if cfg != nil || warns != nil {
				t.Fatalf("a refused document gave a config or warnings: %v %v", cfg, warns)
			}
			probs := problems(t, err)
			if len(probs) != 1 || probs[0].File != "config.yaml" || probs[0].Line == 0 ||
				!strings.Contains(probs[0].Message, "alias *l") || !strings.Contains(probs[0].Message, "refused") {
				t.Fatalf("want one problem naming the alias, got %v", err)
			}
			lines := strings.Split(c.text, "\n")
			if l := lines[probs[0].Line-1]; !strings.Contains(l, "*l") {
				t.Fatalf("line %d has no alias: %q", probs[0].Line, l)
			}
		})
	}
}

// TestAliasBombRefusedStrict: DecodeStrict (the project rules file, parsed before the user
// approved it) refuses the same.
func TestAliasBombRefusedStrict(t *testing.T) {
	var out Permissions
	text := "deny: []\nhooks:\n  pre_tool_use:\n" + laughs("    ", item, "{command: x}", "merge")
	err := finishes(t, "DecodeStrict", func() error { return DecodeStrict("permissions.yaml", []byte(text), &out) })
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].File != "permissions.yaml" ||
		!strings.Contains(ve.Problems[0].Message, "alias *l") {
		t.Fatalf("want the alias refused, got %v", err)
	}
}

// TestAliasesAsUsed: anchors, aliases and merge keys as configs use them (a backend shared by
// agents, a list reused) load as before, whatever the budget.
func TestAliasesAsUsed(t *testing.T) {
	base := t.TempDir()
	var agents strings.Builder
	agents.WriteString("x-backend: &be\n  type: openai\n  model: gpt-4o-mini\n  temperature: 0.2\nx-tools: &tools [read_file, write_file]\nagents:\n")
	for i := range 40 {
		fmt.Fprintf(&agents, "  - id: a%d\n    backend:\n      <<: *be\n      allowed_tools: *tools\n", i)
	}
	cfg, _ := mustLoad(t, base, agents.String(), nil)
	if len(cfg.Agents) != 40 || cfg.Agents[39].Backend.Model != "gpt-4o-mini" {
		t.Fatalf("agents: %+v", cfg.Agents)
	}
}

// BenchmarkAliasBombRefused: refusing a billion-laughs config (the walks stop at the budget).
func BenchmarkAliasBombRefused(b *testing.B) {
	data := []byte("agents:\n  - id: a\n    backend: {type: openai, model: gpt-4o-mini}\norchestrator:\n  coordination:\n    bomb:\n" +
		laughs("      ", entry, "[lol, lol, lol, lol, lol, lol, lol, lol, lol]", "list"))
	base := b.TempDir()
	for b.Loop() {
		if _, _, err := LoadBytes("bomb.yaml", data, LoadOptions{BaseDir: base}); err == nil {
			b.Fatal("loaded")
		}
	}
}
