//go:build unix

package backends

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/testing/fakeclaude"
)

// Cancelling a call ends the CLI's whole process group, what it started included.
func TestClaudeCodeCancelEndsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	fakeCLI(t, fakeclaude.Script{Final: []fakeclaude.Step{{Text: "starting"}, {Block: true, PidFile: pidFile}}})
	b := newTestClaudeCode(t, nil)
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() {
		_, err := b.Generate(ctx, Request{Messages: []Message{{Role: "user", Content: "go"}}}, nil)
		done <- err
	}()
	child := waitForPid(t, pidFile)
	cancel()
	if err := receive(t, done, "Generate's return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	deadline := time.Now().Add(testTimeout)
	for alive(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the CLI's child %d outlived the cancelled call", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitForPid waits until the fake wrote its child's pid.
func waitForPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		if data, err := os.ReadFile(path); err == nil && len(data) > 0 {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatal("the fake CLI never started its child")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie waiting to be reaped does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
