package logging

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/massgen-go/massgen/internal/buildinfo"
)

func TestNewRunDir(t *testing.T) {
	mg := filepath.Join(t.TempDir(), ".massgen")
	now := time.Date(2025, 9, 28, 14, 30, 22, 0, time.Local)
	want := []string{"log_20250928_143022", "log_20250928_143022_2", "log_20250928_143022_3"}
	for _, w := range want {
		dir, err := NewRunDir(mg, now)
		if err != nil {
			t.Fatal(err)
		}
		if dir != filepath.Join(mg, "logs", w) {
			t.Errorf("dir = %s, want logs/%s", dir, w)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Errorf("%s not created: %v", dir, err)
		}
	}
	// A file in the way is an error, not a silent overwrite.
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRunDir(blocked, now); err == nil {
		t.Error("NewRunDir under a file succeeded")
	}
}

func TestNewWritesOnlyToFile(t *testing.T) {
	tests := []struct {
		name      string
		debug     bool
		wantDebug bool
	}{
		{"info level", false, false},
		{"debug level", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			logger, closeFn, err := New(dir, tt.debug)
			if err != nil {
				t.Fatal(err)
			}
			logger.Debug("dbg-line")
			logger.Info("info-line")
			if err := closeFn(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			for _, l := range lines {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Errorf("not a JSON line: %q", l)
				}
			}
			if got := strings.Contains(string(data), "dbg-line"); got != tt.wantDebug {
				t.Errorf("debug line present = %v, want %v", got, tt.wantDebug)
			}
			if !strings.Contains(string(data), "info-line") {
				t.Error("info line missing")
			}
		})
	}
}

func TestNewMissingDir(t *testing.T) {
	if _, _, err := New(filepath.Join(t.TempDir(), "nope"), false); err == nil {
		t.Error("New in a missing folder succeeded")
	}
}

func TestTextKeepsHeadAndHashOfLongText(t *testing.T) {
	long := strings.Repeat("é", TextLimit) // 2 bytes each: the head must not cut one in half
	tests := []struct {
		name, text string
		whole      bool
	}{
		{"short", "Write hello.txt", true},
		{"at the limit", strings.Repeat("x", TextLimit), true},
		{"long", long, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			logger, closeFn, err := New(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			logger.Info("turn start", Text("task", tt.text))
			if err := closeFn(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			var first struct{ Msg, Version string }
			if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Msg != LogStart || first.Version != buildinfo.Version() {
				t.Errorf("first line %s: want %q with the version %q", lines[0], LogStart, buildinfo.Version())
			}
			var line struct {
				Task json.RawMessage `json:"task"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &line); err != nil {
				t.Fatal(err)
			}
			if tt.whole {
				var s string
				if err := json.Unmarshal(line.Task, &s); err != nil || s != tt.text {
					t.Errorf("task logged as %.80s, want the whole text", line.Task)
				}
				return
			}
			var obj struct {
				Head   string `json:"head"`
				Bytes  int    `json:"bytes"`
				SHA256 string `json:"sha256"`
			}
			if err := json.Unmarshal(line.Task, &obj); err != nil {
				t.Fatalf("task logged as %.80s: %v", line.Task, err)
			}
			sum := sha256.Sum256([]byte(tt.text))
			if obj.Bytes != len(tt.text) || obj.SHA256 != hex.EncodeToString(sum[:]) || !strings.HasPrefix(tt.text, obj.Head) ||
				len(obj.Head) == 0 || len(obj.Head) > textHead || !utf8.ValidString(obj.Head) {
				t.Errorf("logged %d bytes, sha %s, head of %d bytes", obj.Bytes, obj.SHA256, len(obj.Head))
			}
			if len(data) > 2*textHead+500 {
				t.Errorf("the log line is %d bytes", len(data))
			}
		})
	}
}

func TestLatest(t *testing.T) {
	tests := []struct {
		name    string
		folders []string
		files   []string // entries that are not run folders
		want    string
	}{
		{"none", nil, nil, ""},
		{"by time", []string{"log_20250928_143022", "log_20251001_090000", "log_20250101_000000"}, nil, "log_20251001_090000"},
		{"same second: the highest sequence, numerically", []string{"log_20250928_143022", "log_20250928_143022_2", "log_20250928_143022_10", "log_20250928_143022_9"}, nil, "log_20250928_143022_10"},
		{"other names and files are not runs", []string{"log_20250928_143022", "log_x", "notes", "log_20250928_143022_1", "log_20250928_143022_a"}, []string{"log_20300101_000000"}, "log_20250928_143022"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mg := filepath.Join(t.TempDir(), ".massgen")
			for _, f := range tt.folders {
				if err := os.MkdirAll(filepath.Join(mg, "logs", f), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range tt.files {
				if err := os.WriteFile(filepath.Join(mg, "logs", f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Latest(mg)
			if tt.want == "" {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("Latest = %q, %v; want ErrNotExist", got, err)
				}
				return
			}
			if err != nil || got != filepath.Join(mg, "logs", tt.want) {
				t.Errorf("Latest = %q, %v; want %s", got, err, tt.want)
			}
		})
	}
	// NewRunDir's folders are what Latest finds.
	mg := filepath.Join(t.TempDir(), ".massgen")
	now := time.Date(2025, 9, 28, 14, 30, 22, 0, time.Local)
	var last string
	for range 3 {
		d, err := NewRunDir(mg, now)
		if err != nil {
			t.Fatal(err)
		}
		last = d
	}
	if got, err := Latest(mg); err != nil || got != last {
		t.Errorf("Latest = %q, %v; want %s", got, err, last)
	}
}

func TestRunStarted(t *testing.T) {
	at := time.Date(2025, 9, 28, 14, 30, 22, 0, time.Local)
	tests := []struct {
		name string
		ok   bool
	}{
		{"log_20250928_143022", true},
		{"log_20250928_143022_2", true},
		{"log_20250928_143022_17", true},
		{"log_20250928_143022_1", false}, // NewRunDir never makes _1
		{"log_20250928_143022x", false},
		{"log_20250928_1430", false},
		{"log_20251328_143022", false},
		{"notes", false},
		{"turn_2", false},
	}
	for _, tt := range tests {
		got, ok := RunStarted(tt.name)
		if ok != tt.ok || (ok && !got.Equal(at)) {
			t.Errorf("RunStarted(%q) = %v, %v; want ok=%v", tt.name, got, ok, tt.ok)
		}
	}
}
