package backends

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// ccMessage is one line of the claude CLI's stream-json output (the fields massgen reads).
type ccMessage struct {
	Type      string `json:"type"` // system, assistant, user, result, stream_event, ...
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// system/init: what the session offers the model.
	Tools      []string `json:"tools"`
	MCPServers []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers"`
	// assistant and user messages.
	Message *struct {
		ID      string    `json:"id"`
		Content []ccBlock `json:"content"`
		Usage   *ccUsage  `json:"usage"`
	} `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	// result.
	Result  string   `json:"result"`
	IsError bool     `json:"is_error"`
	Usage   *ccUsage `json:"usage"`
	Errors  []string `json:"errors"`
	// TotalCostUSD is what the CLI says the turn cost (its own price list).
	TotalCostUSD float64 `json:"total_cost_usd"`
}

// ccBlock is a content block of an assistant message.
type ccBlock struct {
	Type string `json:"type"` // text, tool_use, thinking, ...
	Text string `json:"text"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ccUsage is the Messages API usage the CLI reports; cached input counts as input.
type ccUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

func (u *ccUsage) usage() Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, OutputTokens: u.OutputTokens,
		CachedInputTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
}

// ccMaxLine bounds one line of the CLI's output (an assistant message carrying a large file
// written through a tool): a longer line ends the session instead of growing memory.
const ccMaxLine = 64 << 20

// ccStderrTail is how much of the CLI's stderr is kept for error messages.
const ccStderrTail = 4 << 10

// ccProc is one run of the claude CLI: a process in its own process group, its tool bridge,
// and the private directory holding its working directory and MCP config.
type ccProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	events  chan ccMessage // closed at the end of stdout
	readErr error          // why stdout ended early (set before events is closed)
	exited  chan struct{}  // closed when the process has been waited for
	waitErr error          // set before exited is closed
	quit    chan struct{}  // closed by kill: the reader stops delivering
	stderr  *tailBuffer
	bridge  *ccBridge
	dir     string
	log     *zap.Logger

	writeMu   sync.Mutex
	closeOnce sync.Once
}

// ccStart starts the CLI with args in a fresh private directory, serving the bridge's tools.
func ccStart(program string, args, env []string, bridge *ccBridge, log *zap.Logger) (*ccProc, error) {
	dir, err := os.MkdirTemp("", "massgen-claude-")
	if err != nil {
		return nil, fmt.Errorf("claude_code: %w", err)
	}
	cfgPath := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfgPath, bridge.config(), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("claude_code: %w", err)
	}
	// The process runs in the private directory: the CLI reads project settings, CLAUDE.md and
	// .mcp.json from its working directory, and an agent can write its own workspace.
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("claude_code: %w", err)
	}
	cmd := exec.Command(program, append(args, "--mcp-config="+cfgPath)...)
	cmd.Dir, cmd.Env = work, env
	ccSetProcessGroup(cmd)
	p := &ccProc{
		cmd: cmd, events: make(chan ccMessage, 16), exited: make(chan struct{}), quit: make(chan struct{}),
		stderr: &tailBuffer{max: ccStderrTail}, bridge: bridge, dir: dir, log: log,
	}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = ccExitGrace
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("claude_code: %w", err)
	}
	// stdout is a pipe of our own, not cmd.StdoutPipe: Wait would close that one as soon as
	// the process exits, possibly before its last line (the result) was read.
	stdout, w, err := os.Pipe()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("claude_code: %w", err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	_ = w.Close()
	if err != nil {
		_ = stdout.Close()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("claude_code: starting %s: %w", program, err)
	}
	go p.read(stdout)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// read parses stdout into events until it ends.
func (p *ccProc) read(stdout io.ReadCloser) {
	defer close(p.events)
	defer stdout.Close()
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := readLine(r, ccMaxLine)
		if len(bytes.TrimSpace(line)) > 0 {
			var m ccMessage
			// Lines that are not JSON (a CLI build's debug output) are skipped, as the SDKs do.
			if line = bytes.TrimSpace(line); line[0] == '{' {
				if jerr := json.Unmarshal(line, &m); jerr != nil {
					p.readErr = fmt.Errorf("unreadable output line: %w", jerr)
					p.kill()
					return
				}
				select {
				case p.events <- m:
				case <-p.quit:
					return
				}
			} else {
				p.log.Debug("claude_code: non-JSON output", zap.ByteString("line", line))
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

// send writes one user message in stream-json.
func (p *ccProc) send(session, text string) error {
	if session == "" {
		session = "default"
	}
	data, err := json.Marshal(map[string]any{
		"type":               "user",
		"message":            map[string]any{"role": "user", "content": text},
		"parent_tool_use_id": nil,
		"session_id":         session,
	})
	if err != nil {
		return err
	}
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	if _, err := p.stdin.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("claude_code: writing to the claude CLI: %w", err)
	}
	return nil
}

// ccExitGrace is how long a CLI whose input ended may take to save its session and exit.
const ccExitGrace = 5 * time.Second

// finish ends input so the CLI saves its session and exits; it is killed if it does not.
func (p *ccProc) finish() {
	p.writeMu.Lock()
	_ = p.stdin.Close()
	p.writeMu.Unlock()
	go func() {
		t := time.NewTimer(ccExitGrace)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
		}
		p.kill()
	}()
}

// kill ends the process group at once (the CLI and anything it started), stops the bridge and
// removes the private directory once the process is gone. It may be called more than once.
func (p *ccProc) kill() {
	p.closeOnce.Do(func() {
		close(p.quit)
		ccKillProcessGroup(p.cmd)
		p.bridge.Close()
		go func() {
			<-p.exited
			_ = os.RemoveAll(p.dir)
		}()
	})
}

// exitError describes how the process ended, with the end of its stderr.
func (p *ccProc) exitError() error {
	msg := "the claude CLI ended without a result"
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
