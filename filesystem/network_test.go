//go:build linux

package filesystem

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/sandbox/netproxy"
	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/audit"
	"github.com/massgen-go/massgen/permissions/guard"
)

// TestExecuteCommandNetwork: each connection a command's proxy allows or refuses is a line of
// the audit log (permissions.jsonl) and a note of the call ("network: HOST:PORT allowed"); an
// address listed exactly reaches the host's server through the proxy's own connector.
func TestExecuteCommandNetwork(t *testing.T) {
	lane.Long(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "host dev server") }))
	defer srv.Close()
	hostPort := srv.Listener.Addr().String()
	allow, err := netproxy.NewAllowlist([]string{hostPort, "*.example"})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range sandboxModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, permissions.Coordination, withSandbox(mode))
			auditPath := filepath.Join(t.TempDir(), "permissions.jsonl")
			auditLog, err := audit.Open(auditPath)
			if err != nil {
				t.Fatal(err)
			}
			defer auditLog.Close()
			ts, err := NewToolset(ToolsetOptions{Guard: guard.New(e.pol, guard.Options{Audit: auditLog}), Sandbox: mode,
				CommandNetwork: sandbox.Network{Mode: sandbox.NetworkAllowlist, Allow: allow}})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var notes []string
			ctx := WithNotes(context.Background(), func(s string) {
				mu.Lock()
				notes = append(notes, s)
				mu.Unlock()
			})
			cmd := "curl -sS --max-time 10 http://" + hostPort + "/; curl -sS --max-time 10 http://not-listed.test/"
			res := ts.Call(ctx, "execute_command", json.RawMessage(`{"command": `+jsonString(cmd)+`}`))
			var m map[string]any
			json.Unmarshal([]byte(res.Content), &m)
			out, _ := m["stdout"].(string)
			if !strings.HasPrefix(out, "host dev server") || !strings.Contains(out, "not-listed.test:80 is not in command_network.allowed_domains") || m["network"] != "allowlist" {
				t.Fatalf("result: %s", res.Content)
			}
			want := []string{"network: " + hostPort + " allowed", "network: not-listed.test:80 refused"}
			if !slices.Equal(notes, want) {
				t.Errorf("notes %q, want %q", notes, want)
			}
			b, _ := os.ReadFile(auditPath)
			var lines []audit.Entry
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var en audit.Entry
				if err := json.Unmarshal([]byte(l), &en); err != nil {
					t.Fatalf("audit line %q: %v", l, err)
				}
				if en.Tool == guard.NetworkAuditTool {
					lines = append(lines, en)
				}
			}
			if len(lines) != 2 || lines[0].Decision != "allow" || lines[0].Paths[0] != hostPort || lines[0].Rule != "allowed_domains: "+hostPort ||
				lines[0].Agent != "agent_a" || !strings.HasPrefix(lines[0].Reason, "execute_command (http)") ||
				lines[1].Decision != "deny" || lines[1].Paths[0] != "not-listed.test:80" || !strings.Contains(lines[1].Reason, "not in command_network.allowed_domains") {
				t.Errorf("audit lines: %+v", lines)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
