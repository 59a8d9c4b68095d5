package backends

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/massgen-go/massgen/configs"
)

// ErrClaudeCodeMissing is returned by a claude_code backend when the `claude` CLI is not on PATH.
var ErrClaudeCodeMissing = errors.New("backend claude_code needs the `claude` CLI (Claude Code) on PATH; install it (npm install -g @anthropic-ai/claude-code) or use type: claude")

// ErrClaudeCodeOwnTools is returned when the claude CLI offers the model tools of its own (Bash,
// Write, ...): those would bypass massgen's permission checks, so the session is ended.
var ErrClaudeCodeOwnTools = errors.New("the claude CLI offered its own tools, which would bypass massgen's permission checks; massgen ended the session (this CLI version may not honour --tools \"\")")

// claudeDriver runs the `claude` CLI (Claude Code) in stream-json mode. Claude Code's own tools
// are off (--tools ""), the only MCP server it may use (--strict-mcp-config) is the bridge, and
// its init message, which lists the tools it offers and the state of its MCP servers, is checked
// before any tool runs.
type claudeDriver struct {
	args []string // the config's options as CLI flags (--model=..., --max-turns=...)
}

// newClaudeCode builds the backend. It needs no API key of its own: the CLI uses its own login,
// or ANTHROPIC_API_KEY (the config's api_key is passed as such).
func newClaudeCode(cfg configs.Backend, o Options) (Backend, error) {
	d := &claudeDriver{}
	if m := strings.TrimSpace(cfg.Model); m != "" {
		d.args = append(d.args, "--model="+m)
	}
	params, err := cfg.Params()
	if err != nil {
		return nil, fmt.Errorf("backend claude_code: %w", err)
	}
	for _, k := range []string{"max_thinking_tokens", "max_turns"} {
		if n, ok := params.Int(k); ok { // at least 1: the param table says so
			d.args = append(d.args, "--"+strings.ReplaceAll(k, "_", "-")+"="+strconv.FormatInt(n, 10))
		}
	}
	return newCLIBackend(d, cfg.Model, ccEnv(os.Environ(), cfg), o.Logger), nil
}

// ccEnv is the claude CLI's environment: the base every CLI gets, its own login and settings
// variables (ANTHROPIC_*, CLAUDE_CODE_*, CLAUDE_CONFIG_DIR, and the cloud credentials of
// Bedrock and Vertex), the config's key and endpoint, and the switches massgen needs.
func ccEnv(base []string, cfg configs.Backend) []string {
	env := cliEnv(base, func(name string) bool {
		return strings.HasPrefix(name, "ANTHROPIC_") || strings.HasPrefix(name, "CLAUDE_CODE_") || name == "CLAUDE_CONFIG_DIR" ||
			strings.HasPrefix(name, "AWS_") || name == "GOOGLE_APPLICATION_CREDENTIALS" || name == "CLOUD_ML_REGION" || strings.HasPrefix(name, "VERTEX_REGION_")
	})
	if k := strings.TrimSpace(cfg.APIKey); k != "" && !strings.Contains(k, "${") {
		env = append(env, "ANTHROPIC_API_KEY="+k)
	}
	if u := strings.TrimSpace(cfg.BaseURL); u != "" {
		env = append(env, "ANTHROPIC_BASE_URL="+u)
	}
	// The CLI connects MCP servers in the background by default and may send its first request
	// before the bridge is connected (its init message then says "pending"): connect first.
	env = append(env, "MCP_CONNECTION_NONBLOCKING=0", "DISABLE_AUTOUPDATER=1")
	return env
}

func (d *claudeDriver) kind() string         { return "claude_code" }
func (d *claudeDriver) program() string      { return "claude" }
func (d *claudeDriver) missing() error       { return ErrClaudeCodeMissing }
func (d *claudeDriver) gate() *cliGateConfig { return nil }

// ccFlags turn Claude Code into a model that can only use massgen's tools: no tools of its own,
// no MCP server but the bridge (whose tools need no prompt: massgen decides each call), no
// project or local settings (the working directory is a private empty one anyway).
var ccFlags = []string{
	"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
	"--tools", "",
	"--strict-mcp-config",
	"--allowedTools=mcp__" + ccServerName,
	"--permission-mode=default",
	"--setting-sources=user",
}

func (d *claudeDriver) command(t cliTurn) (cliCommand, error) {
	// The bridge's address and secret go in a private file, never on the command line.
	cfgPath := filepath.Join(t.runDir, "mcp.json")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		ccServerName: map[string]any{"type": "http", "url": t.bridge},
	}})
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return cliCommand{}, fmt.Errorf("claude_code: %w", err)
	}
	args := append([]string{}, ccFlags...)
	args = append(args, "--append-system-prompt="+t.system)
	args = append(args, d.args...)
	if t.session != "" {
		args = append(args, "--resume="+t.session)
	}
	args = append(args, "--mcp-config="+cfgPath)
	return cliCommand{args: args, stdin: d.userLine(t.text, t.session), keepStdin: true}, nil
}

// userLine is one user message in stream-json.
func (d *claudeDriver) userLine(text, session string) []byte {
	if session == "" {
		session = "default"
	}
	data, _ := json.Marshal(map[string]any{
		"type":               "user",
		"message":            map[string]any{"role": "user", "content": text},
		"parent_tool_use_id": nil,
		"session_id":         session,
	})
	return append(data, '\n')
}

// ccMessage is one line of the claude CLI's stream-json output (the fields massgen reads).
type ccMessage struct {
	Type      string `json:"type"` // system, assistant, user, result, stream_event, ...
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// system/init: what the session offers the model.
	Tools      []string `json:"tools"`
	MCPServers []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers"`
	// assistant and user messages.
	Message *struct {
		ID      string    `json:"id"`
		Content []ccBlock `json:"content"`
		Usage   *ccUsage  `json:"usage"`
	} `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	// result.
	Result  string   `json:"result"`
	IsError bool     `json:"is_error"`
	Usage   *ccUsage `json:"usage"`
	Errors  []string `json:"errors"`
	// TotalCostUSD is what the CLI says the turn cost (its own price list).
	TotalCostUSD float64 `json:"total_cost_usd"`
}

// ccBlock is a content block of an assistant message.
type ccBlock struct {
	Type string `json:"type"` // text, tool_use, thinking, ...
	Text string `json:"text"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ccUsage is the Messages API usage the CLI reports; cached input counts as input.
type ccUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

func (u *ccUsage) usage() Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, OutputTokens: u.OutputTokens,
		CachedInputTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
}

func (d *claudeDriver) parse(line []byte, _ *cliParse) ([]cliEvent, error) {
	var m ccMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("unreadable output line: %w", err)
	}
	switch m.Type {
	case "system":
		if m.Subtype != "init" {
			return nil, nil
		}
		return []cliEvent{{kind: evSession, session: m.SessionID, err: checkInit(m)}}, nil
	case "assistant":
		if m.Message == nil || (m.ParentToolUseID != nil && *m.ParentToolUseID != "") {
			return nil, nil
		}
		var evs []cliEvent
		if m.Message.Usage != nil {
			evs = append(evs, cliEvent{kind: evMsgUsage, id: m.Message.ID, usage: m.Message.Usage.usage()})
		}
		for _, bl := range m.Message.Content {
			switch bl.Type {
			case "text":
				evs = append(evs, cliEvent{kind: evText, text: bl.Text})
			case "tool_use":
				if name, ok := strings.CutPrefix(bl.Name, ccToolPrefix); ok {
					evs = append(evs, cliEvent{kind: evCall, id: bl.ID, name: name})
				} else if !ccOwnTool(bl.Name) {
					evs = append(evs, cliEvent{kind: evStray, name: bl.Name})
				}
			}
		}
		return evs, nil
	case "result":
		ev := cliEvent{kind: evResult, session: m.SessionID, usage: m.Usage.usage(), text: m.Result}
		ev.usage.CostUSD = m.TotalCostUSD // the whole turn's: it stands for the turn's calls
		if m.IsError || (m.Subtype != "" && m.Subtype != "success") {
			why := strings.TrimSpace(m.Result)
			if why == "" {
				why = strings.Join(m.Errors, "; ")
			}
			ev.err = fmt.Errorf("claude_code: the claude CLI ended its turn with %s: %s", cmpOr(m.Subtype, "an error"), cmpOr(why, "no details"))
		}
		return []cliEvent{ev}, nil
	}
	return nil, nil
}

// checkInit refuses a session that offers the model anything but the bridge's tools, or that
// is not connected to the bridge.
func checkInit(m ccMessage) error {
	var own []string
	for _, t := range m.Tools {
		if !ccOwnTool(t) {
			own = append(own, t)
		}
	}
	if len(own) > 0 {
		return fmt.Errorf("%w: %s", ErrClaudeCodeOwnTools, strings.Join(own, ", "))
	}
	for _, s := range m.MCPServers {
		if s.Name == ccServerName {
			if s.Status != "connected" {
				return fmt.Errorf("claude_code: the claude CLI is not connected to massgen's tool server (status %q)", s.Status)
			}
			return nil
		}
	}
	return errors.New("claude_code: the claude CLI did not load massgen's tool server")
}

// ccOwnTool reports whether a tool the CLI offers is one of the bridge's (or the MCP resource
// readers, which can only read from the bridge, the one server it has).
func ccOwnTool(name string) bool {
	return strings.HasPrefix(name, ccToolPrefix) || name == "ListMcpResourcesTool" || name == "ReadMcpResourceTool"
}
