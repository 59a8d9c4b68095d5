package sandbox

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denyUnixSockets installs a seccomp filter on the calling thread (inherited by the exec'd
// command) that refuses socket(AF_UNIX, ...) and io_uring_setup, and every syscall of a foreign
// ABI (x32, 32-bit). Landlock before ABI 9 does not govern connect(2) to pathname UNIX sockets,
// so without this a confined command could still talk to a privileged daemon's socket (e.g.
// /var/run/docker.sock); io_uring could open sockets without going through socket(2). Pipes and
// socketpair(2) keep working.
func denyUnixSockets() error {
	prog, err := unixSocketFilter()
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// no_new_privs is already set (Landlock needs it), which allows an unprivileged filter.
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}

// seccompBytes is the filter in the binary form bubblewrap's --seccomp FD reads.
func seccompBytes() ([]byte, error) {
	prog, err := unixSocketFilter()
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

// unixSocketFilter is the BPF program of denyUnixSockets.
func unixSocketFilter() ([]unix.SockFilter, error) {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	const (
		ldAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret    = unix.BPF_RET | unix.BPF_K
		allow  = unix.SECCOMP_RET_ALLOW
		deny   = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		offNr  = 0
		offArc = 4
		offA0  = 16 // args[0], low 32 bits (little endian)
	)
	prog := []unix.SockFilter{
		/* 0 */ {Code: ldAbs, K: offArc},
		/* 1 */ {Code: jeq, Jt: 1, Jf: 0, K: arch},
		/* 2 */ {Code: ret, K: deny},
		/* 3 */ {Code: ldAbs, K: offNr},
		/* 4 */ {Code: jset, Jt: 6, Jf: 0, K: 0x40000000}, // x32 syscalls
		/* 5 */ {Code: jeq, Jt: 5, Jf: 0, K: unix.SYS_IO_URING_SETUP},
		/* 6 */ {Code: jeq, Jt: 1, Jf: 0, K: unix.SYS_SOCKET},
		/* 7 */ {Code: ret, K: allow},
		/* 8 */ {Code: ldAbs, K: offA0},
		/* 9 */ {Code: jeq, Jt: 1, Jf: 0, K: unix.AF_UNIX},
		/* 10 */ {Code: ret, K: allow},
		/* 11 */ {Code: ret, K: deny},
	}
	return prog, nil
}
