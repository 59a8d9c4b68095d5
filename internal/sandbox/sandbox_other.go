//go:build !linux && !darwin && !windows

package sandbox

import (
	"context"
	"fmt"
	"runtime"

	"go.uber.org/zap"
)

// MaybeRunHelper: there is no re-executed helper on this system.
func MaybeRunHelper() {}

// LandlockABI: Landlock is Linux only.
func LandlockABI() int { return 0 }

// BubblewrapPath: bubblewrap is Linux only.
func BubblewrapPath() string { return "" }

func errUnsupported() error {
	return fmt.Errorf("execute_command: no command sandbox on %s yet: commands are refused", runtime.GOOS)
}

// Effective: no sandbox is available on this system yet; commands are refused.
func Effective(mode string) (string, error) {
	if err := ValidMode(mode); err != nil {
		return "", err
	}
	return "", errUnsupported()
}

// Run refuses: commands never run unconfined by accident.
func Run(ctx context.Context, o Options) (Result, error) { return Result{}, errUnsupported() }

// NamespacesError: the namespaces mode is Linux only.
func NamespacesError() error { return errUnsupported() }

// Fallback: nothing to say where no sandbox runs at all.
func Fallback(mode string) string { return "" }

// ReportFallback: nothing to report.
func ReportFallback(mode string, log *zap.Logger) {}

// PlanNetwork: no sandbox runs here, so the network is never confined (see planCommon).
func PlanNetwork(sandbox, netMode string) NetworkPlan {
	p, _, _ := planCommon(sandbox, netMode)
	return p
}
