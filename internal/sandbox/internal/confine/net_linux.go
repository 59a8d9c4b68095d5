//go:build linux

package confine

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// NetFilter is what the seccomp filter allows of socket(2) and friends, besides refusing
// AF_UNIX sockets in every case.
type NetFilter uint8

const (
	// NetOpen: every other socket (command_network: open).
	NetOpen NetFilter = iota
	// NetTCP: TCP sockets only (AF_INET, AF_INET6, SOCK_STREAM, protocol 0 or IPPROTO_TCP): no
	// UDP, raw, packet, netlink or vsock sockets. The command has a network namespace of its
	// own, so TCP reaches its own loopback (and massgen's proxy there) and nothing else.
	NetTCP
	// NetTCPConfined: as NetTCP, for a command in massgen's network namespace whose TCP
	// connect and bind Landlock confines (to the proxy's port): listen(2), which binds an
	// unbound socket to a port of its own past Landlock's bind check, and TCP Fast Open sends
	// (MSG_FASTOPEN), which connect past Landlock's connect check, are refused too.
	NetTCPConfined
	// NetNoSockets: no socket(2) at all (socketpair(2) and pipes keep working): a command in
	// massgen's network namespace with no network.
	NetNoSockets
)

// NetSpec is how a command's network namespace is set up (namespaces mode).
type NetSpec struct {
	// Isolate: the command gets a network namespace of its own, with its own loopback only.
	Isolate bool `json:"isolate,omitempty"`
	// ProxyPort, when not 0, is where massgen's proxy is reached inside the namespace
	// (127.0.0.1:ProxyPort): a listening socket is made there and handed to massgen.
	ProxyPort int `json:"proxy_port,omitempty"`
	// Sock is the helper's socket for that listening socket (SCM_RIGHTS).
	Sock int `json:"sock,omitempty"`
	// Filter is the seccomp filter's network part.
	Filter NetFilter `json:"filter,omitempty"`
}

// LoopbackUp brings the loopback interface of the calling thread's network namespace up (a new
// namespace has it down: no 127.0.0.1). Needs CAP_NET_ADMIN there.
func LoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}

// ProxyListener makes a listening TCP socket on 127.0.0.1:port in the calling thread's network
// namespace (close-on-exec): the end of the bridge to massgen's proxy in the command's namespace.
// massgen accepts the command's connections on it from its own namespace.
func ProxyListener(port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("proxy listener: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("proxy listener: bind 127.0.0.1:%d: %w", port, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("proxy listener: %w", err)
	}
	return fd, nil
}

// SetUpNetwork prepares the network namespace the calling thread is in (already new): the
// loopback up and, when spec asks for the proxy, its listening socket (-1 otherwise).
func SetUpNetwork(spec NetSpec) (int, error) {
	if !spec.Isolate {
		return -1, nil
	}
	if err := LoopbackUp(); err != nil {
		return -1, err
	}
	if spec.ProxyPort == 0 {
		return -1, nil
	}
	return ProxyListener(spec.ProxyPort)
}

// SendFD sends fd over the UNIX socket sock (SCM_RIGHTS), with one byte of data.
func SendFD(sock, fd int) error {
	return unix.Sendmsg(sock, []byte{'L'}, unix.UnixRights(fd), nil, 0)
}

// RecvFD receives one descriptor sent by SendFD on sock (close-on-exec).
func RecvFD(sock int) (int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, err
		}
		if n == 0 && oobn == 0 {
			return -1, errors.New("the sandbox closed the proxy's socket without sending its listener")
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			return -1, fmt.Errorf("no listener received (%v)", err)
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return -1, fmt.Errorf("no listener received (%v)", err)
		}
		return fds[0], nil
	}
}

// NetRelayArg is argv[1] of massgen re-executed inside bubblewrap's network namespace, as the
// sandbox's first program, to make the proxy's listening socket there: argv[2] the socket
// to hand it to massgen on, argv[3] the port, argv[4:] the command, which it then execs.
const NetRelayArg = "__massgen_sandbox_net_relay__"

// RunNetRelayIfAsked is the relay's entry point (see NetRelayArg); it never returns when asked,
// exiting 126 with a message on stderr when it cannot set up.
func RunNetRelayIfAsked() {
	if len(os.Args) < 5 || os.Args[1] != NetRelayArg {
		return
	}
	err := runNetRelay(os.Args[2], os.Args[3], os.Args[4:])
	fmt.Fprintf(os.Stderr, "massgen sandbox: the network relay failed: %v\n", err)
	os.Exit(126)
}

func runNetRelay(sockArg, portArg string, argv []string) error {
	sock, err := strconv.Atoi(sockArg)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(portArg)
	if err != nil {
		return err
	}
	ln, err := ProxyListener(port)
	if err != nil {
		return err
	}
	if err := SendFD(sock, ln); err != nil {
		return fmt.Errorf("handing the listener to massgen: %w", err)
	}
	unix.Close(ln)
	unix.Close(sock)
	// Nothing of ours (the binary's descriptor among them) reaches the command.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return err
	}
	return syscall.Exec(argv[0], argv, os.Environ())
}
