//go:build linux

package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

var errNoMemfd = errors.New("memfd unavailable")

// memImage copies f into a memfd while hashing it, seals it against every change and keeps a
// read-only descriptor of it (an executable must not be open for writing: ETXTBSY).
func memImage(f *os.File) (*Image, error) {
	fd, err := unix.MemfdCreate("massgen-image", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // before Linux 6.3 there is no MFD_EXEC (exec is the default)
		fd, err = unix.MemfdCreate("massgen-image", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoMemfd, err)
	}
	w := os.NewFile(uintptr(fd), "memfd")
	defer w.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(f, MaxImage+1))
	if err != nil {
		return nil, err
	}
	if n > MaxImage {
		return nil, fmt.Errorf("larger than %d MiB", MaxImage>>20)
	}
	if _, err := unix.FcntlInt(w.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		return nil, fmt.Errorf("%w: sealing: %v", errNoMemfd, err)
	}
	ro, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", w.Fd()), os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: reopening: %v", errNoMemfd, err)
	}
	return &Image{Sum: hex.EncodeToString(h.Sum(nil)), f: ro}, nil
}
