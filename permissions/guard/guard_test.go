package guard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/audit"
	"github.com/massgen-go/massgen/permissions/hooks"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

type fakeAsker struct {
	mu    sync.Mutex
	ans   permissions.AskAnswer
	err   error
	calls []permissions.AskRequest
}

func (f *fakeAsker) Ask(ctx context.Context, r permissions.AskRequest) (permissions.AskAnswer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r)
	return f.ans, f.err
}

func askSpec(tr *tree) permissions.Spec {
	s := tr.spec(permissions.Final)
	s.Mode = permissions.ModeDefault
	return s
}

func TestGuardAsk(t *testing.T) {
	tr := newTree(t)
	req := permissions.Request{Tool: "execute_command", Args: map[string]any{"command": "npm test"}}
	tests := []struct {
		name      string
		asker     *fakeAsker
		wantAllow []bool // two consecutive calls
		wantAsks  int
		rule      permissions.Rule
	}{
		{"no terminal: deny saying how", nil, []bool{false, false}, 0, "ask-no-terminal"},
		{"allow once asks again", &fakeAsker{ans: permissions.AskAllowOnce}, []bool{true, true}, 2, "user-allowed-once"},
		{"allow for the run is remembered", &fakeAsker{ans: permissions.AskAllowRun}, []bool{true, true}, 1, "user-allowed-run"},
		{"user denies", &fakeAsker{ans: permissions.AskDeny}, []bool{false, false}, 2, "user-denied"},
		{"asker error denies", &fakeAsker{err: errors.New("tty gone")}, []bool{false, false}, 2, "ask-failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{}
			if tt.asker != nil {
				o.Asker = tt.asker
			}
			g := New(mustPolicy(t, askSpec(tr)), o)
			var d permissions.Decision
			for i, want := range tt.wantAllow {
				d = g.Check(context.Background(), req)
				if d.Allow != want {
					t.Fatalf("call %d: allow=%v (%s), want %v", i, d.Allow, d.Reason, want)
				}
			}
			if d.Rule != tt.rule {
				t.Errorf("rule %q, want %q", d.Rule, tt.rule)
			}
			if tt.asker != nil && len(tt.asker.calls) != tt.wantAsks {
				t.Errorf("asked %d times, want %d", len(tt.asker.calls), tt.wantAsks)
			}
			if tt.rule == "ask-no-terminal" && !strings.Contains(d.Reason, "execute_command(npm*)") {
				t.Errorf("no-terminal reason does not say how to allow: %s", d.Reason)
			}
		})
	}
	// Grants are per agent + tool + path: another command is asked again.
	a := &fakeAsker{ans: permissions.AskAllowRun}
	g := New(mustPolicy(t, askSpec(tr)), Options{Asker: a})
	g.Check(context.Background(), req)
	g.Check(context.Background(), permissions.Request{Tool: "execute_command", Args: map[string]any{"command": "npm publish"}})
	if len(a.calls) != 2 {
		t.Errorf("a grant for one command covered another (%d asks)", len(a.calls))
	}
	// Denied paths are never asked.
	g.Check(context.Background(), permissions.Request{Tool: "write_file", Args: map[string]any{"path": tr.p("project/.env")}})
	if len(a.calls) != 2 {
		t.Error("a denied call was put to the user")
	}
	// Two guards never share grants unless told to.
	g2 := New(mustPolicy(t, askSpec(tr)), Options{})
	if d := g2.Check(context.Background(), req); d.Allow {
		t.Error("a grant leaked into another guard")
	}
	shared := NewGrants()
	a3 := &fakeAsker{ans: permissions.AskAllowRun}
	New(mustPolicy(t, askSpec(tr)), Options{Asker: a3, Grants: shared}).Check(context.Background(), req)
	if d := New(mustPolicy(t, askSpec(tr)), Options{Grants: shared}).Check(context.Background(), req); !d.Allow {
		t.Errorf("shared grant not honoured: %s", d.Reason)
	}
}

func TestGuardHooks(t *testing.T) {
	tr := newTree(t)
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen.json")
	tests := []struct {
		name  string
		mode  permissions.Mode
		hook  configs.Hook
		allow bool
		rule  permissions.Rule
	}{
		{"exit 0 keeps the decision", permissions.ModeAcceptEdits, configs.Hook{Command: "cat > " + seen}, true, "workspace"},
		{"exit 2 denies with stderr", permissions.ModeAcceptEdits, configs.Hook{Command: "echo 'no writes on fridays' >&2; exit 2"}, false, "hook-denied"},
		{"other failure denies", permissions.ModeAcceptEdits, configs.Hook{Command: "exit 1"}, false, "hook-failed"},
		{"timeout denies", permissions.ModeAcceptEdits, configs.Hook{Command: "sleep 5", TimeoutSeconds: 1}, false, "hook-failed"},
		{"json deny", permissions.ModeAcceptEdits, configs.Hook{Command: `echo '{"decision":"deny","reason":"policy"}'`}, false, "hook-denied"},
		{"json allow settles an ask", permissions.ModeDefault, configs.Hook{Command: `echo '{"decision":"allow"}'`}, true, "hook-allowed"},
		{"matcher skips other tools", permissions.ModeAcceptEdits, configs.Hook{Command: "exit 2", Matcher: "execute_*"}, true, "workspace"},
		{"matcher applies to its tool", permissions.ModeAcceptEdits, configs.Hook{Command: "exit 2", Matcher: "write_*"}, false, "hook-denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tr.spec(permissions.Final)
			s.Mode = tt.mode
			g := New(mustPolicy(t, s), Options{Hooks: hookSet(t, []configs.Hook{tt.hook}, nil)})
			path := "x.txt"
			if tt.mode == permissions.ModeDefault {
				path = tr.p("project/src/x.go")
			}
			d := g.Check(context.Background(), permissions.Request{Tool: "write_file", Args: map[string]any{"path": path, "content": "c"}})
			if d.Allow != tt.allow || d.Rule != tt.rule {
				t.Fatalf("allow=%v rule=%q (%s); want %v %q", d.Allow, d.Rule, d.Reason, tt.allow, tt.rule)
			}
			if tt.rule == "hook-denied" && strings.Contains(tt.hook.Command, "fridays") && !strings.Contains(d.Reason, "no writes on fridays") {
				t.Errorf("reason %q lacks the hook's stderr", d.Reason)
			}
		})
	}
	var in map[string]any
	data, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("hook stdin is not JSON: %v: %s", err, data)
	}
	if in["agent"] != "agent_a" || in["tool"] != "write_file" || in["role"] != "final" || in["event"] != "pre_tool_use" {
		t.Errorf("hook input %v", in)
	}
	// Hooks never turn a policy deny into an allow.
	g := New(mustPolicy(t, tr.spec(permissions.Final)), Options{Hooks: hookSet(t, []configs.Hook{{Command: `echo '{"decision":"allow"}'`}}, nil)})
	if d := g.Check(context.Background(), permissions.Request{Tool: "read_file", Args: map[string]any{"path": "/etc/passwd"}}); d.Allow {
		t.Error("a hook overrode a path deny")
	}
	// Post hooks get the result.
	post := filepath.Join(dir, "post.json")
	g = New(mustPolicy(t, tr.spec(permissions.Final)), Options{Hooks: hookSet(t, nil, []configs.Hook{{Command: "cat > " + post}})})
	r := permissions.Request{Tool: "read_file", Args: map[string]any{"path": "a.txt"}}
	g.Done(context.Background(), r, g.Check(context.Background(), r), "file body", false)
	data, err = os.ReadFile(post)
	if err != nil || !strings.Contains(string(data), `"result":"file body"`) || !strings.Contains(string(data), `"post_tool_use"`) {
		t.Errorf("post hook input %s (%v)", data, err)
	}
}

func TestAuditLog(t *testing.T) {
	tr := newTree(t)
	path := filepath.Join(t.TempDir(), "permissions.jsonl")
	al, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	g := New(mustPolicy(t, tr.spec(permissions.Coordination)), Options{Audit: al})
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.Check(context.Background(), permissions.Request{Tool: "read_file", Args: map[string]any{"path": "a.txt"}})
			g.Check(context.Background(), permissions.Request{Tool: "write_file", Args: map[string]any{"path": "/etc/passwd", "content": ""}})
			g.CheckPath(context.Background(), "delete_files_batch", tr.p("project/src/main.go"), permissions.Write)
		}()
	}
	wg.Wait()
	if err := al.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e audit.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		if e.Agent != "agent_a" || e.Role != "coordination" || e.Time.IsZero() || e.Rule == "" || len(e.Paths) == 0 {
			t.Errorf("incomplete entry %+v", e)
		}
		counts[e.Tool+":"+e.Decision]++
	}
	want := map[string]int{"read_file:allow": 20, "write_file:deny": 20, "delete_files_batch:deny": 20}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("%s: %d entries, want %d (all: %v)", k, counts[k], v, counts)
		}
	}
}

// A hook run by the Guard does not see massgen's API keys.
func TestGuardHookGetsNoSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-guard-secret")
	tr := newTree(t)
	g := New(mustPolicy(t, tr.spec(permissions.Final)), Options{Hooks: hookSet(t, []configs.Hook{
		{Command: `[ -z "${OPENAI_API_KEY+set}" ] || { echo "leaked: $OPENAI_API_KEY" >&2; exit 2; }`}}, nil)})
	d := g.Check(context.Background(), permissions.Request{Tool: "read_file", Args: map[string]any{"path": "a.txt"}})
	if !d.Allow {
		t.Fatalf("hook saw the key: %s", d.Reason)
	}
}

// hookSet readies hooks as rules that need no approval (hooks.Prepare).
func hookSet(t *testing.T, pre, post []configs.Hook) hooks.Set {
	t.Helper()
	p, err := hooks.Prepare(pre, t.TempDir(), os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	q, err := hooks.Prepare(post, t.TempDir(), os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	return hooks.Set{Pre: p, Post: q}
}

// A grant for the run of one command line never covers another: the Guard knows a command tool
// by its declaration (the request's, or the Policy's table), whatever it is named, behind an
// MCP prefix and in any case, and suggests a rule over the command line for it.
func TestGuardCommandGrantsByDeclaration(t *testing.T) {
	tr := newTree(t)
	runTask := toolargs.Tool{Name: "run_task", Command: true}
	tests := []struct {
		name  string
		tools toolargs.Table
		tool  string
		decl  *toolargs.Tool
	}{
		{"massgen's command tool", testTools, "execute_command", nil},
		{"behind an MCP prefix", testTools, "mcp__srv__execute_command", nil},
		{"in another case", testTools, "mcp__srv__EXECUTE_COMMAND", nil},
		{"declared in the table under another name", toolargs.NewTable(runTask), "run_task", nil},
		{"declared by the request", nil, "run_task", &runTask},
		{"another runtime's shell tool", nil, "mcp__srv__bash", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := askSpec(tr)
			s.Tools = tt.tools
			p := mustPolicy(t, s)
			a := &fakeAsker{ans: permissions.AskAllowRun}
			g := New(p, Options{Asker: a})
			req := func(c string) permissions.Request {
				return permissions.Request{Tool: tt.tool, Decl: tt.decl, Args: map[string]any{"command": c}}
			}
			// The same paths (the workspace, where both run): only the command line differs.
			for _, c := range []string{"npm test", "npm test", "npm publish", "npm test"} {
				if d := g.Check(context.Background(), req(c)); !d.Allow {
					t.Fatalf("%s: %s (%s)", c, d.Rule, d.Reason)
				}
			}
			if len(a.calls) != 2 {
				t.Errorf("asked %d times for npm test, npm test, npm publish, npm test; want 2 (a grant for npm test covered npm publish)", len(a.calls))
			}
			d := New(p, Options{}).Check(context.Background(), req("npm install"))
			if want := permissions.BaseToolName(tt.tool) + "(npm*)"; !strings.Contains(d.Reason, want) {
				t.Errorf("the suggested rule is not %s: %s", want, d.Reason)
			}
		})
	}
}
