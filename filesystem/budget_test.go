package filesystem

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/permissions"
)

// multi decodes a read_multiple_files result.
type multiOut struct {
	Files      []fileContent `json:"files"`
	Duplicates int           `json:"duplicates"`
	Truncated  bool          `json:"truncated"`
	Note       string        `json:"note"`
	NotRead    []string      `json:"not_read"`
}

// read_multiple_files returns at most its budget, reads a file named again once, and says what
// it left out.
func TestReadMultipleFilesBudget(t *testing.T) {
	lane.Long(t)
	const budget = 64 << 10
	big := strings.Repeat("0123456789abcde\n", 24<<10/16) // 24 KiB
	tests := []struct {
		name  string
		setup func(t *testing.T, ws string) []any
		// want: entries with content, with same_as, with error; truncated, and the note's count
		content, same, errs, dups int
		more                      int // 0: not truncated
		notRead                   int
	}{
		{name: "one file named 4096 times", content: 1, dups: 4095, setup: func(t *testing.T, ws string) []any {
			write(t, filepath.Join(ws, "big.txt"), big)
			paths := make([]any, 4096)
			for i := range paths {
				paths[i] = []string{"big.txt", filepath.Join(ws, "big.txt"), "./big.txt", "sub/../big.txt"}[i%4]
			}
			mkdir(t, filepath.Join(ws, "sub"))
			return paths
		}},
		{name: "hard links are the same file", content: 1, same: 1, setup: func(t *testing.T, ws string) []any {
			write(t, filepath.Join(ws, "a.txt"), big)
			if err := os.Link(filepath.Join(ws, "a.txt"), filepath.Join(ws, "b.txt")); err != nil {
				t.Skip(err)
			}
			return []any{"a.txt", "b.txt"}
		}},
		{name: "distinct files past the budget", content: 2, more: 4094, notRead: maxNotRead, setup: func(t *testing.T, ws string) []any {
			paths := make([]any, 4096)
			for i := range paths {
				name := fmt.Sprintf("f%04d.txt", i)
				content := "x"
				if i < 8 {
					content = big
				}
				write(t, filepath.Join(ws, name), content)
				paths[i] = name
			}
			return paths
		}},
		{name: "a large file then small ones", content: 2, more: 2, notRead: 1, setup: func(t *testing.T, ws string) []any {
			write(t, filepath.Join(ws, "a.txt"), big)
			write(t, filepath.Join(ws, "b.txt"), big)
			write(t, filepath.Join(ws, "c.txt"), big+big)
			return []any{"a.txt", "b.txt", "c.txt", "c.txt"}
		}},
		{name: "control characters count as their JSON escapes", content: 1, more: 1, notRead: 1, setup: func(t *testing.T, ws string) []any {
			write(t, filepath.Join(ws, "a.txt"), "x")
			// 12 KiB of \x01: 72 KiB as JSON, over the 64 KiB budget though 12 KiB on disk.
			write(t, filepath.Join(ws, "ctl.txt"), strings.Repeat("\x01", 12<<10))
			return []any{"a.txt", "ctl.txt"}
		}},
		{name: "errors are entries, given once too", content: 1, errs: 1, dups: 1, setup: func(t *testing.T, ws string) []any {
			write(t, filepath.Join(ws, "a.txt"), "a")
			return []any{"nope.txt", "a.txt", "nope.txt"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, permissions.Coordination)
			e.ts.budget.readTotal = budget
			paths := tt.setup(t, e.ws)
			_, res := e.call("read_multiple_files", map[string]any{"paths": paths})
			if res.IsError {
				t.Fatalf("error result: %.300s", res.Content)
			}
			if len(res.Content) > budget+4<<10 {
				t.Errorf("result is %d bytes, over the budget of %d", len(res.Content), budget)
			}
			var out multiOut
			if err := json.Unmarshal([]byte(res.Content), &out); err != nil {
				t.Fatal(err)
			}
			var content, same, errs int
			for _, f := range out.Files {
				switch {
				case f.Content != "":
					content++
				case f.SameAs != "":
					same++
					if !strings.HasSuffix(f.Path, "b.txt") || !strings.HasSuffix(f.SameAs, "a.txt") {
						t.Errorf("same_as %q for %q", f.SameAs, f.Path)
					}
				case f.Error != "":
					errs++
				}
			}
			if content != tt.content || same != tt.same || errs != tt.errs || out.Duplicates != tt.dups {
				t.Errorf("%d with content, %d same_as, %d errors, %d duplicates; want %d, %d, %d, %d",
					content, same, errs, out.Duplicates, tt.content, tt.same, tt.errs, tt.dups)
			}
			if tt.more == 0 {
				if out.Truncated || out.Note != "" {
					t.Errorf("truncated: %v %q", out.Truncated, out.Note)
				}
				return
			}
			want := fmt.Sprintf("truncated: %d more path(s) not read", tt.more)
			if !out.Truncated || !strings.Contains(out.Note, want) || !strings.Contains(out.Note, "64 KiB") {
				t.Errorf("note %q, want %q", out.Note, want)
			}
			if len(out.NotRead) != tt.notRead {
				t.Errorf("not_read lists %d paths, want %d", len(out.NotRead), tt.notRead)
			}
		})
	}
}

// The default budget holds a file at the per-file limit, and one file named 4,096 times is
// returned once.
func TestReadMultipleFilesDefaultBudget(t *testing.T) {
	e := newEnv(t, permissions.Coordination)
	nine := strings.Repeat("nine MiB of text, line after line\n", 9<<20/34)
	write(t, filepath.Join(e.ws, "nine.txt"), nine)
	write(t, filepath.Join(e.ws, "nine2.txt"), nine)
	paths := make([]any, 4096)
	for i := range paths {
		paths[i] = "nine.txt"
	}
	paths[4095] = "nine2.txt" // does not fit beside the first: 18 MiB > 16 MiB
	_, res := e.call("read_multiple_files", map[string]any{"paths": paths})
	if res.IsError || strings.Count(res.Content, "nine MiB of text") != 9<<20/34 {
		t.Fatalf("error %v, content copies %d", res.IsError, strings.Count(res.Content, "nine MiB of text")/(9<<20/34))
	}
	if len(res.Content) > maxReadTotal {
		t.Errorf("result %d bytes, over the default budget %d", len(res.Content), maxReadTotal)
	}
	if !strings.Contains(res.Content, `"note":"truncated: 1 more path(s) not read (paths[4095] on): this call's budget of 16 MiB`) {
		t.Errorf("note missing: %.200s", res.Content[len(res.Content)-400:])
	}
}

// directory_tree and search_files stop at their entry and byte budgets and count the rest.
func TestWalkingToolsBudgets(t *testing.T) {
	long := strings.Repeat("n", 200)
	tests := []struct {
		name   string
		tool   string
		args   func(ws string) map[string]any
		setup  func(t *testing.T, ws string)
		budget func(b *budgets, ws string)
		shown  int    // entries in the result
		note   string // "" = not truncated
	}{
		{name: "tree: entries", tool: "directory_tree", shown: 50, note: "truncated: 71 more entries not shown (this call's budget: 50 entries, 1 MiB of names)",
			setup: func(t *testing.T, ws string) {
				for i := range 100 {
					write(t, filepath.Join(ws, "d", fmt.Sprintf("f%03d", i)), "x")
				}
				for i := range 19 {
					write(t, filepath.Join(ws, "e", fmt.Sprintf("g%03d", i)), "x")
				}
			},
			budget: func(b *budgets, _ string) { b.treeItems = 50 }},
		{name: "tree: bytes", tool: "directory_tree", shown: 8, note: "truncated: 12 more entries not shown (this call's budget: 5000 entries, 2 KiB of names)",
			setup: func(t *testing.T, ws string) {
				for i := range 20 {
					write(t, filepath.Join(ws, fmt.Sprintf("%s%03d", long, i)), "x")
				}
			},
			budget: func(b *budgets, _ string) { b.treeBytes = 2 << 10 }},
		{name: "tree: counting stops", tool: "directory_tree", shown: 10, note: "truncated: at least 30 more entries not shown",
			setup: func(t *testing.T, ws string) {
				for i := range 100 {
					write(t, filepath.Join(ws, fmt.Sprintf("f%03d", i)), "x")
				}
			},
			budget: func(b *budgets, _ string) { b.treeItems, b.countMore = 10, 30 }},
		{name: "tree: within budget", tool: "directory_tree", shown: 5,
			setup: func(t *testing.T, ws string) {
				for i := range 5 {
					write(t, filepath.Join(ws, fmt.Sprintf("f%03d", i)), "x")
				}
			}},
		{name: "search: hits", tool: "search_files", shown: 40, note: "truncated: 60 more matches not shown (this call's budget: 40 matches, 1 MiB of paths)",
			args: func(ws string) map[string]any { return map[string]any{"path": ws, "pattern": "*.txt"} },
			setup: func(t *testing.T, ws string) {
				for i := range 100 {
					write(t, filepath.Join(ws, "a", fmt.Sprintf("f%03d.txt", i)), "x")
					write(t, filepath.Join(ws, "a", fmt.Sprintf("f%03d.md", i)), "x")
				}
			},
			budget: func(b *budgets, _ string) { b.searchHits = 40 }},
		{name: "search: bytes", tool: "search_files", shown: 4, note: "truncated: 6 more matches not shown (this call's budget: 1000 matches, ",
			args: func(ws string) map[string]any { return map[string]any{"path": ws, "pattern": "txt"} },
			setup: func(t *testing.T, ws string) {
				deep := filepath.Join(ws, long, long, long)
				for i := range 10 {
					write(t, filepath.Join(deep, fmt.Sprintf("f%03d.txt", i)), "x")
				}
			},
			budget: func(b *budgets, ws string) {
				p := filepath.Join(ws, long, long, long, "f000.txt")
				b.searchBytes = 4*(len(p)+4) + 1 // four paths fit, not five
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, permissions.Coordination)
			tt.setup(t, e.ws)
			if tt.budget != nil {
				tt.budget(&e.ts.budget, e.ws)
			}
			args := map[string]any{"path": e.ws}
			if tt.args != nil {
				args = tt.args(e.ws)
			}
			m := e.ok(tt.tool, args)
			shown := 0
			if tt.tool == "search_files" {
				shown = len(m["matches"].([]any))
			} else {
				var count func([]any)
				count = func(ns []any) {
					for _, n := range ns {
						shown++
						if ch, ok := n.(map[string]any)["children"].([]any); ok {
							count(ch)
						}
					}
				}
				count(m["tree"].([]any))
			}
			if shown != tt.shown {
				t.Errorf("%d entries shown, want %d", shown, tt.shown)
			}
			note, _ := m["note"].(string)
			if tt.note == "" {
				if m["truncated"] != false || note != "" {
					t.Errorf("truncated %v, note %q", m["truncated"], note)
				}
				return
			}
			if m["truncated"] != true || !strings.HasPrefix(note, tt.note) {
				t.Errorf("note %q\nwant %q...", note, tt.note)
			}
		})
	}
}

// BenchmarkReadMultipleFiles: one call naming 4,096 paths (one 9 MiB file each time; 4,096
// distinct 64 KiB files), with what it allocates (B/op) against the result's size.
func BenchmarkReadMultipleFiles(b *testing.B) {
	e := newEnv(b, permissions.Coordination)
	write(b, filepath.Join(e.ws, "nine.txt"), strings.Repeat("nine MiB of text, line after line\n", 9<<20/34))
	chunk := strings.Repeat("sixty-four KiB of text, one line after\n", 64<<10/39)
	same, distinct := make([]any, 4096), make([]any, 4096)
	for i := range 4096 {
		same[i] = "nine.txt"
		distinct[i] = fmt.Sprintf("d/f%04d.txt", i)
		write(b, filepath.Join(e.ws, "d", fmt.Sprintf("f%04d.txt", i)), chunk)
	}
	for _, c := range []struct {
		name  string
		paths []any
	}{{"same-9MiB-file", same}, {"distinct-64KiB-files", distinct}} {
		b.Run(c.name, func(b *testing.B) {
			raw, _ := json.Marshal(map[string]any{"paths": c.paths})
			b.ReportAllocs()
			var size int
			for range b.N {
				res := e.ts.Call(context.Background(), "read_multiple_files", raw)
				if res.IsError {
					b.Fatal(res.Content[:200])
				}
				size = len(res.Content)
			}
			b.ReportMetric(float64(size)/(1<<20), "MiB-result")
		})
	}
}
