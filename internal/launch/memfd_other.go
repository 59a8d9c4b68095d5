//go:build !linux

package launch

import (
	"errors"
	"os"
)

var errNoMemfd = errors.New("memfd unavailable")

// memImage: only Linux has sealed memory files; elsewhere an Image is a private copy.
func memImage(*os.File) (*Image, error) { return nil, errNoMemfd }
