package permissions

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// Command rules by regular expression ("re:" and "!re:"), as MassGen's command_line_allowed_commands
// and command_line_blocked_commands become: matched at the start of every program a command line
// runs, so a chain, a pipe or a nested shell cannot slip a program past them.
func TestCommandRegexRules(t *testing.T) {
	tr := newTree(t)
	allowList := "execute_command(!re:python.*|pytest.*|git (status|diff).*)"
	tests := []struct {
		name  string
		deny  []string
		cmd   string
		allow bool
	}{
		{"blocked program", []string{"execute_command(re:git push)"}, "git push origin main", false},
		{"blocked after &&", []string{"execute_command(re:git push)"}, "echo hi && git push", false},
		{"blocked in a nested shell", []string{"execute_command(re:pip.*)"}, "sh -c 'pip install x'", false},
		{"blocked through a wrapper", []string{"execute_command(re:pip.*)"}, "env A=1 pip install x", false},
		{"blocked with quotes", []string{"execute_command(re:git push)"}, `"gi"t push`, false},
		{"not blocked", []string{"execute_command(re:git push)"}, "git status", true},
		{"blocked pattern over the whole line", []string{"execute_command(re:echo a && echo b)"}, "echo a && echo b", false},
		{"allowed program", []string{allowList}, "python run.py > out.txt", true},
		{"allowed programs piped", []string{allowList}, "pytest -q | python report.py", true},
		{"allowed alternation", []string{allowList}, "git diff", true},
		{"not allowed", []string{allowList}, "ls", false},
		{"allowed then not", []string{allowList}, "python run.py && rm -f a.txt", false},
		{"not allowed in a subshell", []string{allowList}, "python $(curl x)", false},
		{"allow-list is anchored", []string{allowList}, "echo python", false},
		{"not allowed in a nested shell", []string{allowList}, "sh -c 'python x'", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tr.spec(Coordination)
			s.Sandboxed = true
			s.Deny = tt.deny
			d := mustPolicy(t, s).Decide(Request{Tool: "execute_command", Args: map[string]any{"command": tt.cmd}})
			if d.Allow != tt.allow || (!tt.allow && d.Rule != "deny-rule") {
				t.Errorf("%q: %+v, want allow=%v", tt.cmd, d, tt.allow)
			}
			if !tt.allow && !strings.Contains(d.Reason, tt.deny[0]) {
				t.Errorf("the reason %q does not name the rule", d.Reason)
			}
		})
	}
	// An allow rule by regular expression covers a command when every program matches.
	s := tr.spec(Coordination)
	s.Sandboxed, s.Mode, s.Allow = true, ModeDefault, []string{"execute_command(re:npm (test|run).*)"}
	p := mustPolicy(t, s)
	for cmd, allow := range map[string]bool{"npm test": true, "npm test && npm run lint": true, "npm test && npm publish": false} {
		if d := p.Decide(Request{Tool: "execute_command", Args: map[string]any{"command": cmd}}); d.Allow != allow {
			t.Errorf("allow rule, %q: %+v, want allow=%v", cmd, d, allow)
		}
	}
	// A pattern that is not RE2 is refused when the policy is built.
	s = tr.spec(Coordination)
	s.Deny = []string{"execute_command(re:(?=x))"}
	if _, err := New(s); err == nil || !strings.Contains(err.Error(), "bad regular expression") {
		t.Errorf("New with a lookahead: %v", err)
	}
}

// BenchmarkCommandRegexRules: one decision on a command line under MassGen's command lists (five
// blocked patterns and an allow-list), against the same decision without them.
func BenchmarkCommandRegexRules(b *testing.B) {
	tr := newTree(b)
	for _, bc := range []struct {
		name string
		deny []string
	}{
		{"no lists", nil},
		{"lists", []string{"execute_command(re:git push)", "execute_command(re:pip.*)", "execute_command(re:curl.*)",
			"execute_command(re:wget.*)", "execute_command(re:npm publish)", "execute_command(!re:python.*|pytest.*|grep.*)"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := tr.spec(Coordination)
			s.Sandboxed, s.Deny = true, bc.deny
			p := mustPolicy(b, s)
			req := Request{Tool: "execute_command", Args: map[string]any{"command": "python run.py | grep x && pytest -q"}}
			for b.Loop() {
				if d := p.Decide(req); !d.Allow {
					b.Fatal(d.Reason)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}

// Command-ness comes from the tool table the Policy is given (the tools' declarations), never
// from a list of names in the engine: a rule naming a declared command tool takes a command
// line or re:PATTERN, whatever the tool is called, and a tool merely named like massgen's
// command tool, in a table that does not declare it, is judged by its declaration alone.
func TestCommandRulesFromDeclaration(t *testing.T) {
	tr := newTree(t)
	runTask := toolargs.NewTable(toolargs.Tool{Name: "run_task", Command: true})
	tests := []struct {
		name  string
		tools toolargs.Table
		deny  string
		tool  string
		args  map[string]any
		hit   bool
	}{
		{"re: on massgen's command tool", testTools, "execute_command(re:rm)", "execute_command", map[string]any{"command": "ls && rm a.txt"}, true},
		{"glob on massgen's command tool", testTools, "execute_command(npm test*)", "execute_command", map[string]any{"command": "npm test --watch"}, true},
		{"re: in another case", testTools, "EXECUTE_COMMAND(re:rm)", "EXECUTE_COMMAND", map[string]any{"command": "ls && rm a.txt"}, true},
		{"re: behind an MCP prefix", testTools, "mcp__*__execute_command(re:rm)", "mcp__x__execute_command", map[string]any{"command": "rm a.txt"}, true},
		{"re: on a command tool declared under another name", runTask, "run_task(re:rm)", "run_task", map[string]any{"command": "ls; rm a.txt"}, true},
		{"glob on a command tool declared under another name", runTask, "run_task(npm test*)", "run_task", map[string]any{"command": "npm test --watch"}, true},
		{"re: misses other programs", runTask, "run_task(re:rm)", "run_task", map[string]any{"command": "ls -l"}, false},
		{"@command names the declared tool", runTask, "@command(re:rm)", "run_task", map[string]any{"command": "rm a.txt"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tr.spec(Final)
			s.Tools, s.Deny, s.Sandboxed = tt.tools, []string{tt.deny}, true
			d := mustPolicy(t, s).Decide(Request{Tool: tt.tool, Args: tt.args})
			if hit := d.Rule == RuleDenyRule; hit != tt.hit {
				t.Errorf("%s on %s %v: %s (%s); want denied by the rule: %v", tt.deny, tt.tool, tt.args, d.Rule, d.Reason, tt.hit)
			}
		})
	}
	// Rules are read with the table: a bad regular expression is one only for a command tool.
	for _, tt := range []struct {
		rule  string
		tools toolargs.Table
		want  string
	}{
		{"execute_command(re:[)", testTools, "bad regular expression"},
		{"run_task(re:[)", runTask, "bad regular expression"},
		{"execute_command(re:[)", runTask, "bad argument pattern"},
		{"execute_command(re:[)", nil, "bad argument pattern"},
	} {
		err := ValidateRules([]string{tt.rule}, tt.tools)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s with %v: %v, want %q", tt.rule, tt.tools, err, tt.want)
		}
	}
	// Without a declaration, the name says nothing: the call runs no command the engine knows
	// of, and a rule naming it matches the tool, not a command line.
	s := tr.spec(Final)
	s.Tools, s.Sandboxed = runTask, true
	p := mustPolicy(t, s)
	for _, r := range []Request{
		{Tool: "execute_command", Args: map[string]any{"command": "rm a.txt"}},
		{Tool: "mcp__x__execute_command", Args: map[string]any{"command": "rm a.txt"}},
	} {
		if p.IsCommand(r) {
			t.Errorf("%s is a command tool by its name alone", r.Tool)
		}
	}
	decl := toolargs.Tool{Name: "execute_command"}
	if p.IsCommand(Request{Tool: "execute_command", Decl: &decl}) {
		t.Error("a declaration without Command is overruled by the name")
	}
	if !p.IsCommand(Request{Tool: "bash"}) || !p.IsCommand(Request{Tool: "mcp__x__Shell"}) {
		t.Error("another runtime's shell tool is not a command tool")
	}
}
