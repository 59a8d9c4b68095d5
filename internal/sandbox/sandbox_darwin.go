//go:build darwin

package sandbox

import (
	"context"
	"fmt"
	"os"

	"github.com/massgen-go/massgen/internal/sandbox/seatbelt"
)

// MaybeRunHelper: macOS has no re-executed helper (sandbox-exec confines the command); it marks
// the descriptors massgen inherited close-on-exec, so that none reaches a command.
func MaybeRunHelper() { closeInheritedOnExec() }

// LandlockABI: Landlock is Linux only.
func LandlockABI() int { return 0 }

// BubblewrapPath: bubblewrap is Linux only.
func BubblewrapPath() string { return "" }

// thisHost is this Mac, as Effective asks about it.
func thisHost() host {
	return host{goos: "darwin", sandboxExec: func() error {
		if _, err := os.Stat(seatbelt.SandboxExec); err != nil {
			return fmt.Errorf("%s: %w", seatbelt.SandboxExec, err)
		}
		return nil
	}}
}

// NamespacesError: the namespaces mode is Linux only.
func NamespacesError() error {
	return fmt.Errorf("the namespaces sandbox is Linux only; on macOS commands run under Seatbelt (command_sandbox: auto)")
}

// Run runs o.Command under Seatbelt (sandbox-exec) or, for mode none, unconfined; the
// command's process group is killed when it ends. A non-zero exit is not an error.
func Run(ctx context.Context, o Options) (Result, error) { return runSeatbelt(ctx, o) }

// closeRangeCloexec: macOS has no close_range; closeInheritedOnExec walks /dev/fd.
func closeRangeCloexec() bool { return false }
