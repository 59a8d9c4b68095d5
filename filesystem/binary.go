package filesystem

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen/internal/textdiff"
)

// binaryKinds maps extensions of files that text tools refuse to a kind used in the message.
var binaryKinds = func() map[string]string {
	m := map[string]string{}
	add := func(kind string, exts ...string) {
		for _, e := range exts {
			m["."+e] = kind
		}
	}
	add("image", "png", "jpg", "jpeg", "gif", "bmp", "webp", "ico", "tif", "tiff", "heic", "heif", "psd", "avif", "raw", "cr2", "nef")
	add("audio", "mp3", "wav", "flac", "aac", "ogg", "oga", "m4a", "wma", "opus", "aiff", "mid", "midi")
	add("video", "mp4", "avi", "mov", "mkv", "webm", "flv", "wmv", "m4v", "mpeg", "mpg", "3gp")
	add("archive", "zip", "tar", "gz", "tgz", "bz2", "xz", "7z", "rar", "zst", "lz4", "jar", "war", "whl", "deb", "rpm", "dmg", "iso")
	add("executable", "exe", "dll", "so", "dylib", "bin", "o", "a", "lib", "obj", "class", "pyc", "pyo", "wasm", "elf")
	add("document", "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "rtf", "epub")
	add("font", "ttf", "otf", "woff", "woff2", "eot")
	add("database", "sqlite", "sqlite3", "db", "mdb", "parquet", "feather", "npy", "npz", "pkl", "pickle", "h5")
	return m
}()

// binaryKind returns the kind of binary file for a name and its first bytes, or "" for text.
func binaryKind(name string, head []byte) string {
	if k, ok := binaryKinds[strings.ToLower(filepath.Ext(name))]; ok {
		return k
	}
	if textdiff.Binary(head) {
		return "binary"
	}
	return ""
}

// binaryMessage is the refusal text: which file, why, and what to use instead (as MassGen's
// read tools do).
func binaryMessage(tool, path, kind string) string {
	var instead string
	switch kind {
	case "image":
		instead = "Use an image tool (e.g. understand_image or read_media) if one is available to you"
	case "audio":
		instead = "Use an audio tool (e.g. understand_audio or read_media) if one is available to you"
	case "video":
		instead = "Use a video tool (e.g. understand_video or read_media) if one is available to you"
	case "document":
		instead = "Use a document tool if one is available to you, or convert it to text with execute_command (e.g. pdftotext)"
	default:
		instead = "Use get_file_info for its metadata, copy_file/move_file to deliver it, or execute_command to inspect it"
	}
	return fmt.Sprintf("Cannot read %q with %s: it is a binary file (%s) and %s only reads text. %s.", path, tool, kind, tool, instead)
}
