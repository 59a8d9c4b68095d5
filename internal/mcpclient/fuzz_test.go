package mcpclient

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions"
)

// FuzzAbsolutePaths: whatever the model sends to the filesystem server, every path the
// permission layer finds in the forwarded arguments is absolute (or ~-based), or the call is
// refused: the server never gets a relative path to resolve against a directory of its choosing.
func FuzzAbsolutePaths(f *testing.F) {
	for _, seed := range []string{
		`{"path":"notes.txt"}`, `{"path":"../site/secret"}`, `{"paths":["a","/b","../c"]}`,
		`{"source":"x","destination":"y/z"}`, `{"path":"file:///etc/passwd"}`, `{"path":""}`,
		`{"path":"~/x"}`, `{"path":["not","a","string"]}`, `{"nested":{"path":"rel"}}`,
		`{"path":"a\u0000b"}`, `{"paths":[]}`, `{"path":"/abs","extra_path":"rel/other"}`,
	} {
		f.Add("read_text_file", seed)
		f.Add("write_file", seed)
		f.Add("move_file", seed)
		f.Add("read_multiple_files", seed)
	}
	ws := "/work/ws"
	c := &Client{name: "fs", workDir: ws, fs: true}
	f.Fuzz(func(t *testing.T, tool, raw string) {
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil || args == nil {
			return
		}
		before, _ := json.Marshal(args)
		out, err := c.absolutePaths(tool, args)
		if after, _ := json.Marshal(args); string(after) != string(before) {
			t.Fatalf("absolutePaths changed its input: %s -> %s", before, after)
		}
		if err != nil {
			return // refused: nothing is forwarded
		}
		found, err := permissions.ExtractPaths(filesystem.Table(), "mcp__fs__"+tool, out)
		if err != nil {
			t.Fatalf("forwarded args no longer classify: %v (%v)", err, out)
		}
		for _, pa := range found {
			p := pa.Path
			if p != "" && !filepath.IsAbs(p) && p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "file://") {
				t.Fatalf("relative path %q (%s) forwarded: %v", p, pa.Arg, out)
			}
		}
	})
}
