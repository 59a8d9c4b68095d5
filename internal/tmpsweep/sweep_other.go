//go:build !unix

package tmpsweep

import (
	"errors"
	"fmt"
	"runtime"
)

type fileID struct{}

var errUnsupported = fmt.Errorf("temp files are not swept on %s", runtime.GOOS)

func statID(string) (fileID, error)       { return fileID{}, nil }
func notOurs(candidate) string            { return errUnsupported.Error() }
func removeIfSame(candidate) error        { return errors.New("not supported") }
func openFiles() (map[fileID]bool, error) { return nil, errUnsupported }
