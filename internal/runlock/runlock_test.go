package runlock

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const holdEnv = "RUNLOCK_TEST_HOLD"

// TestMain lets the test binary act as another run holding the lock (see holdInChild).
func TestMain(m *testing.M) {
	if dir := os.Getenv(holdEnv); dir != "" {
		if _, err := Acquire(context.Background(), dir, Holder{PID: os.Getpid(), Command: "child"}, false, nil); err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("locked\n")
		select {} // hold until killed
	}
	os.Exit(m.Run())
}

// holdInChild starts a process that takes the lock of dir and holds it until killed.
func holdInChild(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("child: %q %v", line, err)
	}
	return cmd
}

func TestBusyNamesTheHolder(t *testing.T) {
	dir := t.TempDir()
	child := holdInChild(t, dir)
	started := time.Now()
	_, err := Acquire(context.Background(), dir, Holder{PID: os.Getpid()}, false, nil)
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("Acquire while held = %v, want a BusyError", err)
	}
	if busy.Holder.PID != child.Process.Pid || busy.Holder.Command != "child" {
		t.Errorf("holder = %+v, want pid %d", busy.Holder, child.Process.Pid)
	}
	if time.Since(started) > 5*time.Second {
		t.Error("Acquire did not refuse at once")
	}
	for _, want := range []string{"pid", "started", "--wait", "run.lock"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %s", want, err)
		}
	}
}

// A run killed with SIGKILL leaves its lock file behind; the next run takes it over.
func TestLockOfAKilledRunIsTakenOver(t *testing.T) {
	dir := t.TempDir()
	child := holdInChild(t, dir)
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	l, err := Acquire(context.Background(), dir, Holder{PID: os.Getpid(), Command: "me"}, false, nil)
	if err != nil {
		t.Fatalf("Acquire after the holder died: %v", err)
	}
	defer l.Release()
	if h := readHolder(l.Path()); h.PID != os.Getpid() || h.Command != "me" {
		t.Errorf("record = %+v, want this process", h)
	}
}

func TestWaitUntilReleased(t *testing.T) {
	dir := t.TempDir()
	first, err := Acquire(context.Background(), dir, Holder{PID: 1}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan Holder, 1)
	got := make(chan error, 1)
	go func() {
		l, err := Acquire(context.Background(), dir, Holder{PID: 2}, true, func(h Holder) { waiting <- h })
		if err == nil {
			err = l.Release()
		}
		got <- err
	}()
	if h := <-waiting; h.PID != 1 {
		t.Errorf("onWait heard %+v, want pid 1", h)
	}
	select {
	case err := <-got:
		t.Fatalf("the second run got the lock while the first held it: %v", err)
	default:
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiting Acquire: %v", err)
	}
}

func TestWaitCancelled(t *testing.T) {
	dir := t.TempDir()
	first, err := Acquire(context.Background(), dir, Holder{PID: 1}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Acquire(ctx, dir, Holder{PID: 2}, true, func(Holder) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire after cancel = %v, want context.Canceled", err)
	}
}

func TestReleaseThenAcquire(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 {
		l, err := Acquire(context.Background(), dir, Holder{PID: i + 1}, false, nil)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
		if h := readHolder(l.Path()); h.PID != 0 {
			t.Errorf("a released lock still names pid %d", h.PID)
		}
	}
}

// TestExclusiveLosesNoUpdate: holders in this process (each its own open file, as processes
// have) doing read-increment-write of a counter under Exclusive lose no update; a waiter gives
// up when its context ends.
func TestExclusiveLosesNoUpdate(t *testing.T) {
	dir := t.TempDir()
	lockPath, counter := dir+"/state.lock", dir+"/counter"
	if err := os.WriteFile(counter, []byte("0"), 0o600); err != nil {
		t.Fatal(err)
	}
	const holders, each = 8, 50
	errs := make(chan error, holders)
	for range holders {
		go func() {
			for range each {
				l, err := Exclusive(context.Background(), lockPath)
				if err != nil {
					errs <- err
					return
				}
				b, _ := os.ReadFile(counter)
				n, _ := strconv.Atoi(string(b))
				if err := os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o600); err != nil {
					errs <- err
					return
				}
				if err := l.Unlock(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range holders {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(counter); string(b) != strconv.Itoa(holders*each) {
		t.Errorf("counter = %s, want %d", b, holders*each)
	}

	held, err := Exclusive(context.Background(), lockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Exclusive(ctx, lockPath); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a waiter on a held lock: %v", err)
	}
}
