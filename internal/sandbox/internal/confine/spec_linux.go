//go:build linux

package confine

import (
	"strings"

	"golang.org/x/sys/unix"
)

// HelperArg is argv[1] of the re-executed helper.
const HelperArg = "__massgen_sandbox_helper__"

// MinLandlockABI: ABI 3 is the first that restricts truncate(2); below it a read-only file
// could still be emptied, so older kernels count as "no Landlock".
const MinLandlockABI = 3

// State is the access a command gets at a path: the deepest policy entry on the path decides.
type State uint8

const (
	StateNone   State = iota // outside every root: invisible
	StateHidden              // inside a Hide path: invisible
	StateRead
	StateWrite
)

// Rank orders the states by access: 0 none, 1 read, 2 write.
func (s State) Rank() int {
	switch s {
	case StateRead:
		return 1
	case StateWrite:
		return 2
	}
	return 0
}

// Visible: the command sees the path (read or write).
func (s State) Visible() bool { return s == StateRead || s == StateWrite }

// Act is what the helper does at a plan node.
type Act uint8

const (
	ActNone      Act = iota // in place, as the mounts above leave it
	ActBindRW               // bound read-write onto itself (or onto its mount point)
	ActBindRO               // bound read-only
	ActCover                // a tmpfs, with the directory's other entries bound back read-only
	ActHideTmpfs            // an empty tmpfs (a private directory)
	ActHideNull             // /dev/null over it (a private file)
	ActLinkCopy             // a copy of the link in the parent's tmpfs
	ActContainer            // an empty directory in the parent's tmpfs (on the way to a root)
	ActAbsent               // not in the parent's tmpfs
)

// Node is a plan node as the helper receives it (through a pipe, never the command line):
// preorder, parents first, the root (/) first with Parent -1.
type Node struct {
	Name   string `json:"n"`
	Parent int    `json:"p"`
	Dev    uint64 `json:"d"`
	Ino    uint64 `json:"i"`
	Typ    uint32 `json:"t"`
	St     State  `json:"s"`
	Act    Act    `json:"a"`
	Root   bool   `json:"r,omitempty"` // a Read or Write root or system directory: granted as such
}

// Spec is everything the helper needs.
type Spec struct {
	Nodes []Node `json:"nodes"`
	// Dir is the working directory (its path now, and its identity: entered only if the same
	// directory is found there in the new view).
	Dir    string `json:"dir"`
	DirDev uint64 `json:"dir_dev"`
	DirIno uint64 `json:"dir_ino"`
	// Status is a close-on-exec pipe: a set-up error is written there; exec closes it empty.
	Status int `json:"status"`
	// Net is the command's network.
	Net NetSpec `json:"net"`
	// Rlimits are set by the helper itself just before it executes the command: applied to
	// the helper from outside, a memory limit would bound massgen's own code building the view.
	Rlimits []Rlimit `json:"rlimits,omitempty"`
}

// Rlimit is one resource limit (setrlimit's resource, soft and hard values).
type Rlimit struct {
	Res int    `json:"r"`
	Cur uint64 `json:"c"`
	Max uint64 `json:"m"`
}

// FileID identifies an inode.
type FileID struct{ Dev, Ino uint64 }

// StatID is the identity of the inode st describes.
func StatID(st *unix.Stat_t) FileID { return FileID{uint64(st.Dev), uint64(st.Ino)} }

// DirEntry is one entry of a directory read through a handle.
type DirEntry struct {
	Name string
	Ino  uint64
	Typ  uint8 // DT_*
}

// ReadDir lists the directory behind the handle fd (O_PATH is fine), without following links.
func ReadDir(fd int) ([]DirEntry, error) {
	d, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(d)
	var out []DirEntry
	buf := make([]byte, 16<<10)
	for {
		n, err := unix.Getdents(d, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		for off := 0; off < n; {
			// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
			rec := buf[off:n]
			if len(rec) < 19 {
				break
			}
			reclen := int(uint16(rec[16]) | uint16(rec[17])<<8)
			if reclen < 19 || reclen > len(rec) {
				break
			}
			ino := uint64(0)
			for i := 7; i >= 0; i-- {
				ino = ino<<8 | uint64(rec[i])
			}
			name := rec[19:reclen]
			if i := strings.IndexByte(string(name), 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if s := string(name); s != "." && s != ".." {
				out = append(out, DirEntry{Name: s, Ino: ino, Typ: rec[18]})
			}
		}
	}
}

// ReadlinkFD reads the target of the symbolic link behind an O_PATH|O_NOFOLLOW handle.
func ReadlinkFD(fd int) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
