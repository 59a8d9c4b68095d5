// Package configs owns the YAML configuration: its schema, loading, .env and ${VAR} expansion,
// validation with file:line messages, path relocation under .massgen/, and the built-in example
// configs embedded with go:embed.
package configs

import (
	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/internal/vocab"
)

// Config is a loaded MassGen-compatible configuration. Field names follow MassGen's YAML keys.
// After Resolve, every path field is absolute and relocated (see relocate.go).
type Config struct {
	// Agents holds `agents:` or, for single-agent files, the one `agent:` entry.
	Agents       []Agent      `yaml:"agents,omitempty" json:"agents,omitempty"`
	Orchestrator Orchestrator `yaml:"orchestrator,omitempty" json:"orchestrator,omitempty"`
	// TimeoutSettings is MassGen's top-level `timeout_settings:` block.
	TimeoutSettings TimeoutSettings `yaml:"timeout_settings,omitempty" json:"timeout_settings,omitempty"`
	UI              UI              `yaml:"ui,omitempty" json:"ui,omitempty"`
	// Permissions is the global `permissions:` section (modes, allow/deny rules, hooks).
	Permissions Permissions `yaml:"permissions,omitempty" json:"permissions,omitempty"`
	// CommandSandbox is how commands are confined (vocab.SandboxMode; "" is auto: see
	// sandbox.Effective). none is an explicit opt-out, warned about.
	CommandSandbox vocab.SandboxMode `yaml:"command_sandbox,omitempty" json:"command_sandbox,omitempty"`
	// Pricing extends or overrides the embedded price catalogue (configs/cost.go).
	Pricing Pricing `yaml:"pricing,omitempty" json:"pricing,omitempty"`
	// CommandLimits bound every agent's commands (commandlimits.go).
	CommandLimits *CommandLimits `yaml:"command_limits,omitempty" json:"command_limits,omitempty"`

	// Source is the file the config was read from ("@examples/NAME" for built-ins); not YAML.
	Source string `yaml:"-" json:"-"`
	// BaseDir is the directory relative paths are resolved against (the current directory).
	BaseDir string `yaml:"-" json:"-"`
	// ProjectDir is the folder holding .massgen/ (internal/project.Find: the current directory
	// or the project above it); "" means BaseDir.
	ProjectDir string `yaml:"-" json:"-"`
	// Env holds the merged .env values (built-in defaults < ~/.massgen/.env <
	// ~/.config/massgen/.env < ./.env); the real environment is consulted on top of it by
	// LookupEnv.
	Env map[string]string `yaml:"-" json:"-"`
	// EnvFilesLoaded are the .env files Env was read from (absolute, lowest priority first):
	// they hold massgen's API keys, so they are private paths for every agent.
	EnvFilesLoaded []string `yaml:"-" json:"-"`

	realEnv func(string) (string, bool) // the real environment (LoadOptions.LookupEnv)
	home    string                      // for ~ in paths added after Load
	raw     []byte                      // the file as written
	prices  map[string]pricing.Price    // pricing.file's models, read at Load
	file    string                      // the file's name in messages
	lines   map[string]int              // line of each key path ("agents[1].backend.type")
	// sharedCWD notes, by agent index, a workspace split from a folder several agents name.
	sharedCWD map[int]string
	// mappedPerms marks, by agent index, permissions that include backend.permissions rules.
	mappedPerms map[int]bool
}

// Agent is one entry of `agents:`.
type Agent struct {
	ID            string  `yaml:"id" json:"id"`
	Backend       Backend `yaml:"backend" json:"backend"`
	SystemMessage string  `yaml:"system_message,omitempty" json:"system_message,omitempty"`
	// ReadPaths and WritePaths are the folder guard (spec 003): when set, they further limit
	// what this agent may read and write (absolute after Resolve).
	ReadPaths  []string `yaml:"read_paths,omitempty" json:"read_paths,omitempty"`
	WritePaths []string `yaml:"write_paths,omitempty" json:"write_paths,omitempty"`
	// Permissions are per-agent rules, merged over the global ones.
	Permissions *Permissions `yaml:"permissions,omitempty" json:"permissions,omitempty"`
	// MaxCostUSD caps what this agent's model calls may cost in one turn (0: no cap).
	MaxCostUSD float64 `yaml:"max_cost_usd,omitempty" json:"max_cost_usd,omitempty"`
	// CommandLimits bound this agent's commands, over the top level's.
	CommandLimits *CommandLimits `yaml:"command_limits,omitempty" json:"command_limits,omitempty"`
	// CommandNetwork is the network the agent's commands may reach, over orchestrator's
	// (network.go). MassGen's srt keys set it when the config does not.
	CommandNetwork *CommandNetwork `yaml:"command_network,omitempty" json:"command_network,omitempty"`
}

// Backend is `agents[].backend`. Known keys are typed; every other key is kept in Extra, and
// the provider options among them are typed by the param table (Backend.Params, params.go).
type Backend struct {
	Type  string `yaml:"type" json:"type"`
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	CWD   string `yaml:"cwd,omitempty" json:"cwd,omitempty"`
	// CWDOwned says massgen may own CWD although it is an existing folder outside
	// .massgen/workspaces/: it then clears it at restarts, moving what it removes to the trash.
	CWDOwned bool   `yaml:"cwd_owned,omitempty" json:"cwd_owned,omitempty"`
	APIKey   string `yaml:"api_key,omitempty" json:"api_key,omitempty"`
	BaseURL  string `yaml:"base_url,omitempty" json:"base_url,omitempty"`
	// MCPServers are external MCP servers (MassGen format: stdio command/args/env or url).
	MCPServers []MCPServer `yaml:"mcp_servers,omitempty" json:"mcp_servers,omitempty"`
	// Script is the step list of the deterministic `scripted` demo/test backend.
	Script []ScriptStep `yaml:"script,omitempty" json:"script,omitempty"`
	// CommandLineAllowedCommands and CommandLineBlockedCommands are MassGen's regular
	// expressions over execute_command's commands; they become permission rules (agentenv).
	CommandLineAllowedCommands []string `yaml:"command_line_allowed_commands,omitempty" json:"command_line_allowed_commands,omitempty"`
	CommandLineBlockedCommands []string `yaml:"command_line_blocked_commands,omitempty" json:"command_line_blocked_commands,omitempty"`
	// ExcludeTools are tools the agent is not offered: names as offered (write_file,
	// mcp__server__tool) or as an MCP server names its own (MassGen's form).
	ExcludeTools []string `yaml:"exclude_tools,omitempty" json:"exclude_tools,omitempty"`
	// CustomTools are Python functions offered as tools (customtools.go).
	CustomTools []CustomTool `yaml:"custom_tools,omitempty" json:"custom_tools,omitempty"`
	// Permissions is MassGen 0.1.97's permission engine block, mapped onto the agent's
	// permissions section at load (massgenperms.go).
	Permissions *BackendPermissions `yaml:"permissions,omitempty" json:"permissions,omitempty"`
	// Extra holds every other key (temperature, reasoning, text, enable_web_search, ...).
	Extra map[string]any `yaml:",inline" json:"-"`
}

// MCPServer is one entry of `mcp_servers:`.
type MCPServer struct {
	Name    string             `yaml:"name" json:"name"`
	Type    vocab.MCPTransport `yaml:"type,omitempty" json:"type,omitempty"`
	Command string             `yaml:"command,omitempty" json:"command,omitempty"`
	Args    []string           `yaml:"args,omitempty" json:"args,omitempty"`
	Env     map[string]string  `yaml:"env,omitempty" json:"env,omitempty"`
	URL     string             `yaml:"url,omitempty" json:"url,omitempty"`
	// AllowedTools, when set, are the only tools of the server offered; ExcludeTools are not
	// offered (the server's own tool names).
	AllowedTools []string `yaml:"allowed_tools,omitempty" json:"allowed_tools,omitempty"`
	ExcludeTools []string `yaml:"exclude_tools,omitempty" json:"exclude_tools,omitempty"`
	// Security is MassGen's checks before the server starts (mcpsecurity.go).
	Security *MCPSecurity   `yaml:"security,omitempty" json:"security,omitempty"`
	Extra    map[string]any `yaml:",inline" json:"-"`
}

// ScriptStep is one response of the scripted backend: either text, or tool calls, or both.
// Each time the backend is called it plays the next step of the current phase; see backends.
type ScriptStep struct {
	Text      string           `yaml:"text,omitempty" json:"text,omitempty"`
	ToolCalls []ScriptToolCall `yaml:"tool_calls,omitempty" json:"tool_calls,omitempty"`
	// Phase restricts the step to one phase (empty: any).
	Phase vocab.Phase `yaml:"phase,omitempty" json:"phase,omitempty"`
	// WaitFor makes the step wait until this path exists (after ${VAR} substitution) before
	// replying, so scripted runs can order agents deterministically.
	WaitFor string `yaml:"wait_for,omitempty" json:"wait_for,omitempty"`
	// Block makes the call never answer until it is cancelled (a slow model being restarted).
	Block bool `yaml:"block,omitempty" json:"block,omitempty"`
}

// ScriptToolCall is a tool call in a scripted step. Args may contain ${WORKSPACE},
// ${TEMP_WORKSPACE} and ${CONTEXT_0}... placeholders filled in at run time.
type ScriptToolCall struct {
	Name string         `yaml:"name" json:"name"`
	Args map[string]any `yaml:"args,omitempty" json:"args,omitempty"`
}

// Orchestrator is the `orchestrator:` section.
type Orchestrator struct {
	SnapshotStorage         string        `yaml:"snapshot_storage,omitempty" json:"snapshot_storage,omitempty"`
	AgentTemporaryWorkspace string        `yaml:"agent_temporary_workspace,omitempty" json:"agent_temporary_workspace,omitempty"`
	SessionStorage          string        `yaml:"session_storage,omitempty" json:"session_storage,omitempty"`
	ContextPaths            []ContextPath `yaml:"context_paths,omitempty" json:"context_paths,omitempty"`
	MaxNewAnswersPerAgent   int           `yaml:"max_new_answers_per_agent,omitempty" json:"max_new_answers_per_agent,omitempty"`
	// TimeoutSeconds is the overall coordination timeout (also read from timeout_settings).
	TimeoutSeconds      int `yaml:"timeout_seconds,omitempty" json:"timeout_seconds,omitempty"`
	AgentTimeoutSeconds int `yaml:"agent_timeout_seconds,omitempty" json:"agent_timeout_seconds,omitempty"`
	// MaxTaskBytes is the largest task accepted (0: DefaultMaxTaskBytes); --max-task-bytes wins.
	MaxTaskBytes int `yaml:"max_task_bytes,omitempty" json:"max_task_bytes,omitempty"`
	// MaxCostUSD caps what a turn's model calls may cost (0: no cap); --max-cost wins.
	MaxCostUSD float64 `yaml:"max_cost_usd,omitempty" json:"max_cost_usd,omitempty"`
	// EnforceReadBeforeDelete defaults to true when nil.
	EnforceReadBeforeDelete *bool `yaml:"enforce_read_before_delete,omitempty" json:"enforce_read_before_delete,omitempty"`
	// VotingSensitivity and AnswerNoveltyRequirement are MassGen's levels: how good the best
	// answer must be for a vote, and how different a new answer must be from the existing ones
	// (docs/orchestrator.md, "MassGen's coordination options").
	VotingSensitivity        vocab.VotingSensitivity `yaml:"voting_sensitivity,omitempty" json:"voting_sensitivity,omitempty"`
	AnswerNoveltyRequirement vocab.Strictness        `yaml:"answer_novelty_requirement,omitempty" json:"answer_novelty_requirement,omitempty"`
	// VotingThreshold (0-10, default 5), MaxChecklistCallsPerRound (default 1) and
	// ChecklistFirstAnswer steer voting_sensitivity checklist_gated (orchestrator/checklist.go).
	VotingThreshold           int  `yaml:"voting_threshold,omitempty" json:"voting_threshold,omitempty"`
	MaxChecklistCallsPerRound int  `yaml:"max_checklist_calls_per_round,omitempty" json:"max_checklist_calls_per_round,omitempty"`
	ChecklistFirstAnswer      bool `yaml:"checklist_first_answer,omitempty" json:"checklist_first_answer,omitempty"`
	// SkipCoordinationRounds sends the first agent straight to the final presentation.
	SkipCoordinationRounds bool `yaml:"skip_coordination_rounds,omitempty" json:"skip_coordination_rounds,omitempty"`
	// DebugFinalAnswer replaces the final answer the first post-evaluation judges.
	DebugFinalAnswer DebugAnswer `yaml:"debug_final_answer,omitempty" json:"debug_final_answer,omitempty"`
	// Coordination is MassGen's `coordination:` block.
	Coordination Coordination `yaml:"coordination,omitempty" json:"coordination,omitempty"`
	// CommandNetwork is the network every agent's commands may reach (network.go).
	CommandNetwork *CommandNetwork `yaml:"command_network,omitempty" json:"command_network,omitempty"`
	// Extra keeps MassGen options we accept but do not act on (dspy, timeout, ...).
	Extra map[string]any `yaml:",inline" json:"-"`
}

// Coordination is `orchestrator.coordination`.
type Coordination struct {
	// EnablePlanningMode: during coordination, MCP tools that may act outside massgen's sandbox
	// are not run (agents plan); only the agent presenting the final answer runs them.
	EnablePlanningMode bool `yaml:"enable_planning_mode,omitempty" json:"enable_planning_mode,omitempty"`
	// PlanningModeInstruction is added to the coordination system prompt in planning mode
	// (empty: MassGen's default instruction).
	PlanningModeInstruction string `yaml:"planning_mode_instruction,omitempty" json:"planning_mode_instruction,omitempty"`
	// MaxOrchestrationRestarts is how many times the winner's post-evaluation may restart the
	// whole coordination (0: no post-evaluation).
	MaxOrchestrationRestarts int `yaml:"max_orchestration_restarts,omitempty" json:"max_orchestration_restarts,omitempty"`
	// Extra keeps the coordination options massgen does not act on (task planning, skills, ...).
	Extra map[string]any `yaml:",inline" json:"-"`
}

// DebugAnswer is debug_final_answer: a text, or a boolean as MassGen accepts it (false: none;
// true stands for the text "True", as MassGen formats it).
type DebugAnswer string

// UnmarshalYAML reads a string, or a boolean as MassGen does.
func (d *DebugAnswer) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var b bool
		if err := n.Decode(&b); err != nil {
			return err
		}
		*d = ""
		if b {
			*d = "True"
		}
		return nil
	}
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	*d = DebugAnswer(s)
	return nil
}

// ContextPath is one entry of `orchestrator.context_paths`.
type ContextPath struct {
	Path string `yaml:"path" json:"path"`
	// Permission is the final agent's access (read when empty; coordination agents always read).
	Permission vocab.Access `yaml:"permission,omitempty" json:"permission,omitempty"`
	// ProtectedPaths are relative to Path in YAML; absolute after Resolve.
	ProtectedPaths []string `yaml:"protected_paths,omitempty" json:"protected_paths,omitempty"`
}

// TimeoutSettings is MassGen's `timeout_settings:`.
type TimeoutSettings struct {
	OrchestratorTimeoutSeconds int `yaml:"orchestrator_timeout_seconds,omitempty" json:"orchestrator_timeout_seconds,omitempty"`
	// InitialRoundTimeoutSeconds and SubsequentRoundTimeoutSeconds (MassGen 0.1.38) bound an
	// agent's first coordination round and each later one (0: no bound), plus
	// RoundTimeoutGraceSeconds (default 120); see Config.RoundTimeout.
	InitialRoundTimeoutSeconds    int            `yaml:"initial_round_timeout_seconds,omitempty" json:"initial_round_timeout_seconds,omitempty"`
	SubsequentRoundTimeoutSeconds int            `yaml:"subsequent_round_timeout_seconds,omitempty" json:"subsequent_round_timeout_seconds,omitempty"`
	RoundTimeoutGraceSeconds      *int           `yaml:"round_timeout_grace_seconds,omitempty" json:"round_timeout_grace_seconds,omitempty"`
	Extra                         map[string]any `yaml:",inline" json:"-"`
}

// UI is the `ui:` section.
type UI struct {
	DisplayType    string         `yaml:"display_type,omitempty" json:"display_type,omitempty"`
	LoggingEnabled *bool          `yaml:"logging_enabled,omitempty" json:"logging_enabled,omitempty"`
	Extra          map[string]any `yaml:",inline" json:"-"`
}

// Permissions is a `permissions:` section (spec 004), global or per agent.
type Permissions struct {
	// Mode is the permission mode ("" is acceptEdits).
	Mode  vocab.PermissionMode `yaml:"mode,omitempty" json:"mode,omitempty"`
	Allow []string             `yaml:"allow,omitempty" json:"allow,omitempty"`
	Deny  []string             `yaml:"deny,omitempty" json:"deny,omitempty"`
	Hooks Hooks                `yaml:"hooks,omitempty" json:"hooks,omitempty"`
}

// Hooks are external commands run before and after each tool call.
type Hooks struct {
	PreToolUse  []Hook `yaml:"pre_tool_use,omitempty" json:"pre_tool_use,omitempty"`
	PostToolUse []Hook `yaml:"post_tool_use,omitempty" json:"post_tool_use,omitempty"`
}

// Hook is one hook command. Matcher is a tool-name glob (empty: every tool).
type Hook struct {
	Command        string `yaml:"command" json:"command"`
	Matcher        string `yaml:"matcher,omitempty" json:"matcher,omitempty"`
	TimeoutSeconds int    `yaml:"timeout_seconds,omitempty" json:"timeout_seconds,omitempty"`
}

// Pricing is `pricing:`: prices of models the embedded catalogue lacks or prices differently
// (USD per million tokens), here or in a file; the config's models win over the file's.
type Pricing struct {
	// File is a prices file (pricing.File's format), relative to the current directory.
	File   string                   `yaml:"file,omitempty" json:"file,omitempty"`
	Models map[string]pricing.Price `yaml:"models,omitempty" json:"models,omitempty"`
}
