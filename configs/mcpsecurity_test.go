package configs

import (
	"strings"
	"testing"
)

// MassGen's security: section, server by server: what it refuses and why.
func TestMCPSecurity(t *testing.T) {
	tests := []struct {
		name   string
		server MCPServer
		want   string // "" : starts; else a part of the reason
	}{
		{"no section: not checked", MCPServer{Command: "docker"}, ""},
		{"strict allows npx", MCPServer{Command: "npx", Security: &MCPSecurity{Level: "strict"}}, ""},
		{"default level is strict", MCPServer{Command: "git", Security: &MCPSecurity{}}, `program "git" is not allowed by level strict`},
		{"moderate allows git", MCPServer{Command: "git", Security: &MCPSecurity{Level: "moderate"}}, ""},
		{"base name of a path", MCPServer{Command: "/usr/bin/python3", Security: &MCPSecurity{}}, ""},
		{"windows extension", MCPServer{Command: `C:\node\node.exe`, Security: &MCPSecurity{}}, ""},
		{"not allowed", MCPServer{Command: "docker", Security: &MCPSecurity{Level: "permissive"}}, `program "docker" is not allowed by level permissive`},
		{"explicit list", MCPServer{Command: "docker", Security: &MCPSecurity{AllowedExecutables: []string{"docker"}}}, ""},
		{"explicit list replaces the level", MCPServer{Command: "npx", Security: &MCPSecurity{AllowedExecutables: []string{"docker"}}}, "not allowed by allowed_executables"},
		{"metacharacters", MCPServer{Command: "npx;rm", Security: &MCPSecurity{}}, "shell metacharacter"},
		{"parent directory", MCPServer{Command: "../bin/node", Security: &MCPSecurity{}}, "goes up a directory"},
		{"localhost refused", MCPServer{URL: "http://localhost:8931/mcp", Security: &MCPSecurity{}}, "names this machine"},
		{"localhost allowed", MCPServer{URL: "http://localhost:8931/mcp", Security: &MCPSecurity{AllowLocalhost: true}}, ""},
		{"loopback address", MCPServer{URL: "http://127.0.0.1/mcp", Security: &MCPSecurity{}}, "private, loopback or reserved"},
		{"loopback allowed as localhost", MCPServer{URL: "http://127.0.0.1/mcp", Security: &MCPSecurity{AllowLocalhost: true}}, ""},
		{"private address", MCPServer{URL: "http://10.0.0.5/mcp", Security: &MCPSecurity{}}, "private"},
		{"private allowed", MCPServer{URL: "http://10.0.0.5/mcp", Security: &MCPSecurity{AllowPrivateIPs: true}}, ""},
		{"allowed hostname skips the address checks", MCPServer{URL: "http://10.0.0.5/mcp", Security: &MCPSecurity{AllowedHostnames: []string{"10.0.0.5"}}}, ""},
		{"public host", MCPServer{URL: "https://mcp.example.com/mcp", Security: &MCPSecurity{}}, ""},
		{"refused port", MCPServer{URL: "https://mcp.example.com:5432/mcp", Security: &MCPSecurity{}}, "port 5432 is refused"},
		{"scheme", MCPServer{URL: "ftp://mcp.example.com/", Security: &MCPSecurity{}}, "only http and https"},
		{"strict env", MCPServer{Command: "npx", Env: map[string]string{"PATH": "/x"}, Security: &MCPSecurity{}}, "env PATH is refused at level strict"},
		{"moderate env", MCPServer{Command: "npx", Env: map[string]string{"PATH": "/x"}, Security: &MCPSecurity{Level: "moderate"}}, ""},
		{"env level", MCPServer{Command: "npx", Env: map[string]string{"HOME": "/x"}, Security: &MCPSecurity{Level: "moderate", Env: &MCPEnvPolicy{Level: "strict"}}}, "env HOME is refused"},
		{"denied_vars replace the level's", MCPServer{Command: "npx", Env: map[string]string{"PATH": "/x"}, Security: &MCPSecurity{Env: &MCPEnvPolicy{DeniedVars: []string{}}}}, ""},
		{"allowlist", MCPServer{Command: "npx", Env: map[string]string{"OTHER": "1"}, Security: &MCPSecurity{Env: &MCPEnvPolicy{Mode: "allowlist", AllowedVars: []string{"TOKEN"}}}}, "not in env.allowed_vars"},
		// high is what MassGen makes of a level it does not know (MassGen's configs write it).
		{"high allows strict's programs", MCPServer{Command: "npx", Security: &MCPSecurity{Level: "high"}}, ""},
		{"high refuses git", MCPServer{Command: "git", Security: &MCPSecurity{Level: "high"}}, `program "git" is not allowed by level high`},
		{"high env refuses PATH", MCPServer{Command: "npx", Env: map[string]string{"PATH": "/x"}, Security: &MCPSecurity{Level: "high"}}, "env PATH is refused at level high"},
		{"high env refuses HOME", MCPServer{Command: "npx", Env: map[string]string{"HOME": "/x"}, Security: &MCPSecurity{Level: "high"}}, "env HOME is refused at level high"},
		{"high env allows USER", MCPServer{Command: "npx", Env: map[string]string{"USER": "me", "SHELL": "/bin/sh"}, Security: &MCPSecurity{Level: "high"}}, ""},
		{"env value", MCPServer{Command: "npx", Env: map[string]string{"TOKEN": "a; rm -rf /"}, Security: &MCPSecurity{}}, `env TOKEN holds ";"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(tt.server.SecurityProblems(), "; ")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("problems %q, want %q", got, tt.want)
			}
		})
	}
}

// validate warns, naming the server, before a run starts without it; bad values are errors.
func TestMCPSecurityInConfigs(t *testing.T) {
	cfg, _ := mustLoad(t, t.TempDir(), `agents:
  - id: a
    backend:
      type: claude
      mcp_servers:
        - {name: box, command: docker, args: [run, x], security: {level: moderate}}
        - {name: ok, command: npx, security: {level: strict}}
`, nil)
	_, warns := cfg.Preflight(func(s string) (string, error) { return s, nil })
	if len(warns) != 1 || !strings.Contains(warns[0].String(), `config.yaml:6: warning: agents[0].backend.mcp_servers[0]: MCP server "box": refused by its security: section, the server will not start and the agent will not have its tools: program "docker" is not allowed by level moderate`) {
		t.Errorf("warnings %v", warns)
	}
	// MassGen's configs write level: high; it loads, without a warning.
	if _, w := mustLoad(t, t.TempDir(), "agents:\n  - id: a\n    backend:\n      type: claude\n      mcp_servers:\n        - {name: fs, command: npx, security: {level: high}}\n", nil); len(w) != 0 {
		t.Errorf("level high: warnings %v", w)
	}
	_, _, err := load(t, t.TempDir(), `agents:
  - id: a
    backend:
      type: claude
      mcp_servers:
        - {name: s, command: npx, security: {level: paranoid, env: {mode: maybe}}}
`, nil)
	var msgs []string
	for _, p := range problems(t, err) {
		msgs = append(msgs, p.String())
	}
	probs := strings.Join(msgs, "\n")
	for _, want := range []string{`mcp_servers[0].security.level: unknown level "paranoid"`, `mcp_servers[0].security.env.mode: unknown mode "maybe"`} {
		if !strings.Contains(probs, want) {
			t.Errorf("problems %s lack %q", probs, want)
		}
	}
}
