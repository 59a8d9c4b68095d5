package sandbox

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/sandbox/netproxy"
	"github.com/massgen-go/massgen/internal/vocab"
)

// NetworkMode is command_network.mode, what a command may reach (its words are declared once,
// in vocab.NetworkMode).
type NetworkMode = vocab.NetworkMode

// Network modes.
const (
	// NetworkNone: no network at all (the default). Linux: a network namespace of the
	// command's own with only its loopback (bubblewrap, namespaces), or no IP socket
	// (Landlock); macOS: Seatbelt denies every network operation.
	NetworkNone = vocab.NetworkNone
	// NetworkAllowlist: the hosts of the allowlist, through massgen's proxy only.
	NetworkAllowlist = vocab.NetworkAllowlist
	// NetworkOpen: any host (what commands had before command_network existed).
	NetworkOpen = vocab.NetworkOpen
)

// Network is what a command may reach.
type Network struct {
	// Mode is none ("" too), allowlist or open.
	Mode NetworkMode
	// Allow is the allowlist of allowlist mode (nil: nothing is allowed).
	Allow *netproxy.Allowlist
	// Report hears of every connection the proxy allows or refuses (the audit log and the
	// live view); nil: nobody. Called from the proxy's goroutines.
	Report func(netproxy.Event)
	// connect replaces the proxy's Connector (tests map host names to local servers).
	connect func(ctx context.Context, host string, port int) (net.Conn, error)
}

func (n Network) mode() NetworkMode {
	if n.Mode == "" {
		return NetworkNone
	}
	return n.Mode
}

// NetworkPlan is the network commands get for a configured command_sandbox and
// command_network mode (PlanNetwork, per system).
type NetworkPlan struct {
	// Mode is the network commands actually get: none, allowlist or open ("" when commands
	// are refused).
	Mode NetworkMode
	// How says how it is enforced.
	How string
	// Warning says what is less than the config asks ("" when nothing is).
	Warning string
}

// planCommon is PlanNetwork where the answer does not depend on the system's sandbox: commands
// refused, the network left open, or no sandbox to enforce anything (done); otherwise p.Mode is
// the mode asked and eff the sandbox that runs.
func planCommon(sandbox Mode, netMode NetworkMode) (p NetworkPlan, eff Mode, done bool) {
	if netMode == "" {
		netMode = NetworkNone
	}
	eff, err := Effective(sandbox)
	switch {
	case err != nil:
		return NetworkPlan{How: "commands are refused: " + err.Error()}, "", true
	case netMode == NetworkOpen && eff == ModeNone:
		return NetworkPlan{Mode: NetworkOpen, How: "commands reach any host (command_network: open; command_sandbox: none)"}, eff, true
	case netMode == NetworkOpen:
		return NetworkPlan{Mode: NetworkOpen, How: "commands reach any host (command_network: open): the sandbox leaves the network as it is"}, eff, true
	case eff == ModeNone:
		return NetworkPlan{Mode: NetworkOpen, How: "not enforced: commands reach any host",
			Warning: fmt.Sprintf("command_network mode %s is not enforced: command_sandbox: none runs commands without a sandbox, so they reach any host", netMode)}, eff, true
	}
	return NetworkPlan{Mode: netMode}, eff, false
}

// ReportNetwork logs PlanNetwork's warning, once per process and message.
func ReportNetwork(sandbox Mode, netMode NetworkMode, log *zap.Logger) {
	if w := PlanNetwork(sandbox, netMode).Warning; w != "" && log != nil {
		if _, said := networkWarned.LoadOrStore(w, true); !said {
			log.Warn(w)
		}
	}
}

var networkWarned sync.Map

// proxyEnv points a command's HTTP clients at the proxy on 127.0.0.1:port, in both the upper-
// and lower-case forms programs read: HTTP(S)_PROXY for HTTP and CONNECT, ALL_PROXY for SOCKS5
// with the proxy resolving names (socks5h), so the allowlist sees them. NO_PROXY keeps the
// command's own loopback direct (its own servers, in its own namespace), unless the allowlist
// names a loopback address: that is the host's, reached through the proxy.
func proxyEnv(port int, allow *netproxy.Allowlist) []string {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	var env []string
	for _, kv := range [][2]string{{"HTTP_PROXY", "http://" + addr}, {"HTTPS_PROXY", "http://" + addr}, {"ALL_PROXY", "socks5h://" + addr}} {
		env = append(env, kv[0]+"="+kv[1], strings.ToLower(kv[0])+"="+kv[1])
	}
	if !allow.ListsLoopback() {
		env = append(env, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1")
	}
	return env
}

// commandProxy serves one command's proxy: the listeners the sandbox hands it (one per
// command), until stop.
type commandProxy struct {
	p      *netproxy.Proxy
	ctx    context.Context
	cancel context.CancelFunc
	log    *zap.Logger
	wg     sync.WaitGroup
}

func newCommandProxy(n Network, log *zap.Logger) *commandProxy {
	ctx, cancel := context.WithCancel(context.Background())
	return &commandProxy{p: &netproxy.Proxy{Allow: n.Allow, Report: n.Report, Connect: n.connect}, ctx: ctx, cancel: cancel, log: log}
}

// serve answers ln's connections until stop.
func (c *commandProxy) serve(ln net.Listener) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := c.p.Serve(c.ctx, ln); err != nil {
			c.log.Warn("command network proxy", zap.Error(err))
		}
	}()
}

// stop closes the listeners and every connection, and waits for them.
func (c *commandProxy) stop() {
	if c == nil {
		return
	}
	c.cancel()
	c.wg.Wait()
}

// networkFailureWords are what programs print when a name does not resolve or a connection
// cannot be made (curl, wget, glibc, Python, Node, Go, git, pip, npm), lower-cased.
var networkFailureWords = []string{
	"could not resolve", "couldn't resolve", "unable to resolve", "temporary failure in name resolution",
	"name or service not known", "no address associated with hostname", "nodename nor servname", "name resolution",
	"getaddrinfo", "enotfound", "eai_again", "network is unreachable", "connection refused", "failed to connect",
	"failed to establish a new connection", "could not connect", "no route to host", "proxyerror", "tunnel connection failed",
	"403 forbidden", "returned error: 403", "connect tunnel failed", "socket: permission denied", "dial tcp",
}

// networkPrograms are programs whose failure, with the network off, is most likely the network's
// (some say nothing: getent hosts exits 2 in silence).
var networkPrograms = []string{"curl", "wget", "pip", "pip3", "npm", "npx", "yarn", "pnpm", "git", "ssh", "scp", "rsync", "nc",
	"ping", "nslookup", "dig", "host", "getent", "apt", "apt-get", "gem", "cargo", "uv", "poetry", "conda", "go", "telnet", "ftp"}

// networkHint is the line massgen adds to the stderr of a command that failed, in a mode that
// keeps it from the network, when its output says it could not reach a host or it runs a program
// that mostly does ("" otherwise).
func networkHint(mode NetworkMode, command string, res Result) string {
	if res.ExitCode == 0 && !res.TimedOut || mode != NetworkNone && mode != NetworkAllowlist {
		return ""
	}
	out := strings.ToLower(res.Stdout + "\n" + res.Stderr)
	found := false
	for _, w := range networkFailureWords {
		if strings.Contains(out, w) {
			found = true
			break
		}
	}
	for _, f := range strings.FieldsFunc(command, func(r rune) bool { return strings.ContainsRune(" \t\n;&|()`$<>", r) }) {
		if found || slices.Contains(networkPrograms, f[strings.LastIndexByte(f, '/')+1:]) {
			found = true
			break
		}
	}
	if !found {
		return ""
	}
	if mode == NetworkNone {
		return "massgen: network is off for this agent's commands (command_network mode none): they cannot resolve or reach any host. " +
			"To let them reach one, set command_network: {mode: allowlist, allowed_domains: [HOST]} for the agent (agents[].command_network) or for every agent (orchestrator.command_network) in the config.\n"
	}
	return "massgen: this agent's commands reach the network only through massgen's proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are set) " +
		"and only the hosts in command_network.allowed_domains; a program that ignores those variables cannot connect, and a host not listed is refused (HTTP 403 naming it).\n"
}

// addNetworkHint appends networkHint's line to res.Stderr, on a line of its own.
func addNetworkHint(res *Result, mode NetworkMode, command string) {
	h := networkHint(mode, command, *res)
	if h == "" {
		return
	}
	if res.Stderr != "" && !strings.HasSuffix(res.Stderr, "\n") {
		res.Stderr += "\n"
	}
	res.Stderr += h
}
