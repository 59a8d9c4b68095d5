//go:build windows

package safefs

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"time"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The NT calls the walk is made of: every open names one entry relative to a directory handle
// the walk holds (OBJECT_ATTRIBUTES.RootDirectory), never a path resolved again by string.

const (
	// shareHeld is how the walk holds directories: others may read and write in them, but not
	// rename or delete them while they are held (Windows' own pinning).
	shareHeld = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE
	// shareAll is for entries the operation itself removes or moves (and plain reads).
	shareAll = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

	// accessDir is what a held directory may do: list, traverse, describe.
	accessDir = windows.FILE_LIST_DIRECTORY | windows.FILE_TRAVERSE | windows.FILE_READ_ATTRIBUTES | windows.SYNCHRONIZE
	// accessAttrs describes an entry without the right to read it (O_PATH's counterpart).
	accessAttrs = windows.FILE_READ_ATTRIBUTES | windows.SYNCHRONIZE

	symlinkFlagRelative     = 1  // SYMLINK_FLAG_RELATIVE
	fileRenameInformationEx = 65 // FILE_INFORMATION_CLASS
	fileNameNormalized      = 0  // GetFinalPathNameByHandle flags
	volumeNameNone          = 4
)

// ntOpen opens name relative to the directory root (0: name is an NT path such as \??\C:\),
// never following a reparse point (FILE_OPEN_REPARSE_POINT) and without case.
func ntOpen(root windows.Handle, name string, access, share, disposition, options, attrs uint32) (windows.Handle, error) {
	u, err := windows.NewNTUnicodeString(name)
	if err != nil {
		return windows.InvalidHandle, err
	}
	oa := &windows.OBJECT_ATTRIBUTES{
		RootDirectory: root,
		ObjectName:    u,
		Attributes:    windows.OBJ_CASE_INSENSITIVE,
	}
	oa.Length = uint32(unsafe.Sizeof(*oa))
	var h windows.Handle
	err = windows.NtCreateFile(&h, access|windows.SYNCHRONIZE, oa, &windows.IO_STATUS_BLOCK{}, nil, attrs, share,
		disposition, options|windows.FILE_OPEN_REPARSE_POINT|windows.FILE_SYNCHRONOUS_IO_NONALERT|windows.FILE_OPEN_FOR_BACKUP_INTENT, 0, 0)
	if err != nil {
		return windows.InvalidHandle, ntErr(err)
	}
	return h, nil
}

// ntErr maps an NTSTATUS to the errors callers test for (fs.ErrNotExist, fs.ErrExist,
// ENOTDIR, EXDEV).
func ntErr(err error) error {
	s, ok := err.(windows.NTStatus)
	if !ok {
		return err
	}
	switch s {
	case windows.STATUS_NOT_A_DIRECTORY:
		return syscall.ENOTDIR
	case windows.STATUS_FILE_IS_A_DIRECTORY:
		return syscall.EISDIR
	case windows.STATUS_OBJECT_NAME_COLLISION:
		return windows.ERROR_ALREADY_EXISTS
	case windows.STATUS_NOT_SAME_DEVICE:
		return syscall.EXDEV
	case windows.STATUS_REPARSE_POINT_ENCOUNTERED:
		return syscall.ELOOP
	}
	return s.Errno()
}

func notExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// statHandle describes what h holds (not following it: h was opened on the reparse point).
func statHandle(h windows.Handle) (Info, error) {
	var bh windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &bh); err != nil {
		return Info{}, err
	}
	var tag uint32
	if bh.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		var ti struct{ FileAttributes, ReparseTag uint32 }
		if err := windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo, (*byte)(unsafe.Pointer(&ti)), uint32(unsafe.Sizeof(ti))); err != nil {
			return Info{}, err
		}
		tag = ti.ReparseTag
	}
	var mode fs.FileMode
	switch {
	case bh.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 && (tag == windows.IO_REPARSE_TAG_SYMLINK || tag == windows.IO_REPARSE_TAG_MOUNT_POINT):
		mode = fs.ModeSymlink | 0o777
	case bh.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		mode = fs.ModeIrregular | 0o444 // where it leads cannot be known: refused by the walk
	case bh.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		mode = fs.ModeDir | 0o777
	default:
		mode = 0o666
	}
	if bh.FileAttributes&windows.FILE_ATTRIBUTE_READONLY != 0 && mode&fs.ModeSymlink == 0 {
		mode &^= 0o222
	}
	ft := func(t windows.Filetime) time.Time { return time.Unix(0, t.Nanoseconds()) }
	return Info{
		Mode:  mode,
		Size:  int64(bh.FileSizeHigh)<<32 | int64(bh.FileSizeLow),
		Dev:   uint64(bh.VolumeSerialNumber),
		Ino:   uint64(bh.FileIndexHigh)<<32 | uint64(bh.FileIndexLow),
		Nlink: uint64(bh.NumberOfLinks),
		Mtime: ft(bh.LastWriteTime), Atime: ft(bh.LastAccessTime),
		// No change time in this record; the write time stands for it.
		Ctime: ft(bh.LastWriteTime),
	}, nil
}

// readReparse reads the target of the symbolic link or junction h holds, as os.Readlink writes
// it (C:\x, \\server\share\x, or relative as stored), which is what the permission layer's
// string resolution reads too.
func readReparse(h windows.Handle) (string, error) {
	buf := make([]byte, windows.MAXIMUM_REPARSE_DATA_BUFFER_SIZE)
	var n uint32
	if err := windows.DeviceIoControl(h, windows.FSCTL_GET_REPARSE_POINT, nil, 0, &buf[0], uint32(len(buf)), &n, nil); err != nil {
		return "", err
	}
	return parseReparse(buf[:n])
}

// parseReparse reads a REPARSE_DATA_BUFFER (see readReparse).
func parseReparse(buf []byte) (string, error) {
	if len(buf) < 8 {
		return "", errors.New("short reparse data")
	}
	tag := le32(buf[0:])
	var off int // start of the name buffer
	var relative bool
	switch tag {
	case windows.IO_REPARSE_TAG_SYMLINK:
		off = 20
		if len(buf) < off {
			return "", errors.New("short reparse data")
		}
		relative = le32(buf[16:])&symlinkFlagRelative != 0
	case windows.IO_REPARSE_TAG_MOUNT_POINT:
		off = 16
	default:
		return "", errors.New("a reparse point that is not a symbolic link or junction")
	}
	if len(buf) < 16 {
		return "", errors.New("short reparse data")
	}
	subOff, subLen := int(le16(buf[8:])), int(le16(buf[10:]))
	if off+subOff+subLen > len(buf) || subLen%2 != 0 {
		return "", errors.New("malformed reparse data")
	}
	u := make([]uint16, subLen/2)
	for i := range u {
		u[i] = le16(buf[off+subOff+2*i:])
	}
	s := string(utf16.Decode(u))
	if relative {
		return s, nil
	}
	return normaliseLinkPath(s), nil
}

// normaliseLinkPath turns an NT path (\??\C:\x, \??\UNC\server\share\x) into a Win32 one, as
// os.Readlink does; anything else is returned as is (and winpath refuses it).
func normaliseLinkPath(s string) string {
	if !strings.HasPrefix(s, `\??\`) {
		return s
	}
	t := s[4:]
	switch {
	case len(t) >= 2 && t[1] == ':':
		return t
	case len(t) >= 4 && strings.EqualFold(t[:4], `UNC\`):
		return `\\` + t[4:]
	}
	return s
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 { return uint32(le16(b)) | uint32(le16(b[2:]))<<16 }

// fileRenameInfo is FILE_RENAME_INFORMATION (and its _EX form: Flags for ReplaceIfExists).
type fileRenameInfo struct {
	Flags          uint32
	RootDirectory  windows.Handle
	FileNameLength uint32
	FileName       [1]uint16
}

// renameHandle renames what h holds (opened with DELETE) to name in the directory dir. replace:
// an existing entry there is replaced (never a directory); otherwise the rename fails with
// fs.ErrExist.
func renameHandle(h, dir windows.Handle, name string, replace bool) error {
	u16, err := windows.UTF16FromString(name)
	if err != nil {
		return err
	}
	u16 = u16[:len(u16)-1]
	set := func(class uint32, flags uint32) error {
		size := int(unsafe.Offsetof(fileRenameInfo{}.FileName)) + 2*len(u16)
		if min := int(unsafe.Sizeof(fileRenameInfo{})); size < min {
			size = min
		}
		mem := make([]uint64, (size+7)/8)
		ri := (*fileRenameInfo)(unsafe.Pointer(&mem[0]))
		ri.Flags, ri.RootDirectory, ri.FileNameLength = flags, dir, uint32(2*len(u16))
		names := unsafe.Slice(&ri.FileName[0], len(u16))
		copy(names, u16)
		return windows.NtSetInformationFile(h, &windows.IO_STATUS_BLOCK{}, (*byte)(unsafe.Pointer(ri)), uint32(size), class)
	}
	var flags uint32
	if replace {
		flags = windows.FILE_RENAME_REPLACE_IF_EXISTS | windows.FILE_RENAME_POSIX_SEMANTICS | windows.FILE_RENAME_IGNORE_READONLY_ATTRIBUTE
	}
	err = set(fileRenameInformationEx, flags)
	if unsupported(err) {
		// An older system or a filesystem without the _EX form: the classic rename, where the
		// first byte is ReplaceIfExists.
		var classic uint32
		if replace {
			classic = 1
		}
		err = set(windows.FileRenameInformation, classic)
	}
	if err != nil {
		return ntErr(err)
	}
	return nil
}

func unsupported(err error) bool {
	s, ok := err.(windows.NTStatus)
	return ok && (s == windows.STATUS_INVALID_INFO_CLASS || s == windows.STATUS_INVALID_PARAMETER ||
		s == windows.STATUS_NOT_SUPPORTED || s == windows.STATUS_NOT_IMPLEMENTED || s == windows.STATUS_INVALID_DEVICE_REQUEST)
}

// deleteHandle deletes what h holds (opened with DELETE): at once with POSIX semantics where the
// system and filesystem have them, else when the last handle closes.
func deleteHandle(h windows.Handle) error {
	ex := uint32(windows.FILE_DISPOSITION_DELETE | windows.FILE_DISPOSITION_POSIX_SEMANTICS | windows.FILE_DISPOSITION_IGNORE_READONLY_ATTRIBUTE)
	err := windows.NtSetInformationFile(h, &windows.IO_STATUS_BLOCK{}, (*byte)(unsafe.Pointer(&ex)), 4, windows.FileDispositionInformationEx)
	if unsupported(err) {
		del := uint32(1) // FILE_DISPOSITION_INFORMATION{DeleteFile: TRUE}
		err = windows.NtSetInformationFile(h, &windows.IO_STATUS_BLOCK{}, (*byte)(unsafe.Pointer(&del)), 1, windows.FileDispositionInformation)
	}
	if err != nil {
		return ntErr(err)
	}
	return nil
}

// listNames reads the names in the directory h holds (FILE_LIST_DIRECTORY), from the start.
func listNames(h windows.Handle) ([]string, error) {
	buf := make([]uint64, 8<<10) // 64 KiB, 8-byte aligned
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 8*len(buf))
	class := uint32(windows.FileFullDirectoryRestartInfo)
	var names []string
	for {
		err := windows.GetFileInformationByHandleEx(h, class, &b[0], uint32(len(b)))
		if errors.Is(err, windows.ERROR_NO_MORE_FILES) {
			return names, nil
		}
		if err != nil {
			return nil, err
		}
		class = windows.FileFullDirectoryInfo
		// FILE_FULL_DIR_INFO: NextEntryOffset at 0, FileNameLength at 60, FileName at 68.
		for off := 0; ; {
			if off+68 > len(b) {
				return nil, errors.New("malformed directory listing")
			}
			next, nlen := int(le32(b[off:])), int(le32(b[off+60:]))
			if off+68+nlen > len(b) {
				return nil, errors.New("malformed directory listing")
			}
			u := make([]uint16, nlen/2)
			for i := range u {
				u[i] = le16(b[off+68+2*i:])
			}
			if n := string(utf16.Decode(u)); n != "." && n != ".." {
				names = append(names, n)
			}
			if next == 0 {
				break
			}
			off += next
		}
	}
}

// longName is the long name of the entry h holds (its 8.3 short name expanded).
func longName(h windows.Handle) (string, error) {
	buf := make([]uint16, 512)
	for {
		n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), fileNameNormalized|volumeNameNone)
		if err != nil {
			return "", err
		}
		if int(n) < len(buf) {
			s := windows.UTF16ToString(buf[:n])
			return s[strings.LastIndexByte(s, '\\')+1:], nil
		}
		buf = make([]uint16, n+1)
	}
}

func closeH(h windows.Handle) {
	if h != windows.InvalidHandle && h != 0 {
		windows.CloseHandle(h)
	}
}
