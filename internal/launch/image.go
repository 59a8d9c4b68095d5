package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// MaxImage bounds what is read of one program or script (a node binary is about 100 MiB).
const MaxImage = 512 << 20

// Sum hashes the file at path (opened once) as Image does: the hex SHA-256 of its content.
func Sum(path string) (string, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxImage+1))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	if n > MaxImage {
		return "", fmt.Errorf("%s is larger than %d MiB", path, MaxImage>>20)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// StaleError is a program or script whose content is no longer the one approved.
type StaleError struct {
	Path      string
	Want, Got string
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s changed since it was approved (sha256 %s, approved %s)", e.Path, short(e.Got), short(e.Want))
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Image is the exact content of a program or script as it was hashed, kept as a private copy:
// a 0500 file with the original's name, alone in a 0700 folder of the private area. A copy, not
// a descriptor (/dev/fd/N): version-manager shims (pyenv, asdf), busybox and the like dispatch
// on their own name, and node resolves its script's real path. It never changes, whatever
// happens to the file it was read from.
type Image struct {
	Sum  string
	path string
}

// Path is where the copy is.
func (img *Image) Path() string { return img.path }

// Images hands out the Image of a file for an expected hash, reading the file again only when
// it changed (by its identity, size and times): it is safe for concurrent use. Close releases
// every Image it made.
type Images struct {
	area *Area

	mu      sync.Mutex
	entries map[string]*imageEntry
	all     []*Image
}

type imageEntry struct {
	key string
	img *Image
}

// NewImages returns an empty cache whose copies go into area.
func NewImages(area *Area) *Images {
	return &Images{area: area, entries: map[string]*imageEntry{}}
}

// Get returns the Image of the file at real (a path with its links resolved) whose content
// must hash to want: the file is opened once, and what is hashed is what the Image holds. A
// different content is a *StaleError.
func (c *Images) Get(real, want string) (*Image, error) {
	f, err := openNoFollow(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", real, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", real)
	}
	key := statKey(fi)
	c.mu.Lock()
	if e := c.entries[real]; e != nil && e.key == key && e.img.Sum == want {
		c.mu.Unlock()
		return e.img, nil
	}
	c.mu.Unlock()
	img, err := c.copy(f, filepath.Base(real))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", real, err)
	}
	if img.Sum != want {
		img.close()
		return nil, &StaleError{Path: real, Want: want, Got: img.Sum}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[real] = &imageEntry{key: key, img: img}
	c.all = append(c.all, img)
	return img, nil
}

// copy copies f into a new Image while hashing it.
func (c *Images) copy(f *os.File, base string) (*Image, error) {
	if c.area == nil {
		return nil, errors.New("no private area for a copy")
	}
	dir, err := c.area.Mkdir("image")
	if err != nil {
		return nil, err
	}
	p := filepath.Join(dir, base)
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(f, MaxImage+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > MaxImage {
		err = fmt.Errorf("larger than %d MiB", MaxImage>>20)
	}
	if err == nil {
		err = os.Chmod(p, 0o500)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Image{Sum: hex.EncodeToString(h.Sum(nil)), path: p}, nil
}

func (img *Image) close() { os.RemoveAll(filepath.Dir(img.path)) }

// Close releases every Image handed out; none may be used afterwards.
func (c *Images) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, img := range c.all {
		img.close()
	}
	c.all, c.entries = nil, map[string]*imageEntry{}
}
