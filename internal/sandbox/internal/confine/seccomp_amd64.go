//go:build linux

package confine

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// legacyModeCalls are the syscalls of this architecture only that take a file mode: argument
// index of the mode.
var legacyModeCalls = []modeCall{{unix.SYS_OPEN, 2}, {unix.SYS_CREAT, 1}, {unix.SYS_CHMOD, 1}, {unix.SYS_MKNOD, 1}}

// archDenied are the refused calls of x86-64 only: port I/O and calls the kernel no longer
// implements (refused all the same, in case an old kernel still does).
func archDenied() []DeniedCall {
	return []DeniedCall{call("iopl", unix.SYS_IOPL), call("ioperm", unix.SYS_IOPERM), call("uselib", unix.SYS_USELIB),
		call("_sysctl", unix.SYS__SYSCTL), call("ustat", unix.SYS_USTAT), call("sysfs", unix.SYS_SYSFS),
		call("create_module", unix.SYS_CREATE_MODULE), call("get_kernel_syms", unix.SYS_GET_KERNEL_SYMS),
		call("query_module", unix.SYS_QUERY_MODULE)}
}
