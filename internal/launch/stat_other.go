//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package launch

import (
	"fmt"
	"os"
)

func statKey(fi os.FileInfo) string {
	return fmt.Sprintf("%d/%d", fi.Size(), fi.ModTime().UnixNano())
}

func openNoFollow(path string) (*os.File, error) { return os.Open(path) }
