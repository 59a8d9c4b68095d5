package sandbox

import (
	"strings"
	"testing"
)

// A failed command that tried the network, with the network off or limited, gets one line from
// massgen saying so; other commands do not.
func TestNetworkHint(t *testing.T) {
	tests := []struct {
		mode    NetworkMode
		command string
		res     Result
		want    string // "" none, else a part of the line
	}{
		{NetworkNone, "getent hosts pypi.org", Result{ExitCode: 2}, "network is off"},
		{NetworkNone, "/usr/bin/curl -sS https://pypi.org", Result{ExitCode: 6}, "network is off"},
		{NetworkNone, "./fetch.sh", Result{ExitCode: 1, Stderr: "curl: (6) Could not resolve host: pypi.org"}, "network is off"},
		{NetworkNone, "python3 x.py", Result{ExitCode: 1, Stderr: "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>"}, "network is off"},
		{NetworkNone, "cd src && npm install", Result{ExitCode: 1}, "command_network: {mode: allowlist"},
		{NetworkNone, "false", Result{ExitCode: 1}, ""},
		{NetworkNone, "make", Result{ExitCode: 2, Stderr: "No rule to make target"}, ""},
		{NetworkNone, "curl -sS https://pypi.org", Result{ExitCode: 0}, ""},
		{NetworkOpen, "curl -sS https://pypi.org", Result{ExitCode: 6, Stderr: "Could not resolve host"}, ""},
		{NetworkAllowlist, "pip install x", Result{ExitCode: 1, Stderr: "ProxyError('Cannot connect to proxy.', OSError('Tunnel connection failed: 403 Forbidden'))"},
			"only through massgen's proxy"},
		{NetworkNone, "curligraphy", Result{ExitCode: 1}, ""},
	}
	for _, tt := range tests {
		res := tt.res
		addNetworkHint(&res, tt.mode, tt.command)
		added := strings.TrimPrefix(res.Stderr, tt.res.Stderr)
		switch {
		case tt.want == "" && added != "":
			t.Errorf("%s %q: added %q", tt.mode, tt.command, added)
		case tt.want != "" && (!strings.Contains(added, tt.want) || strings.Count(strings.TrimPrefix(added, "\n"), "\n") != 1 || !strings.HasPrefix(strings.TrimPrefix(added, "\n"), "massgen: ")):
			t.Errorf("%s %q: added %q, want one massgen line with %q", tt.mode, tt.command, added, tt.want)
		}
	}
}
