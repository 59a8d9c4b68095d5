package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The documented hook runs ./scripts/audit-tool.sh from the project. With --context .:write the
// final agent may rewrite that script, and its next tool call would run the agent's code outside
// the sandbox: the rules now refuse to load, naming the script and the way out. Moved outside
// every agent's reach and approved, the hook runs; rewritten after the approval, it never runs
// again until approved anew.
func TestHookScriptAgentsCanRewrite(t *testing.T) {
	dir := t.TempDir()
	env := cleanEnv(t)
	home := strings.TrimPrefix(env[1], "HOME=")
	marker := filepath.Join(t.TempDir(), "audit.log")
	script := func(path, word string) {
		writeFile(t, path, "#!/bin/sh\necho "+word+" >> "+marker+"\n")
		if err := os.Chmod(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inProject := filepath.Join(dir, "scripts", "audit-tool.sh")
	script(inProject, "audited")
	writeFile(t, filepath.Join(dir, "index.html"), "<h1>hi</h1>\n")
	writeFile(t, filepath.Join(dir, "cfg.yaml"), "agents:\n"+agentYAML("alpha", "m", "http://127.0.0.1:9", "workspace1"))
	rules := filepath.Join(dir, ".massgen", "permissions.yaml")
	writeFile(t, rules, "hooks:\n  pre_tool_use:\n    - command: ./scripts/audit-tool.sh\n      matcher: \"write_*\"\n")
	trust := func() {
		t.Helper()
		if r := runEnv(t, dir, env, "permissions", "trust"); r.code != 0 || !strings.Contains(r.stdout, "sha256") {
			t.Fatalf("trust: exit %d %s%s", r.code, r.stdout, r.stderr)
		}
	}
	write := func() result {
		return runEnv(t, dir, env, "tools", "call", "--config", "cfg.yaml", "--agent", "alpha", "--context", ".:write", "--final",
			"write_file", `{"path":"index.html","content":"changed"}`)
	}
	trust()
	r := runEnv(t, dir, env, "permissions", "trust")
	if !strings.Contains(r.stdout, "runs "+inProject+" (sha256 ") {
		t.Errorf("trust does not show the script it approves:\n%s", r.stdout)
	}

	r = write()
	if r.code != 2 || !strings.Contains(r.stderr, inProject) || !strings.Contains(r.stderr, "lies where an agent could change it") ||
		!strings.Contains(r.stderr, "agent alpha may write there") || !strings.Contains(r.stderr, "move "+inProject+" out of every path an agent may write") ||
		!strings.Contains(r.stderr, "or name a program outside them") {
		t.Fatalf("hook script in a writable context path: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if exists(marker) || readFile(t, filepath.Join(dir, "index.html")) != "<h1>hi</h1>\n" {
		t.Fatal("the hook or the call ran")
	}

	// The way out: the script outside every path an agent may write.
	outside := filepath.Join(home, "hooks", "audit-tool.sh")
	script(outside, "audited")
	writeFile(t, rules, "hooks:\n  pre_tool_use:\n    - command: "+outside+"\n      matcher: \"write_*\"\n")
	trust()
	if r := write(); r.code != 0 || readFile(t, marker) != "audited\n" {
		t.Fatalf("approved hook outside: exit %d %s%s", r.code, r.stdout, r.stderr)
	}

	// Rewritten after the approval: refused, the approval stale.
	script(outside, "EVIL")
	r = write()
	if r.code != 2 || !strings.Contains(r.stderr, "approval is stale") || !strings.Contains(r.stderr, outside) ||
		!strings.Contains(r.stderr, "massgen permissions trust "+rules) {
		t.Fatalf("rewritten hook script: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	// A run refuses the rules before any model call, saying the same.
	r = runEnv(t, dir, env, "--config", "cfg.yaml", "--context", ".:write", "--display", "plain", "Change index.html")
	if r.code != 2 || !strings.Contains(r.stderr, "approval is stale") || !strings.Contains(r.stderr, outside) {
		t.Fatalf("run with a rewritten hook script: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, marker); got != "audited\n" {
		t.Fatalf("the rewritten script ran: %q", got)
	}
}
