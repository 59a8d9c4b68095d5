//go:build linux

package confine

import (
	"cmp"
	"encoding/binary"
	"errors"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FilterOpts chooses the optional parts of the seccomp filter.
type FilterOpts struct {
	// IPC: refuse SysV IPC and POSIX message queues (the command has no IPC namespace of its
	// own, so it would share them with every process of the host).
	IPC bool
	// XAttr: refuse writing extended attributes (Landlock does not govern them, so they could
	// be written on any file the user owns).
	XAttr bool
	// CloneNS are the namespace flags clone(2) may still take: the Landlock mode forks the
	// command from its confined thread with CLONE_NEWPID (and CLONE_NEWUSER when massgen is not
	// root), after the filter is installed. Every other mode forks with none.
	CloneNS uint32
	// Net is what the command may do with sockets (net_linux.go); AF_UNIX sockets are
	// refused whatever it says.
	Net NetFilter
}

// modeCall is a syscall taking a file mode, and the index of that argument.
type modeCall struct {
	nr  uint32
	arg uint32
}

// setuidBits are refused in every mode given to chmod and to file creation: a setuid file left
// in a user's directory (or, run as root, on a system binary) is a privilege escalation for
// whoever runs it next.
const setuidBits = unix.S_ISUID | unix.S_ISGID

// nsCloneFlags are the clone(2) flags that create namespaces (Docker's mask, 0x7E020000).
const nsCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// DeniedCall is a system call refused to every command, whatever its arguments.
type DeniedCall struct {
	Name  string
	nr    uint32
	errno unix.Errno
}

// deniedGroup is a set of refused system calls and why (docs/tools.md lists them in these
// groups). The list starts from what Docker's default seccomp profile refuses to a container
// without extra capabilities (profiles/seccomp/default.json): the kernel surface a container
// runtime keeps from its workloads. Most of these calls also need a capability commands never
// have; the filter refuses them before the kernel code behind them runs at all.
type deniedGroup struct {
	why   string
	calls []DeniedCall
}

func call(name string, nr uint32) DeniedCall {
	return DeniedCall{Name: name, nr: nr, errno: unix.EPERM}
}

// deniedGroups are the refused calls of this architecture (archDenied adds its own).
func deniedGroups() []deniedGroup {
	g := []deniedGroup{
		{"kernel keyrings: a command could read massgen's session keyring and leave keys for other agents' commands and later runs",
			[]DeniedCall{call("add_key", unix.SYS_ADD_KEY), call("keyctl", unix.SYS_KEYCTL), call("request_key", unix.SYS_REQUEST_KEY)}},
		{"kernel attack surface with no use in a command: eBPF, performance counters, userfaultfd, io_uring (which would also open files and sockets past this filter)",
			[]DeniedCall{call("bpf", unix.SYS_BPF), call("perf_event_open", unix.SYS_PERF_EVENT_OPEN), call("userfaultfd", unix.SYS_USERFAULTFD),
				call("io_uring_setup", unix.SYS_IO_URING_SETUP), call("io_uring_enter", unix.SYS_IO_URING_ENTER),
				call("io_uring_register", unix.SYS_IO_URING_REGISTER)}},
		{"the kernel and the machine: modules, kexec, reboot, swap, process accounting, quotas, the kernel log",
			[]DeniedCall{call("init_module", unix.SYS_INIT_MODULE), call("finit_module", unix.SYS_FINIT_MODULE),
				call("delete_module", unix.SYS_DELETE_MODULE), call("kexec_load", unix.SYS_KEXEC_LOAD),
				call("kexec_file_load", unix.SYS_KEXEC_FILE_LOAD), call("reboot", unix.SYS_REBOOT), call("swapon", unix.SYS_SWAPON),
				call("swapoff", unix.SYS_SWAPOFF), call("acct", unix.SYS_ACCT), call("quotactl", unix.SYS_QUOTACTL),
				call("quotactl_fd", unix.SYS_QUOTACTL_FD), call("syslog", unix.SYS_SYSLOG), call("vhangup", unix.SYS_VHANGUP),
				call("nfsservctl", unix.SYS_NFSSERVCTL)}},
		{"the clock, shared by the whole machine",
			[]DeniedCall{call("clock_settime", unix.SYS_CLOCK_SETTIME), call("settimeofday", unix.SYS_SETTIMEOFDAY),
				call("clock_adjtime", unix.SYS_CLOCK_ADJTIME), call("adjtimex", unix.SYS_ADJTIMEX)}},
		{"mounts and namespaces: the sandbox builds its view before the filter is installed; a command may not change it or make new namespaces (clone with namespace flags is refused too, clone3 answers ENOSYS so that C libraries fall back to clone)",
			[]DeniedCall{call("mount", unix.SYS_MOUNT), call("umount2", unix.SYS_UMOUNT2), call("pivot_root", unix.SYS_PIVOT_ROOT),
				call("chroot", unix.SYS_CHROOT), call("fsopen", unix.SYS_FSOPEN), call("fsconfig", unix.SYS_FSCONFIG),
				call("fsmount", unix.SYS_FSMOUNT), call("fspick", unix.SYS_FSPICK), call("move_mount", unix.SYS_MOVE_MOUNT),
				call("open_tree", unix.SYS_OPEN_TREE), call("open_tree_attr", unix.SYS_OPEN_TREE_ATTR),
				call("mount_setattr", unix.SYS_MOUNT_SETATTR), call("setns", unix.SYS_SETNS), call("unshare", unix.SYS_UNSHARE),
				{Name: "clone3", nr: unix.SYS_CLONE3, errno: unix.ENOSYS}, call("sethostname", unix.SYS_SETHOSTNAME),
				call("setdomainname", unix.SYS_SETDOMAINNAME)}},
		{"file handles, which open files by inode past every path check",
			[]DeniedCall{call("name_to_handle_at", unix.SYS_NAME_TO_HANDLE_AT), call("open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT),
				call("lookup_dcookie", unix.SYS_LOOKUP_DCOOKIE), call("fanotify_init", unix.SYS_FANOTIFY_INIT)}},
		{"reaching into other processes beyond ptrace: descriptors, memory advice, comparing kernel objects",
			[]DeniedCall{call("pidfd_getfd", unix.SYS_PIDFD_GETFD), call("process_madvise", unix.SYS_PROCESS_MADVISE),
				call("kcmp", unix.SYS_KCMP)}},
		{"NUMA memory placement (Docker allows it with CAP_SYS_NICE only)",
			[]DeniedCall{call("get_mempolicy", unix.SYS_GET_MEMPOLICY), call("set_mempolicy", unix.SYS_SET_MEMPOLICY),
				call("set_mempolicy_home_node", unix.SYS_SET_MEMPOLICY_HOME_NODE), call("mbind", unix.SYS_MBIND),
				call("migrate_pages", unix.SYS_MIGRATE_PAGES), call("move_pages", unix.SYS_MOVE_PAGES)}},
	}
	if a := archDenied(); len(a) > 0 {
		g = append(g, deniedGroup{"obsolete or hardware-level calls of this architecture", a})
	}
	return g
}

// DeniedCalls lists the system calls refused to every command (whatever their arguments), in
// the order docs/tools.md shows them.
func DeniedCalls() []DeniedCall {
	var out []DeniedCall
	for _, g := range deniedGroups() {
		out = append(out, g.calls...)
	}
	return out
}

// allowedPersonas are the personality(2) values a command may set (Docker's list): Linux,
// PER_LINUX32, UNAME26 with either, and the query 0xffffffff. Others (ADDR_NO_RANDOMIZE,
// READ_IMPLIES_EXEC) switch exploit mitigations off.
var allowedPersonas = []uint32{0, 0x0008, 0x20000, 0x20008, 0xffffffff}

// installFilter installs the filter on the calling thread (inherited by the exec'd command).
// no_new_privs is already set (Landlock needs it), which allows an unprivileged filter.
func installFilter(o FilterOpts) error {
	prog, err := buildFilter(o)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}

// FilterBytes is the filter in the binary form bubblewrap's --seccomp FD reads.
func FilterBytes(o FilterOpts) ([]byte, error) {
	prog, err := buildFilter(o)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 8*len(prog))
	for _, f := range prog {
		b = binary.LittleEndian.AppendUint16(b, f.Code)
		b = append(b, f.Jt, f.Jf)
		b = binary.LittleEndian.AppendUint32(b, f.K)
	}
	return b, nil
}

// socketRule is socket(2)'s block: AF_UNIX refused (EACCES) always; with NetTCP and
// NetTCPConfined everything but TCP over IPv4 and IPv6 refused too (the type's low bits, without
// SOCK_NONBLOCK and SOCK_CLOEXEC, must be SOCK_STREAM, the protocol 0 or IPPROTO_TCP: MPTCP and
// SCTP are not TCP to Landlock); with NetNoSockets every socket.
func socketRule(n NetFilter) []unix.SockFilter {
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		and   = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
	)
	refuse := unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	switch n {
	case NetNoSockets:
		return []unix.SockFilter{{Code: ret, K: refuse}}
	case NetTCP, NetTCPConfined:
		return []unix.SockFilter{
			{Code: ldAbs, K: 16},                       // domain
			{Code: jeq, Jt: 1, Jf: 0, K: unix.AF_INET}, // to the type check
			{Code: jeq, Jt: 0, Jf: 7, K: unix.AF_INET6},
			{Code: ldAbs, K: 24}, // type
			{Code: and, K: 0xf},  // SOCK_TYPE_MASK
			{Code: jeq, Jt: 0, Jf: 4, K: unix.SOCK_STREAM},
			{Code: ldAbs, K: 32}, // protocol
			{Code: jeq, Jt: 1, Jf: 0, K: 0},
			{Code: jeq, Jt: 0, Jf: 1, K: unix.IPPROTO_TCP},
			{Code: ret, K: unix.SECCOMP_RET_ALLOW},
			{Code: ret, K: refuse},
		}
	}
	return []unix.SockFilter{
		{Code: ldAbs, K: 16},
		{Code: jeq, Jt: 0, Jf: 1, K: unix.AF_UNIX},
		{Code: ret, K: refuse},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
}

// buildFilter is the BPF program. Always refused: every syscall of a foreign ABI (x32,
// 32-bit); the calls of deniedGroups; socket(AF_UNIX) (Landlock before ABI 9 does not govern
// connect(2) to pathname UNIX sockets: think /var/run/docker.sock; abstract sockets live in
// the network namespace, shared with bubblewrap); openat2 (its mode is out of the filter's
// reach: ENOSYS, callers fall back to openat); setuid/setgid bits in chmod and file creation;
// clone(2) with namespace flags (except o.CloneNS); personality(2) but for allowedPersonas.
// Pipes and socketpair(2) keep working.
func buildFilter(o FilterOpts) ([]unix.SockFilter, error) {
	if auditArch == 0 {
		return nil, errors.New("no seccomp filter for this architecture")
	}
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ja    = unix.BPF_JMP | unix.BPF_JA
		ret   = unix.BPF_RET | unix.BPF_K
		allow = unix.SECCOMP_RET_ALLOW
		offNr = 0
		offAr = 4
	)
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }
	argLow := func(i uint32) uint32 { return 16 + 8*i } // args[i], low 32 bits (little endian)

	type rule struct {
		nr    uint32
		block []unix.SockFilter // runs with the syscall number matched; must end in ret
	}
	always := func(nr uint32, e unix.Errno) rule {
		return rule{nr, []unix.SockFilter{{Code: ret, K: errno(e)}}}
	}
	maskArg := func(nr, arg, mask uint32, e unix.Errno) rule {
		return rule{nr, []unix.SockFilter{
			{Code: ldAbs, K: argLow(arg)},
			{Code: jset, Jt: 0, Jf: 1, K: mask},
			{Code: ret, K: errno(e)},
			{Code: ret, K: allow},
		}}
	}
	var rules []rule
	for _, c := range DeniedCalls() {
		rules = append(rules, always(c.nr, c.errno))
	}
	rules = append(rules,
		rule{unix.SYS_SOCKET, socketRule(o.Net)},
		always(unix.SYS_OPENAT2, unix.ENOSYS),
		// The kernel reads only the low 32 bits of clone(2)'s flags.
		maskArg(unix.SYS_CLONE, 0, nsCloneFlags&^o.CloneNS, unix.EPERM),
	)
	persona := []unix.SockFilter{{Code: ldAbs, K: argLow(0)}}
	for i, p := range allowedPersonas {
		// Matched: jump to the allow after the refusal.
		persona = append(persona, unix.SockFilter{Code: jeq, Jt: uint8(len(allowedPersonas) - i), K: p})
	}
	persona = append(persona, unix.SockFilter{Code: ret, K: errno(unix.EPERM)}, unix.SockFilter{Code: ret, K: allow})
	rules = append(rules, rule{unix.SYS_PERSONALITY, persona})
	for _, c := range append([]modeCall{{unix.SYS_FCHMOD, 1}, {unix.SYS_FCHMODAT, 2}, {unix.SYS_FCHMODAT2, 2},
		{unix.SYS_OPENAT, 3}, {unix.SYS_MKNODAT, 2}}, legacyModeCalls...) {
		rules = append(rules, maskArg(c.nr, c.arg, setuidBits, unix.EPERM))
	}
	if o.IPC {
		for _, nr := range []uint32{unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMCTL, unix.SYS_SHMDT,
			unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMCTL, unix.SYS_SEMTIMEDOP,
			unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
			unix.SYS_MQ_OPEN, unix.SYS_MQ_UNLINK, unix.SYS_MQ_TIMEDSEND, unix.SYS_MQ_TIMEDRECEIVE,
			unix.SYS_MQ_NOTIFY, unix.SYS_MQ_GETSETATTR} {
			rules = append(rules, always(nr, unix.EPERM))
		}
	}
	if o.Net == NetTCPConfined {
		// listen(2) on an unbound socket binds it to a port of its own without the bind
		// check Landlock makes; MSG_FASTOPEN connects inside sendto(2)/sendmsg(2), past its
		// connect check.
		rules = append(rules, always(unix.SYS_LISTEN, unix.EACCES),
			maskArg(unix.SYS_SENDTO, 3, unix.MSG_FASTOPEN, unix.EACCES),
			maskArg(unix.SYS_SENDMSG, 2, unix.MSG_FASTOPEN, unix.EACCES),
			maskArg(unix.SYS_SENDMMSG, 3, unix.MSG_FASTOPEN, unix.EACCES))
	}
	if o.XAttr {
		// EOPNOTSUPP, as on a file system without extended attributes: cp -a, rsync -X and
		// friends carry on.
		for _, nr := range []uint32{unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
			unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR,
			unix.SYS_SETXATTRAT, unix.SYS_REMOVEXATTRAT} {
			rules = append(rules, always(nr, unix.EOPNOTSUPP))
		}
	}

	prog := []unix.SockFilter{
		{Code: ldAbs, K: offAr},
		{Code: jeq, Jt: 1, Jf: 0, K: auditArch},
		{Code: ret, K: errno(unix.EACCES)},
		{Code: ldAbs, K: offNr},
		{Code: jset, Jt: 0, Jf: 1, K: 0x40000000}, // x32 syscalls
		{Code: ret, K: errno(unix.EACCES)},
	}
	slices.SortFunc(rules, func(a, b rule) int { return cmp.Compare(a.nr, b.nr) })
	for i, r := range rules {
		if i > 0 && rules[i-1].nr == r.nr {
			return nil, errors.New("seccomp: a syscall has two rules") // the first would win in silence
		}
		if len(r.block) > 255 {
			return nil, errors.New("seccomp rule too long")
		}
	}
	// A binary search on the syscall number, leaves of a few rules each: a syscall runs a
	// dozen instructions instead of the whole list, and the kernel, which runs the filter
	// for every syscall number when it is installed (to learn which ones it always allows),
	// does so much faster: this is paid at every command's start.
	var tree func(rs []rule) []unix.SockFilter
	tree = func(rs []rule) []unix.SockFilter {
		if len(rs) <= 4 {
			var out []unix.SockFilter
			for _, r := range rs {
				out = append(out, unix.SockFilter{Code: jeq, Jt: 0, Jf: uint8(len(r.block)), K: r.nr})
				out = append(out, r.block...)
			}
			return append(out, unix.SockFilter{Code: ret, K: allow})
		}
		mid := len(rs) / 2
		left, right := tree(rs[:mid]), tree(rs[mid:])
		// nr >= pivot: the jump over the left half (its own instruction, as BPF_JA's offset
		// is 32 bits where conditional ones have 8).
		out := []unix.SockFilter{
			{Code: jge, Jt: 0, Jf: 1, K: rs[mid].nr},
			{Code: ja, K: uint32(len(left))},
		}
		out = append(out, left...)
		return append(out, right...)
	}
	prog = append(prog, tree(rules)...)
	if len(prog) > unix.BPF_MAXINSNS {
		return nil, errors.New("seccomp filter too long")
	}
	return prog, nil
}
