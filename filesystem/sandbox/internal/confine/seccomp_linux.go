//go:build linux

package confine

import (
	"encoding/binary"
	"errors"
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

// buildFilter is the BPF program. Always refused: every syscall of a foreign ABI (x32,
// 32-bit); socket(AF_UNIX) (Landlock before ABI 9 does not govern connect(2) to pathname UNIX
// sockets: think /var/run/docker.sock; abstract sockets live in the network namespace, shared
// with bubblewrap); io_uring_setup (io_uring could open sockets and files without these
// syscalls); openat2 (its mode is out of the filter's reach: ENOSYS, callers fall back to
// openat); setuid/setgid bits in chmod and file creation. Pipes and socketpair(2) keep working.
func buildFilter(o FilterOpts) ([]unix.SockFilter, error) {
	if auditArch == 0 {
		return nil, errors.New("no seccomp filter for this architecture")
	}
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
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
	rules = append(rules,
		rule{unix.SYS_SOCKET, []unix.SockFilter{
			{Code: ldAbs, K: argLow(0)},
			{Code: jeq, Jt: 0, Jf: 1, K: unix.AF_UNIX},
			{Code: ret, K: errno(unix.EACCES)},
			{Code: ret, K: allow},
		}},
		always(unix.SYS_IO_URING_SETUP, unix.EACCES),
		always(unix.SYS_OPENAT2, unix.ENOSYS),
	)
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
	for _, r := range rules {
		if len(r.block) > 255 {
			return nil, errors.New("seccomp rule too long")
		}
		prog = append(prog, unix.SockFilter{Code: jeq, Jt: 0, Jf: uint8(len(r.block)), K: r.nr})
		prog = append(prog, r.block...)
	}
	prog = append(prog, unix.SockFilter{Code: ret, K: allow})
	if len(prog) > unix.BPF_MAXINSNS {
		return nil, errors.New("seccomp filter too long")
	}
	return prog, nil
}
