//go:build unix

package tmpsweep

import "os"

// notOurs says why the file c is not a temp file massgen could have left ("" when it could):
// massgen's temp files are regular files with one link, owned by the user massgen runs as.
func notOurs(c candidate) string {
	switch {
	case !c.info.IsRegular():
		return "not a regular file"
	case c.info.Nlink != 1:
		return "it has other links"
	case int(c.info.Uid) != os.Geteuid():
		return "another user owns it"
	}
	return ""
}
