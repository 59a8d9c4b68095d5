//go:build linux && !amd64 && !arm64

package confine

// auditArch 0: no seccomp filter for this architecture (commands are refused).
const auditArch = 0

var legacyModeCalls []modeCall

func archDenied() []DeniedCall { return nil }
