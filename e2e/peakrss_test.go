package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// peakRSSWrapper runs a command and writes its peak resident set (KiB, the kernel's ru_maxrss of
// its children) to the file named first. A process started straight from this test inherits the
// test's own high-water mark at exec (os/exec starts children sharing the parent's memory until
// they exec), so its rusage would report the test binary's size, not massgen's; a small python3
// in between keeps the figure massgen's own.
const peakRSSWrapper = `import resource, subprocess, sys
r = subprocess.run(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(r.returncode if r.returncode >= 0 else 128 - r.returncode)
`

// measured rewrites cmd to run through peakRSSWrapper and returns a function that reads the
// peak RSS in KiB once cmd has run.
func measured(t testing.TB, cmd *exec.Cmd) func() int64 {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is needed to measure a process's own peak memory")
	}
	out := filepath.Join(t.TempDir(), "maxrss")
	cmd.Args = append([]string{py, "-c", peakRSSWrapper, out}, cmd.Args...)
	cmd.Path = py
	return func() int64 {
		t.Helper()
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("peak RSS not measured: %v", err)
		}
		kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return kib
	}
}
