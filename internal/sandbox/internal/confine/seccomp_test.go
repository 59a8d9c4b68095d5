//go:build linux

package confine

import (
	"encoding/binary"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// runFilter runs the classic BPF program on a seccomp_data (the subset of instructions the
// filter uses) and returns the action.
func runFilter(t *testing.T, prog []unix.SockFilter, nr uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64) // struct seccomp_data: nr, arch, instruction_pointer, args[6]
	binary.LittleEndian.PutUint32(data[0:], nr)
	binary.LittleEndian.PutUint32(data[4:], auditArch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		f := prog[pc]
		switch f.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[f.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= f.K
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(f.K)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			var c bool
			switch f.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				c = acc == f.K
			case unix.BPF_JSET:
				c = acc&f.K != 0
			case unix.BPF_JGE:
				c = acc >= f.K
			}
			if c {
				pc += int(f.Jt)
			} else {
				pc += int(f.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return f.K
		default:
			t.Fatalf("instruction %d: unknown code %#x", pc, f.Code)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// TestFilterDecisions runs the filter on the calls it must refuse and on everyday calls it must
// let through, in every variant the modes use.
func TestFilterDecisions(t *testing.T) {
	const allow = unix.SECCOMP_RET_ALLOW
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }
	for _, o := range []FilterOpts{{}, {IPC: true, XAttr: true, CloneNS: unix.CLONE_NEWPID | unix.CLONE_NEWUSER}} {
		prog, err := buildFilter(o)
		if err != nil {
			t.Fatal(err)
		}
		// Every syscall number: the refused ones refused, the others (without arguments that
		// matter) allowed, whatever the search tree's shape.
		denied := map[uint32]DeniedCall{}
		for _, c := range DeniedCalls() {
			denied[c.nr] = c
		}
		argChecked := map[uint32]bool{unix.SYS_SOCKET: true, unix.SYS_OPENAT2: true, unix.SYS_CLONE: true, unix.SYS_PERSONALITY: true}
		for _, c := range append([]modeCall{{unix.SYS_FCHMOD, 1}, {unix.SYS_FCHMODAT, 2}, {unix.SYS_FCHMODAT2, 2},
			{unix.SYS_OPENAT, 3}, {unix.SYS_MKNODAT, 2}}, legacyModeCalls...) {
			argChecked[c.nr] = true
		}
		for nr := uint32(0); nr < 1024; nr++ {
			got := runFilter(t, prog, nr, 1)
			switch c, ok := denied[nr]; {
			case ok && got != errno(c.errno):
				t.Errorf("%+v: %s returned %#x, want %v", o, c.Name, got, c.errno)
			case !ok && !argChecked[nr] && got != allow && !o.IPC && !o.XAttr:
				t.Errorf("%+v: syscall %d returned %#x, want allowed", o, nr, got)
			}
		}
		cases := []struct {
			name string
			nr   uint32
			args []uint64
			want uint32
		}{
			{"keyctl(KEYCTL_GET_KEYRING_ID)", unix.SYS_KEYCTL, []uint64{0, ^uint64(2)}, errno(unix.EPERM)},
			{"clone3", unix.SYS_CLONE3, nil, errno(unix.ENOSYS)},
			{"read", unix.SYS_READ, nil, allow},
			{"write", unix.SYS_WRITE, nil, allow},
			{"openat 0644", unix.SYS_OPENAT, []uint64{0, 0, unix.O_CREAT, 0o644}, allow},
			{"openat setuid", unix.SYS_OPENAT, []uint64{0, 0, unix.O_CREAT, 0o4755}, errno(unix.EPERM)},
			{"fork (clone, SIGCHLD)", unix.SYS_CLONE, []uint64{uint64(unix.SIGCHLD)}, allow},
			{"thread (clone)", unix.SYS_CLONE, []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD}, allow},
			{"clone NEWNET", unix.SYS_CLONE, []uint64{unix.CLONE_NEWNET | uint64(unix.SIGCHLD)}, errno(unix.EPERM)},
			{"clone NEWNS, high bits set", unix.SYS_CLONE, []uint64{1<<40 | unix.CLONE_NEWNS}, errno(unix.EPERM)},
			{"personality(query)", unix.SYS_PERSONALITY, []uint64{0xffffffff}, allow},
			{"personality(PER_LINUX)", unix.SYS_PERSONALITY, []uint64{0}, allow},
			{"personality(ADDR_NO_RANDOMIZE)", unix.SYS_PERSONALITY, []uint64{0x0040000}, errno(unix.EPERM)},
			{"ptrace (inside the sandbox's PID namespace)", unix.SYS_PTRACE, nil, allow},
			{"socket(AF_UNIX)", unix.SYS_SOCKET, []uint64{unix.AF_UNIX}, errno(unix.EACCES)},
			{"socket(AF_INET)", unix.SYS_SOCKET, []uint64{unix.AF_INET}, allow},
			{"prlimit64", unix.SYS_PRLIMIT64, nil, allow},
		}
		for _, c := range cases {
			if got := runFilter(t, prog, c.nr, c.args...); got != c.want {
				t.Errorf("%+v: %s returned %#x, want %#x", o, c.name, got, c.want)
			}
		}
		// The Landlock mode's own fork takes its PID (and user) namespace flags; nothing else.
		userPID := uint64(unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.SIGCHLD)
		want := errno(unix.EPERM)
		if o.CloneNS != 0 {
			want = allow
		}
		if got := runFilter(t, prog, unix.SYS_CLONE, userPID); got != want {
			t.Errorf("%+v: clone(NEWUSER|NEWPID) returned %#x, want %#x", o, got, want)
		}
	}
}

// TestDeniedCallsUnique: each refused call is listed once (a second rule would be dead code,
// and buildFilter refuses it).
func TestDeniedCallsUnique(t *testing.T) {
	names := map[string]bool{}
	for _, c := range DeniedCalls() {
		if names[c.Name] {
			t.Errorf("%s listed twice", c.Name)
		}
		names[c.Name] = true
	}
	if _, err := buildFilter(FilterOpts{IPC: true, XAttr: true}); err != nil {
		t.Fatal(err)
	}
}

// TestFilterNetwork: what socket(2) and friends may do under each NetFilter.
func TestFilterNetwork(t *testing.T) {
	const allow = unix.SECCOMP_RET_ALLOW
	refused := unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	type call struct {
		name string
		nr   uint32
		args []uint64
	}
	sock := func(name string, domain, typ, proto uint64) call {
		return call{name, unix.SYS_SOCKET, []uint64{domain, typ, proto}}
	}
	calls := []call{
		sock("unix", unix.AF_UNIX, unix.SOCK_STREAM, 0),
		sock("tcp4", unix.AF_INET, unix.SOCK_STREAM, 0),
		sock("tcp4 cloexec nonblock", unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.IPPROTO_TCP),
		sock("tcp6", unix.AF_INET6, unix.SOCK_STREAM, 0),
		sock("mptcp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP),
		sock("sctp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP),
		sock("udp", unix.AF_INET, unix.SOCK_DGRAM, 0),
		sock("udp6", unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0),
		sock("raw", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP),
		sock("packet", unix.AF_PACKET, unix.SOCK_RAW, 0),
		sock("netlink", unix.AF_NETLINK, unix.SOCK_RAW, 0),
		sock("vsock", unix.AF_VSOCK, unix.SOCK_STREAM, 0),
		{"socketpair", unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}},
		{"listen", unix.SYS_LISTEN, []uint64{3, 8}},
		{"sendto", unix.SYS_SENDTO, []uint64{3, 0, 1, 0}},
		{"sendto fastopen", unix.SYS_SENDTO, []uint64{3, 0, 1, unix.MSG_FASTOPEN}},
		{"sendmsg fastopen", unix.SYS_SENDMSG, []uint64{3, 0, unix.MSG_FASTOPEN | unix.MSG_NOSIGNAL}},
		{"sendmmsg fastopen", unix.SYS_SENDMMSG, []uint64{3, 0, 1, unix.MSG_FASTOPEN}},
		{"sendmsg", unix.SYS_SENDMSG, []uint64{3, 0, unix.MSG_NOSIGNAL}},
		{"connect", unix.SYS_CONNECT, []uint64{3, 0, 16}},
	}
	// The calls each filter allows (by name); every other one is refused with EACCES.
	allowed := map[NetFilter][]string{
		NetOpen: {"tcp4", "tcp4 cloexec nonblock", "tcp6", "mptcp", "sctp", "udp", "udp6", "raw", "packet", "netlink", "vsock",
			"socketpair", "listen", "sendto", "sendto fastopen", "sendmsg fastopen", "sendmmsg fastopen", "sendmsg", "connect"},
		NetTCP: {"tcp4", "tcp4 cloexec nonblock", "tcp6", "socketpair", "listen", "sendto", "sendto fastopen", "sendmsg fastopen",
			"sendmmsg fastopen", "sendmsg", "connect"},
		NetTCPConfined: {"tcp4", "tcp4 cloexec nonblock", "tcp6", "socketpair", "sendto", "sendmsg", "connect"},
		NetNoSockets:   {"socketpair", "listen", "sendto", "sendto fastopen", "sendmsg fastopen", "sendmmsg fastopen", "sendmsg", "connect"},
	}
	for nf, ok := range allowed {
		prog, err := buildFilter(FilterOpts{Net: nf, IPC: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			want := refused
			if slices.Contains(ok, c.name) {
				want = allow
			}
			if got := runFilter(t, prog, c.nr, c.args...); got != want {
				t.Errorf("filter %d: %s: got %#x, want %#x", nf, c.name, got, want)
			}
		}
	}
}
