package tmpsweep

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const helperEnv = "MASSGEN_TMPSWEEP_PRIVATE_HELPER"

// TestPrivateHelper is not a test: run by TestSweepPrivate as a process that makes a private
// folder and then waits to be killed.
func TestPrivateHelper(t *testing.T) {
	prefix := os.Getenv(helperEnv)
	if prefix == "" {
		t.Skip("helper process only")
	}
	p, err := NewPrivate(prefix)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(p.Path)
	select {}
}

// A folder whose owner was killed is swept at the next start; folders of live owners (another
// process, or this one) stay; Remove removes one.
func TestSweepPrivate(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		t.Skip("no file locks here")
	}
	t.Setenv("TMPDIR", t.TempDir())
	prefix := "massgen-sweeptest"
	start := func() (*exec.Cmd, string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPrivateHelper$")
		cmd.Env = append(os.Environ(), helperEnv+"="+prefix)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || !strings.HasPrefix(strings.TrimSpace(line), os.TempDir()) {
			t.Fatalf("helper said %q (%v)", line, err)
		}
		return cmd, strings.TrimSpace(line)
	}
	killed, killedDir := start()
	alive, aliveDir := start()
	t.Cleanup(func() { _ = alive.Process.Kill(); _ = alive.Wait() })
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = killed.Wait()
	mine, err := NewPrivate(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine.Path, "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(os.TempDir(), "massgen-other-1")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}

	removed, err := SweepPrivate(prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{killedDir}) {
		t.Fatalf("removed %v, want only the killed owner's %s", removed, killedDir)
	}
	for _, d := range []string{aliveDir, mine.Path, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if _, err := os.Stat(killedDir); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", killedDir, err)
	}
	if err := mine.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mine.Path); !os.IsNotExist(err) {
		t.Errorf("Remove left %s (%v)", mine.Path, err)
	}
	if _, err := NewPrivate("claude"); err == nil {
		t.Error("a prefix not starting with massgen- was accepted")
	}
}

// A sweep racing the creation of private folders never removes a live one.
func TestSweepPrivateRacesCreation(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		t.Skip("no file locks here")
	}
	t.Setenv("TMPDIR", t.TempDir())
	const prefix = "massgen-racetest"
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				done <- n
				return
			default:
			}
			removed, _ := SweepPrivate(prefix, nil)
			n += len(removed)
		}
	}()
	var made []*Private
	for i := 0; i < 500; i++ {
		p, err := NewPrivate(prefix)
		if err != nil {
			close(stop)
			<-done
			t.Fatalf("creation %d: %v", i, err)
		}
		made = append(made, p)
	}
	close(stop)
	if n := <-done; n != 0 {
		t.Errorf("the sweep removed %d live folders", n)
	}
	for _, p := range made {
		if _, err := os.Stat(filepath.Join(p.Path, lockName)); err != nil {
			t.Fatalf("%s: %v", p.Path, err)
		}
		_ = p.Remove()
	}
}
