// Package logging owns a run's log folder (.massgen/logs/log_<YYYYMMDD_HHMMSS>/) and the zap
// logger that writes into it. Logs go to a file only, never to stdout or stderr: stdout carries
// the final answer and stderr the user-facing progress.
package logging

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/massgen-go/massgen/internal/buildinfo"
	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/private"
)

// LogStart is the message of a log's first line, which carries the massgen version.
const LogStart = "log start"

// FileName is the log file inside a run folder.
const FileName = "massgen.log"

// RunEnd is the message of the last line a run (or an inspection command that opened a log)
// writes: `massgen logs --follow` stops there.
const RunEnd = "run end"

// runPrefix and runLayout name a run folder: log_<YYYYMMDD_HHMMSS>, then _2, _3, ... for runs
// started in the same second.
const (
	runPrefix = "log_"
	runLayout = "20060102_150405"
)

// RunStarted returns when the run whose log folder is called name (log_<YYYYMMDD_HHMMSS>, maybe
// with _N) started, in local time as NewRunDir named it; ok is false for any other name.
func RunStarted(name string) (started time.Time, ok bool) {
	rest, found := strings.CutPrefix(name, runPrefix)
	if !found || len(rest) < len(runLayout) {
		return time.Time{}, false
	}
	if tail := rest[len(runLayout):]; tail != "" {
		if n, err := strconv.Atoi(strings.TrimPrefix(tail, "_")); err != nil || n < 2 || tail[0] != '_' {
			return time.Time{}, false
		}
	}
	t, err := time.ParseInLocation(runLayout, rest[:len(runLayout)], time.Local)
	return t, err == nil
}

// NewRunDir creates <massgenDir>/logs/log_<YYYYMMDD_HHMMSS>/ for a run started at now, adding
// _2, _3, ... when a run started in the same second already has that folder.
func NewRunDir(massgenDir string, now time.Time) (string, error) {
	logs := layout.At(massgenDir).Logs()
	if err := private.MkdirAll(logs); err != nil {
		return "", fmt.Errorf("logging: %w", err)
	}
	base := filepath.Join(logs, runPrefix+now.Format(runLayout))
	for n := 1; n < 10000; n++ {
		dir := base
		if n > 1 {
			dir = fmt.Sprintf("%s_%d", base, n)
		}
		// Mkdir (not MkdirAll) fails when the folder exists, so two runs never share one.
		err := os.Mkdir(dir, private.DirMode)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("logging: %w", err)
		}
	}
	return "", fmt.Errorf("logging: too many runs started at %s", now.Format(time.DateTime))
}

// New returns a logger writing JSON lines to runDir/massgen.log (info level, debug with debug)
// and a function that flushes and closes the file.
func New(runDir string, debug bool) (*zap.Logger, func() error, error) {
	f, err := os.OpenFile(filepath.Join(runDir, FileName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, private.FileMode)
	if err != nil {
		return nil, nil, fmt.Errorf("logging: %w", err)
	}
	level := zapcore.InfoLevel
	if debug {
		level = zapcore.DebugLevel
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(f), level)
	// Internal zap errors go to the same file, never to the terminal.
	logger := zap.New(core, zap.ErrorOutput(zapcore.AddSync(f)))
	// The first line says which massgen wrote the log (the version --version prints).
	logger.Info(LogStart, zap.String("version", buildinfo.Version()), zap.Int("pid", os.Getpid()))
	closeFn := func() error {
		_ = logger.Sync()
		return f.Close()
	}
	return logger, closeFn, nil
}

// TextLimit is the largest text a log line keeps whole; Text keeps a head and a hash of longer
// ones.
const TextLimit = 4 << 10

// textHead is how much of a long text Text keeps.
const textHead = 1 << 10

// Text is a field for user- or model-supplied text of any size (a task, an answer): whole up to
// TextLimit bytes; beyond, an object with its first bytes (cut at a character boundary), its
// size and its SHA-256, so the log stays small and the text can still be recognised.
func Text(key, s string) zap.Field {
	if len(s) <= TextLimit {
		return zap.String(key, s)
	}
	return zap.Object(key, longText(s))
}

type longText string

func (t longText) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	head := string(t[:textHead])
	for !utf8.ValidString(head) && len(head) > textHead-utf8.UTFMax {
		head = head[:len(head)-1]
	}
	sum := sha256.Sum256([]byte(t))
	enc.AddString("head", head)
	enc.AddInt("bytes", len(t))
	enc.AddString("sha256", hex.EncodeToString(sum[:]))
	return nil
}

// Latest returns the newest run folder under <massgenDir>/logs/ (by the time and sequence number
// in its name, not by modification time, which a copy or a touch can change). The error wraps
// fs.ErrNotExist when there is none.
func Latest(massgenDir string) (string, error) {
	logs := layout.At(massgenDir).Logs()
	entries, err := os.ReadDir(logs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("logging: %w", err)
	}
	best, bestTime, bestSeq := "", time.Time{}, 0
	for _, e := range entries {
		t, seq, ok := parseRunName(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		if best == "" || t.After(bestTime) || (t.Equal(bestTime) && seq > bestSeq) {
			best, bestTime, bestSeq = e.Name(), t, seq
		}
	}
	if best == "" {
		return "", fmt.Errorf("logging: no run folder in %s: %w", logs, fs.ErrNotExist)
	}
	return filepath.Join(logs, best), nil
}

// parseRunName reads log_<YYYYMMDD_HHMMSS>[_N] (N >= 2; none is 1).
func parseRunName(name string) (time.Time, int, bool) {
	rest, ok := strings.CutPrefix(name, runPrefix)
	if !ok || len(rest) < len(runLayout) {
		return time.Time{}, 0, false
	}
	t, err := time.ParseInLocation(runLayout, rest[:len(runLayout)], time.Local)
	if err != nil {
		return time.Time{}, 0, false
	}
	seq := 1
	if suffix := rest[len(runLayout):]; suffix != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(suffix, "_"))
		if err != nil || !strings.HasPrefix(suffix, "_") || n < 2 {
			return time.Time{}, 0, false
		}
		seq = n
	}
	return t, seq, true
}
