//go:build !unix

package tmpsweep

import (
	"fmt"
	"runtime"
)

var errUnsupported = fmt.Errorf("temp files are not swept on %s", runtime.GOOS)

func notOurs(candidate) string            { return errUnsupported.Error() }
func openFiles() (map[fileID]bool, error) { return nil, errUnsupported }
