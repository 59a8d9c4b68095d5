//go:build darwin

package sandbox

import (
	"context"
	"fmt"

	"go.uber.org/zap"
)

// MaybeRunHelper: macOS has no re-executed helper (sandbox-exec confines the command); it marks
// the descriptors massgen inherited close-on-exec, so that none reaches a command.
func MaybeRunHelper() { closeInheritedOnExec() }

// LandlockABI: Landlock is Linux only.
func LandlockABI() int { return 0 }

// BubblewrapPath: bubblewrap is Linux only.
func BubblewrapPath() string { return "" }

// Effective returns the sandbox actually used for a configured mode on macOS: auto is
// Seatbelt, none runs unconfined, the Linux modes are refused with a message naming Seatbelt.
func Effective(mode string) (string, error) {
	if err := ValidMode(mode); err != nil {
		return "", err
	}
	return seatbeltEffective(mode)
}

// NamespacesError: the namespaces mode is Linux only.
func NamespacesError() error {
	return fmt.Errorf("the namespaces sandbox is Linux only; on macOS commands run under Seatbelt (command_sandbox: auto)")
}

// Fallback: auto on macOS is Seatbelt, nothing is lost.
func Fallback(mode string) string { return "" }

// ReportFallback: nothing to report on macOS.
func ReportFallback(mode string, log *zap.Logger) {}

// Run runs o.Command under Seatbelt (sandbox-exec) or, for mode none, unconfined; the
// command's process group is killed when it ends. A non-zero exit is not an error.
func Run(ctx context.Context, o Options) (Result, error) { return runSeatbelt(ctx, o) }

// closeRangeCloexec: macOS has no close_range; closeInheritedOnExec walks /dev/fd.
func closeRangeCloexec() bool { return false }
