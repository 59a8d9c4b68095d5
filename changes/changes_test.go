package changes

import (
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
