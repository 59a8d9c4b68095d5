package backends

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen/configs"
)

// ErrGeminiCLIMissing is returned by a gemini_cli backend when the `gemini` CLI is not on PATH.
var ErrGeminiCLIMissing = errors.New("backend gemini_cli needs the `gemini` CLI (Gemini CLI) on PATH; install it (npm install -g @google/gemini-cli) or use type: gemini")

// geminiDriver runs `gemini -p ... --output-format stream-json`, one run per turn, in a private
// home (GEMINI_CLI_HOME) whose settings list massgen's tools as the only core tools (every
// built-in tool is left out, and the policy the setting makes denies any other), name the bridge
// as the only MCP server, and turn telemetry and update checks off. Massgen's system prompt
// replaces the CLI's own (GEMINI_SYSTEM_MD). Its model requests go through the model gate,
// which checks each one and holds the API key.
type geminiDriver struct {
	model string
	gcfg  cliGateConfig
}

// geminiDefaultURL is where the Gemini CLI's requests go without base_url.
const geminiDefaultURL = "https://generativelanguage.googleapis.com"

func newGeminiCLI(cfg configs.Backend, o Options) (Backend, error) {
	key, _ := resolveKey(cfg, keyVars["gemini_cli"], o.LookupEnv)
	d := &geminiDriver{model: strings.TrimSpace(cfg.Model), gcfg: cliGateConfig{protocol: "gemini", upstream: cmpOr(strings.TrimSpace(cfg.BaseURL), geminiDefaultURL), key: key, client: o.HTTPClient}}
	return newCLIBackend(d, cfg.Model, cliEnv(os.Environ(), nil), o.Logger), nil
}

func (d *geminiDriver) kind() string                         { return "gemini_cli" }
func (d *geminiDriver) program() string                      { return "gemini" }
func (d *geminiDriver) missing() error                       { return ErrGeminiCLIMissing }
func (d *geminiDriver) gate() *cliGateConfig                 { return &d.gcfg }
func (d *geminiDriver) userLine(text, session string) []byte { return nil }

func (d *geminiDriver) command(t cliTurn) (cliCommand, error) {
	core := make([]string, 0, len(t.tools))
	for _, tool := range t.tools {
		core = append(core, "mcp_"+ccServerName+"_"+tool.Name)
	}
	settings := map[string]any{
		"mcpServers": map[string]any{ccServerName: map[string]any{
			"httpUrl": t.bridgeTokenURL,
			// The CLI reads the token from its environment: the settings hold no secret.
			"headers": map[string]any{"Authorization": "Bearer $MASSGEN_BRIDGE_TOKEN"},
			"trust":   true,
		}},
		// An allowlist of core tools leaves every built-in tool out, and its policy denies any
		// tool not listed; massgen's tools are listed.
		"tools":     map[string]any{"core": core, "useRipgrep": false},
		"mcp":       map[string]any{"allowed": []string{ccServerName}},
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
	}
	dir := filepath.Join(t.home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return cliCommand{}, fmt.Errorf("gemini_cli: %w", err)
	}
	data, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), data, 0o600); err != nil {
		return cliCommand{}, fmt.Errorf("gemini_cli: %w", err)
	}
	system := filepath.Join(t.runDir, "system.md")
	if err := os.WriteFile(system, []byte(t.system), 0o600); err != nil {
		return cliCommand{}, fmt.Errorf("gemini_cli: %w", err)
	}
	args := []string{"--skip-trust", "--output-format", "stream-json", "--approval-mode", "default"}
	if d.model != "" {
		args = append(args, "--model", d.model)
	}
	if t.session != "" {
		args = append(args, "--resume", t.session)
	}
	// The prompt is read from stdin; -p makes the run headless.
	args = append(args, "--prompt", " ")
	env := []string{
		"GEMINI_CLI_HOME=" + t.home, "GEMINI_API_KEY=" + t.token, "GOOGLE_GEMINI_BASE_URL=" + t.gate,
		"GEMINI_SYSTEM_MD=" + system, "MASSGEN_BRIDGE_TOKEN=" + t.bridgeToken,
		// One process: without this the CLI starts a second node with a larger heap.
		"GEMINI_CLI_NO_RELAUNCH=true",
	}
	return cliCommand{args: args, env: env, stdin: []byte(t.text)}, nil
}

// geminiEvent is one line of the Gemini CLI's stream-json output.
type geminiEvent struct {
	Type      string `json:"type"` // init, message, tool_use, tool_result, error, result
	SessionID string `json:"session_id"`
	Role      string `json:"role"`
	Content   string `json:"content"`
	ToolName  string `json:"tool_name"`
	ToolID    string `json:"tool_id"`
	Severity  string `json:"severity"`
	Message   string `json:"message"`
	Status    string `json:"status"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"stats"`
}

func (d *geminiDriver) parse(line []byte, st *cliParse) ([]cliEvent, error) {
	var e geminiEvent
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, fmt.Errorf("unreadable output line: %w", err)
	}
	switch e.Type {
	case "init":
		return []cliEvent{{kind: evSession, session: e.SessionID}}, nil
	case "message":
		if e.Role == "assistant" && e.Content != "" {
			return []cliEvent{{kind: evText, text: e.Content}}, nil
		}
	case "tool_use":
		if name, ok := strings.CutPrefix(e.ToolName, "mcp_"+ccServerName+"_"); ok {
			return []cliEvent{{kind: evCall, id: e.ToolID, name: name}}, nil
		}
		return []cliEvent{{kind: evStray, name: e.ToolName}}, nil
	case "error":
		if e.Severity == "error" {
			st.text.Reset()
			st.text.WriteString(e.Message)
		}
	case "result":
		ev := cliEvent{kind: evResult}
		if e.Stats != nil {
			ev.usage = Usage{InputTokens: e.Stats.InputTokens, OutputTokens: e.Stats.OutputTokens}
		}
		if e.Status != "success" {
			msg := st.text.String()
			if e.Error != nil && e.Error.Message != "" {
				msg = e.Error.Message
			}
			ev.err = fmt.Errorf("gemini_cli: the gemini CLI ended its turn with %s: %s", cmpOr(e.Status, "an error"), cmpOr(msg, "no details"))
		}
		return []cliEvent{ev}, nil
	}
	return nil, nil
}
