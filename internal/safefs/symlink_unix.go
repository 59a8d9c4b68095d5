//go:build linux || darwin

package safefs

import "golang.org/x/sys/unix"

// Symlink creates the symbolic link name in d pointing at target (undo puts a link back as it
// was); an existing entry is never replaced.
func (d *Dir) Symlink(target, name string) error {
	if !ValidName(name) {
		return d.pathErr("symlink", name, unix.EINVAL)
	}
	if err := unix.Symlinkat(target, d.fd, name); err != nil {
		return d.pathErr("symlink", name, err)
	}
	return nil
}
