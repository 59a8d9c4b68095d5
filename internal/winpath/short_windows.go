//go:build windows

package winpath

import "golang.org/x/sys/windows"

// longPathName asks Windows for the long form of the existing path p (GetLongPathNameW).
func longPathName(p string) (string, error) {
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return "", err
	}
	buf := make([]uint16, 260)
	for {
		n, err := windows.GetLongPathName(u, &buf[0], uint32(len(buf)))
		if err != nil {
			return "", err
		}
		if int(n) < len(buf) {
			return windows.UTF16ToString(buf[:n]), nil
		}
		buf = make([]uint16, n) // too small: n is the size needed
	}
}
