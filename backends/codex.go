package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen/configs"
)

// ErrCodexMissing is returned by a codex backend when the `codex` CLI is not on PATH.
var ErrCodexMissing = errors.New("backend codex needs the `codex` CLI (OpenAI Codex) on PATH; install it (npm install -g @openai/codex) or use type: openai")

// codexDriver runs `codex exec --json`, one run per turn, with none of Codex's own tools:
// shell, patch, image, web, agent and plugin tools switched off, the sandbox read-only and
// approvals never (so were a tool left on, it could change nothing), and the model catalog
// rewritten so that no model is offered a tool of its own kind (apply_patch, tool search) and
// every model's base instructions are massgen's system prompt. Its model requests go through
// the model gate, which checks each one and holds the API key.
type codexDriver struct {
	model  string
	effort string // model_reasoning_effort
	gcfg   cliGateConfig
	env    []string // for `codex debug models`
	// extraArgs are added to the command line (tests: a CLI that offers a tool of its own).
	extraArgs []string

	catalogOnce sync.Once
	catalog     []map[string]any // the CLI's model catalog; nil when it could not be read
}

// codexDefaultURL is where codex's requests go without base_url.
const codexDefaultURL = "https://api.openai.com/v1"

func newCodex(cfg configs.Backend, o Options) (Backend, error) {
	key, _ := resolveKey(cfg, keyVars["codex"], o.LookupEnv)
	d := &codexDriver{model: strings.TrimSpace(cfg.Model), gcfg: cliGateConfig{protocol: "responses", upstream: cmpOr(strings.TrimSpace(cfg.BaseURL), codexDefaultURL), key: key, client: o.HTTPClient}}
	// reasoning.effort, or reasoning_effort (minimal ... xhigh, checked by the param table),
	// becomes model_reasoning_effort.
	params, err := cfg.Params()
	if err != nil {
		return nil, fmt.Errorf("backend codex: %w", err)
	}
	for _, k := range []string{"reasoning.effort", "reasoning_effort"} {
		if e, ok := params.String(k); ok {
			d.effort = e
		}
	}
	env := cliEnv(os.Environ(), nil)
	d.env = env
	return newCLIBackend(d, cfg.Model, env, o.Logger), nil
}

func (d *codexDriver) kind() string                         { return "codex" }
func (d *codexDriver) program() string                      { return "codex" }
func (d *codexDriver) missing() error                       { return ErrCodexMissing }
func (d *codexDriver) gate() *cliGateConfig                 { return &d.gcfg }
func (d *codexDriver) userLine(text, session string) []byte { return nil }

// codexOff are the Codex features that give the model tools of Codex's own.
var codexOff = []string{
	"shell_tool", "unified_exec", "code_mode_host", "view_image", "multi_agent", "goals", "apps", "plugins",
	"browser_use", "computer_use", "image_generation", "tool_suggest", "skill_search", "sleep_tool",
}

func (d *codexDriver) command(t cliTurn) (cliCommand, error) {
	program, err := exec.LookPath("codex")
	if err != nil {
		return cliCommand{}, ErrCodexMissing
	}
	args := []string{"exec", "--json", "--skip-git-repo-check", "--ignore-rules", "-s", "read-only"}
	for _, f := range codexOff {
		args = append(args, "--disable", f)
	}
	set := func(k string, v any) {
		b, _ := json.Marshal(v) // a JSON string or number is a TOML one
		args = append(args, "-c", k+"="+string(b))
	}
	set("approval_policy", "never")
	set("web_search", "disabled")
	set("check_for_update_on_startup", false)
	set("model_provider", "massgen")
	set("model_providers.massgen.name", "massgen")
	set("model_providers.massgen.base_url", t.gate)
	set("model_providers.massgen.env_key", "MASSGEN_GATE_TOKEN")
	set("model_providers.massgen.wire_api", "responses")
	set("mcp_servers."+ccServerName+".url", t.bridgeTokenURL)
	set("mcp_servers."+ccServerName+".bearer_token_env_var", "MASSGEN_BRIDGE_TOKEN")
	set("mcp_servers."+ccServerName+".default_tools_approval_mode", "approve")
	if d.model != "" {
		args = append(args, "-m", d.model)
	}
	if d.effort != "" {
		set("model_reasoning_effort", d.effort)
	}
	env := []string{"CODEX_HOME=" + t.home, "MASSGEN_GATE_TOKEN=" + t.token, "MASSGEN_BRIDGE_TOKEN=" + t.bridgeToken}
	if cat := d.rewriteCatalog(program, t.home, t.system); cat != nil {
		p := filepath.Join(t.runDir, "models.json")
		if err := os.WriteFile(p, cat, 0o600); err != nil {
			return cliCommand{}, fmt.Errorf("codex: %w", err)
		}
		set("model_catalog_json", p)
	} else {
		set("developer_instructions", t.system)
	}
	args = append(args, d.extraArgs...)
	if t.session != "" {
		args = append(args, "resume", t.session)
	}
	args = append(args, "-")
	return cliCommand{args: args, env: env, stdin: []byte(t.text)}, nil
}

// rewriteCatalog is the CLI's model catalog with every model's own tools off and massgen's
// system prompt as its instructions, with an entry for the configured model when the catalog
// has none. nil when the catalog could not be read (the switches and the gate still hold).
func (d *codexDriver) rewriteCatalog(program, home, system string) []byte {
	d.catalogOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, program, "debug", "models")
		cmd.Env = append(append([]string{}, d.env...), "CODEX_HOME="+home)
		cmd.Dir = home
		out, err := cmd.Output()
		if err != nil {
			return
		}
		var cat struct {
			Models []map[string]any `json:"models"`
		}
		if json.Unmarshal(bytes.TrimSpace(out), &cat) == nil && len(cat.Models) > 0 {
			d.catalog = cat.Models
		}
	})
	if d.catalog == nil {
		return nil
	}
	models := make([]map[string]any, 0, len(d.catalog)+1)
	found := false
	for _, m := range d.catalog {
		models = append(models, codexModel(m, "", system))
		found = found || m["slug"] == d.model
	}
	if d.model != "" && !found {
		models = append(models, codexModel(d.catalog[0], d.model, system))
	}
	data, err := json.Marshal(map[string]any{"models": models})
	if err != nil {
		return nil
	}
	return data
}

// codexModel is a catalog entry with the model's own tools off.
func codexModel(m map[string]any, slug, system string) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	if slug != "" {
		c["slug"], c["display_name"], c["visibility"] = slug, slug, "hide"
	}
	c["shell_type"] = "disabled"
	c["apply_patch_tool_type"] = nil
	c["supports_search_tool"] = false
	c["experimental_supported_tools"] = []any{}
	c["input_modalities"] = []any{"text"}
	c["base_instructions"] = system
	delete(c, "model_messages") // its instructions template would replace base_instructions
	return c
}

// codexEvent is one line of `codex exec --json`.
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Item     *struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Text    string `json:"text"`
		Message string `json:"message"`
		Server  string `json:"server"`
		Tool    string `json:"tool"`
		Command string `json:"command"`
	} `json:"item"`
	Usage *struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"` // of input_tokens
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (d *codexDriver) parse(line []byte, _ *cliParse) ([]cliEvent, error) {
	var e codexEvent
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, fmt.Errorf("unreadable output line: %w", err)
	}
	switch e.Type {
	case "thread.started":
		return []cliEvent{{kind: evSession, session: e.ThreadID}}, nil
	case "item.started", "item.completed":
		if e.Item == nil {
			return nil, nil
		}
		switch e.Item.Type {
		case "agent_message":
			if e.Type == "item.completed" && e.Item.Text != "" {
				return []cliEvent{{kind: evText, text: e.Item.Text}}, nil
			}
		case "mcp_tool_call":
			if e.Type != "item.started" {
				return nil, nil
			}
			if e.Item.Server == ccServerName {
				return []cliEvent{{kind: evCall, id: e.Item.ID, name: e.Item.Tool}}, nil
			}
			return nil, fmt.Errorf("the codex CLI called %s of MCP server %q, which is not massgen's; massgen stopped the agent", e.Item.Tool, e.Item.Server)
		case "command_execution", "file_change", "web_search", "collab_tool_call":
			// Never offered (the gate saw to that): a CLI that runs one anyway is not to be run.
			return nil, fmt.Errorf("%w: it ran %s %s; massgen stopped the agent", ErrCLIOwnTools, e.Item.Type, e.Item.Command)
		}
	case "turn.completed":
		ev := cliEvent{kind: evResult}
		if e.Usage != nil {
			ev.usage = Usage{InputTokens: e.Usage.InputTokens, OutputTokens: e.Usage.OutputTokens, CachedInputTokens: e.Usage.CachedInputTokens}
		}
		return []cliEvent{ev}, nil
	case "turn.failed":
		msg := "no details"
		if e.Error != nil && e.Error.Message != "" {
			msg = e.Error.Message
		}
		return []cliEvent{{kind: evResult, err: fmt.Errorf("codex: the codex CLI's turn failed: %s", msg)}}, nil
	}
	return nil, nil
}
