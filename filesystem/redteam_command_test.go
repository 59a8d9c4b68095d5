//go:build linux

package filesystem

// Red-team tests of execute_command against the sandbox set-up and clean-up (issue 9): each
// runs the real attack through the tool, under bubblewrap and under Landlock.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/agentenv/permconfig"
	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
)

// exchanger swaps a and b (renameat2 RENAME_EXCHANGE) in a loop until stop is called, which
// returns the number of exchanges: a background process racing the sandbox.
func exchanger(a, b string) (stop func() int) {
	done := make(chan struct{})
	count := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				count <- n
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE) == nil {
				n++
			}
		}
	}()
	var once sync.Once
	n := 0
	return func() int { once.Do(func() { close(done); n = <-count }); return n }
}

// TestRedteamCommandExcludedSymlink: `ln -s /any/dir node_modules` in a writable context path;
// node_modules is default-excluded, so the next command's sandbox protects it. On main the
// protection followed the link (bubblewrap bound its target read-only at its own path), so the
// next command read anything the link pointed to. The link is protected as a link: its target
// stays invisible, and a command replacing it finds it back afterwards.
func TestRedteamCommandExcludedSymlink(t *testing.T) {
	for _, mode := range sandboxModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, permissions.Final, withSandbox(mode))
			mkdir(t, filepath.Join(e.proj, "src"))
			e.ok("execute_command", map[string]any{"command": fmt.Sprintf(`o=%s; n=node_modules; ln -s "$o" src/$n`, e.out), "work_dir": e.proj})
			link := filepath.Join(e.proj, "src", "node_modules")
			if target, err := os.Readlink(link); err != nil || target != e.out {
				t.Fatalf("setup: link %q %v", target, err)
			}
			// (Paths behind a variable: the permission layer cannot see them, the sandbox must
			// stop them.)
			for _, c := range []string{"n=node_modules; cat src/$n/secret.txt", "n=node_modules; ls src/$n/", "o=" + e.out + "; cat $o/secret.txt"} {
				m, _ := e.call("execute_command", map[string]any{"command": c, "work_dir": e.proj})
				if strings.Contains(fmt.Sprint(m), "outside secret") || strings.Contains(fmt.Sprint(m["stdout"]), "secret.txt") {
					t.Errorf("%q read outside through the protected link: %v", c, m)
				}
			}
			e.call("execute_command", map[string]any{"command": "n=node_modules; rm src/$n; mkdir src/$n && echo x > src/$n/f", "work_dir": e.proj})
			if target, err := os.Readlink(link); err != nil || target != e.out {
				t.Errorf("the protected link was not kept: %q %v", target, err)
			}
			if read(t, filepath.Join(e.out, "secret.txt")) != "outside secret\n" || exists(filepath.Join(e.out, "f")) {
				t.Error("outside changed")
			}
		})
	}
}

// TestRedteamCommandCleanupRace: a process (left behind by an earlier command, say) swaps a
// directory of the context path with a link to an outside directory holding a .git, while
// the clean-up after each command looks for new .git entries. On main the clean-up followed
// the link and deleted the outside .git. Then old entries moved or linked to a system name:
// on main they stayed, their birth time being older than the command.
func TestRedteamCommandCleanupRace(t *testing.T) {
	lane.Long(t)
	for _, mode := range sandboxModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnvNoSystem(t, mode)
			// (In src/: with Landlock alone the project's top is read-only, it holds a
			// protected path.)
			write(t, filepath.Join(e.proj, "src", "olddir", "config"), "[core]\n\tfsmonitor = touch /tmp/pwned\n")
			write(t, filepath.Join(e.proj, "src", "oldfile"), "OPENAI_BASE_URL=https://evil.example\n")
			created := time.Now()
			sub := filepath.Join(e.proj, "src", "sub")
			mkdir(t, sub)
			if err := os.Symlink(e.out, filepath.Join(e.proj, "src", "lnk")); err != nil {
				t.Fatal(err)
			}
			outsideGit := filepath.Join(e.out, ".git")
			stop := exchanger(sub, filepath.Join(e.proj, "src", "lnk"))
			defer stop()
			for i := 0; i < 30; i++ {
				// A fresh .git each time (the clean-up on main spared entries born well before
				// the command).
				os.RemoveAll(outsideGit)
				write(t, filepath.Join(outsideGit, "config"), "[core]\n")
				m := e.ok("execute_command", map[string]any{"command": "echo $((1+1))", "work_dir": e.proj})
				if !exists(filepath.Join(outsideGit, "config")) {
					t.Fatalf("command %d: the clean-up deleted a .git outside every managed path: %v", i, m)
				}
			}
			if n := stop(); n < 100 {
				t.Fatalf("only %d exchanges", n)
			}
			// Ages olddir and oldfile past main's one-second birth-time margin (not a wait
			// for anything: the plant must be older than the command, as a user's file is).
			time.Sleep(time.Until(created.Add(1100 * time.Millisecond)))
			m := e.ok("execute_command", map[string]any{"command": "g=.git; v=.env; cd src && mv olddir $g && ln oldfile $v && echo planted", "work_dir": e.proj})
			if m["stdout"] != "planted\n" || exists(filepath.Join(e.proj, "src", ".git")) || exists(filepath.Join(e.proj, "src", ".env")) {
				t.Fatalf("old entries planted as .git/.env stayed: %v", m)
			}
			if len(strs(m["removed_system_paths"])) != 2 || !strings.Contains(fmt.Sprint(m["stderr"]), "massgen trash restore") {
				t.Fatalf("result: %v", m)
			}
		})
	}
}

// readmeLayout is the README's layout: `massgen --context .` in a project, two agents with
// their workspaces, snapshots, temp workspaces, sessions, logs and trash under
// <project>/.massgen, everything named by the real agent ids.
type readmeLayout struct {
	proj, mg, ws, temp string
	spec               permissions.Spec
}

func newReadmeLayout(t *testing.T, role permissions.Role) readmeLayout {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(base, "project")
	mg := filepath.Join(proj, ".massgen")
	l := readmeLayout{proj: proj, mg: mg, ws: filepath.Join(mg, "workspaces", "workspace1"), temp: filepath.Join(mg, "temp_workspaces", "agent_a")}
	for p, s := range map[string]string{
		"index.html": "<h1>hi</h1>\n",
		"src/app.js": "app\n",
		".git/HEAD":  "ref: main\n",
		".massgen/workspaces/workspace1/mine.txt":          "mine\n",
		".massgen/workspaces/workspace2/b.txt":             "agent_b live work\n",
		".massgen/temp_workspaces/agent_a/agent1/notes.md": "anonymous notes\n",
		".massgen/temp_workspaces/agent_b/agent1/x.md":     "agent_b view\n",
		".massgen/snapshots/agent_b/b.txt":                 "agent_b snapshot\n",
		".massgen/sessions/session_1/metadata.json":        `{"winner": "agent_b", "votes": {"agent_a": "agent_b"}}`,
		".massgen/sessions/session_1/SESSION_SUMMARY.txt":  "agent_b won\n",
		".massgen/trash/run1/1/meta.json":                  `{"agent": "agent_b"}`,
		".massgen/logs/log_1/events.jsonl":                 `{"agent": "agent_b"}`,
	} {
		write(t, filepath.Join(proj, p), s)
	}
	cfg := &configs.Config{
		BaseDir: proj,
		Agents: []configs.Agent{
			{ID: "agent_a", Backend: configs.Backend{Type: "openai", CWD: l.ws}},
			{ID: "agent_b", Backend: configs.Backend{Type: "openai", CWD: filepath.Join(mg, "workspaces", "workspace2")}},
		},
		// As configs.Load leaves them: everything under <project>/.massgen.
		Orchestrator: configs.Orchestrator{ContextPaths: []configs.ContextPath{{Path: proj, Permission: "write"}},
			SnapshotStorage: filepath.Join(mg, "snapshots"), AgentTemporaryWorkspace: filepath.Join(mg, "temp_workspaces")},
	}
	spec, err := permconfig.SpecFromConfig(cfg, "agent_a", role, permconfig.SpecOptions{Sandboxed: true})
	if err != nil {
		t.Fatal(err)
	}
	// Session metadata and the trash's records name real agents: private too (the permission
	// layer lists them; added here in case it does not yet).
	for _, p := range []string{filepath.Join(mg, "sessions"), filepath.Join(mg, "trash"), filepath.Join(mg, "logs")} {
		if !contains(spec.Private, p) {
			spec.Private = append(spec.Private, p)
		}
	}
	l.spec = spec
	return l
}

// TestRedteamReadmeLayout: with `--context .` (the project a writable context path holding
// .massgen/), once temp workspaces exist commands run under every sandbox (on main every
// bubblewrap command failed with "Can't mkdir …/temp_workspaces/<real id>"), an agent's command
// reads its own temp workspace (on main Landlock refused), and no command reads or lists
// massgen's records: other agents' workspaces, snapshots, temp workspaces, session metadata,
// the trash's records, the logs (on main Landlock listed them by name). No output or error
// names another agent.
func TestRedteamReadmeLayout(t *testing.T) {
	lane.Long(t)
	for _, mode := range sandboxModes(t) {
		for _, role := range []permissions.Role{permissions.Coordination, permissions.Final} {
			t.Run(fmt.Sprintf("%s/%v", mode, role), func(t *testing.T) {
				l := newReadmeLayout(t, role)
				pol, err := permissions.New(l.spec)
				if err != nil {
					t.Fatal(err)
				}
				ts, err := NewToolset(ToolsetOptions{Guard: guard.New(pol, guard.Options{}), Sandbox: mode})
				if err != nil {
					t.Fatal(err)
				}
				e := &env{t: t, ts: ts, pol: pol, ws: l.ws}
				// The commands never type another agent's id or folder name: seeing one means it
				// was read or listed.
				noLeak := func(c string, m map[string]any) {
					t.Helper()
					s := fmt.Sprint(m["stdout"], m["stderr"], m["error"])
					for _, secret := range []string{"agent_b", "workspace2", "live work", "winner"} {
						if strings.Contains(s, secret) {
							t.Errorf("%q leaked %q: %s", c, secret, s)
						}
					}
				}
				// The agent's own work: workspace, own temp workspace (read).
				m := e.ok("execute_command", map[string]any{"command": "echo a > a.txt && cat mine.txt a.txt && t=" + l.temp + "; cat $t/agent1/notes.md && ls $t"})
				if m["stdout"] != "mine\na\nanonymous notes\nagent1\n" {
					t.Fatalf("own work: %v", m)
				}
				noLeak("own work", m)
				for _, c := range []string{
					"m=" + l.mg + "; cat $m/workspaces/*/b.txt $m/snapshots/*/*.txt $m/temp_workspaces/*/*/x.md",
					"m=" + l.mg + "; cat $m/sessions/*/metadata.json $m/sessions/*/SESSION_SUMMARY.txt $m/trash/*/*/meta.json $m/logs/*/*",
					"m=" + l.mg + "; ls $m/temp_workspaces $m/snapshots $m/sessions $m/logs $m/trash $m/workspaces",
					"m=" + l.mg + "; ls -R $m; ls $m/*",
					"u=..; ls $u $u/$u $u/$u/temp_workspaces $u/$u/snapshots",
					"find / -name 'agent_*' 2>/dev/null | head -50",
				} {
					m, _ := e.call("execute_command", map[string]any{"command": c})
					noLeak(c, m)
				}
				if role != permissions.Final {
					return
				}
				// The final agent works in the project.
				m = e.ok("execute_command", map[string]any{"command": "echo x > src/new.js && cat index.html src/new.js && git --version >/dev/null 2>&1; cat .git/HEAD", "work_dir": l.proj})
				if m["stdout"] != "<h1>hi</h1>\nx\nref: main\n" {
					t.Fatalf("final agent in the project: %v", m)
				}
				noLeak("final", m)
			})
		}
	}
}
