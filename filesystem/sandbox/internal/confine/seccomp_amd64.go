//go:build linux

package confine

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// legacyModeCalls are the syscalls of this architecture only that take a file mode: argument
// index of the mode.
var legacyModeCalls = []modeCall{{unix.SYS_OPEN, 2}, {unix.SYS_CREAT, 1}, {unix.SYS_CHMOD, 1}, {unix.SYS_MKNOD, 1}}
