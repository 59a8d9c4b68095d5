package snapshots

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzSymlinksStayInside builds workspaces with symlinks whose targets are made of ".", "..",
// directory and link names (and the odd absolute path), saves them, and checks that every symlink
// that reaches the snapshot and the temp workspace resolves inside it.
func FuzzSymlinksStayInside(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{3, 0, 1, 9, 1, 1, 4, 2, 0, 0, 8, 1})
	f.Add([]byte{5, 2, 1, 1, 6, 3, 0, 1, 7, 1, 1, 1, 1})
	parts := []string{".", "..", "d", "d/e", "l0", "l1", "l2", "f", "/", "l3"}
	f.Fuzz(func(t *testing.T, data []byte) {
		base := t.TempDir()
		s, err := New(Options{SnapshotRoot: filepath.Join(base, "s"), TempRoot: filepath.Join(base, "t"), Agents: []string{"a", "b"}})
		if err != nil {
			t.Fatal(err)
		}
		ws := filepath.Join(base, "w", "ws")
		must(t, os.MkdirAll(filepath.Join(ws, "d", "e"), 0o755))
		must(t, os.WriteFile(filepath.Join(ws, "f"), []byte("f"), 0o644))
		must(t, os.WriteFile(filepath.Join(base, "w", "f"), []byte("outside"), 0o644))
		// Each link: a location byte, a length byte, then that many part indexes.
		for n := 0; len(data) >= 2 && n < 4; n++ {
			loc, l := int(data[0])%3, int(data[1])%5+1
			data = data[2:]
			var tgt []string
			for i := 0; i < l && len(data) > 0; i++ {
				tgt = append(tgt, parts[int(data[0])%len(parts)])
				data = data[1:]
			}
			target := strings.Join(tgt, "/")
			if target == "" {
				continue
			}
			dir := []string{ws, filepath.Join(ws, "d"), filepath.Join(ws, "d", "e")}[loc]
			_ = os.Symlink(target, filepath.Join(dir, "l"+string(rune('0'+n))))
		}
		if _, err := s.Save(context.Background(), "a", ws, "answer"); err != nil {
			t.Fatal(err)
		}
		if err := s.FillTemp(context.Background(), "b"); err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{s.SnapshotDir("a"), filepath.Join(s.TempDir("b"), "agent1")} {
			if _, err := os.Lstat(dir); err != nil {
				continue
			}
			real, _ := filepath.EvalSymlinks(dir)
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.Type() != fs.ModeSymlink {
					return err
				}
				r, err := filepath.EvalSymlinks(p)
				if err != nil {
					t.Errorf("%s: kept symlink does not resolve: %v", p, err)
					return nil
				}
				if r != real && !strings.HasPrefix(r, real+"/") {
					tg, _ := os.Readlink(p)
					t.Errorf("%s -> %s resolves outside the copy: %s", p, tg, r)
				}
				return nil
			})
		}
	})
}
