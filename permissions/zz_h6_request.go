package permissions

// Request from H6 (orchestrator) to H2 (permissions). No code; delete once settled.
//
// Anonymity leak when .massgen/ lies inside a readable context path (e.g. `--context .`):
// a coordination agent can list_directory <agent_temporary_workspace>/ and read
// <agent_temporary_workspace>/<other agent id>/, which shows the other agents' REAL ids as
// folder names (reproduced with the scripted backend: list_directory
// ${WORKSPACE}/../../temp_workspaces is allowed and returns alpha_secret, beta_secret).
// Other workspaces and snapshot storage are already denied as "private-path"; please treat the
// temp workspace root and every temp workspace except the agent's own (Spec.TempWorkspaces)
// the same way. The orchestrator passes SpecOptions.TempWorkspaces = [TempRoot/<agentID>].
