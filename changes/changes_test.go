package changes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadChangeSetRefusesCopiesOutsideTheTrash: a changes.json naming a kept copy outside its
// trash folder is refused (undo would otherwise copy any file into a context path).
func TestLoadChangeSetRefusesCopiesOutsideTheTrash(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "changes.json")
	bad := `{"version":1,"trash_root":"` + dir + `/trash","changes":[{"path":"/proj/a","before":{"type":"file","kept":"/etc/passwd"},"after":{"type":"absent"}}]}`
	if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadChangeSet(p); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("err = %v", err)
	}
}

// TestFilesChangedJSON: the one record of a changed file has the shape scripts and sessions
// read (files_changed of --output json and metadata.json), [] when nothing changed.
func TestFilesChangedJSON(t *testing.T) {
	cs := &ChangeSet{Records: []ChangeRecord{
		{Path: "/p/b.bin", Before: EntryState{Type: EntryFile}, After: EntryState{Type: EntryFile}, Binary: true},
		{Path: "/p/a.txt", Before: EntryState{Type: EntryAbsent}, After: EntryState{Type: EntryFile}, Added: 2},
		{Path: "/p/d", Before: EntryState{Type: EntryAbsent}, After: EntryState{Type: EntryDir}},
		{Path: "/p/c.txt", Before: EntryState{Type: EntryFile}, After: EntryState{Type: EntryAbsent}, Removed: 3},
	}}
	for _, tt := range []struct {
		name string
		cs   *ChangeSet
		want string
	}{
		{"changed", cs, `[{"path":"/p/a.txt","change":"created","added":2,"removed":0},` +
			`{"path":"/p/b.bin","change":"modified","added":0,"removed":0,"binary":true},` +
			`{"path":"/p/c.txt","change":"deleted","added":0,"removed":3}]`},
		{"nothing", &ChangeSet{}, `[]`},
		{"no set", nil, `[]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.cs.FilesChanged())
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("files_changed =\n%s\nwant\n%s", b, tt.want)
			}
		})
	}
}
