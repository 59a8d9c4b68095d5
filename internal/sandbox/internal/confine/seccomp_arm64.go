//go:build linux

package confine

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_AARCH64

// legacyModeCalls: arm64 has only the *at forms.
var legacyModeCalls []modeCall

// archDenied: arm64 has none of x86-64's obsolete calls.
func archDenied() []DeniedCall { return nil }
