package configs

// The keys MassGen added after 0.1.12, up to 0.1.97: every key its configs of 0.1.91 use, every
// key of its orchestrator, coordination and timeout sections (AgentConfig's and
// CoordinationConfig's fields), its backend options that a user writes, 0.1.96's srt keys and
// 0.1.97's permission engine block. Since is the release whose history first has the key.

func since(v string, k Key) Key {
	k.Since = v
	return k
}

func ignoredSince(v, path, note string, same ...string) Key {
	return Key{Path: path, Status: Ignored, Since: v, Note: note, Same: same}
}

const (
	noSubagents     = "agents cannot spawn subagents: each agent works alone on its answer"
	noEvaluator     = "no round evaluator or trace analysis runs between rounds; agents evaluate the answers themselves when they vote"
	noMultimodal    = "no image, audio or video tools are offered"
	noNLIP          = "the NLIP protocol is not spoken: agents talk through massgen's tools only"
	noBroadcast     = "agents cannot ask each other or the user questions during coordination"
	noCheckpoints   = "no checkpoints: a run can be continued with --session or --continue"
	noFastIteration = "no fast-iteration guidance is added to the prompts"
	noCriteriaGen   = "criteria are not generated or evolved; with voting_sensitivity checklist_gated agents score MassGen's default criteria"
	noCodeTools     = "custom tools are offered as tools (custom_tools), not as code for the agent to import (MassGen's code-based tools)"
	noToolSearch    = "every tool is sent with each request (no tool search or deferred loading)"
	noMidstream     = "answers are never injected into a running execution: an agent sees new answers when it restarts (docs/orchestrator.md)"
	noMassGenRead   = "MassGen accepts the key and does not act on it either"
)

func laterKeys() []Key {
	o := "orchestrator."
	c := "orchestrator.coordination."
	b := "agents[].backend."
	return []Key{
		// Top level.
		ignoredSince("0.0.2", "timeout", "not read (MassGen does not read it either); use timeout_settings.orchestrator_timeout_seconds"),
		ignoredSince("0.0.2", "task", "not read (MassGen does not read it either): give the task on the command line"),
		ignoredSince("0.1.14", "nlip", noNLIP),

		// Agents.
		ignoredSince("0.0.5", "agents[].append_system_prompt", "not read at this level (MassGen does not read it either): write it into system_message"),
		ignoredSince("0.1.14", "agents[].nlip", noNLIP),
		ignoredSince("0.1.14", "agents[].enable_nlip", noNLIP, "false"),
		ignoredSince("0.1.41", "agents[].voting_sensitivity", "one level for every agent: orchestrator.voting_sensitivity"),
		ignoredSince("0.1.30", "agents[].subagent_agents", noSubagents),
		ignoredSince("0.1.68", "agents[].main_agent", noCheckpoints),
		ignoredSince("0.1.58", "agents[].subtask", "no task decomposition: every agent works on the whole task"),

		// Backend.
		ignoredSince("0.1.14", b+"exclude_file_operation_mcps", "massgen's permission-checked file tools are always offered; to take some away, name them in exclude_tools", "false"),
		ignoredSince("0.1.14", b+"auto_discover_custom_tools", noCodeTools, "false"),
		ignoredSince("0.1.14", b+"shared_tools_directory", noCodeTools),
		ignoredSince("0.1.14", b+"enable_code_based_tools", noCodeTools, "false"),
		ignoredSince("0.1.14", b+"exclude_custom_tools", noCodeTools),
		ignoredSince("0.1.14", b+"custom_tools_path", noCodeTools),
		ignoredSince("0.1.15", b+"concurrent_tool_execution", "a reply's tool calls run one after another, in order", "false"),
		ignoredSince("0.1.15", b+"max_concurrent_tools", "a reply's tool calls run one after another, in order"),
		ignoredSince("0.1.36", b+"direct_mcp_servers", "every MCP server is connected the same way, through the MCP Go SDK"),
		ignoredSince("0.1.28", b+"use_mcpwrapped_for_tool_filtering", "allowed_tools and exclude_tools filter MCP tools in massgen itself"),
		ignoredSince("0.1.37", b+"use_no_roots_wrapper", "MCP servers are started as configured"),
		ignoredSince("0.1.37", b+"debug_delay_seconds", "a debugging aid of MassGen's answer injection; massgen never injects answers"),
		ignoredSince("0.1.37", b+"debug_delay_after_n_tools", "a debugging aid of MassGen's answer injection; massgen never injects answers"),
		ignoredSince("0.1.19", b+"enable_tool_search", noToolSearch, "false"),
		ignoredSince("0.1.19", b+"tool_search_variant", noToolSearch),
		ignoredSince("0.1.19", b+"enable_strict_tool_use", "tool definitions are sent without strict mode", "false"),
		ignoredSince("0.1.19", b+"enable_programmatic_flow", "tools are called by the model, one reply at a time", "false"),
		ignoredSince("0.1.65", b+"websocket_mode", "requests go over HTTP", "false"),
		ignoredSince("0.1.63", b+"plan_thoroughness", "agents get no task-planning tools"),
		ignoredSince("0.1.34", b+"vote_only", "an agent with answers left may answer or vote; max_new_answers_per_agent: 0 is not allowed, 1 leaves one answer", "false"),
		ignoredSince("0.1.29", b+"image_generation_model", noMultimodal),
		ignoredSince("0.1.29", b+"audio_generation_model", noMultimodal),
		ignoredSince("0.1.29", b+"video_generation_model", noMultimodal),
		ignoredSince("0.1.7", b+"custom_tools[].default_params", "not read (MassGen does not read it either); preset_args fixes arguments"),
		ignoredSince("0.1.19", b+"custom_tools[].defer_loading", noToolSearch, "false"),
		ignoredSince("0.1.19", b+"mcp_servers[].defer_loading", noToolSearch, "false"),
		{Path: b + "reasoning", On: []string{famClaudeCode}, Status: Ignored, Since: "0.1.58",
			Note: "Claude Code's thinking type and effort are not passed to the claude CLI; max_thinking_tokens is"},

		// MassGen 0.1.96: commands under Anthropic's sandbox-runtime (srt).
		since("0.1.96", Key{Path: b + "command_line_srt_network_allowed_domains", Status: Implemented,
			Note: "With command_line_execution_mode: srt, the agent's command_network becomes {mode: allowlist, allowed_domains: these} (configs show --resolved), enforced by massgen's sandbox and proxy (docs/tools.md); without it, srt means no network (mode none)."}),
		ignoredSince("0.1.96", b+"command_line_srt_read_mode", "commands read only the agent's paths and system folders, never the home folder (srt's strict mode); open is not offered", "confined", "strict"),
		ignoredSince("0.1.96", b+"command_line_srt_allow_read", "commands read only what the agent may read: to let them read a folder, add it as a context path with permission: read"),
		ignoredSince("0.1.96", b+"command_line_srt_deny_read", "commands never read outside the agent's paths and system folders, so srt's default denials (~/.ssh, ~/.aws, ...) hold anyway; a path inside the agent's paths stays readable by its commands (a deny rule such as @read(P) keeps the file tools from it)"),
		ignoredSince("0.1.96", b+"command_line_srt_allow_unix_sockets", "commands cannot connect to UNIX sockets outside the sandbox"),

		// MassGen 0.1.97: the permission engine block (not massgen's permissions: section).
		since("0.1.97", Key{Path: b + "permissions", Status: Implemented,
			Note: "MassGen's permission engine, mapped onto the agent's permissions section (configs show --resolved shows the rules added; docs/permissions.md). Not massgen's own permissions: (top level or agents[].permissions), whose rules name tools. Deny wins in both. Unlike MassGen, which leaves claude_code and codex agents outside it, the rules hold for every backend."}),
		since("0.1.97", Key{Path: b + "permissions.enabled", Status: Implemented, Note: "false: the block is not mapped (MassGen skips it)."}),
		since("0.1.97", Key{Path: b + "permissions.rules", Status: Implemented, Note: "allow, ask and deny lists of action(target) rules."}),
		since("0.1.97", Key{Path: b + "permissions.rules.allow", Status: Implemented, Note: "Become allow rules (they spare a question; they never widen what the path rules allow): command(P) -> @command(P); read_file(P) and write_file(P) -> @read(P) and @write(P), every tool that reads (or writes or deletes) a path by its declaration; mcp(server/tool) -> mcp__server__tool; *(P) -> *(P). A path glob is matched as massgen matches paths (as given, resolved, or relative to the workspace; * does not cross /, ** does), not against the argument as written. read_url rules are not mapped (warned)."}),
		since("0.1.97", Key{Path: b + "permissions.rules.deny", Status: Implemented, Note: "Become deny rules, mapped as allow rules are."}),
		since("0.1.97", Key{Path: b + "permissions.rules.ask", Status: Ignored, Note: "ask rules are not mapped: massgen asks by permissions.mode (mode default asks before each command and context-path write; with no terminal an ask is a deny)"}),
		since("0.1.97", Key{Path: b + "permissions.role", Status: Implemented, Note: "read-only and researcher deny every file write and command (deny rules); another role is warned about and not mapped."}),
		ignoredSince("0.1.97", b+"permissions.automation_default", "no risk classifier: calls the rules do not settle run if the path rules allow them (permissions.mode default asks before commands and context-path writes; with no terminal an ask is a deny)"),
		ignoredSince("0.1.97", b+"permissions.audit", "every decision is written to permissions.jsonl in the run's log folder anyway", "true"),
		ignoredSince("0.1.97", b+"permissions.max_consecutive_auto", "no approval budget: permissions.mode decides what is asked"),
		ignoredSince("0.1.97", b+"permissions.persist_approvals", "allow for this run is remembered for the run only; write lasting allow rules in permissions.allow"),

		// Orchestrator.
		since("0.1.50", Key{Path: o + "voting_threshold", Status: Implemented, Note: "With voting_sensitivity checklist_gated: the gate's strictness, 0-10 (default 5), raised as an agent's answers run out (MassGen's ChecklistGate): how many criteria must reach the cutoff score for the verdict vote. Not read otherwise."}),
		ignoredSince("0.1.49", o+"max_new_answers_global", "no cap over all agents: max_new_answers_per_agent caps each"),
		ignoredSince("0.1.50", o+"fairness_enabled", "no fairness gate: massgen's restart policy decides when agents run again (docs/orchestrator.md)", "false"),
		ignoredSince("0.1.50", o+"fairness_lead_cap_answers", "no fairness gate: massgen's restart policy decides when agents run again (docs/orchestrator.md)"),
		ignoredSince("0.1.50", o+"max_midstream_injections_per_round", noMidstream),
		ignoredSince("0.1.61", o+"defer_peer_updates_until_restart", noMidstream, "true"),
		ignoredSince("0.1.61", o+"allow_midstream_peer_updates_before_checklist_submit", noMidstream, "false"),
		ignoredSince("0.1.41", o+"defer_voting_until_all_answered", "an agent may vote once some answer exists", "false"),
		ignoredSince("0.1.49", o+"coordination_mode", "one coordination: agents answer and vote; the winner presents", "voting"),
		ignoredSince("0.1.49", o+"presenter_agent", "the agent with the most votes presents (ties: the earliest answer)"),
		ignoredSince("0.1.61", o+"final_answer_strategy", "the winner presents the final answer"),
		ignoredSince("0.1.41", o+"skip_final_presentation", "the winner always presents the final answer", "false"),
		ignoredSince("0.1.41", o+"skip_voting", "agents always vote", "false"),
		ignoredSince("0.1.41", o+"disable_injection", noMidstream, "true"),
		ignoredSince("0.1.50", o+"checklist_require_gap_report", "submit_checklist takes an optional report_path and neither requires nor checks a diagnostic report", "false"),
		ignoredSince("0.1.53", o+"gap_report_mode", "submit_checklist takes an optional report_path and neither requires nor checks a diagnostic report", "none"),
		since("0.1.58", Key{Path: o + "max_checklist_calls_per_round", Status: Implemented, Note: "With checklist_gated: accepted submit_checklist calls per execution (default 1); a submission with a validation error does not count."}),
		since("0.1.58", Key{Path: o + "checklist_first_answer", Status: Implemented, Note: "With checklist_gated: true lets an agent call submit_checklist before its first answer (default: only once it has one)."}),
		ignoredSince("0.0.31", o+"docker", "commands run in the kernel sandbox, never in docker"),
		ignoredSince("0.0.5", o+"interactive_mode", "interactive when no task is given on the command line"),
		ignoredSince("0.1.29", o+"enable_multimodal_tools", noMultimodal, "false"),
		ignoredSince("0.1.29", o+"multimodal_config", noMultimodal),
		ignoredSince("0.1.29", o+"image_generation_backend", noMultimodal),
		ignoredSince("0.1.29", o+"audio_generation_backend", noMultimodal),
		ignoredSince("0.1.29", o+"video_generation_backend", noMultimodal),
		ignoredSince("0.1.14", o+"enable_nlip", noNLIP, "false"),
		ignoredSince("0.1.14", o+"nlip", noNLIP),
		ignoredSince("0.1.14", o+"nlip_config", noNLIP),
		ignoredSince("0.0.5", o+"max_turns", noMassGenRead),
		ignoredSince("0.0.2", o+"type", noMassGenRead),
		ignoredSince("0.1.12", o+"skills_directory", "skills are not offered"),

		// Coordination.
		ignoredSince("0.1.39", c+"plan_depth", "agents get no task-planning tools"),
		ignoredSince("0.1.51", c+"plan_target_steps", "agents get no task-planning tools"),
		ignoredSince("0.1.51", c+"plan_target_chunks", "agents get no task-planning tools"),
		ignoredSince("0.1.19", c+"broadcast", noBroadcast, "false"),
		ignoredSince("0.1.19", c+"broadcast_sensitivity", noBroadcast),
		ignoredSince("0.1.19", c+"broadcast_timeout", noBroadcast),
		ignoredSince("0.1.19", c+"broadcast_wait_by_default", noBroadcast),
		ignoredSince("0.1.19", c+"max_broadcasts_per_agent", noBroadcast),
		ignoredSince("0.1.27", c+"response_depth", "no response-depth guidance is added to the prompts"),
		ignoredSince("0.1.58", c+"learning_capture_mode", "agents get no memory files"),
		ignoredSince("0.1.60", c+"disable_final_only_round_capture_fallback", "agents get no memory files"),
		ignoredSince("0.1.34", c+"compression_target_ratio", "no conversation compression"),
		ignoredSince("0.1.24", c+"load_previous_session_skills", "skills are not offered", "false"),
		ignoredSince("0.1.16", c+"persona_generator", "no generated personas: each agent keeps its system_message"),
		ignoredSince("0.1.56", c+"evaluation_criteria_generator", noCriteriaGen),
		ignoredSince("0.1.68", c+"prompt_improver", "the task is given to the agents as written"),
		ignoredSince("0.1.59", c+"pre_collab_voting_threshold", "no pre-collaboration steps"),
		ignoredSince("0.1.30", c+"enable_subagents", noSubagents, "false"),
		ignoredSince("0.1.30", c+"subagent_default_timeout", noSubagents),
		ignoredSince("0.1.35", c+"subagent_min_timeout", noSubagents),
		ignoredSince("0.1.35", c+"subagent_max_timeout", noSubagents),
		ignoredSince("0.1.30", c+"subagent_max_concurrent", noSubagents),
		ignoredSince("0.1.42", c+"subagent_round_timeouts", noSubagents),
		ignoredSince("0.1.54", c+"subagent_runtime_mode", noSubagents),
		ignoredSince("0.1.54", c+"subagent_runtime_fallback_mode", noSubagents),
		ignoredSince("0.1.54", c+"subagent_host_launch_prefix", noSubagents),
		ignoredSince("0.1.30", c+"subagent_orchestrator", noSubagents),
		ignoredSince("0.1.54", c+"background_subagents", noSubagents),
		ignoredSince("0.1.54", c+"subagent_types", noSubagents),
		ignoredSince("0.1.49", c+"task_decomposer", "no task decomposition: every agent works on the whole task"),
		ignoredSince("0.1.39", c+"use_two_tier_workspace", "one workspace per agent", "false"),
		ignoredSince("0.1.49", c+"write_mode", "each agent writes its own workspace (no git worktrees); only the final agent writes the context paths"),
		ignoredSince("0.1.52", c+"enable_changedoc", "agents write no change documents", "false"),
		ignoredSince("0.1.52", c+"drift_conflict_policy", "agents write no change documents"),
		ignoredSince("0.1.61", c+"round_evaluator_before_checklist", noEvaluator, "false"),
		ignoredSince("0.1.61", c+"orchestrator_managed_round_evaluator", noEvaluator, "false"),
		ignoredSince("0.1.62", c+"round_evaluator_skip_synthesis", noEvaluator),
		ignoredSince("0.1.62", c+"round_evaluator_refine", noEvaluator),
		ignoredSince("0.1.64", c+"round_evaluator_transformation_pressure", noEvaluator),
		ignoredSince("0.1.65", c+"enable_execution_trace_analyzer", noEvaluator, "false"),
		ignoredSince("0.1.71", c+"auto_trace_analysis", noEvaluator, "false"),
		ignoredSince("0.1.60", c+"enable_quality_rethink_on_iteration", noSubagents, "false"),
		ignoredSince("0.1.60", c+"enable_novelty_on_iteration", noSubagents, "false"),
		ignoredSince("0.1.53", c+"novelty_injection", "answer_novelty_requirement sets how different a new answer must be"),
		ignoredSince("0.1.60", c+"improvements", noCriteriaGen),
		ignoredSince("0.1.74", c+"evolving_criteria", noCriteriaGen, "false"),
		ignoredSince("0.1.74", c+"evolving_criteria_score_threshold", noCriteriaGen),
		ignoredSince("0.1.74", c+"evolving_criteria_max_evolutions", noCriteriaGen),
		ignoredSince("0.1.74", c+"evolving_criteria_min_high_score_count", noCriteriaGen),
		ignoredSince("0.1.74", c+"evolving_criteria_timeout", noCriteriaGen),
		ignoredSince("0.1.68", c+"enable_evaluator_personas", noCriteriaGen, "false"),
		ignoredSince("0.1.56", c+"checklist_criteria_preset", noCriteriaGen),
		ignoredSince("0.1.58", c+"checklist_criteria_inline", noCriteriaGen),
		ignoredSince("0.1.86", c+"criteria_mode", noCriteriaGen, "static"),
		ignoredSince("0.1.86", c+"bootstrap_max_per_agent_per_round", noCriteriaGen),
		ignoredSince("0.1.86", c+"bootstrap_max_total", noCriteriaGen),
		ignoredSince("0.1.58", c+"resume_from_log", "runs are continued with --session or --continue"),
		ignoredSince("0.1.68", c+"checkpoint_enabled", noCheckpoints, "false"),
		ignoredSince("0.1.68", c+"checkpoint_mode", noCheckpoints),
		ignoredSince("0.1.68", c+"checkpoint_guidance", noCheckpoints),
		ignoredSince("0.1.68", c+"checkpoint_gated_patterns", noCheckpoints),
		ignoredSince("0.1.83", c+"standalone_checkpoint", noCheckpoints),
		ignoredSince("0.1.84", c+"standalone_checkpoint_enabled", noCheckpoints, "false"),
		ignoredSince("0.1.84", c+"standalone_checkpoint_team_config", noCheckpoints),
		ignoredSince("0.1.84", c+"standalone_checkpoint_mode", noCheckpoints),
		ignoredSince("0.1.84", c+"standalone_checkpoint_single", noCheckpoints),
		ignoredSince("0.1.84", c+"standalone_checkpoint_include_workspace_context", noCheckpoints),
		ignoredSince("0.1.71", c+"web_review", "no web review of the answers"),
		ignoredSince("0.1.71", c+"fast_iteration_mode", noFastIteration, "false"),
		ignoredSince("0.1.80", c+"max_verifications_per_round", noFastIteration),
		ignoredSince("0.1.80", c+"max_internal_fix_loops", noFastIteration),
		ignoredSince("0.1.80", c+"skip_redundant_scaffolding", noFastIteration, "false"),
	}
}
