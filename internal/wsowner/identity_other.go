//go:build !unix

package wsowner

import (
	"errors"

	"github.com/massgen-go/massgen/internal/safefs"
)

// Without a device and inode massgen cannot tell a folder it made from one put in its place, so
// it owns none: workspaces are never cleared (fails closed).
func identity(*safefs.Dir) (fileID, error) {
	return fileID{}, errors.New("massgen cannot identify folders on this platform")
}

func sameDevice(a, b string) bool { return false }
