//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
)

// How a command's network is confined on Linux (PlanNetwork says which applies):
//   - bubblewrap and namespaces: a network namespace of the command's own (bubblewrap's
//     --unshare-net; CLONE_NEWNET on the thread, in the zygote or the helper), whose only
//     interface is its loopback, up. In allowlist mode a listening socket is made on
//     127.0.0.1:nsProxyPort inside it (by the thread or the zygote that builds the view, the
//     helper, or, under bubblewrap, massgen re-executed as the sandbox's first program: the
//     relay, which then execs the shell) and handed to massgen over a socketpair; massgen
//     accepts the command's connections on it from its own namespace and serves them with the
//     proxy (the "bridge": no byte is copied by anything in the sandbox). The seccomp filter
//     allows TCP sockets only (confine.NetTCP), so UDP and raw sockets are refused, and vsock,
//     which no network namespace confines, with them.
//   - Landlock alone: the command shares massgen's network namespace. none: no socket at all
//     (confine.NetNoSockets) and, from Landlock ABI 4, no TCP bind or connect. allowlist: TCP
//     sockets only, Landlock's TCP rules allow connect to the proxy's port on the host's
//     loopback (a listener of massgen's, one per command) and nothing else, no bind, and the
//     filter refuses listen(2) and TCP Fast Open (confine.NetTCPConfined).

// nsProxyPort is where a command with a network namespace of its own reaches massgen's proxy.
const nsProxyPort = 3128

// PlanNetwork is the network commands get under sandbox (command_sandbox) for netMode
// (command_network.mode; "" is none): what doctor shows and a run says at its start.
func PlanNetwork(sandbox Mode, netMode NetworkMode) NetworkPlan {
	p, eff, done := planCommon(sandbox, netMode)
	if done {
		return p
	}
	netMode = p.Mode
	switch eff {
	case ModeBubblewrap, ModeNamespaces:
		how := "a network namespace of the command's own with only its loopback"
		if eff == ModeBubblewrap {
			how += " (bubblewrap --unshare-net)"
		} else {
			how += " (CLONE_NEWNET)"
		}
		how += "; TCP sockets only (seccomp)"
		if netMode == NetworkAllowlist {
			how += fmt.Sprintf("; massgen's proxy on its 127.0.0.1:%d lets through the hosts of allowed_domains", nsProxyPort)
		}
		return NetworkPlan{Mode: netMode, How: how}
	}
	abi := LandlockABI()
	if abi < confine.MinLandlockNetABI {
		if netMode == NetworkAllowlist {
			return NetworkPlan{Mode: NetworkNone, How: "no IP socket (seccomp)",
				Warning: fmt.Sprintf("command_network mode allowlist cannot be enforced under Landlock ABI %d without network namespaces (TCP rules need ABI %d, or install bubblewrap): commands get no network at all", abi, confine.MinLandlockNetABI)}
		}
		return NetworkPlan{Mode: NetworkNone, How: fmt.Sprintf("no IP socket (seccomp); Landlock ABI %d has no TCP rules", abi)}
	}
	if netMode == NetworkAllowlist {
		return NetworkPlan{Mode: netMode, How: fmt.Sprintf("Landlock ABI %d TCP rules: connect only to massgen's proxy on the host's loopback, no bind; TCP sockets only, no listen (seccomp); another host's service on the proxy's port number is not told apart", abi)}
	}
	return NetworkPlan{Mode: netMode, How: fmt.Sprintf("no IP socket (seccomp), no TCP connect or bind (Landlock ABI %d)", abi)}
}

// netSetup is one command's network as the sandbox sets it up.
type netSetup struct {
	mode  NetworkMode   // none, allowlist or open
	proxy *commandProxy // allowlist
	// parent is massgen's end of the socketpair on which the sandbox sends the proxy's
	// listener (bubblewrap's relay, the helper); child the end passed to the sandbox.
	parent, child *os.File
}

// filter is the seccomp filter's network part for a command with a namespace of its own.
func (n *netSetup) nsFilter() confine.NetFilter {
	if n.mode == NetworkOpen {
		return confine.NetOpen
	}
	return confine.NetTCP
}

// nsSpec is the namespaces mode's network spec (Sock is set by the helper's caller).
func (n *netSetup) nsSpec() confine.NetSpec {
	s := confine.NetSpec{Isolate: n.mode != NetworkOpen, Filter: n.nsFilter()}
	if n.mode == NetworkAllowlist {
		s.ProxyPort = nsProxyPort
	}
	return s
}

// bridge makes the socketpair the sandbox sends the proxy's listener on.
func (n *netSetup) bridge() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("proxy bridge: %w", err)
	}
	n.parent, n.child = os.NewFile(uintptr(fds[0]), "proxy-bridge"), os.NewFile(uintptr(fds[1]), "proxy-bridge")
	return nil
}

// receive waits (in the background) for the listener on the bridge and serves it. Call it once
// the sandbox process has the child end (which massgen then closes).
func (n *netSetup) receive() {
	parent := n.parent
	n.parent = nil
	n.proxy.wg.Add(1)
	go func() {
		defer n.proxy.wg.Done()
		defer parent.Close()
		// The sandbox sends it before the command runs, or exits: EOF. The proxy's stop
		// closes the socket to end the wait when the command failed to start.
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-n.proxy.ctx.Done():
				unix.Shutdown(int(parent.Fd()), unix.SHUT_RDWR)
			case <-stop:
			}
		}()
		fd, err := confine.RecvFD(int(parent.Fd()))
		if err != nil {
			if n.proxy.ctx.Err() == nil {
				n.proxy.log.Debug("command network: no proxy listener from the sandbox", zap.Error(err))
			}
			return
		}
		n.serveFD(fd)
	}()
}

// serveFD serves the listening socket fd (made in the command's namespace), taking it over.
func (n *netSetup) serveFD(fd int) {
	f := os.NewFile(uintptr(fd), "proxy-listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		n.proxy.log.Warn("command network: the proxy's listener", zap.Error(err))
		return
	}
	n.proxy.serve(ln)
}

// hostListener is the Landlock mode's proxy listener: on massgen's own loopback, one per
// command (its port is the one the command's ruleset lets it connect to).
func (n *netSetup) hostListener() (int, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("proxy listener: %w", err)
	}
	n.proxy.serve(ln)
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (n *netSetup) Close() {
	if n == nil {
		return
	}
	n.proxy.stop()
	for _, f := range []*os.File{n.parent, n.child} {
		if f != nil {
			f.Close()
		}
	}
}

// errNoRelay: bubblewrap's allowlist mode needs massgen re-executed as its relay.
var errNoRelay = errors.New("the command network's relay needs massgen's own binary")
