package shellcmd

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// deviceOK are device files commands may use freely, with the access each allows.
var deviceOK = map[string]toolargs.Access{
	"/dev/null": toolargs.Write, "/dev/stdout": toolargs.Write, "/dev/stderr": toolargs.Write, "/dev/tty": toolargs.Write,
	"/dev/stdin": toolargs.Read, "/dev/zero": toolargs.Read, "/dev/urandom": toolargs.Read, "/dev/random": toolargs.Read,
	"/dev/fd/0": toolargs.Read, "/dev/fd/1": toolargs.Write, "/dev/fd/2": toolargs.Write,
}

// maxNameLen is longer than any file name a filesystem massgen runs on stores (255 bytes on
// most, 1023 with ZFS long names; 255 UTF-16 units on NTFS): a word with a longer component
// cannot name a file, so it is text (a message, a program), not a path.
const maxNameLen = 1023

// add records a path access as given.
func (a *analyzer) add(arg, p string, acc toolargs.Access, glob bool) {
	a.Paths = append(a.Paths, toolargs.PathArg{Arg: arg, Path: p, Access: acc, Glob: glob})
}

// candidate records a word as a path relative to the shell's current directory.
func (a *analyzer) candidate(arg string, w word, acc toolargs.Access, st *shellState) error {
	s := w.s
	if strings.IndexByte(s, 0) >= 0 {
		return errors.New("command word contains a NUL byte")
	}
	if s == "" || cannotBePath(s) {
		return nil
	}
	if need, ok := deviceOK[s]; ok && (acc == toolargs.Read || need == toolargs.Write) {
		return nil
	}
	if strings.HasPrefix(s, "/") || (w.tilde && (s == "~" || strings.HasPrefix(s, "~/"))) {
		a.add(arg, s, acc, w.glob)
		return nil
	}
	if w.tilde {
		return fmt.Errorf("cannot check %q: ~user paths are not supported", s)
	}
	if !st.known {
		return fmt.Errorf("cannot check %q: the working directory is unknown after %s", s, st.why)
	}
	if st.dir != "" {
		s = strings.TrimSuffix(st.dir, "/") + "/" + s
	}
	a.add(arg, s, acc, w.glob)
	return nil
}

// cannotBePath reports whether no filesystem could resolve s: one of its components is longer
// than any file name.
func cannotBePath(s string) bool {
	if len(s) <= maxNameLen {
		return false
	}
	for c := range strings.SplitSeq(s, "/") {
		if len(c) > maxNameLen {
			return true
		}
	}
	return false
}

// lastPath is the path the last candidate call recorded, if it recorded one after n paths.
func (a *analyzer) lastPath(n int) (string, bool) {
	if len(a.Paths) > n {
		return a.Paths[len(a.Paths)-1].Path, true
	}
	return "", false
}

// isDevice reports whether a path names a device file other than the harmless ones.
func isDevice(s string) bool {
	_, ok := deviceOK[s]
	return !ok && strings.HasPrefix(path.Clean(s), "/dev/")
}
