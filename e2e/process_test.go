package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// started is a massgen process running in the background.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	done           chan struct{}
	err            error
}

// lockedBuffer is a buffer the process writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) Len() int { return len(b.String()) }

// start runs massgen in dir without waiting for it.
func start(t *testing.T, dir, stdin string, args ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(binary, args...), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd.Dir, s.cmd.Env, s.cmd.Stdin = dir, cleanEnv(t), strings.NewReader(stdin)
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// wait waits for the process to end (at most d) and returns its exit code.
func (s *started) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(d):
		_ = s.cmd.Process.Kill()
		<-s.done
		t.Fatalf("massgen did not end within %s\nstderr:\n%s", d, s.stderr)
	}
	if s.err == nil {
		return 0
	}
	if ee, ok := s.err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	t.Fatalf("massgen: %v", s.err)
	return -1
}

// until polls cond (a condition on files or processes, which nothing signals) until it holds.
func until(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// tempFiles lists the massgen temp files under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".massgen-tmp-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}
