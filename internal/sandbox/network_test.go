//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/massgen-go/massgen/internal/sandbox/netproxy"
	"github.com/massgen-go/massgen/internal/testing/lane"
)

// runNet runs command in mode with the network n.
func runNet(t *testing.T, mode Mode, ws string, n Network, command string) Result {
	t.Helper()
	res, err := Run(context.Background(), withMode(mode, Options{Command: command, Dir: ws, Policy: Policy{Write: []string{ws}, Own: []string{ws}},
		Timeout: 30 * time.Second, Log: zaptest.NewLogger(t), Network: n}))
	if err != nil {
		t.Fatalf("Run(%q): %v", command, err)
	}
	return res
}

// hostServer is an HTTP server on the host's 127.0.0.1 (outside every sandbox).
func hostServer(t *testing.T, body string) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
	t.Cleanup(srv.Close)
	return srv, srv.Listener.Addr().(*net.TCPAddr).String()
}

// pyConnect connects to 127.0.0.1:port from python (ignoring any proxy variable) and prints
// CONNECTED or the error.
func pyConnect(port int) string {
	return fmt.Sprintf(`python3 -c 'import socket
try:
    s = socket.socket(); s.settimeout(5)
    s.connect(("127.0.0.1", %d)); print("CONNECTED")
except OSError as e:
    print("REFUSED", e)'`, port)
}

// networkModes are the sandboxes that confine the network: all of modes(t), and the namespaces
// mode's helper besides the zygote when not root.
func networkModes(t *testing.T) []Mode {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	ms := modes(t)
	if slices.Contains(ms, ModeNamespaces) && !slices.Contains(ms, modeNamespacesHelper) {
		ms = append(ms, modeNamespacesHelper)
	}
	return ms
}

// TestNetworkNone: with no network (the default), a command reaches neither a server on the
// host's 127.0.0.1 nor any name (the lookup fails at once), cannot make UDP or raw sockets, and
// massgen says on stderr why; with command_network open it reaches the host's server.
func TestNetworkNone(t *testing.T) {
	lane.Long(t)
	_, addr := hostServer(t, "host secret")
	port := mustPort(t, addr)
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	udpPort := udp.LocalAddr().(*net.UDPAddr).Port
	for _, mode := range networkModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			ws := t.TempDir()
			res := runNet(t, mode, ws, Network{}, fmt.Sprintf("curl -sS --max-time 5 http://127.0.0.1:%d/", port))
			if res.ExitCode == 0 || strings.Contains(res.Stdout, "host secret") || res.Network != NetworkNone {
				t.Errorf("host listener reached with no network: %+v", res)
			}
			if !strings.Contains(res.Stderr, "massgen: network is off for this agent's commands") || !strings.Contains(res.Stderr, "allowed_domains") {
				t.Errorf("no explanation on stderr: %q", res.Stderr)
			}
			if res := runNet(t, mode, ws, Network{}, pyConnect(port)); !strings.Contains(res.Stdout, "REFUSED") {
				t.Errorf("python reached the host's listener: %+v", res)
			}
			// A name lookup fails, and fast: no resolver is reachable.
			start := time.Now()
			res = runNet(t, mode, ws, Network{Mode: NetworkNone}, "getent hosts pypi.org")
			if res.ExitCode == 0 || time.Since(start) > 2*time.Second {
				t.Errorf("lookup: %+v after %v", res, time.Since(start))
			}
			// UDP and raw sockets.
			res = runNet(t, mode, ws, Network{}, fmt.Sprintf(`python3 -c 'import socket
for args in [(socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP), (socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP), (socket.AF_PACKET, socket.SOCK_RAW), (socket.AF_NETLINK, socket.SOCK_RAW), (40, socket.SOCK_STREAM)]:
    try:
        s = socket.socket(*args)
        s.sendto(b"x", ("127.0.0.1", %d)); print("SENT", args)
    except OSError as e:
        print("FAILED", e)'`, udpPort))
			if strings.Contains(res.Stdout, "SENT") || strings.Count(res.Stdout, "FAILED") != 6 {
				t.Errorf("UDP or raw sockets: %+v", res)
			}
			// Open: today's behaviour.
			res = runNet(t, mode, ws, Network{Mode: NetworkOpen}, fmt.Sprintf("curl -sS --max-time 5 http://127.0.0.1:%d/", port))
			if res.ExitCode != 0 || res.Stdout != "host secret" || res.Network != NetworkOpen {
				t.Errorf("open: %+v", res)
			}
		})
	}
	udp.SetReadDeadline(time.Now())
	if n, _, err := udp.ReadFrom(make([]byte, 16)); err == nil {
		t.Errorf("a datagram (%d bytes) reached the host", n)
	}
}

// TestNetworkAgentsApart: two commands running at once (two agents) cannot reach each other's
// loopback servers: each has a loopback of its own (under Landlock alone, a command may not
// listen at all).
func TestNetworkAgentsApart(t *testing.T) {
	lane.Long(t)
	for _, mode := range networkModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			port := 18000 + os.Getpid()%1000
			a, b := t.TempDir(), t.TempDir()
			for _, n := range []Network{{}, {Mode: NetworkAllowlist}} {
				// A serves on 127.0.0.1:port, checks it reaches itself, says so in a file and
				// waits for B's verdict before it ends.
				server := fmt.Sprintf(`python3 -c 'import socket, os, time
try:
    l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); l.bind(("127.0.0.1", %[1]d)); l.listen(8)
    c = socket.create_connection(("127.0.0.1", %[1]d), timeout=5); c.close(); state = "LISTENING"
except OSError as e:
    state = "NOLISTEN %%s" %% e
open("state.tmp", "w").write(state); os.rename("state.tmp", "state")
print(state)
for i in range(600):
    if os.path.exists(%[2]q): break
    time.sleep(0.05)'`, port, filepath.Join(a, "done"))
				var wg sync.WaitGroup
				var resA Result
				wg.Add(1)
				go func() {
					defer wg.Done()
					resA = runNet(t, mode, a, n, server)
				}()
				state := waitFile(t, filepath.Join(a, "state"))
				resB := runNet(t, mode, b, n, pyConnect(port))
				os.WriteFile(filepath.Join(a, "done"), nil, 0o644)
				wg.Wait()
				if !strings.Contains(resB.Stdout, "REFUSED") {
					t.Errorf("%s: B reached A's server (A: %s): %+v", n.mode(), state, resB)
				}
				if mode == ModeLandlock {
					if !strings.HasPrefix(state, "NOLISTEN") {
						t.Errorf("%s: a command listened under Landlock alone: %s", n.mode(), state)
					}
				} else if state != "LISTENING" {
					t.Errorf("%s: A could not serve on its own loopback: %s %+v", n.mode(), state, resA)
				}
				os.Remove(filepath.Join(a, "state"))
				os.Remove(filepath.Join(a, "done"))
			}
		})
	}
}

func waitFile(t *testing.T, p string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(p); err == nil {
			return string(b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", p)
	return ""
}

func mustPort(t *testing.T, addr string) int {
	t.Helper()
	_, ps, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(ps)
	return p
}

// events collects the proxy's reports.
type events struct {
	mu   sync.Mutex
	list []netproxy.Event
}

func (e *events) add(ev netproxy.Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
}

func (e *events) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.list {
		out = append(out, ev.Kind+" "+ev.Target()+" "+ev.Verdict())
	}
	e.list = nil
	return out
}

// TestNetworkAllowlist: through massgen's proxy, HTTP and HTTPS (CONNECT) to allowed hosts
// succeed, SOCKS5 too; a host not listed gets the 403 naming it and the config key; each
// connection is reported; the proxy variables are set; a program that ignores them and connects
// directly fails. Host names resolve to local test servers inside the proxy (its Connect).
func TestNetworkAllowlist(t *testing.T) {
	lane.Long(t)
	plainSrv, plainAddr := hostServer(t, "plain ok")
	_ = plainSrv
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tls ok") }))
	defer tlsSrv.Close()
	hosts := map[string]string{"a.example:80": plainAddr, "b.example:443": tlsSrv.Listener.Addr().String()}
	allow, err := netproxy.NewAllowlist([]string{"*.example"})
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	n := Network{Mode: NetworkAllowlist, Allow: allow, Report: ev.add,
		connect: func(ctx context.Context, host string, port int) (net.Conn, error) {
			target, ok := hosts[net.JoinHostPort(host, strconv.Itoa(port))]
			if !ok {
				return nil, fmt.Errorf("test: no server for %s:%d", host, port)
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", target)
		}}
	for _, mode := range networkModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			ws := t.TempDir()
			check := func(command string, ok func(Result) bool, wantEvents ...string) {
				t.Helper()
				res := runNet(t, mode, ws, n, command)
				if !ok(res) {
					t.Errorf("%s: %+v", command, res)
				}
				if got := ev.take(); strings.Join(got, "|") != strings.Join(wantEvents, "|") {
					t.Errorf("%s: events %q, want %q", command, got, wantEvents)
				}
			}
			check("curl -sS --max-time 10 http://a.example/", func(r Result) bool { return r.ExitCode == 0 && r.Stdout == "plain ok" },
				"http a.example:80 allowed")
			check("curl -sSk --max-time 10 https://b.example/", func(r Result) bool { return r.ExitCode == 0 && r.Stdout == "tls ok" },
				"connect b.example:443 allowed")
			check(`curl -sS --max-time 10 --proxy "$ALL_PROXY" http://a.example/`, func(r Result) bool { return r.ExitCode == 0 && r.Stdout == "plain ok" },
				"socks5 a.example:80 allowed")
			check("curl -sS --max-time 10 http://example/", func(r Result) bool {
				return strings.Contains(r.Stdout, "example:80 is not in command_network.allowed_domains") && strings.Contains(r.Stdout, "agents[].command_network")
			}, "http example:80 refused")
			check("curl -sS --max-time 10 -w '%{http_code}' -o /dev/null http://a.example.evil/", func(r Result) bool { return r.Stdout == "403" },
				"http a.example.evil:80 refused")
			check("curl -sS --max-time 10 https://a.example.evil/", func(r Result) bool {
				return r.ExitCode != 0 && strings.Contains(r.Stderr, "403") && strings.Contains(r.Stderr, "massgen: this agent's commands reach the network only through massgen's proxy")
			}, "connect a.example.evil:443 refused")
			check("env | grep -i _proxy= | sort", func(r Result) bool {
				return strings.Contains(r.Stdout, "HTTP_PROXY=http://127.0.0.1:") && strings.Contains(r.Stdout, "HTTPS_PROXY=http://127.0.0.1:") &&
					strings.Contains(r.Stdout, "ALL_PROXY=socks5h://127.0.0.1:") && strings.Contains(r.Stdout, "http_proxy=") &&
					strings.Contains(r.Stdout, "https_proxy=") && strings.Contains(r.Stdout, "all_proxy=") && strings.Contains(r.Stdout, "NO_PROXY=localhost")
			})
			// Ignoring the proxy: the host's server is not reachable directly.
			check(fmt.Sprintf("curl -sS --noproxy '*' --max-time 5 http://%s/", plainAddr), func(r Result) bool {
				return r.ExitCode != 0 && !strings.Contains(r.Stdout, "plain ok")
			})
			check(pyConnect(mustPort(t, plainAddr)), func(r Result) bool { return strings.Contains(r.Stdout, "REFUSED") })
			check("getent hosts a.example", func(r Result) bool { return r.ExitCode != 0 })
		})
	}
}

// TestNetworkUnprivileged runs the network tests again as an unprivileged user (setpriv to
// nobody): bubblewrap with its own user namespace, the namespaces mode through the zygote and
// through the helper, Landlock.
func TestNetworkUnprivileged(t *testing.T) {
	lane.Long(t)
	if os.Getenv(unprivEnv) != "" {
		t.Skip("already the unprivileged run")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the test binary as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed")
	}
	dir := t.TempDir()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	copyFile(t, self, bin)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"-test.run", "^(TestNetworkNone|TestNetworkAgentsApart|TestNetworkAllowlist)$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), unprivEnv+"=1", "TMPDIR=/tmp")
	out, err := cmd.CombinedOutput()
	t.Logf("unprivileged run:\n%s", out)
	for _, want := range []string{"--- PASS: TestNetworkNone/namespaces ", "--- PASS: TestNetworkAllowlist/bubblewrap ", "--- PASS: TestNetworkAllowlist/namespaces ",
		"--- PASS: TestNetworkAllowlist/namespaces-helper ", "--- PASS: TestNetworkAllowlist/landlock ", "--- PASS: TestNetworkAgentsApart/namespaces "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("unprivileged run: no %q", want)
		}
	}
	if err != nil {
		t.Fatalf("unprivileged run: %v", err)
	}
}
