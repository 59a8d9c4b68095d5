package configs

// The key table: every key of MassGen's config schema (its v0.1.12 validator, its YAML schema
// reference, the options its backends read, and every key used by the configs in
// shared/massgen-configs and configs/examples), plus massgen's own keys, each with what massgen
// does with it. TestKeyTableCoversSchema ties it to the Go schema types; the golden
// docs/massgen-compatibility.md is generated from it.

// Issue 14 ("MassGen users keep their features") implements most ignored keys; notes name it so
// users know the gap is known.
const later = " (not implemented)"

// Backend families (BackendType.Family).
const (
	famOpenAI     = "openai"
	famChat       = "chat"
	famClaude     = "claude"
	famGemini     = "gemini"
	famClaudeCode = "claude_code"
	famScripted   = "scripted"
)

var backendTypeTable = []BackendType{
	{Name: "openai", Family: famOpenAI, Status: Implemented, ModelRequired: true,
		Note: "OpenAI Responses API (OPENAI_API_KEY)."},
	{Name: "claude", Family: famClaude, Status: Implemented,
		Note: "Anthropic Messages API (ANTHROPIC_API_KEY); model defaults to claude-sonnet-4-5."},
	{Name: "gemini", Family: famGemini, Status: Implemented,
		Note: "Gemini Developer API (GEMINI_API_KEY or GOOGLE_API_KEY); model defaults to gemini-2.5-flash."},
	{Name: "chatcompletion", Family: famChat, Status: Implemented, ModelRequired: true,
		Note: "Any OpenAI-compatible Chat Completions server at base_url (OPENAI_API_KEY, or the key of the provider whose host base_url names; none for a local server)."},
	{Name: "grok", Family: famChat, Status: Implemented, ModelRequired: true, Note: "xAI Chat Completions (XAI_API_KEY)."},
	{Name: "xai", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Same as grok."},
	{Name: "azure_openai", Family: famChat, Status: Implemented, ModelRequired: true,
		Note: "Azure OpenAI Chat Completions (AZURE_OPENAI_API_KEY; AZURE_OPENAI_ENDPOINT or base_url); model is the deployment name."},
	{Name: "lmstudio", Family: famChat, Status: Implemented, ModelRequired: true, Note: "LM Studio on localhost:1234; no key."},
	{Name: "vllm", Family: famChat, Status: Implemented, ModelRequired: true, Note: "vLLM on localhost:8000; no key."},
	{Name: "sglang", Family: famChat, Status: Implemented, ModelRequired: true, Note: "SGLang on localhost:30000; no key."},
	{Name: "zai", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Z.AI (ZAI_API_KEY)."},
	{Name: "openrouter", Family: famChat, Status: Implemented, ModelRequired: true, Note: "OpenRouter (OPENROUTER_API_KEY)."},
	{Name: "cerebras", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Cerebras (CEREBRAS_API_KEY)."},
	{Name: "together", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Together AI (TOGETHER_API_KEY)."},
	{Name: "fireworks", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Fireworks AI (FIREWORKS_API_KEY)."},
	{Name: "groq", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Groq (GROQ_API_KEY)."},
	{Name: "nebius", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Nebius AI Studio (NEBIUS_API_KEY)."},
	{Name: "qwen", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Qwen on DashScope (QWEN_API_KEY or DASHSCOPE_API_KEY)."},
	{Name: "dashscope", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Same as qwen."},
	{Name: "kimi", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Moonshot's Kimi (MOONSHOT_API_KEY or KIMI_API_KEY)."},
	{Name: "moonshot", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Same as kimi."},
	{Name: "poe", Family: famChat, Status: Implemented, ModelRequired: true, Note: "Poe (POE_API_KEY)."},
	{Name: "claude_code", Family: famClaudeCode, Status: Implemented, Program: "claude",
		Install: "install Claude Code (npm install -g @anthropic-ai/claude-code), or use type: claude for the same models through the Anthropic API",
		Note:    "Drives the claude CLI (Claude Code; it must be on PATH) with its own tools turned off: the agent works with massgen's permission-checked tools, offered to the CLI as an MCP server (docs/cli-agents.md). No key needed: the CLI's own login, or ANTHROPIC_API_KEY."},
	{Name: "codex", Family: "codex", Status: Implemented, Program: "codex",
		Install: "install OpenAI Codex (npm install -g @openai/codex), or use type: openai for the same models through the Responses API",
		Note:    "Drives the codex CLI (it must be on PATH) with its own tools off: the agent works with massgen's permission-checked tools, offered to the CLI as an MCP server, and every model request passes massgen's check (docs/cli-agents.md). Key: OPENAI_API_KEY (or CODEX_API_KEY), sent by massgen, not the CLI."},
	{Name: "gemini_cli", Family: "gemini_cli", Status: Implemented, Program: "gemini",
		Install: "install Gemini CLI (npm install -g @google/gemini-cli), or use type: gemini for the same models through the Gemini API",
		Note:    "Drives the gemini CLI (it must be on PATH) with its built-in tools excluded: the agent works with massgen's permission-checked tools, offered to the CLI as an MCP server, and every model request passes massgen's check (docs/cli-agents.md). Key: GEMINI_API_KEY or GOOGLE_API_KEY, sent by massgen, not the CLI."},
	{Name: "scripted", Family: famScripted, Status: Implemented, Massgen: true,
		Note: "Deterministic demo and test backend: plays the steps of script: instead of calling a model; no key."},
	{Name: "ag2", Status: Refused,
		Note: "AG2 is a Python framework adapter that this port does not run; describe the agent with a model backend (openai, claude, gemini, ...) instead."},
	{Name: "autogen", Status: Refused,
		Note: "AutoGen is a Python framework adapter that this port does not run; describe the agent with a model backend (openai, claude, gemini, ...) instead."},
	{Name: "inference", Status: Refused,
		Note: "MassGen's combined vLLM/SGLang type is not supported; use type: vllm or type: sglang (or chatcompletion with base_url)."},
	{Name: "copilot", Status: Refused, CLIAgent: true,
		Note: "massgen does not drive GitHub Copilot (MassGen 0.1.54 does, through Copilot's Python SDK): it could not leave Copilot only massgen's permission-checked tools."},
	{Name: "antigravity_cli", Status: Refused, CLIAgent: true,
		Note: "massgen does not drive Google's Antigravity CLI, agy (MassGen 0.1.88 does): it could not leave agy only massgen's permission-checked tools."},
}

var (
	apiBackends  = []string{famOpenAI, famChat, famClaude, famGemini}
	chatOnly     = []string{famChat}
	anthropicish = []string{famClaude}
)

// apiParams are provider request parameters: implemented on the families that send them, and
// ignored elsewhere (the backend does not send what its API does not take).
func apiParam(name string, on []string, note string) []Key {
	return []Key{
		{Path: "agents[].backend." + name, On: on, Status: Implemented, Note: note},
		{Path: "agents[].backend." + name, Status: Ignored, Note: "not a parameter of this backend's API; not sent"},
	}
}

func permissionKeys(prefix string, what string) []Key {
	return []Key{
		{Path: prefix, Status: Implemented, Massgen: true, Note: what + " permission mode, allow/deny rules and hooks (docs/permissions.md)."},
		{Path: prefix + ".mode", Status: Implemented, Massgen: true, Note: "acceptEdits (default), default (ask) or bypassPermissions."},
		{Path: prefix + ".allow", Status: Implemented, Massgen: true, Note: "Rules that allow tool calls, e.g. execute_command(npm test*)."},
		{Path: prefix + ".deny", Status: Implemented, Massgen: true, Note: "Rules that deny tool calls, e.g. write_file(**/.env)."},
		{Path: prefix + ".hooks", Status: Implemented, Massgen: true, Note: "Commands run around each tool call."},
		{Path: prefix + ".hooks.pre_tool_use", Status: Implemented, Massgen: true, Note: "Run before a call; may deny it."},
		{Path: prefix + ".hooks.post_tool_use", Status: Implemented, Massgen: true, Note: "Run after a call."},
		{Path: prefix + ".hooks.pre_tool_use[].command", Status: Implemented, Massgen: true, Note: "The hook command."},
		{Path: prefix + ".hooks.pre_tool_use[].matcher", Status: Implemented, Massgen: true, Note: "Tool-name glob (empty: every tool)."},
		{Path: prefix + ".hooks.pre_tool_use[].timeout_seconds", Status: Implemented, Massgen: true, Note: "Time limit of the hook."},
		{Path: prefix + ".hooks.post_tool_use[].command", Status: Implemented, Massgen: true, Note: "The hook command."},
		{Path: prefix + ".hooks.post_tool_use[].matcher", Status: Implemented, Massgen: true, Note: "Tool-name glob (empty: every tool)."},
		{Path: prefix + ".hooks.post_tool_use[].timeout_seconds", Status: Implemented, Massgen: true, Note: "Time limit of the hook."},
	}
}

// ccOwnToolsOff is what happens to Claude Code's tool lists.
const ccOwnToolsOff = "Claude Code's own tools (Read, Write, Bash, ...) are turned off: the agent gets massgen's permission-checked tools instead; to narrow those, use exclude_tools or permissions.deny rules"

const noDocker = "docker execution is not supported: commands run on this machine inside the kernel sandbox (landlock or bubblewrap)"

var keyTable = concatKeys(
	// Top level.
	[]Key{
		{Path: "agents", Status: Implemented, Note: "The agents (agent: with a single agent is read as a list of one)."},
		{Path: "orchestrator", Status: Implemented, Note: "Coordination settings and state folders."},
		{Path: "timeout_settings", Status: Implemented, Note: "MassGen's timeout section."},
		{Path: "timeout_settings.orchestrator_timeout_seconds", Status: Implemented, Note: "Overall time limit of a run (default 1800)."},
		{Path: "timeout_settings.initial_round_timeout_seconds", Status: Implemented, Since: "0.1.38", Note: "Bounds each agent's first coordination round (its first execution), plus round_timeout_grace_seconds: an agent timeout for that round. MassGen asks the agent to submit when the time is up and, after the grace, lets it call only new_answer and vote; massgen stops the agent at the end of the grace (what it answered and voted so far stands), with a reason naming the keys."},
		{Path: "timeout_settings.subsequent_round_timeout_seconds", Status: Implemented, Since: "0.1.38", Note: "The same for each later round (every execution after a restart), plus round_timeout_grace_seconds."},
		{Path: "timeout_settings.round_timeout_grace_seconds", Status: Implemented, Since: "0.1.38", Note: "Added to the round timeouts (default 120)."},
		{Path: "ui", Status: Implemented, Note: "Display settings."},
		{Path: "ui.display_type", Status: Implemented, Note: "auto, live, plain or silent (MassGen's rich_terminal and textual_terminal are live, simple is plain): the display; --display overrides it. Another value is warned about and not used."},
		{Path: "ui.logging_enabled", Status: Ignored, Same: []string{"true"}, Note: "logs are always written under .massgen/logs/"},
		{Path: "ui.type", Status: Ignored, Note: "not read (MassGen 0.1.12 does not read it either); ui.display_type chooses the display"},
		{Path: "ui.enable_final_presentation", Status: Ignored, Same: []string{"true"}, Note: "the winning agent always presents the final answer"},
		{Path: "ui.use_orchestrator_for_single_agent", Status: Ignored, Same: []string{"true"}, Note: "a single agent also goes through coordination"},
		{Path: "display", Status: Ignored, Note: "not read; ui.display_type chooses the display, and logs are always written"},
		{Path: "memory", Status: Ignored, Note: "no conversation compression or persistent memory: agents see the session's conversation history only" + later},
		{Path: "command_sandbox", Status: Implemented, Massgen: true, Note: "auto (default: bubblewrap, else namespaces, else landlock), bubblewrap, namespaces, landlock or none: how execute_command is confined. On Windows only none runs commands (unsandboxed, through cmd.exe); every other mode is refused: run massgen inside WSL2 for sandboxed commands."},
		{Path: "pricing", Status: Implemented, Massgen: true, Note: "Model prices (USD per million tokens) added to or replacing the embedded, dated catalogue, for cost_usd and the budget caps (docs/output.md)."},
		{Path: "pricing.file", Status: Implemented, Massgen: true, Note: "A prices file (YAML or JSON, models: like pricing.models), relative to the current directory."},
		{Path: "pricing.models", Status: Implemented, Massgen: true, Open: true, Note: "Model name -> {input, cached_input, cache_write, output, reasoning, context_window}; wins over the file and the catalogue."},
		{Path: "command_limits", Status: Implemented, Massgen: true, Note: "Bounds on each command of every agent (execute_command, custom tools): memory_mb, processes, cpu_seconds, file_size_mb; 0 or absent: the default (docs/tools.md). A command that hits one is told so in its result."},
		{Path: "command_limits.memory_mb", Status: Implemented, Massgen: true, Note: "Memory of the whole command (a cgroup), else of each process."},
		{Path: "command_limits.processes", Status: Implemented, Massgen: true, Note: "Processes and threads of the command."},
		{Path: "command_limits.cpu_seconds", Status: Implemented, Massgen: true, Note: "CPU time of each process."},
		{Path: "command_limits.file_size_mb", Status: Implemented, Massgen: true, Note: "Largest file a process may write."},
	},
	permissionKeys("permissions", "Global"),
	// MassGen v1 keys: MassGen 0.1 refuses them too.
	v1Keys("models", "model_configs", "num_agents", "max_rounds", "consensus_threshold", "voting_enabled", "enable_voting"),

	// Agents.
	[]Key{
		{Path: "agents[].id", Status: Implemented, Note: "Unique agent name; also a folder name (letters, digits, '.', '_', '-')."},
		{Path: "agents[].backend", Status: Implemented, Note: "The model backend."},
		{Path: "agents[].system_message", Status: Implemented, Note: "The agent's system prompt."},
		{Path: "agents[].memory", Status: Ignored, Note: "no per-agent memory: agents see the session's conversation history only" + later},
		{Path: "agents[].read_paths", Status: Implemented, Massgen: true, Note: "Folder guard: further limits what the agent may read."},
		{Path: "agents[].write_paths", Status: Implemented, Massgen: true, Note: "Folder guard: further limits what the agent may write."},
		{Path: "agents[].max_cost_usd", Status: Implemented, Massgen: true, Note: "Budget of the agent's model calls per turn (USD): at 100% it makes no further request and stops."},
		{Path: "agents[].command_limits", Status: Implemented, Massgen: true, Note: "This agent's command limits, field by field over the top-level command_limits."},
		{Path: "agents[].command_limits.memory_mb", Status: Implemented, Massgen: true, Note: "As command_limits.memory_mb, for this agent."},
		{Path: "agents[].command_limits.processes", Status: Implemented, Massgen: true, Note: "As command_limits.processes, for this agent."},
		{Path: "agents[].command_limits.cpu_seconds", Status: Implemented, Massgen: true, Note: "As command_limits.cpu_seconds, for this agent."},
		{Path: "agents[].command_limits.file_size_mb", Status: Implemented, Massgen: true, Note: "As command_limits.file_size_mb, for this agent."},
		{Path: "agents[].command_network", Status: Implemented, Massgen: true, Note: "The network this agent's commands (execute_command, custom tools) may reach, field by field over orchestrator.command_network (docs/tools.md). MassGen's srt keys set it when the config does not."},
		{Path: "agents[].command_network.mode", Status: Implemented, Massgen: true, Note: "none (default: no network), allowlist (the hosts of allowed_domains, through massgen's proxy) or open (any host)."},
		{Path: "agents[].command_network.allowed_domains", Status: Implemented, Massgen: true, Note: "Hosts the proxy lets through in allowlist mode: pypi.org, *.pythonhosted.org (names below it, not itself), an address; each with an optional :port. A loopback or private address only when listed exactly."},
	},
	permissionKeys("agents[].permissions", "Per-agent"),

	// Backend: common keys.
	[]Key{
		{Path: "agents[].backend.type", Status: Implemented, Note: "The backend type (see the table of backend types)."},
		{Path: "agents[].backend.model", Status: Implemented, Note: "The model; required unless the backend has a default (claude, gemini)."},
		{Path: "agents[].backend.api_key", Status: Implemented, Note: "The API key; default: the backend's environment variable."},
		{Path: "agents[].backend.base_url", Status: Implemented, Note: "The API endpoint; default: the provider's."},
		{Path: "agents[].backend.cwd", Status: Implemented, Note: "The agent's workspace (relative paths go under .massgen/workspaces/); gives the agent file tools and execute_command."},
		{Path: "agents[].backend.cwd_owned", Status: Implemented, Massgen: true, Note: "true lets cwd be an existing folder outside .massgen/workspaces/ (refused otherwise): massgen then owns it and clears it at restarts, moving what it removes to .massgen/trash/."},
		{Path: "agents[].backend.mcp_servers", Status: Implemented, Note: "MCP servers whose tools the agent gets, as a list or a name: {...} mapping (docs/mcp.md)."},
		{Path: "agents[].backend.script", On: []string{famScripted}, Status: Implemented, Massgen: true, Note: "The steps the scripted backend plays."},
		{Path: "agents[].backend.script", Status: Ignored, Massgen: true, Note: "only the scripted backend plays a script"},
		{Path: "agents[].backend.*", On: []string{famScripted}, Status: Ignored, Note: "the scripted backend calls no model"},
		{Path: "agents[].backend.*", On: []string{famClaudeCode}, Status: Ignored, Note: "not an option massgen passes to the claude CLI"},
		{Path: "agents[].backend.model", On: []string{famClaudeCode}, Status: Implemented, Note: "Passed as --model (an alias such as sonnet, or a full model name); default: the CLI's."},
		{Path: "agents[].backend.api_key", On: []string{famClaudeCode}, Status: Implemented, Note: "Passed to the claude CLI as ANTHROPIC_API_KEY; default: the CLI's own login."},
		{Path: "agents[].backend.base_url", On: []string{famClaudeCode}, Status: Implemented, Note: "Passed to the claude CLI as ANTHROPIC_BASE_URL."},
		{Path: "agents[].backend.*", On: []string{"codex", "gemini_cli"}, Status: Ignored, Note: "not an option massgen passes to the CLI"},
		{Path: "agents[].backend.model", On: []string{"codex", "gemini_cli"}, Status: Implemented, Note: "Passed to the CLI as --model; default: the CLI's."},
		{Path: "agents[].backend.api_key", On: []string{"codex", "gemini_cli"}, Status: Implemented, Note: "The provider's key; massgen's model gate sends it, the CLI never sees it."},
		{Path: "agents[].backend.base_url", On: []string{"codex", "gemini_cli"}, Status: Implemented, Note: "Where massgen's model gate sends the CLI's requests; default: the provider's."},
		{Path: "agents[].backend.reasoning", On: []string{"codex"}, Status: Implemented, Note: "reasoning.effort is passed to codex as model_reasoning_effort."},
		{Path: "agents[].backend.reasoning.effort", On: []string{"codex"}, Status: Implemented, Note: "minimal, low, medium, high or xhigh."},
		{Path: "agents[].backend.reasoning.summary", On: []string{"codex"}, Status: Ignored, Note: "massgen reads no reasoning summary from codex; not passed"},
		{Path: "agents[].backend.reasoning_effort", On: []string{"codex"}, Status: Implemented, Note: "Same as reasoning.effort (wins over it)."},
	},
	scriptKeys(),
	mcpKeys(),

	// Backend: provider request parameters.
	apiParam("temperature", apiBackends, "Sampling temperature."),
	apiParam("top_p", apiBackends, "Nucleus sampling."),
	apiParam("max_tokens", apiBackends, "Longest reply (max_output_tokens on openai and gemini)."),
	apiParam("max_output_tokens", []string{famOpenAI, famClaude, famGemini}, "Longest reply."),
	apiParam("top_k", []string{famChat, famClaude, famGemini}, "Top-k sampling."),
	apiParam("stop_sequences", []string{famClaude, famGemini}, "Stop sequences."),
	apiParam("tool_choice", []string{famOpenAI, famChat, famClaude}, "Sent as written."),
	apiParam("metadata", []string{famOpenAI, famChat, famClaude}, "Sent as written."),
	apiParam("service_tier", []string{famOpenAI, famChat, famClaude}, "Sent as written."),
	apiParam("user", []string{famOpenAI, famChat}, "Sent as written."),
	apiParam("parallel_tool_calls", []string{famOpenAI, famChat}, "Sent as written."),
	apiParam("top_logprobs", []string{famOpenAI, famChat}, "Sent as written."),
	apiParam("seed", []string{famChat, famGemini}, "Sent as written."),
	apiParam("presence_penalty", []string{famChat, famGemini}, "Sent as written."),
	apiParam("frequency_penalty", []string{famChat, famGemini}, "Sent as written."),
	apiParam("max_tool_calls", []string{famOpenAI}, "Sent as written."),
	apiParam("store", []string{famOpenAI}, "Sent as written."),
	apiParam("truncation", []string{famOpenAI}, "Sent as written."),
	apiParam("include", []string{famOpenAI}, "Sent as written."),
	apiParam("prompt_cache_key", []string{famOpenAI}, "Sent as written."),
	apiParam("prompt_cache_retention", []string{famOpenAI}, "Sent as written."),
	apiParam("safety_identifier", []string{famOpenAI}, "Sent as written."),
	apiParam("background", []string{famOpenAI}, "Sent as written."),
	apiParam("max_completion_tokens", chatOnly, "Sent as written."),
	apiParam("stop", chatOnly, "Sent as written."),
	apiParam("logit_bias", chatOnly, "Sent as written."),
	apiParam("logprobs", chatOnly, "Sent as written."),
	apiParam("reasoning_effort", chatOnly, "Sent as written."),
	apiParam("verbosity", chatOnly, "Sent as written."),
	apiParam("response_format", chatOnly, "Sent as written."),
	apiParam("min_p", chatOnly, "Sent as written (local servers)."),
	apiParam("repetition_penalty", chatOnly, "Sent as written (local servers)."),
	apiParam("thinking_budget", []string{famClaude, famGemini}, "Extended thinking budget in tokens."),
	apiParam("budget_tokens", []string{famClaude, famGemini}, "Same as thinking_budget."),
	apiParam("include_thoughts", []string{famGemini}, "Stream the model's thought summaries."),
	apiParam("thinking_level", []string{famGemini}, "Gemini 3 thinking level (low, high)."),
	apiParam("thinking_config", []string{famGemini}, "{thinking_budget, include_thoughts, thinking_level}."),
	[]Key{
		{Path: "agents[].backend.thinking_config.thinking_budget", On: []string{famGemini}, Status: Implemented, Note: "Thinking budget in tokens (-1: dynamic, 0: off)."},
		{Path: "agents[].backend.thinking_config.budget_tokens", On: []string{famGemini}, Status: Implemented, Note: "Same as thinking_budget."},
		{Path: "agents[].backend.thinking_config.include_thoughts", On: []string{famGemini}, Status: Implemented, Note: "Stream the model's thought summaries."},
		{Path: "agents[].backend.thinking_config.thinking_level", On: []string{famGemini}, Status: Implemented, Note: "Gemini 3 thinking level."},
	},
	[]Key{
		{Path: "agents[].backend.extra_body", On: apiBackends, Status: Implemented, Open: true, Note: "Raw request fields, merged into the request body as written."},
		{Path: "agents[].backend.extra_body", Status: Ignored, Note: "this backend sends no request body"},
		{Path: "agents[].backend.chat_template_kwargs", On: chatOnly, Status: Implemented, Open: true, Note: "Sent as written (vLLM/SGLang chat template options)."},
		{Path: "agents[].backend.chat_template_kwargs", Status: Ignored, Note: "only Chat Completions servers take chat template options; not sent"},
		{Path: "agents[].backend.reasoning", On: []string{famOpenAI}, Status: Implemented, Open: true, Note: "Sent as written ({effort, summary})."},
		{Path: "agents[].backend.reasoning", On: chatOnly, Status: Implemented, Note: "reasoning.effort is sent as reasoning_effort."},
		{Path: "agents[].backend.reasoning.effort", On: chatOnly, Status: Implemented, Note: "Sent as reasoning_effort."},
		{Path: "agents[].backend.reasoning.summary", On: chatOnly, Status: Ignored, Note: "Chat Completions has no reasoning summary; not sent"},
		{Path: "agents[].backend.reasoning", Status: Ignored, Note: "not a parameter of this backend's API; not sent (claude: use thinking or thinking_budget; gemini: thinking_budget or thinking_level)"},
		{Path: "agents[].backend.text", On: []string{famOpenAI}, Status: Implemented, Open: true, Note: "Sent as written ({verbosity, format})."},
		{Path: "agents[].backend.text", On: chatOnly, Status: Implemented, Note: "text.verbosity is sent as verbosity."},
		{Path: "agents[].backend.text.verbosity", On: chatOnly, Status: Implemented, Note: "Sent as verbosity."},
		{Path: "agents[].backend.text", Status: Ignored, Note: "not a parameter of this backend's API; not sent"},
		{Path: "agents[].backend.thinking", On: anthropicish, Status: Implemented, Open: true, Note: "Sent as written ({type: enabled, budget_tokens: N})."},
		{Path: "agents[].backend.thinking", On: []string{famGemini}, Status: Implemented, Open: true, Note: "Same as thinking_config."},
		{Path: "agents[].backend.thinking", Status: Ignored, Note: "not a parameter of this backend's API; not sent"},
		{Path: "agents[].backend.api_version", On: []string{"azure_openai"}, Status: Implemented, Note: "Azure API version (default: AZURE_OPENAI_API_VERSION, else a recent version)."},
		{Path: "agents[].backend.api_version", Status: Ignored, Note: "only azure_openai takes an API version"},
		{Path: "agents[].backend.azure_endpoint", On: []string{"azure_openai"}, Status: Implemented, Note: "The Azure resource endpoint (as base_url)."},
		{Path: "agents[].backend.azure_endpoint", Status: Ignored, Note: "only azure_openai takes an endpoint"},
		{Path: "agents[].backend.endpoint", On: []string{"azure_openai"}, Status: Implemented, Note: "Same as azure_endpoint."},
		{Path: "agents[].backend.endpoint", Status: Ignored, Note: "only azure_openai takes an endpoint"},
	},

	// Backend: MassGen features.
	[]Key{
		{Path: "agents[].backend.enable_web_search", On: []string{famOpenAI}, Status: Implemented, Note: "Adds OpenAI's web_search tool (runs on OpenAI's servers)."},
		{Path: "agents[].backend.enable_web_search", On: []string{famClaude}, Status: Implemented, Note: "Adds Claude's web search server tool (web_search_20250305); citations are listed in the answer."},
		{Path: "agents[].backend.enable_web_search", On: []string{famGemini}, Status: Implemented, Note: "Adds the Google Search tool (models before Gemini 3 get it as a google_search function answered by a grounded request); sources are listed in the answer."},
		{Path: "agents[].backend.enable_web_search", On: []string{"grok", "xai"}, Status: Implemented, Note: "Sends search_parameters {mode: auto, return_citations: true}, as MassGen does; citations are listed in the answer. Setting it together with extra_body.search_parameters is an error."},
		{Path: "agents[].backend.enable_web_search", Status: Ignored, Same: []string{"false"}, Note: "this backend has no web search: the model answers without searching the web"},
		{Path: "agents[].backend.enable_code_interpreter", On: []string{famOpenAI}, Status: Implemented, Note: "Adds OpenAI's code_interpreter tool (runs on OpenAI's servers)."},
		{Path: "agents[].backend.enable_code_interpreter", Status: Ignored, Same: []string{"false"}, Note: "only openai has a code interpreter; agents with a workspace can run code with execute_command"},
		{Path: "agents[].backend.enable_code_execution", On: []string{famClaude}, Status: Implemented, Note: "Adds Claude's code execution server tool (code_execution_20250522, beta code-execution-2025-05-22); the code and its output are shown in the answer."},
		{Path: "agents[].backend.enable_code_execution", On: []string{famGemini}, Status: Implemented, Note: "Adds Gemini's code execution tool; the code and its output are shown in the answer."},
		{Path: "agents[].backend.enable_code_execution", Status: Ignored, Same: []string{"false"}, Note: "this backend has no provider code execution (openai: enable_code_interpreter); agents with a workspace can run code with execute_command"},
		{Path: "agents[].backend.betas", On: []string{famClaude}, Status: Implemented, Note: "Sent in the anthropic-beta header (the SDK's beta Messages API)."},
		{Path: "agents[].backend.betas", Status: Ignored, Note: "only claude takes beta flags; not sent"},
		{Path: "agents[].backend.custom_tools", Status: Implemented, Note: "Python functions offered as tools named custom_tool__NAME. Each call runs python3 in the command sandbox, with the agent's permissions (it reads what the agent may read, writes only where it may write), the arguments as JSON on stdin and the result as JSON on stdout (docs/tools.md). Validation fails when python3 is missing, a file or function does not exist, or a module the file imports is not installed."},
		{Path: "agents[].backend.custom_tools[].path", Status: Implemented, Note: "The .py file, relative to the current directory as in MassGen. Only this file is made readable to the tool's process, besides what the agent may read."},
		{Path: "agents[].backend.custom_tools[].function", Status: Implemented, Note: "A function of the file, or a list of them: each is a tool."},
		{Path: "agents[].backend.custom_tools[].name", Status: Implemented, Note: "The tool's name (offered as custom_tool__NAME), one per function; default: the function's name."},
		{Path: "agents[].backend.custom_tools[].description", Status: Implemented, Note: "The tool's description, shared or one per function; default: the function's docstring."},
		{Path: "agents[].backend.custom_tools[].preset_args", Status: Implemented, Open: true, Note: "Arguments the config fixes (a mapping, shared or one per function): hidden from the model, which cannot override them. agent_cwd (the agent's workspace) is filled in as in MassGen when the function takes it."},
		{Path: "agents[].backend.custom_tools[].category", Status: Implemented, Note: "Accepted; every category is enabled, as in MassGen."},
		{Path: "agents[].backend.custom_tools[].parameters", Status: Implemented, Open: true, Massgen: true, Note: "The JSON schema of the arguments (shared or one per function); default: read from the function's signature, type hints and docstring, as MassGen does."},
		{Path: "agents[].backend.custom_tools[].env", Status: Implemented, Open: true, Massgen: true, Note: "Environment variables for the tool's process, which otherwise gets none of massgen's secrets (OPENAI_API_KEY: ${OPENAI_API_KEY}); masked by configs show."},
		{Path: "agents[].backend.custom_tools[].timeout_seconds", Status: Implemented, Massgen: true, Note: "Bounds one call (default 300); a call that runs longer is stopped with its processes."},
		{Path: "agents[].backend.exclude_tools", Status: Implemented, Note: "Tools the agent is not offered (in the run, tools list and mcp serve alike): a name as offered (delete_file, mcp__server__tool) or as an MCP server names its tool (MassGen's form, for every server)."},
		{Path: "agents[].backend.allowed_tools", Status: Ignored, Note: "every tool stays offered; the permission rules decide what may run"},
		{Path: "agents[].backend.allowed_tools", On: []string{famClaudeCode}, Status: Ignored, Note: ccOwnToolsOff},
		{Path: "agents[].backend.disallowed_tools", Status: Ignored, Note: "every tool stays offered; to block one, add a permissions deny rule naming it"},
		{Path: "agents[].backend.disallowed_tools", On: []string{famClaudeCode}, Status: Ignored, Note: ccOwnToolsOff},
		{Path: "agents[].backend.permission_mode", Status: Ignored, Note: "use the permissions: section (mode: acceptEdits, default or bypassPermissions)"},
		{Path: "agents[].backend.permission_mode", On: []string{famClaudeCode}, Status: Ignored, Note: "Claude Code's own permission prompts are not used: massgen's permission layer decides every call (permissions.mode: acceptEdits, default or bypassPermissions)"},
		{Path: "agents[].backend.max_thinking_tokens", On: []string{famClaudeCode}, Status: Implemented, Note: "Passed as --max-thinking-tokens."},
		{Path: "agents[].backend.max_thinking_tokens", Status: Ignored, Note: "a claude_code option; not sent"},
		{Path: "agents[].backend.max_turns", On: []string{famClaudeCode}, Status: Implemented, Note: "Passed as --max-turns: the model calls the CLI may make for one reply."},
		{Path: "agents[].backend.max_turns", Status: Ignored, Note: "a claude_code option; not sent"},
		{Path: "agents[].backend.system_prompt", Status: Refused, Note: "not supported in the backend section (MassGen refuses it too): write system_message at the agent level"},
		{Path: "agents[].backend.append_system_prompt", Status: Refused, Note: "not supported in the backend section (MassGen refuses it too): write system_message at the agent level"},
		{Path: "agents[].backend.enable_mcp_command_line", Status: Ignored, Same: []string{"true"}, Note: "execute_command is offered to every agent with a workspace (cwd), inside the kernel sandbox; to forbid commands, add a permissions deny rule execute_command(*)"},
		{Path: "agents[].backend.command_line_execution_mode", Status: Ignored, Same: []string{"local", "srt"}, Note: "commands run in the kernel sandbox (landlock or bubblewrap), never in docker"},
		{Path: "agents[].backend.command_line_allowed_commands", Status: Implemented, Note: "Regular expressions (RE2) matched at the start of each program a command runs, as MassGen's re.match: execute_command runs a command only when every program in it (pipelines, lists, nested shells included) matches one. It is the deny rule execute_command(!re:P1|P2|...), shown by permissions check; like every deny rule, not applied in mode bypassPermissions."},
		{Path: "agents[].backend.command_line_blocked_commands", Status: Implemented, Note: "Regular expressions (RE2): a command is denied when one matches the start of any program in it, or of the whole line. Each is the deny rule execute_command(re:P); like every deny rule, not applied in mode bypassPermissions."},
		{Path: "agents[].backend.command_line_docker_image", Status: Ignored, Note: noDocker},
		{Path: "agents[].backend.command_line_docker_network_mode", Status: Ignored, Note: noDocker},
		{Path: "agents[].backend.command_line_docker_enable_sudo", Status: Ignored, Note: noDocker},
		{Path: "agents[].backend.command_line_docker_credentials", Status: Ignored, Note: noDocker},
		{Path: "agents[].backend.command_line_docker_packages", Status: Ignored, Note: noDocker},
		{Path: "agents[].backend.command_line_docker_memory_limit", Status: Ignored, Note: noDocker},
		{Path: "agents[].backend.command_line_docker_cpu_limit", Status: Ignored, Note: noDocker},
		{Path: "agents[].backend.upload_files", Status: Ignored, Note: "files are not uploaded to the provider; put them in a context path so agents can read them"},
		{Path: "agents[].backend.vector_store", Status: Ignored, Note: "provider vector stores are not used"},
		{Path: "agents[].backend.enable_file_search", Status: Ignored, Same: []string{"false"}, Note: "provider file search is not offered; agents search their files with the file tools"},
		{Path: "agents[].backend.enable_image_generation", Status: Ignored, Same: []string{"false"}, Note: "image generation is not offered"},
		{Path: "agents[].backend.enable_audio_generation", Status: Ignored, Same: []string{"false"}, Note: "audio generation is not offered"},
		{Path: "agents[].backend.enable_video_generation", Status: Ignored, Same: []string{"false"}, Note: "video generation is not offered"},
		{Path: "agents[].backend.enable_file_generation", Status: Ignored, Same: []string{"false"}, Note: "no file-generation instructions are added; agents with a workspace write files with the file tools"},
		{Path: "agents[].backend.media_max_file_size_mb", Status: Ignored, Note: "media files are not sent to the provider"},
		{Path: "agents[].backend.enable_rate_limit", Status: Ignored, Same: []string{"false"}, Note: "no client-side rate limit; a provider's 429 answers are retried with backoff"},
		{Path: "agents[].backend.use_multi_mcp", Status: Ignored, Note: "MCP servers are always connected through the MCP Go SDK"},
		{Path: "agents[].backend.mcp_sdk_auto", Status: Ignored, Note: "MCP servers are always connected through the MCP Go SDK"},
		{Path: "agents[].backend.context_paths", Status: Ignored, Note: "per-agent context paths are not read; list them under orchestrator.context_paths"},
		{Path: "agents[].backend.agent_config", Status: Refused, Note: "an AG2 option: AG2 is a Python framework adapter that this port does not run"},
		{Path: "agents[].backend.group_config", Status: Refused, Note: "an AG2 option: AG2 is a Python framework adapter that this port does not run"},
	},

	// Orchestrator.
	[]Key{
		{Path: "orchestrator.snapshot_storage", Status: Implemented, Note: "Snapshots of each agent's workspace (default .massgen/snapshots)."},
		{Path: "orchestrator.agent_temporary_workspace", Status: Implemented, Note: "Where agents see the others' snapshots (default .massgen/temp_workspaces)."},
		{Path: "orchestrator.session_storage", Status: Implemented, Note: "Multi-turn sessions (default .massgen/sessions)."},
		{Path: "orchestrator.context_paths", Status: Implemented, Note: "Your files the agents may use."},
		{Path: "orchestrator.context_paths[].path", Status: Implemented, Note: "A file or directory, relative to the current directory."},
		{Path: "orchestrator.context_paths[].permission", Status: Implemented, Note: "read or write (the final agent's access; read when omitted)."},
		{Path: "orchestrator.context_paths[].protected_paths", Status: Implemented, Note: "Paths inside it that no agent may change."},
		{Path: "orchestrator.max_new_answers_per_agent", Status: Implemented, Note: "Cap on answers per agent; after it the agent may only vote."},
		{Path: "orchestrator.timeout_seconds", Status: Implemented, Massgen: true, Note: "Overall time limit (wins over timeout_settings)."},
		{Path: "orchestrator.agent_timeout_seconds", Status: Implemented, Massgen: true, Note: "Time limit of each agent's turn."},
		{Path: "orchestrator.max_cost_usd", Status: Implemented, Massgen: true, Note: "Budget of a turn's model calls (USD; --max-cost wins): warnings at 50, 75 and 90%; at 100% no request starts and the best answer so far is presented."},
		{Path: "orchestrator.max_task_bytes", Status: Implemented, Massgen: true, Note: "The largest task accepted, in bytes (default 1048576, 1 MiB); the --max-task-bytes flag wins."},
		{Path: "orchestrator.enforce_read_before_delete", Status: Implemented, Note: "An agent must read a file before deleting it (default true)."},
		{Path: "orchestrator.command_network", Status: Implemented, Massgen: true, Note: "The network every agent's commands may reach (agents[].command_network wins field by field): mode none (default), allowlist or open, and allowed_domains (docs/tools.md)."},
		{Path: "orchestrator.command_network.mode", Status: Implemented, Massgen: true, Note: "none (default), allowlist or open: for every agent."},
		{Path: "orchestrator.command_network.allowed_domains", Status: Implemented, Massgen: true, Note: "The hosts every agent's commands may reach in allowlist mode."},
		{Path: "orchestrator.timeout", Status: Ignored, Note: "not read (MassGen 0.1.12 reads timeout_settings); use timeout_settings.orchestrator_timeout_seconds"},
		{Path: "orchestrator.voting_sensitivity", Status: Implemented, Note: "lenient (default), balanced, strict or checklist_gated: how good the best answer must be before an agent votes for it, in MassGen's words in the coordination prompt. With checklist_gated (MassGen 0.1.50), agents score the answers against MassGen's four default criteria (0-10) with the submit_checklist tool once they have an answer; its verdict (vote or new_answer, from MassGen's gate: voting_threshold adjusted by the answers left) is advice the prompt tells them to follow, as in MassGen. Unlike MassGen, no diagnostic report is required and criteria are not generated."},
		{Path: "orchestrator.answer_novelty_requirement", Status: Implemented, Note: "lenient (default), balanced or strict: balanced and strict say in the prompt how different a new answer must be, and refuse one sharing more than 70% (strict: 50%) of its words with an existing answer, as MassGen does."},
		{Path: "orchestrator.skip_coordination_rounds", Status: Implemented, Note: "true: no coordination; the first agent presents the final answer at once (a debugging aid, as in MassGen)."},
		{Path: "orchestrator.debug_final_answer", Status: Implemented, Note: "The text the first post-evaluation judges instead of the real final answer, to force a restart (needs coordination.max_orchestration_restarts)."},
		{Path: "orchestrator.max_orchestration_restarts", Status: Ignored, Same: []string{"0"}, Note: "not read at this level (MassGen does not read it here either): write it under orchestrator.coordination"},
		{Path: "orchestrator.enable_planning_mode", Status: Ignored, Same: []string{"false"}, Note: "not read at this level (MassGen does not read it here either): write it under orchestrator.coordination"},
		{Path: "orchestrator.dspy", Status: Ignored, Note: "the question is not paraphrased: every agent gets it as written"},
		{Path: "orchestrator.coordination", Status: Implemented, Note: "MassGen's coordination options (each listed below)."},
		{Path: "orchestrator.coordination.enable_planning_mode", Status: Implemented, Note: "During coordination, MCP tools that may act outside massgen's sandbox (every MCP tool its server does not declare read-only) are not run: the call is answered with a note and agents plan; the agent presenting the final answer runs them (docs/orchestrator.md)."},
		{Path: "orchestrator.coordination.planning_mode_instruction", Status: Implemented, Note: "Added to the coordination system prompt in planning mode (default: MassGen's instruction)."},
		{Path: "orchestrator.coordination.max_orchestration_restarts", Status: Implemented, Note: "After the final presentation the winner evaluates it (submit or restart_orchestration); a restart runs the coordination again with the reason and instructions, at most this many times (default 0: no evaluation)."},
		{Path: "orchestrator.coordination.enable_agent_task_planning", Status: Ignored, Same: []string{"false"}, Note: "agents get no task-planning tools"},
		{Path: "orchestrator.coordination.max_tasks_per_plan", Status: Ignored, Note: "agents get no task-planning tools"},
		{Path: "orchestrator.coordination.task_planning_filesystem_mode", Status: Ignored, Same: []string{"false"}, Note: "agents get no task-planning tools"},
		{Path: "orchestrator.coordination.enable_memory_filesystem_mode", Status: Ignored, Same: []string{"false"}, Note: "agents get no memory files"},
		{Path: "orchestrator.coordination.use_skills", Status: Ignored, Same: []string{"false"}, Note: "skills are not offered"},
		{Path: "orchestrator.coordination.massgen_skills", Status: Ignored, Note: "skills are not offered"},
		{Path: "orchestrator.coordination.skills_directory", Status: Ignored, Note: "skills are not offered"},
	},
	laterKeys(),
)

func v1Keys(names ...string) []Key {
	var ks []Key
	for _, n := range names {
		ks = append(ks, Key{Path: n, Status: Refused,
			Note: "MassGen's v1 config format is not supported (MassGen 0.1 refuses it too): list agents: with a backend: each"})
	}
	return ks
}

func scriptKeys() []Key {
	p := "agents[].backend.script[]."
	return []Key{
		{Path: p + "text", Status: Implemented, Massgen: true, Note: "The reply's text."},
		{Path: p + "tool_calls", Status: Implemented, Massgen: true, Note: "The reply's tool calls."},
		{Path: p + "tool_calls[].name", Status: Implemented, Massgen: true, Note: "Tool name."},
		{Path: p + "tool_calls[].args", Status: Implemented, Massgen: true, Open: true, Note: "Tool arguments (${WORKSPACE}, ${TEMP_WORKSPACE}, ${CONTEXT_N} filled in)."},
		{Path: p + "phase", Status: Implemented, Massgen: true, Note: "coordination or final (empty: either)."},
		{Path: p + "wait_for", Status: Implemented, Massgen: true, Note: "Wait until this path exists before replying."},
		{Path: p + "block", Status: Implemented, Massgen: true, Note: "Never reply until cancelled."},
	}
}

func mcpKeys() []Key {
	p := "agents[].backend.mcp_servers[]."
	return []Key{
		{Path: p + "name", Status: Implemented, Note: "Server name; its tools are offered as mcp__<name>__<tool>."},
		{Path: p + "type", Status: Implemented, Note: "stdio, streamable-http, http (the same) or sse."},
		{Path: p + "command", Status: Implemented, Note: "stdio: the program to start (a relative path is relative to massgen's working directory); it runs in an empty private folder, never the workspace."},
		{Path: p + "args", Status: Implemented, Note: "stdio: its arguments (${cwd} is the agent's workspace)."},
		{Path: p + "env", Status: Implemented, Open: true, Note: "stdio: extra environment variables, over a minimal base (PATH, HOME, locale, TMPDIR, proxies, PYTHONSAFEPATH=1)."},
		{Path: p + "url", Status: Implemented, Note: "streamable-http/sse: the server's URL."},
		{Path: p + "security", Status: Implemented, Note: "MassGen's checks before the server starts (a server that fails them does not start: validate warns, the run goes on without it). massgen checks only servers that have this section; MassGen checks every server at level strict."},
		{Path: p + "security.level", Status: Implemented, Note: "strict (default), moderate, permissive or high: the programs that may start a stdio server (python, node, npx, uvx, sh, ...; moderate adds git, permissive curl and wget) and the env variables it may be given (strict refuses PATH, HOME, USER, SHELL). high, which MassGen's configs write, is what MassGen makes of a level it does not know: strict's programs, and env refusing PATH and HOME (not USER or SHELL)."},
		{Path: p + "security.allowed_executables", Status: Implemented, Note: "The programs that may start the stdio server, instead of the level's."},
		{Path: p + "security.allowed_hostnames", Status: Implemented, Note: "Hosts an http server's URL may name without the address checks."},
		{Path: p + "security.allow_localhost", Status: Implemented, Note: "An http server's URL may name this machine (otherwise refused)."},
		{Path: p + "security.allow_private_ips", Status: Implemented, Note: "An http server's URL may be a private address (otherwise refused)."},
		{Path: p + "security.resolve_dns", Status: Ignored, Same: []string{"false"}, Note: "host names are checked as written, not resolved: one that resolves to a private address is not refused"},
		{Path: p + "security.env", Status: Implemented, Note: "The policy on the server's env: variables."},
		{Path: p + "security.env.level", Status: Implemented, Note: "strict, moderate, permissive or high: the level whose variables are refused (default: the server's)."},
		{Path: p + "security.env.mode", Status: Implemented, Note: "denylist (default: refuse the level's or denied_vars) or allowlist (only allowed_vars)."},
		{Path: p + "security.env.allowed_vars", Status: Implemented, Note: "With mode allowlist, the only variables allowed."},
		{Path: p + "security.env.denied_vars", Status: Implemented, Note: "The variables refused, instead of the level's."},
		{Path: p + "allowed_tools", Status: Implemented, Note: "Only these tools of the server (its own names) are offered."},
		{Path: p + "exclude_tools", Status: Implemented, Note: "These tools of the server (its own names) are not offered."},
		{Path: p + "headers", Status: Ignored, Note: "no extra HTTP headers are sent to the server"},
		{Path: p + "timeout", Status: Ignored, Note: "massgen's own limits apply (60 s to start, 10 minutes per call)"},
		{Path: p + "http_read_timeout", Status: Ignored, Note: "massgen's own limits apply (60 s to start, 10 minutes per call)"},
		{Path: p + "cwd", Status: Ignored, Note: "a stdio server starts in the agent's workspace"},
	}
}

func concatKeys(parts ...[]Key) []Key {
	var out []Key
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
