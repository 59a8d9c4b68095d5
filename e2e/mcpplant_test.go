package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/fakenpm"
)

// The attack as it was found: a coordination agent writes MODULE.py (for an MCP server started
// as `python3 -m MODULE`) and node_modules/PKG (for `npx -y PKG`) into its own workspace with
// write_file. At the servers' next start (here the next `massgen tools call`) massgen used to
// run the agent's code, outside every sandbox, with massgen's environment. Now the servers start
// in an empty private folder: the real ones run, the planted code never does.
func TestPlantedMCPServerCodeNeverRuns(t *testing.T) {
	for _, p := range []string{"python3", "npx"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed", p)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	nm := filepath.Join(root, ".cache", "npm", "node_modules")
	if _, err := os.Stat(filepath.Join(nm, "@modelcontextprotocol", "server-filesystem")); err != nil {
		t.Skipf("run `make test-deps`: %v", err)
	}
	reg, err := fakenpm.New(nm)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()

	dir := t.TempDir()
	env := append(cleanEnv(t), "OPENAI_API_KEY=sk-massgen-e2e-secret")
	pyMarker, npmMarker := filepath.Join(t.TempDir(), "py-marker"), filepath.Join(t.TempDir(), "npm-marker")
	data := filepath.Join(t.TempDir(), "data")
	writeFile(t, filepath.Join(data, "real.txt"), "served by the real server")
	realPy := filepath.Join(root, "internal", "mcpclient", "testdata", "pysrv")
	writeFile(t, filepath.Join(dir, "cfg.yaml"), `agents:
  - id: alpha
    backend:
      type: chatcompletion
      model: m
      base_url: http://127.0.0.1:9
      cwd: workspace1
      mcp_servers:
        - name: py
          command: python3
          args: ["-m", "massgen_probe_srv"]
          env: {PYTHONPATH: `+quote(realPy)+`}
        - name: npx
          command: npx
          args: ["-y", "@modelcontextprotocol/server-filesystem", `+quote(data)+`]
          env: {npm_config_registry: `+quote(reg.URL())+`, npm_config_cache: `+quote(filepath.Join(t.TempDir(), "npm-cache"))+`}
`)
	call := func(tool, args string) result {
		t.Helper()
		return runEnv(t, dir, env, "tools", "call", "--config", "cfg.yaml", "--agent", "alpha", "--context", data+":read", tool, args)
	}
	js := "#!/usr/bin/env node\nrequire('fs').writeFileSync(" + quote(npmMarker) + ", 'planted npm package ran');\n"
	for path, content := range map[string]string{
		"massgen_probe_srv.py": "open(" + quote(pyMarker) + ", 'w').write('planted module ran')\n",
		"node_modules/@modelcontextprotocol/server-filesystem/package.json": `{"name":"@modelcontextprotocol/server-filesystem","version":"9.9.9","bin":{"mcp-server-filesystem":"index.js"}}`,
		"node_modules/@modelcontextprotocol/server-filesystem/index.js":     js,
		"node_modules/.bin/mcp-server-filesystem":                           js,
	} {
		r := call("write_file", `{"path":`+quote(path)+`,"content":`+quote(content)+`}`)
		if r.code != 0 {
			t.Fatalf("the agent's write_file %s: exit %d %s%s", path, r.code, r.stdout, r.stderr)
		}
	}
	// The shim npx runs must be executable, as an agent's `chmod +x` would make it.
	ws := filepath.Join(dir, ".massgen", "workspaces", "workspace1")
	for _, p := range []string{"node_modules/.bin/mcp-server-filesystem", "node_modules/@modelcontextprotocol/server-filesystem/index.js"} {
		if err := os.Chmod(filepath.Join(ws, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	r := call("mcp__py__probe", `{}`)
	var outer struct{ Result string }
	var probe struct {
		Cwd    string
		Env    map[string]string
		Module string
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &outer) != nil || json.Unmarshal([]byte(outer.Result), &probe) != nil {
		t.Fatalf("probe: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	if probe.Module != filepath.Join(realPy, "massgen_probe_srv.py") || strings.HasPrefix(probe.Cwd, dir) {
		t.Errorf("python3 -m ran %s in %s", probe.Module, probe.Cwd)
	}
	if _, ok := probe.Env["OPENAI_API_KEY"]; ok || probe.Env["PYTHONSAFEPATH"] != "1" {
		t.Errorf("server environment: %v", probe.Env)
	}
	r = call("mcp__npx__read_text_file", `{"path":`+quote(filepath.Join(data, "real.txt"))+`}`)
	if r.code != 0 || !strings.Contains(r.stdout, "served by the real server") {
		t.Errorf("npx server: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	for _, m := range []string{pyMarker, npmMarker} {
		if b, err := os.ReadFile(m); err == nil {
			t.Fatalf("code the agent planted ran: %s", b)
		}
	}
	// The servers' private folders are gone with them.
	left, _ := filepath.Glob(filepath.Join(strings.TrimPrefix(env[1], "HOME="), ".cache", "massgen", "run-*"))
	if len(left) != 0 {
		t.Errorf("private areas left behind: %v", left)
	}
}
