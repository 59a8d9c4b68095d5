package backends

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// cliMaxLine bounds one line of a CLI's output (a message carrying a large file written
// through a tool): a longer line ends the session instead of growing memory.
const cliMaxLine = 64 << 20

// cliStderrTail is how much of a CLI's stderr is kept for error messages.
const cliStderrTail = 4 << 10

// cliExitGrace is how long a CLI whose input ended may take to save its session and exit.
const cliExitGrace = 5 * time.Second

// cliProc is one run of a coding-agent CLI: a process in its own process group, the bridge
// serving it massgen's tools, the model gate it reaches its model through (when its driver
// uses one), and the private folder of the run (the bridge's address and secret), removed once
// the process is gone.
type cliProc struct {
	name    string // the program, for messages
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan []byte   // JSON lines of stdout; closed at its end
	readErr error         // why stdout ended early (set before lines is closed)
	exited  chan struct{} // closed when the process has been waited for
	waitErr error         // set before exited is closed
	quit    chan struct{} // closed by kill: the reader stops delivering
	stderr  *tailBuffer
	bridge  *ccBridge
	gate    *cliGate // nil without one
	runDir  string
	log     *zap.Logger

	writeMu   sync.Mutex
	closeOnce sync.Once
}

// cliStart starts program in dir with args and env, writes stdin, and closes it unless keep.
func cliStart(name, program, dir string, c cliCommand, env []string, bridge *ccBridge, gate *cliGate, runDir string, log *zap.Logger) (*cliProc, error) {
	cmd := exec.Command(program, c.args...)
	cmd.Dir, cmd.Env = dir, env
	cliSetProcessGroup(cmd)
	p := &cliProc{
		name: name, cmd: cmd, lines: make(chan []byte, 16), exited: make(chan struct{}), quit: make(chan struct{}),
		stderr: &tailBuffer{max: cliStderrTail}, bridge: bridge, gate: gate, runDir: runDir, log: log,
	}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = cliExitGrace
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// stdout is a pipe of our own, not cmd.StdoutPipe: Wait would close that one as soon as
	// the process exits, possibly before its last line (the result) was read.
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	_ = w.Close()
	if err != nil {
		_ = stdout.Close()
		return nil, fmt.Errorf("%s: starting %s: %w", name, program, err)
	}
	go p.read(stdout)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if len(c.stdin) > 0 {
		if err := p.write(c.stdin); err != nil {
			p.kill()
			return nil, err
		}
	}
	if !c.keepStdin {
		p.closeInput()
	}
	return p, nil
}

// read splits stdout into JSON lines until it ends.
func (p *cliProc) read(stdout io.ReadCloser) {
	defer close(p.lines)
	defer stdout.Close()
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := readLine(r, cliMaxLine)
		if line = bytes.TrimSpace(line); len(line) > 0 {
			// Lines that are not JSON (a CLI build's debug output) are skipped, as the SDKs do.
			if line[0] == '{' {
				select {
				case p.lines <- line:
				case <-p.quit:
					return
				}
			} else {
				p.log.Debug("non-JSON output", zap.String("cli", p.name), zap.ByteString("line", line))
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.readErr = err
				p.kill()
			}
			return
		}
	}
}

// readLine reads one line of at most max bytes.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return nil, fmt.Errorf("an output line is longer than %d bytes", max)
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// write writes data to the CLI's input.
func (p *cliProc) write(data []byte) error {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	if _, err := p.stdin.Write(data); err != nil {
		return fmt.Errorf("%s: writing to the %s CLI: %w", p.name, p.name, err)
	}
	return nil
}

func (p *cliProc) closeInput() {
	p.writeMu.Lock()
	_ = p.stdin.Close()
	p.writeMu.Unlock()
}

// finish ends input so the CLI saves its session and exits; it is killed if it does not.
func (p *cliProc) finish() {
	p.closeInput()
	go func() {
		t := time.NewTimer(cliExitGrace)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
		}
		p.kill()
	}()
}

// kill ends the process group at once (the CLI and anything it started), stops the bridge and
// the gate, and removes the run's private folder once the process is gone. It may be called
// more than once.
func (p *cliProc) kill() {
	p.closeOnce.Do(func() {
		close(p.quit)
		cliKillProcessGroup(p.cmd)
		p.bridge.Close()
		if p.gate != nil {
			p.gate.Close()
		}
		go func() {
			<-p.exited
			if p.runDir != "" {
				_ = os.RemoveAll(p.runDir)
			}
		}()
	})
}

// exitError describes how the process ended, with the end of its stderr.
func (p *cliProc) exitError() error {
	msg := "the " + p.name + " CLI ended without a result"
	if p.readErr != nil {
		msg += " (" + p.readErr.Error() + ")"
	}
	select {
	case <-p.exited:
		if p.waitErr != nil {
			msg += ": " + p.waitErr.Error()
		}
	case <-time.After(time.Second):
	}
	if tail := strings.TrimSpace(p.stderr.String()); tail != "" {
		msg += "; stderr: " + tail
	}
	return errors.New(msg)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
