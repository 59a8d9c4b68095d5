package permissions

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/pathx"
)

// fuzzTree is the hostile tree of TestHostilePaths, built once per fuzz target.
func fuzzTree(f *testing.F) (*tree, *Policy) {
	tr := newTree(f)
	tr.link(f, "/etc/passwd", "ws/to_etc")
	tr.link(f, tr.p("outside"), "ws/to_outside_dir")
	tr.link(f, tr.p("project/golden/test1.json"), "ws/to_protected")
	tr.link(f, tr.p("files/secrets.yaml"), "ws/to_sibling")
	tr.link(f, "chain2", "ws/chain1")
	tr.link(f, tr.p("outside/secret.txt"), "ws/chain2")
	tr.link(f, "loop2", "ws/loop1")
	tr.link(f, "loop1", "ws/loop2")
	tr.link(f, tr.p("outside/new.txt"), "ws/dangling_out")
	tr.link(f, tr.p("outside"), "ws/sub/up")
	tr.link(f, "../../project", "ws/sub/rel")
	tr.link(f, tr.p("temp/agent1"), "ws/to_temp")
	tr.link(f, tr.p("outside"), "project/src/out")
	return tr, mustPolicy(f, tr.spec(Final))
}

// oracleWritable checks a path the policy allowed for writing against the kernel's own view:
// filepath.EvalSymlinks of the nearest existing ancestor (plus the rest) must be inside a
// writable root, outside protected paths, and (outside the workspace) free of excluded names.
func oracleWritable(t *testing.T, tr *tree, p *Policy, abs string) {
	t.Helper()
	for _, cand := range []string{abs, filepath.Clean(abs)} {
		res, ok := kernelResolve(cand)
		if !ok {
			continue
		}
		in := false
		for _, r := range p.WritableRoots() {
			if pathx.Within(res, r) {
				in = true
			}
		}
		if !in {
			t.Fatalf("write allowed for %q, which reaches %q outside the writable roots %v", abs, res, p.WritableRoots())
		}
		for pr := range p.protected {
			if pathx.Within(res, pr) {
				t.Fatalf("write allowed for %q, which reaches protected %q", abs, res)
			}
		}
		if !pathx.Within(res, tr.p("ws")) && ExcludedComponent(res) != "" {
			t.Fatalf("write allowed for %q, which reaches excluded %q", abs, res)
		}
		if pathx.Within(res, tr.p("files")) || pathx.Within(res, tr.p("temp")) || pathx.Within(res, tr.p("other_ws")) {
			t.Fatalf("write allowed for %q, which reaches read-only %q", abs, res)
		}
	}
}

// kernelResolve resolves like the kernel with the standard library: the longest existing prefix
// through EvalSymlinks, then the rest. Paths whose missing part holds ".." are skipped
// (ok=false): the kernel would refuse them.
func kernelResolve(abs string) (string, bool) {
	if !filepath.IsAbs(abs) {
		return "", false
	}
	rest := ""
	cur := abs
	for {
		if _, err := os.Lstat(cur); err == nil {
			r, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", false
			}
			if rest != "" {
				if hasDotDot(rest) {
					return "", false
				}
				// A dangling symlink as the first missing component is followed by EvalSymlinks' error;
				// we only get here when cur exists.
				r = filepath.Join(r, rest)
			}
			return r, true
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", false
		}
		if cur == "/" {
			return "", false
		}
		base := filepath.Base(cur)
		if rest == "" {
			rest = base
		} else {
			rest = base + "/" + rest
		}
		cur = filepath.Dir(cur)
	}
}

// FuzzResolveWrite: no write is allowed outside the writable roots, whatever the path.
func FuzzResolveWrite(f *testing.F) {
	tr, p := fuzzTree(f)
	for _, s := range []string{"a.txt", "to_etc", "to_outside_dir/x", "to_protected", "chain1", "loop1", "dangling_out",
		"sub/up/../a.txt", "sub/rel/src/x", "to_temp/x", "../outside/x", "sub/../../outside/x", "//etc//passwd",
		tr.p("project/golden/."), tr.p("project/src/out/x"), tr.p("project/.git/x"), "~/x", "~root/x", "./", "",
		tr.p("files/config.yaml"), tr.p("files/../files/secrets.yaml"), "missing/../../outside/x", "gоlden"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		d := p.CheckPath(path, Write)
		if !d.Allow {
			return
		}
		in := false
		for _, r := range p.WritableRoots() {
			if pathx.Within(d.Path, r) {
				in = true
			}
		}
		if !in {
			t.Fatalf("CheckPath(%q, Write) allowed %q outside the writable roots", path, d.Path)
		}
		abs, err := absolute(path, p.workspace, p.home)
		if err != nil {
			t.Fatalf("allowed a path that does not resolve: %v", err)
		}
		oracleWritable(t, tr, p, abs)
	})
}

var fuzzTools = []string{"write_file", "move_file", "copy_file", "copy_files_batch", "delete_file", "delete_files_batch",
	"create_directory", "edit_file", "execute_command", "Bash", "Write", "mcp__x__save_thing", "mcp__fs__write_file",
	"read_multiple_files", "mcp__x__frob"}

// FuzzDecideArgs: whatever the tool and arguments (JSON) or command, an allowed call writes only
// inside the writable roots.
func FuzzDecideArgs(f *testing.F) {
	tr, p := fuzzTree(f)
	f.Add(uint8(0), `{"path":"a.txt","content":"x"}`)
	f.Add(uint8(1), `{"source":"a.txt","destination":"`+tr.p("outside/x")+`"}`)
	f.Add(uint8(2), `{"source_path":"to_sibling","destination_path":"x"}`)
	f.Add(uint8(8), `{"command":"echo hi > to_etc"}`)
	f.Add(uint8(8), `{"command":"cp a.txt sub/up/x && mv x y"}`)
	f.Add(uint8(9), `{"command":"cd sub && touch rel/src/x"}`)
	f.Add(uint8(8), `{"command":"tee -a ../outside/x < a.txt","work_dir":"sub"}`)
	f.Add(uint8(10), `{"file_path":"dangling_out","content":"x"}`)
	f.Add(uint8(11), `{"where":"`+tr.p("project/golden/x")+`"}`)
	f.Add(uint8(14), `{"opts":{"target":"to_temp/x"},"list":["~/x"]}`)
	f.Add(uint8(8), `{"command":"sed -i s/a/b/ to_protected; ln x `+tr.p("project/expected_output.txt")+`"}`)
	f.Add(uint8(4), `{"path":"to_etc"}`)
	f.Add(uint8(8), `{"command":"rm -r to_outside_dir/ chain1"}`)
	f.Add(uint8(1), `{"source":"to_protected","destination":"x"}`)
	f.Add(uint8(14), `{"target_file":"to_protected","uri":"FILE://localhost/x"}`)
	f.Add(uint8(14), `{"save_to":"sub/../../outside/x","u":"file:///a%2f..%2fb"}`)
	f.Add(uint8(8), `{"command":"ln -s to_protected sl && echo x > sl"}`)
	f.Add(uint8(8), `{"command":"echo {a,b}{1..3} > sub/{x,y}"}`)
	f.Add(uint8(8), `{"command":"gzip to_protected; patch a.txt p.diff"}`)
	f.Add(uint8(8), `{"command":"mv a.txt to_outside_dir; cp -t sub/up a.txt; ln -s x y sub/rel/"}`)
	f.Add(uint8(8), `{"command":"tar -C sub -cf to_protected up; find . -fprint to_etc; shred to_protected"}`)
	f.Add(uint8(8), `{"command":"[ -f to_etc ] && env -C sub/up rm -r x; trap 'rm to_protected' EXIT"}`)
	f.Fuzz(func(t *testing.T, which uint8, argsJSON string) {
		tool := fuzzTools[int(which)%len(fuzzTools)]
		var args map[string]any
		if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
			if !p.spec.Tools.IsCommand(tool) {
				return
			}
			args = map[string]any{"command": argsJSON}
		}
		d := p.Decide(Request{Tool: tool, Args: args})
		if !d.Allow {
			return
		}
		ex, err := extractWith(nil, p.spec.Tools, tool, args, !p.spec.Sandboxed)
		if err != nil {
			t.Fatalf("Decide allowed %s %s but extraction fails: %v", tool, argsJSON, err)
		}
		for _, pa := range ex.paths {
			if pa.Access == Read || pa.Glob {
				continue
			}
			abs, err := absolute(pa.Path, p.workspace, p.home)
			if err != nil {
				t.Fatalf("allowed %s with unresolvable write path %q: %v", tool, pa.Path, err)
			}
			if pa.Access == Delete && !strings.HasSuffix(abs, "/") && !strings.HasSuffix(abs, "/.") && !hasDotDot(abs) {
				// Removing or moving a link touches the link only: judge the entry.
				clean := filepath.Clean(abs)
				if parent, ok := kernelResolve(filepath.Dir(clean)); ok {
					entry := filepath.Join(parent, filepath.Base(clean))
					if fi, err := os.Lstat(entry); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
						in := false
						for _, r := range p.WritableRoots() {
							if pathx.Within(entry, r) {
								in = true
							}
						}
						if !in {
							t.Fatalf("Decide allowed %s %s: removes link %q outside the writable roots", tool, argsJSON, entry)
						}
						continue
					}
				}
			}
			res, err := p.Resolve(pa.Path)
			if err != nil {
				t.Fatalf("allowed %s with unresolvable write path %q: %v", tool, pa.Path, err)
			}
			in := false
			for _, r := range p.WritableRoots() {
				if pathx.Within(res, r) {
					in = true
				}
			}
			if !in {
				t.Fatalf("Decide allowed %s %s: write to %q (%s) outside the writable roots", tool, argsJSON, pa.Path, res)
			}
			oracleWritable(t, tr, p, abs)
		}
		if strings.Contains(d.Reason, "\x00") {
			t.Fatalf("reason carries a NUL")
		}
	})
}
