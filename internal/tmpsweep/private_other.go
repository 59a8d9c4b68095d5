//go:build !unix && !windows

package tmpsweep

import (
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen/internal/safefs"
)

// Without file locks a live folder cannot be told from an abandoned one: none is swept.
func lockFile(*os.File) error { return nil }

func ownedDir(safefs.Info) bool { return false }

func createLocked(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}
