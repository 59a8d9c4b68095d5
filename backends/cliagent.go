package backends

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/tmpsweep"
)

// The coding-agent CLI backends (claude_code, codex, gemini_cli) drive a CLI as the agent's
// model, with none of the CLI's own tools:
//
//   - The only tools the CLI offers its model are massgen's, served to it by a bridge: an MCP
//     server on the loopback interface, for the duration of one CLI run, at a URL with a random
//     secret path. The bridge offers exactly the request's tools: the agent's
//     permission-checked file, command and MCP tools and, in coordination, new_answer and vote,
//     with the schemas the orchestrator gives them.
//   - A call the model makes through the bridge is returned from Generate as an ordinary tool
//     call, while the CLI waits for its answer. The orchestrator runs it through the agent's
//     Toolset, like any other backend's call, and sends the result in its next request; the
//     result goes back to the waiting CLI and the turn goes on. Every file access and command is
//     checked where every other agent's is.
//   - A reply without tool calls ends the CLI's turn; the CLI exits, and a later user message in
//     the same conversation resumes its session in a new run, from the same working directory
//     and private home (the CLIs keep their sessions per working directory).
//   - A session is checked before any tool runs: the claude CLI reports its tools when it
//     starts; codex and gemini do not, so their model requests go through a gate (cligate.go)
//     that refuses any request offering the model a tool that is not massgen's.
//   - A call the model makes to a tool that does not exist (the CLI has none of its own) is
//     answered with an error by the CLI itself; a second such call in the conversation stops
//     the agent.
//
// The CLI process lives across the Generate calls of one conversation (one coordination
// execution, or the final presentation). It is ended, with its whole process group, when the
// context of any of those calls is done, when a Generate call fails, or when a request starts a
// new conversation. Callers must therefore pass the same context (the execution's) to every
// Generate call of a conversation, as the orchestrator does.

// cliDriver is what one CLI needs of its own.
type cliDriver interface {
	// kind is the backend type; program the CLI's name on PATH.
	kind() string
	program() string
	// missing is the error for a CLI not on PATH.
	missing() error
	// command is the command line of one run: a new session, or t.session's resumed.
	command(t cliTurn) (cliCommand, error)
	// userLine is a later user message for a CLI that reads messages on stdin while it runs;
	// nil when it cannot take one (the message waits for the next run).
	userLine(text, session string) []byte
	// parse reads one line of the CLI's output into events.
	parse(line []byte, st *cliParse) ([]cliEvent, error)
	// gate is the model gate's configuration; nil when the CLI reports its tools itself.
	gate() *cliGateConfig
}

// cliTurn is what a driver needs to start a run.
type cliTurn struct {
	work   string // the CLI's working directory: private, empty, the same for the agent's run
	home   string // a private home or config folder, the same for the agent's run
	runDir string // this run's private folder (the bridge's address and secret), removed after it
	bridge string // the bridge's URL, with its secret in the path
	// bridgeTokenURL is the bridge's URL without the secret, which is then sent as the bearer
	// token bridgeToken (for CLIs that read a token from their environment).
	bridgeTokenURL, bridgeToken string
	gate                        string // the model gate's URL ("" without one)
	token                       string // what the CLI must send the gate as its key
	system                      string // the system prompt, the tool note appended
	tools                       []ToolSpec
	session                     string // the session to resume; "" for a new one
	text                        string // the user message
}

// cliCommand is how a run is started.
type cliCommand struct {
	args      []string
	env       []string // added to the CLI's base environment
	stdin     []byte   // written once started
	keepStdin bool     // stdin stays open for more user messages (claude's stream-json)
}

// cliParse is per-run state a driver keeps between lines.
type cliParse struct {
	text strings.Builder // text of the current model message (gemini streams deltas)
}

type cliEventKind int

const (
	evSession  cliEventKind = iota // the session id, and the session was checked
	evText                         // reply text
	evCall                         // the model called one of massgen's tools (id, name)
	evStray                        // the model called a tool that is not massgen's (name)
	evMsgUsage                     // usage of one model message so far (id, usage)
	evResult                       // the turn ended (text, usage, err)
)

type cliEvent struct {
	kind     cliEventKind
	session  string
	text     string
	id, name string
	usage    Usage
	err      error
}

// cliBackend is a coding-agent CLI backend.
type cliBackend struct {
	drv      cliDriver
	model    string
	env      []string // the CLI's base environment
	lookPath func(string) (string, error)
	log      *zap.Logger

	// bridgeDelay slows the bridge's first answers (tests: a slow bridge).
	bridgeDelay time.Duration

	mu      sync.Mutex
	conv    *cliConv
	private *tmpsweep.Private // the agent's folder for the run: work/ and home/
}

// cliPrefix names the private folders of the CLI backends in the temp folder.
const cliPrefix = "massgen-cli"

func newCLIBackend(drv cliDriver, model string, env []string, log *zap.Logger) *cliBackend {
	if log == nil {
		log = zap.NewNop()
	}
	return &cliBackend{drv: drv, model: model, env: env, lookPath: exec.LookPath, log: log.With(zap.String("backend", drv.kind()))}
}

func (b *cliBackend) Provider() string { return b.drv.kind() }
func (b *cliBackend) Model() string    { return b.model }

// Close ends the running CLI and removes the agent's private folder. The orchestrator calls it
// at the end of a run; a folder left by a crash is swept by the next run's first CLI agent.
func (b *cliBackend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conv != nil {
		b.conv.close()
		b.conv.waitExited(2 * cliExitGrace)
	}
	if b.private == nil {
		return nil
	}
	err := b.private.Remove()
	b.private = nil
	return err
}

// folder returns the agent's private folder, made on first use after sweeping the folders of
// massgen processes that died without removing theirs.
func (b *cliBackend) folder() (*tmpsweep.Private, error) {
	if b.private != nil {
		return b.private, nil
	}
	if _, err := tmpsweep.SweepPrivate(cliPrefix, b.log); err != nil {
		b.log.Warn("sweeping the private folders of earlier runs", zap.Error(err))
	}
	p, err := tmpsweep.NewPrivate(cliPrefix)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.drv.kind(), err)
	}
	for _, d := range []string{"work", "home", "runs"} {
		if err := os.Mkdir(filepath.Join(p.Path, d), 0o700); err != nil {
			_ = p.Remove()
			return nil, fmt.Errorf("%s: %w", b.drv.kind(), err)
		}
	}
	b.private = p
	return p, nil
}

// cliConv is one conversation with the CLI.
type cliConv struct {
	system  string
	first   Message // the conversation's first message
	seen    int     // messages of the request already handled
	tools   []ToolSpec
	session string

	mu        sync.Mutex // guards proc, last and closed against close from a context's AfterFunc
	proc      *cliProc   // the CLI running the current turn; nil between turns
	last      *cliProc   // the CLI of the previous turn, saving its session
	closed    bool
	initOK    bool // the running CLI's session was checked
	pending   map[string]*ccCall
	uses      []ccUse // announced calls not yet on the bridge
	nextID    int
	usage     cliTurnUsage
	parse     cliParse
	strays    []string        // tools not massgen's the model called in this conversation
	straySeen map[string]bool // their call ids, where known
	queued    []string        // user messages for the next run (a CLI that takes none while it runs)
}

// continues reports whether req carries on c: same system prompt and first message, and new
// messages (the orchestrator's answers to the last reply).
func (c *cliConv) continues(req Request) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.seen == 0 || len(req.Messages) <= c.seen || req.System != c.system {
		return false
	}
	f := req.Messages[0]
	return f.Role == c.first.Role && f.Content == c.first.Content
}

// close ends the conversation: the running CLI (and its process group) is killed and calls
// waiting on the bridge fail.
func (c *cliConv) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, p := range []*cliProc{c.proc, c.last} {
		if p != nil {
			p.kill()
		}
	}
}

// waitExited waits up to d for the conversation's processes to be gone.
func (c *cliConv) waitExited(d time.Duration) {
	c.mu.Lock()
	procs := []*cliProc{c.proc, c.last}
	c.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	for _, p := range procs {
		if p == nil {
			continue
		}
		select {
		case <-p.exited:
		case <-t.C:
			return
		}
	}
}

func (b *cliBackend) Generate(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	program, err := b.lookPath(b.drv.program())
	if err != nil {
		return nil, b.drv.missing()
	}
	c := b.conv
	if c == nil || !c.continues(req) {
		if c != nil {
			c.close()
		}
		if len(req.Messages) == 0 {
			return nil, fmt.Errorf("%s: no messages", b.drv.kind())
		}
		c = &cliConv{system: req.System, first: req.Messages[0], tools: req.Tools, pending: map[string]*ccCall{}}
		b.conv = c
		err = b.start(ctx, c, program, cliPrompt(req.Messages), false)
	} else {
		err = b.carryOn(ctx, c, program, req.Messages[c.seen:])
	}
	if err == nil {
		c.seen = len(req.Messages)
		// The CLI waits for the orchestrator between calls; it must not outlive the context.
		context.AfterFunc(ctx, c.close)
		var resp *Response
		if resp, err = b.next(ctx, c, onEvent); err == nil {
			return resp, nil
		}
	}
	c.close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, err
}

// carryOn hands the orchestrator's new messages to the CLI: tool results answer the calls
// waiting on the bridge, user messages start a new turn (resuming the session when the CLI of
// the previous turn has exited).
func (b *cliBackend) carryOn(ctx context.Context, c *cliConv, program string, msgs []Message) error {
	var user []string
	for _, m := range msgs {
		switch m.Role {
		case "tool":
			if call := c.pending[m.ToolCallID]; call != nil {
				call.reply <- ccResult{text: m.Content, isError: m.IsError}
				delete(c.pending, m.ToolCallID)
			}
		case "user":
			if s := strings.TrimSpace(m.Content); s != "" {
				user = append(user, s)
			}
		}
	}
	for id, call := range c.pending {
		call.reply <- ccResult{text: `{"error":"massgen returned no result for this call"}`, isError: true}
		delete(c.pending, id)
	}
	if len(user) == 0 {
		return nil
	}
	text := strings.Join(user, "\n\n")
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	if p != nil {
		if line := b.drv.userLine(text, c.session); line != nil {
			return p.write(line)
		}
		// This CLI takes no message while its turn runs: it is told at its next run.
		c.queued = append(c.queued, text)
		return nil
	}
	if len(c.queued) > 0 {
		text = strings.Join(append(c.queued, text), "\n\n")
		c.queued = nil
	}
	return b.start(ctx, c, program, text, true)
}

// start runs the CLI for a new turn: a new session, or the conversation's resumed.
func (b *cliBackend) start(ctx context.Context, c *cliConv, program, text string, resume bool) error {
	kind := b.drv.kind()
	c.mu.Lock()
	last := c.last
	c.mu.Unlock()
	if last != nil {
		// The previous CLI saves the session on its way out; resuming needs it saved.
		select {
		case <-last.exited:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * cliExitGrace):
		}
	}
	if resume && c.session == "" {
		return fmt.Errorf("%s: cannot continue: the %s CLI reported no session id", kind, b.drv.program())
	}
	priv, err := b.folder()
	if err != nil {
		return err
	}
	runDir, err := os.MkdirTemp(filepath.Join(priv.Path, "runs"), "run-")
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	bridge, err := newCCBridge(c.tools, b.bridgeDelay, b.log)
	if err != nil {
		_ = os.RemoveAll(runDir)
		return fmt.Errorf("%s: %w", kind, err)
	}
	t := cliTurn{
		work: filepath.Join(priv.Path, "work"), home: filepath.Join(priv.Path, "home"), runDir: runDir,
		bridge: bridge.url, bridgeTokenURL: bridge.tokenURL, bridgeToken: bridge.token, system: strings.TrimSpace(c.system + "\n\n" + cliToolNote(kind)), tools: c.tools, text: text,
	}
	if resume {
		t.session = c.session
	}
	var gate *cliGate
	if gc := b.drv.gate(); gc != nil {
		if gate, err = newCLIGate(*gc, c.tools, b.log); err != nil {
			bridge.Close()
			_ = os.RemoveAll(runDir)
			return fmt.Errorf("%s: %w", kind, err)
		}
		t.gate, t.token = gate.url, gate.token
	}
	cleanup := func() {
		bridge.Close()
		if gate != nil {
			gate.Close()
		}
		_ = os.RemoveAll(runDir)
	}
	cmd, err := b.drv.command(t)
	if err != nil {
		cleanup()
		return err
	}
	p, err := cliStart(b.drv.program(), program, t.work, cmd, append(slices.Clone(b.env), cmd.env...), bridge, gate, runDir, b.log)
	if err != nil {
		cleanup()
		return err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		p.kill()
		return fmt.Errorf("%s: the conversation was ended", kind)
	}
	c.proc, c.initOK = p, false
	c.parse = cliParse{}
	c.mu.Unlock()
	b.log.Debug("CLI started", zap.Int("pid", p.cmd.Process.Pid), zap.Bool("resume", resume), zap.Int("tools", len(c.tools)))
	return nil
}

// cliToolNote ends the system prompt: the instructions name the tools as the orchestrator
// offers them, each CLI shows them under its server's prefix.
func cliToolNote(kind string) string {
	switch kind {
	case "codex":
		return "Your tools are massgen's: the tools these instructions name are yours in the namespace mcp__" + ccServerName + " (for example mcp__" + ccServerName + "__write_file). Codex's own tools (shell, apply_patch, ...) are not available."
	case "gemini_cli":
		return "Your tools are massgen's: the tools these instructions name are yours as mcp_" + ccServerName + "_<name> (for example mcp_" + ccServerName + "_write_file). Gemini CLI's own tools are not available."
	}
	return ccToolNote
}

// ccToolNote ends claude's system prompt.
const ccToolNote = "Your tools are massgen's: the tools these instructions name are yours as mcp__" + ccServerName + "__<name> (for example mcp__" + ccServerName + "__write_file). Claude Code's own tools are not available."

// ccUseWait bounds how long a call that came through the bridge waits for the CLI's message
// announcing it (its tool_use block), which carries the call's id and the text before it.
const ccUseWait = 2 * time.Second

// next reads the CLI until the model calls tools (returned as tool calls) or the turn ends
// (the reply's text).
func (b *cliBackend) next(ctx context.Context, c *cliConv, onEvent func(Event)) (*Response, error) {
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	if p == nil {
		return nil, fmt.Errorf("%s: no turn in progress", b.drv.kind())
	}
	var refused <-chan error
	var strays <-chan ccUse
	if p.gate != nil {
		refused, strays = p.gate.refused, p.gate.strays
	}
	var text strings.Builder
	var held []*ccCall
	var wait <-chan time.Time
	for {
		if len(held) > 0 && c.announced(held) {
			return c.reply(held, text.String(), onEvent), nil
		}
		var calls chan *ccCall
		var strayCh <-chan ccUse
		if c.initOK { // no tool runs before the session was checked
			calls, strayCh = p.bridge.calls, strays
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case err := <-refused:
			return nil, err
		case s := <-strayCh:
			if resp, err := b.handle(c, p, cliEvent{kind: evStray, id: s.id, name: s.name}, &text, onEvent); err != nil || resp != nil {
				return resp, err
			}
		case call := <-calls:
			if len(held) == 0 {
				wait = time.After(ccUseWait)
			}
			held = append(held, call)
		case <-wait:
			return c.reply(held, text.String(), onEvent), nil
		case line, ok := <-p.lines:
			if !ok {
				select { // a refused request often ends the CLI: say why
				case err := <-refused:
					return nil, err
				default:
				}
				return nil, p.exitError()
			}
			evs, err := b.drv.parse(line, &c.parse)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", b.drv.kind(), err)
			}
			for _, ev := range evs {
				resp, err := b.handle(c, p, ev, &text, onEvent)
				if err != nil || resp != nil {
					return resp, err
				}
			}
		}
	}
}

// ccUse is a call announced in the CLI's output not yet matched to a call on the bridge.
type ccUse struct{ id, name string }

// announced reports whether every held call has its announcement.
func (c *cliConv) announced(held []*ccCall) bool {
	want := map[string]int{}
	for _, call := range held {
		want[call.name]++
	}
	for _, u := range c.uses {
		want[u.name]--
	}
	for _, n := range want {
		if n > 0 {
			return false
		}
	}
	return true
}

// reply returns held calls as the reply's tool calls, under the ids the CLI announced them
// with.
func (c *cliConv) reply(held []*ccCall, text string, onEvent func(Event)) *Response {
	resp := &Response{Text: text}
	for _, call := range held {
		c.nextID++
		id := "cli_" + strconv.Itoa(c.nextID)
		if i := slices.IndexFunc(c.uses, func(u ccUse) bool { return u.name == call.name }); i >= 0 {
			id = c.uses[i].id
			c.uses = slices.Delete(c.uses, i, i+1)
		}
		c.pending[id] = call
		tc := ToolCall{ID: id, Name: call.name, Arguments: call.args}
		resp.ToolCalls = append(resp.ToolCalls, tc)
		onEvent(Event{Kind: EventToolCall, ToolCall: &tc})
	}
	resp.Usage = c.usage.take()
	return resp
}

// ErrCLIStrayCalls is returned when the model keeps calling tools that are not massgen's.
var ErrCLIStrayCalls = errors.New("the model called a tool that does not exist twice")

// handle takes one event of the CLI. It returns the reply when the turn ended.
func (b *cliBackend) handle(c *cliConv, p *cliProc, ev cliEvent, text *strings.Builder, onEvent func(Event)) (*Response, error) {
	kind, prog := b.drv.kind(), b.drv.program()
	switch ev.kind {
	case evSession:
		if ev.session != "" {
			c.session = ev.session
		}
		if ev.err != nil {
			return nil, ev.err
		}
		c.initOK = true
	case evText, evCall, evStray, evMsgUsage:
		if !c.initOK {
			// Without the session's check its tools are unknown: fail closed.
			return nil, fmt.Errorf("%s: the %s CLI answered before reporting its session, so massgen cannot check which tools it offers", kind, prog)
		}
		switch ev.kind {
		case evText:
			text.WriteString(ev.text)
			onEvent(Event{Kind: EventTextDelta, Text: ev.text})
		case evCall:
			if ev.id != "" && !c.pendingID(ev.id) {
				c.uses = append(c.uses, ccUse{id: ev.id, name: ev.name})
			}
		case evStray:
			// The CLI has no such tool and answers the call with an error itself. A model
			// that calls one again after being told stops the agent: it is not doing the task.
			if ev.id != "" {
				if c.straySeen[ev.id] {
					return nil, nil
				}
				if c.straySeen == nil {
					c.straySeen = map[string]bool{}
				}
				c.straySeen[ev.id] = true
			}
			c.strays = append(c.strays, ev.name)
			b.log.Info("the model called a tool that is not massgen's; the CLI refused it", zap.String("tool", ev.name))
			if len(c.strays) > 1 {
				return nil, fmt.Errorf("%s: %w: it called %s after the %s CLI had refused its call to %s (the CLI has only massgen's tools); massgen stopped the agent",
					kind, ErrCLIStrayCalls, ev.name, prog, c.strays[0])
			}
		case evMsgUsage:
			c.usage.add(ev.id, ev.usage)
		}
	case evResult:
		if ev.session != "" {
			c.session = ev.session
		}
		c.usage.end(ev.usage)
		c.uses = nil
		c.mu.Lock()
		c.proc, c.last = nil, p
		c.mu.Unlock()
		p.finish()
		if ev.err != nil {
			return nil, ev.err
		}
		final := ev.text
		if strings.TrimSpace(final) == "" {
			final = text.String()
		}
		return &Response{Text: final, Usage: c.usage.take()}, nil
	}
	return nil, nil
}

// pendingID reports whether a call with this id was already returned (an id must never be
// reused).
func (c *cliConv) pendingID(id string) bool {
	_, ok := c.pending[id]
	return ok
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// cliPrompt is the first user message of a conversation: the last message, after the earlier
// turns of a multi-turn session written out.
func cliPrompt(msgs []Message) string {
	last := msgs[len(msgs)-1].Content
	if len(msgs) == 1 {
		return last
	}
	var b strings.Builder
	b.WriteString("Earlier in this conversation:\n\n")
	for _, m := range msgs[:len(msgs)-1] {
		who := "User"
		if m.Role == "assistant" {
			who = "Assistant"
		}
		fmt.Fprintf(&b, "%s: %s\n\n", who, m.Content)
	}
	b.WriteString("Now:\n\n")
	b.WriteString(last)
	return b.String()
}

// cliTurnUsage counts a turn's tokens: from each model message as it arrives (a CLI may repeat
// a message's usage on each of its content blocks, so per message id the largest counts), then
// from the turn's end, whose totals are exact. A turn that never reaches its end (the
// execution ended at an accepted workflow call) is counted from its messages.
type cliTurnUsage struct {
	byMsg    map[string]Usage
	total    Usage // of this turn so far
	reported Usage // of this turn, already returned
	ended    bool  // the turn ended: the next take starts a new turn
}

func (u *cliTurnUsage) add(id string, n Usage) {
	if u.byMsg == nil {
		u.byMsg = map[string]Usage{}
	}
	old := u.byMsg[id]
	n = maxUsage(n, old)
	u.byMsg[id] = n
	u.total.Add(subUsage(n, old))
}

// end takes the turn's totals (when larger) and starts a new turn once they are taken.
func (u *cliTurnUsage) end(r Usage) {
	u.total = maxUsage(u.total, r)
	u.ended = true
}

// take returns what was counted since the last take.
func (u *cliTurnUsage) take() Usage {
	d := subUsage(u.total, u.reported)
	u.reported = u.total
	if u.ended {
		*u = cliTurnUsage{}
	}
	return d
}

// cliEnv is a CLI's environment: of massgen's, only what a program needs to run on this
// machine (PATH, HOME, the locale, the temp folder, proxy and certificate settings) and the
// variables the CLI's own login or key is read from (keep), never the rest (other providers'
// keys, massgen's own settings).
func cliEnv(base []string, keep func(name string) bool) []string {
	var env []string
	for _, kv := range base {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if cliBaseVar(name) || (keep != nil && keep(name)) {
			env = append(env, kv)
		}
	}
	return env
}

// cliBaseVar reports whether every CLI gets the variable.
func cliBaseVar(name string) bool {
	n := name
	if runtime.GOOS == "windows" {
		n = strings.ToUpper(name)
	}
	switch n {
	case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "LANG", "TERM",
		"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
		// Windows: what a program needs to start and find its profile.
		"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE",
		"APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "HOMEDRIVE", "HOMEPATH", "USERNAME":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}
