//go:build unix && !linux

package tmpsweep

import (
	"fmt"
	"runtime"
)

// Without /proc massgen cannot tell a temp file abandoned by a killed run from one a live
// writer holds open, so it removes none (fails closed).
func openFiles() (map[fileID]bool, error) {
	return nil, fmt.Errorf("no /proc on %s", runtime.GOOS)
}
