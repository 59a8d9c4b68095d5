package logscmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/logging"
)

func TestFormat(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"level":"info","ts":"2025-09-28T14:30:22.000Z","msg":"run start","config":"/p/c.yaml","agents":2,"context_paths":null,"interactive":false}`,
			`2025-09-28T14:30:22.000Z INFO  run start config=/p/c.yaml agents=2 context_paths=null interactive=false`},
		{`{"level":"error","ts":"t","msg":"turn failed","error":"agent \"a\": boom","paths":[{"path":"/x","permission":"write"}]}`,
			`t ERROR turn failed error="agent \"a\": boom" paths=[{"path":"/x","permission":"write"}]`},
		{`{"level":"info","ts":"t","msg":"m","empty":"","n":1.5}`, `t INFO  m empty="" n=1.5`},
		{`not json at all`, `not json at all`},
		{`{"level":"info","msg":`, `{"level":"info","msg":`},
	}
	for _, tt := range tests {
		if got := string(Format([]byte(tt.in + "\n"))); got != tt.want {
			t.Errorf("Format(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

type env struct {
	wd, log string
	out     *syncBuffer
	errOut  *bytes.Buffer
	opts    *Options
}

// syncBuffer is written by follow while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newEnv makes a directory with runs whose latest log holds lines.
func newEnv(t *testing.T, lines ...string) *env {
	t.Helper()
	e := &env{wd: t.TempDir(), out: &syncBuffer{}, errOut: &bytes.Buffer{}}
	mg := filepath.Join(e.wd, ".massgen")
	old, err := logging.NewRunDir(mg, time.Date(2025, 1, 1, 0, 0, 0, 0, time.Local))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, logging.FileName), []byte(`{"msg":"an older run"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := logging.NewRunDir(mg, time.Date(2025, 9, 28, 14, 30, 22, 0, time.Local))
	if err != nil {
		t.Fatal(err)
	}
	e.log = filepath.Join(dir, logging.FileName)
	if err := os.WriteFile(e.log, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	e.opts = &Options{IO: &cmdutil.IOStreams{Out: e.out, ErrOut: e.errOut}, Getwd: func() (string, error) { return e.wd, nil },
		Poll: time.Millisecond}
	return e
}

func (e *env) appendLog(t *testing.T, s string) {
	f, err := os.OpenFile(e.log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Error(err)
	}
}

const (
	line1   = `{"level":"info","ts":"t1","msg":"run start"}` + "\n"
	line2   = `{"level":"info","ts":"t2","msg":"turn done","turn":1}` + "\n"
	runDone = `{"level":"info","ts":"t3","msg":"run end","exit_code":0}` + "\n"
)

func TestLogsPrintsLatest(t *testing.T) {
	e := newEnv(t, line1, line2)
	if err := Run(context.Background(), e.opts); err != nil {
		t.Fatal(err)
	}
	if want := "t1 INFO  run start\nt2 INFO  turn done turn=1\n"; e.out.String() != want {
		t.Errorf("stdout %q, want %q", e.out, want)
	}
	if !strings.Contains(e.errOut.String(), "Log: "+e.log) {
		t.Errorf("stderr %q", e.errOut)
	}
	e2 := newEnv(t, line1, line2)
	e2.opts.Raw = true
	if err := Run(context.Background(), e2.opts); err != nil || e2.out.String() != line1+line2 {
		t.Errorf("--raw: %v, %q", err, e2.out)
	}
}

func TestLogsWithoutLog(t *testing.T) {
	wd := t.TempDir()
	ios, out, _ := cmdutil.TestStreams("")
	err := Run(context.Background(), &Options{IO: ios, Getwd: func() (string, error) { return wd, nil }, Follow: true})
	if cmdutil.CodeOf(err) != cmdutil.ExitFailure || !strings.Contains(err.Error(), "no run log in "+filepath.Join(wd, ".massgen", "logs")) || out.Len() != 0 {
		t.Errorf("err = %v, stdout %q", err, out)
	}
}

// --follow prints lines as they are appended (a line written in two parts comes out whole) and
// returns when the run writes its last line.
func TestLogsFollowUntilRunEnd(t *testing.T) {
	e := newEnv(t, line1)
	e.opts.Follow, e.opts.Raw = true, true
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), e.opts) }()
	half := len(line2) / 2
	e.appendLog(t, line2[:half])
	e.appendLog(t, line2[half:])
	e.appendLog(t, runDone)
	e.appendLog(t, `{"msg":"after the end"}`+"\n") // may or may not be there when follow stops: never printed
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := e.out.String(), line1+line2+runDone; got != want {
		t.Errorf("stdout\n%s\nwant\n%s", got, want)
	}
}

// Ctrl-C (the context) stops --follow with exit 130.
func TestLogsFollowCancelled(t *testing.T) {
	e := newEnv(t, line1)
	e.opts.Follow = true
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, e.opts); cmdutil.CodeOf(err) != cmdutil.ExitCanceled {
		t.Errorf("err = %v", err)
	}
	if e.out.String() != "t1 INFO  run start\n" {
		t.Errorf("stdout %q", e.out)
	}
}
