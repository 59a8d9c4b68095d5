//go:build !windows

package winpath

import "errors"

// longPathName: only Windows resolves 8.3 short names, so a short-looking name is refused.
func longPathName(string) (string, error) {
	return "", errors.New("8.3 short names are resolved on Windows only")
}
