//go:build !linux && !darwin && !windows

package sandbox

import (
	"context"
	"runtime"
)

// MaybeRunHelper: there is no re-executed helper on this system.
func MaybeRunHelper() {}

// LandlockABI: Landlock is Linux only.
func LandlockABI() int { return 0 }

// BubblewrapPath: bubblewrap is Linux only.
func BubblewrapPath() string { return "" }

func errUnsupported() error { return unsupported(runtime.GOOS) }

// thisHost is this system, as Effective asks about it: no sandbox, commands are refused.
func thisHost() host { return host{goos: runtime.GOOS} }

// Run refuses: commands never run unconfined by accident.
func Run(ctx context.Context, o Options) (Result, error) { return Result{}, errUnsupported() }

// NamespacesError: the namespaces mode is Linux only.
func NamespacesError() error { return errUnsupported() }

// PlanNetwork: no sandbox runs here, so the network is never confined (see planCommon).
func PlanNetwork(sandbox Mode, netMode NetworkMode) NetworkPlan {
	p, _, _ := planCommon(sandbox, netMode)
	return p
}
