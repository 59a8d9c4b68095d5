package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/sandbox"
)

// linuxSandboxes are the command sandboxes this machine can run.
func linuxSandboxes(t *testing.T) []sandbox.Mode {
	t.Helper()
	var ms []sandbox.Mode
	if sandbox.BubblewrapPath() != "" {
		ms = append(ms, sandbox.ModeBubblewrap)
	}
	if sandbox.NamespacesError() == nil {
		ms = append(ms, sandbox.ModeNamespaces)
	}
	if sandbox.LandlockABI() >= 3 {
		ms = append(ms, sandbox.ModeLandlock)
	}
	if len(ms) == 0 {
		t.Skip("SANDBOX TESTS SKIPPED: no command sandbox on this machine")
	}
	return ms
}

// With the README's layout (--context ., read or write) the .env files massgen took its API
// keys from are private for every agent in every role and sandbox: read_file refuses them,
// list_directory leaves them out, and a command can neither read nor list them.
func TestDotEnvIsPrivate(t *testing.T) {
	const projectKey, userKey = "sk-project-dotenv-7781", "sk-user-dotenv-4410"
	users := []string{"root"}
	if os.Geteuid() != 0 {
		users = []string{"user"}
	} else if _, err := exec.LookPath("setpriv"); err == nil {
		users = append(users, "nobody")
	}
	for _, user := range users {
		for _, mode := range linuxSandboxes(t) {
			t.Run(user+"/"+string(mode), func(t *testing.T) { dotEnvIsPrivate(t, user, string(mode), projectKey, userKey) })
		}
	}
}

// dotEnvIsPrivate is TestDotEnvIsPrivate's case as user ("nobody": massgen unprivileged, through
// setpriv, in folders it owns) under one sandbox.
func dotEnvIsPrivate(t *testing.T, user, mode, projectKey, userKey string) {
	dir := t.TempDir()
	env := cleanEnv(t)
	home := strings.TrimPrefix(env[1], "HOME=")
	run := runEnv
	if user == "nobody" {
		dir, home, env, run = asNobody(t)
	}
	writeFile(t, filepath.Join(dir, ".env"), "OPENAI_API_KEY="+projectKey+"\n")
	writeFile(t, filepath.Join(home, ".massgen", ".env"), "GEMINI_API_KEY="+userKey+"\n")
	writeFile(t, filepath.Join(dir, "index.html"), "<h1>hi</h1>\n")
	writeFile(t, filepath.Join(dir, "cfg.yaml"), "agents:\n"+agentYAML("alpha", "m", "http://127.0.0.1:9", "workspace1")+
		"command_sandbox: "+mode+"\n")
	if user == "nobody" {
		chownNobody(t, filepath.Dir(dir))
	}
	for _, perm := range []string{"read", "write"} {
		for _, role := range []string{"coordination", "final"} {
			ctxs := []string{"--context", ".:" + perm, "--context", home + ":read"}
			call := func(tool, args string) result {
				a := append([]string{"tools", "call", "--config", "cfg.yaml", "--agent", "alpha"}, ctxs...)
				if role == "final" {
					a = append(a, "--final")
				}
				return run(t, dir, env, append(a, tool, args)...)
			}
			where := perm + "/" + role
			leaks := func(what string, r result) {
				t.Helper()
				for _, k := range []string{projectKey, userKey} {
					if strings.Contains(r.stdout+r.stderr, k) {
						t.Errorf("%s: %s shows the key %s:\n%s%s", where, what, k, r.stdout, r.stderr)
					}
				}
			}
			for _, p := range []string{filepath.Join(dir, ".env"), "../../../.env", filepath.Join(home, ".massgen", ".env")} {
				r := call("read_file", `{"path":`+quote(p)+`}`)
				leaks("read_file "+p, r)
				if r.code != 1 || !strings.Contains(r.stdout, "private-path") {
					t.Errorf("%s: read_file %s: exit %d, stdout %s", where, p, r.code, r.stdout)
				}
			}
			for _, d := range []string{dir, filepath.Join(home, ".massgen")} {
				r := call("list_directory", `{"path":`+quote(d)+`}`)
				leaks("list_directory", r)
				if strings.Contains(r.stdout, ".env") {
					t.Errorf("%s: list_directory %s lists .env: %s", where, d, r.stdout)
				}
			}
			if r := call("list_directory", `{"path":`+quote(dir)+`}`); r.code != 0 || !strings.Contains(r.stdout, "index.html") {
				t.Errorf("%s: list_directory of the project: exit %d %s%s", where, r.code, r.stdout, r.stderr)
			}
			// Named plainly, the permission layer refuses the command; hidden from it
			// (the name built at run time), the sandbox must keep the files away.
			if r := call("execute_command", `{"command":"cat .env","work_dir":`+quote(dir)+`}`); r.code != 1 || !strings.Contains(r.stdout, "private-path") {
				t.Errorf("%s: cat .env: exit %d %s%s", where, r.code, r.stdout, r.stderr)
			}
			cmd := "e=.e; cat ${e}nv; cat ../../../${e}nv; cat " + home + "/.massgen/${e}nv; ls -a; ls -a " + home + "/.massgen; true"
			r := call("execute_command", `{"command":`+quote(cmd)+`,"work_dir":`+quote(dir)+`}`)
			leaks("execute_command", r)
			var res struct {
				Stdout, Sandbox string
			}
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 0 || res.Sandbox != string(mode) {
				t.Fatalf("%s: execute_command: exit %d (%v)\n%s%s", where, r.code, err, r.stdout, r.stderr)
			}
			// In a directory the agent may write (the final agent's, with --context
			// .:write) bubblewrap and namespaces hide the file's content but not its
			// name: covering the directory would take its writes away.
			for _, line := range strings.Split(res.Stdout, "\n") {
				if line == ".env" && (perm == "read" || role == "coordination") {
					t.Errorf("%s: ls lists .env:\n%s", where, res.Stdout)
				}
			}
		}
	}
}

// asNobody makes a project folder and a home for massgen run as nobody (folders it owns, under
// a parent it can reach) and a runner that starts a copy of the massgen binary through setpriv.
func asNobody(t *testing.T) (dir, home string, env []string, run func(*testing.T, string, []string, ...string) result) {
	t.Helper()
	base, err := os.MkdirTemp("", "massgen-e2e-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(base, "massgen")
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, home = filepath.Join(base, "proj"), filepath.Join(base, "home")
	for _, d := range []string{dir, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + os.TempDir(), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	setpriv, _ := exec.LookPath("setpriv")
	run = func(t *testing.T, dir string, env []string, args ...string) result {
		t.Helper()
		cmd := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", exe}, args...)...)
		cmd.Dir, cmd.Env = dir, env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("running massgen as nobody: %v", err)
		}
		return result{code: code, stdout: out.String(), stderr: errb.String()}
	}
	return dir, home, env, run
}

// chownNobody gives the tree at root to nobody.
func chownNobody(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		return os.Lchown(p, 65534, 65534)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
