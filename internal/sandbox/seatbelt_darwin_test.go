//go:build darwin

package sandbox

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSeatbeltRun runs real commands under sandbox-exec: the workspace is writable, protected
// paths, private paths, the home directory and Launch Services are not.
func TestSeatbeltRun(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(dir, "proj")
	ws := filepath.Join(dir, "ws")
	for _, d := range []string{filepath.Join(proj, ".git"), filepath.Join(proj, "src"), filepath.Join(proj, ".massgen"), ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(proj, ".git", "config"), filepath.Join(proj, ".massgen", "secret"), filepath.Join(dir, "outside")} {
		if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol := Policy{
		Write: []string{proj, ws},
		Own:   []string{ws},
		Keep:  []string{filepath.Join(proj, ".git")},
		Hide:  []string{filepath.Join(proj, ".massgen")},
	}
	tests := []struct {
		name, cmd string
		ok        bool
	}{
		{"write in the workspace", "echo hi > " + ws + "/a && cat " + ws + "/a", true},
		{"git init in the workspace", "mkdir " + ws + "/r && mkdir " + ws + "/r/.git", true},
		{"write in the project", "echo hi > " + proj + "/src/b", true},
		{"write a protected path", "echo evil >> " + proj + "/.git/config", false},
		{"write it in caps", "echo evil >> " + proj + "/.GIT/config", false},
		{"rename the project", "mv " + proj + " " + ws + "/stolen", false},
		{"new .git in the project", "mkdir " + proj + "/src/.git", false},
		{"hard link a protected file", "ln " + proj + "/.git/config " + proj + "/src/c", false},
		{"read a private path", "cat " + proj + "/.massgen/secret", false},
		{"read outside the roots", "cat " + dir + "/outside", false},
		{"read the home directory", "ls " + os.Getenv("HOME"), false},
		{"open an application", "open -a Calculator", false},
		{"setuid bit", "touch " + ws + "/s && chmod u+s " + ws + "/s", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := runSeatbelt(context.Background(), Options{Command: tt.cmd, Dir: ws, Policy: pol, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.Sandbox != ModeSeatbelt {
				t.Errorf("sandbox %q, want %q", res.Sandbox, ModeSeatbelt)
			}
			if (res.ExitCode == 0) != tt.ok {
				t.Errorf("exit %d, want success %v\nstdout: %s\nstderr: %s", res.ExitCode, tt.ok, res.Stdout, res.Stderr)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".git", "config")); string(b) != "x\n" {
		t.Errorf("protected file changed: %q", b)
	}
}

// TestSeatbeltUnixSocket: a UNIX socket in the workspace itself cannot be connected to.
func TestSeatbeltUnixSocket(t *testing.T) {
	ws, err := os.MkdirTemp("/tmp", "mg") // short: socket paths are limited to 104 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	if ws, err = filepath.EvalSymlinks(ws); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(ws, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("connected\n"))
			c.Close()
		}
	}()
	res, err := runSeatbelt(context.Background(), Options{Command: "/usr/bin/nc -U s < /dev/null", Dir: ws,
		Policy: Policy{Write: []string{ws}, Own: []string{ws}}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stdout, "connected") {
		t.Errorf("the command connected to a UNIX socket: %+v", res)
	}
}

// TestSeatbeltGroupKilled: a background process the command leaves behind dies with it.
func TestSeatbeltGroupKilled(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res, err := runSeatbelt(context.Background(), Options{Command: "sleep 300 & echo $!", Dir: ws,
		Policy: Policy{Write: []string{ws}, Own: []string{ws}}, Timeout: 30 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if err != nil {
		t.Fatalf("no pid in %q", res.Stdout)
	}
	// The kill is sent before Run returns; the zombie is reaped by launchd, so only poll until
	// the process is gone (it no longer accepts signal 0).
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			out, _ := exec.Command("ps", "-o", "pid,stat,command", "-p", strconv.Itoa(pid)).CombinedOutput()
			t.Fatalf("background process %d outlived its command:\n%s", pid, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
