package backends

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
)

// ErrClaudeCodeMissing is returned by a claude_code backend when the `claude` CLI is not on PATH.
var ErrClaudeCodeMissing = errors.New("backend claude_code needs the `claude` CLI (Claude Code) on PATH; install it (npm install -g @anthropic-ai/claude-code) or use type: claude")

// ErrClaudeCodeOwnTools is returned when the claude CLI offers the model tools of its own (Bash,
// Write, ...): those would bypass massgen's permission checks, so the session is ended.
var ErrClaudeCodeOwnTools = errors.New("the claude CLI offered its own tools, which would bypass massgen's permission checks; massgen ended the session (this CLI version may not honour --tools \"\")")

// The claude_code backend drives the `claude` CLI (Claude Code) in stream-json mode:
//
//   - Claude Code's own tools are off (--tools ""), and the only MCP server it may use
//     (--strict-mcp-config) is a bridge this backend serves on the loopback interface for the
//     duration of one CLI run. The bridge offers exactly the request's tools: the agent's
//     permission-checked file, command and MCP tools and, in coordination, new_answer and vote,
//     with the schemas the orchestrator gives them.
//   - A call the model makes through the bridge is returned from Generate as an ordinary tool
//     call, while the CLI waits for its answer. The orchestrator runs it through the agent's
//     Toolset, like any other backend's call, and sends the result in its next request; the
//     result goes back to the waiting CLI and the turn goes on. The orchestrator's protocol is
//     unchanged, and every file access and command is checked where every other agent's is.
//   - A reply without tool calls is the CLI's result message, which ends its turn; the CLI then
//     exits, and a later user message in the same conversation resumes its session (--resume).
//
// The CLI process lives across the Generate calls of one conversation (one coordination
// execution, or the final presentation). It is ended, with its whole process group, when the
// context of any of those calls is done, when a Generate call fails, or when a request starts a
// new conversation. Callers must therefore pass the same context (the execution's) to every
// Generate call of a conversation, as the orchestrator does.
type claudeCodeBackend struct {
	model    string
	args     []string // the config's options as CLI flags (--model=..., --max-turns=...)
	env      []string // the CLI's environment
	lookPath func(string) (string, error)
	log      *zap.Logger

	mu   sync.Mutex
	conv *ccConv
}

// newClaudeCode builds the backend. It needs no API key of its own: the CLI uses its own login,
// or ANTHROPIC_API_KEY (the config's api_key is passed as such).
func newClaudeCode(cfg configs.Backend, o Options) (Backend, error) {
	log := o.Logger
	if log == nil {
		log = zap.NewNop()
	}
	b := &claudeCodeBackend{model: cfg.Model, lookPath: exec.LookPath, log: log.With(zap.String("backend", "claude_code"))}
	if m := strings.TrimSpace(cfg.Model); m != "" {
		b.args = append(b.args, "--model="+m)
	}
	for _, k := range sortedKeys(cfg.Extra) {
		switch k {
		case "max_turns", "max_thinking_tokens":
			n, err := apiParamInt(k, cfg.Extra[k])
			if err != nil {
				return nil, fmt.Errorf("backend claude_code: %w", err)
			}
			if n <= 0 {
				return nil, fmt.Errorf("backend claude_code: %s: must be positive, got %d", k, n)
			}
			b.args = append(b.args, "--"+strings.ReplaceAll(k, "_", "-")+"="+strconv.FormatInt(n, 10))
		}
	}
	b.env = ccEnv(os.Environ(), cfg)
	return b, nil
}

// ccEnv is the CLI's environment: massgen's, without the variable that makes the CLI believe it
// runs inside another Claude Code, plus the config's key and endpoint.
func ccEnv(base []string, cfg configs.Backend) []string {
	env := slices.DeleteFunc(slices.Clone(base), func(kv string) bool { return strings.HasPrefix(kv, "CLAUDECODE=") })
	if k := strings.TrimSpace(cfg.APIKey); k != "" && !strings.Contains(k, "${") {
		env = append(env, "ANTHROPIC_API_KEY="+k)
	}
	if u := strings.TrimSpace(cfg.BaseURL); u != "" {
		env = append(env, "ANTHROPIC_BASE_URL="+u)
	}
	return env
}

func (b *claudeCodeBackend) Provider() string { return "claude_code" }
func (b *claudeCodeBackend) Model() string    { return b.model }

// ccFlags turn Claude Code into a model that can only use massgen's tools: no tools of its own,
// no MCP server but the bridge (whose tools need no prompt: massgen decides each call), no
// project or local settings (the working directory is a private empty one anyway).
var ccFlags = []string{
	"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
	"--tools", "",
	"--strict-mcp-config",
	"--allowedTools=mcp__" + ccServerName,
	"--permission-mode=default",
	"--setting-sources=user",
}

// ccToolNote ends the system prompt: the instructions name the tools as the orchestrator offers
// them, the CLI shows them under its server's prefix.
const ccToolNote = "Your tools are massgen's: the tools these instructions name are yours as mcp__" + ccServerName + "__<name> (for example mcp__" + ccServerName + "__write_file). Claude Code's own tools are not available."

// ccConv is one conversation with the CLI.
type ccConv struct {
	system  string
	first   Message // the conversation's first message
	seen    int     // messages of the request already handled
	tools   []ToolSpec
	session string

	mu      sync.Mutex // guards proc, last and closed against close from a context's AfterFunc
	proc    *ccProc    // the CLI running the current turn; nil between turns
	last    *ccProc    // the CLI of the previous turn, saving its session
	closed  bool
	initOK  bool // the running CLI's init message was checked
	pending map[string]*ccCall
	uses    []ccUse // announced calls not yet on the bridge
	nextID  int
	usage   ccTurnUsage
}

// continues reports whether req carries on c: same system prompt and first message, and new
// messages (the orchestrator's answers to the last reply).
func (c *ccConv) continues(req Request) bool {
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
func (c *ccConv) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, p := range []*ccProc{c.proc, c.last} {
		if p != nil {
			p.kill()
		}
	}
}

func (b *claudeCodeBackend) Generate(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	program, err := b.lookPath("claude")
	if err != nil {
		return nil, ErrClaudeCodeMissing
	}
	c := b.conv
	if c == nil || !c.continues(req) {
		if c != nil {
			c.close()
		}
		if len(req.Messages) == 0 {
			return nil, errors.New("claude_code: no messages")
		}
		c = &ccConv{system: req.System, first: req.Messages[0], tools: req.Tools, pending: map[string]*ccCall{}}
		b.conv = c
		err = b.start(ctx, c, program, ccPrompt(req.Messages), false)
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
func (b *claudeCodeBackend) carryOn(ctx context.Context, c *ccConv, program string, msgs []Message) error {
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
		return p.send(c.session, text)
	}
	return b.start(ctx, c, program, text, true)
}

// start runs the CLI for a new turn: a new session, or the conversation's resumed.
func (b *claudeCodeBackend) start(ctx context.Context, c *ccConv, program, text string, resume bool) error {
	c.mu.Lock()
	last := c.last
	c.mu.Unlock()
	if last != nil {
		// The previous CLI saves the session on its way out; resuming needs it saved.
		select {
		case <-last.exited:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * ccExitGrace):
		}
	}
	if resume && c.session == "" {
		return errors.New("claude_code: cannot continue: the claude CLI reported no session id")
	}
	bridge, err := newCCBridge(c.tools, b.log)
	if err != nil {
		return err
	}
	args := append(slices.Clone(ccFlags), "--append-system-prompt="+strings.TrimSpace(c.system+"\n\n"+ccToolNote))
	args = append(args, b.args...)
	if resume {
		args = append(args, "--resume="+c.session)
	}
	p, err := ccStart(program, args, b.env, bridge, b.log)
	if err != nil {
		bridge.Close()
		return err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		p.kill()
		return errors.New("claude_code: the conversation was ended")
	}
	c.proc, c.initOK = p, false
	c.mu.Unlock()
	b.log.Debug("claude_code: started", zap.Int("pid", p.cmd.Process.Pid), zap.Bool("resume", resume), zap.Int("tools", len(c.tools)))
	return p.send(c.session, text)
}

// ccUseWait bounds how long a call that came through the bridge waits for the CLI's message
// announcing it (its tool_use block), which carries the call's id and the text before it.
const ccUseWait = 2 * time.Second

// next reads the CLI until the model calls tools (returned as tool calls) or the turn ends
// (the reply's text).
func (b *claudeCodeBackend) next(ctx context.Context, c *ccConv, onEvent func(Event)) (*Response, error) {
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	if p == nil {
		return nil, errors.New("claude_code: no turn in progress")
	}
	var text strings.Builder
	var held []*ccCall
	var wait <-chan time.Time
	for {
		if len(held) > 0 && c.announced(held) {
			return c.reply(held, text.String(), onEvent), nil
		}
		var calls chan *ccCall
		if c.initOK { // no tool runs before the session was checked
			calls = p.bridge.calls
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case call := <-calls:
			if len(held) == 0 {
				wait = time.After(ccUseWait)
			}
			held = append(held, call)
		case <-wait:
			return c.reply(held, text.String(), onEvent), nil
		case m, ok := <-p.events:
			if !ok {
				return nil, p.exitError()
			}
			resp, err := b.handle(c, p, m, &text, onEvent)
			if err != nil || resp != nil {
				return resp, err
			}
		}
	}
}

// ccUse is a tool_use block of the CLI's output not yet matched to a call on the bridge.
type ccUse struct{ id, name string }

// announced reports whether every held call has its tool_use block.
func (c *ccConv) announced(held []*ccCall) bool {
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

// reply returns held calls as the reply's tool calls, under the ids of their tool_use blocks
// when the CLI announced them.
func (c *ccConv) reply(held []*ccCall, text string, onEvent func(Event)) *Response {
	resp := &Response{Text: text}
	for _, call := range held {
		c.nextID++
		id := "claude_code_" + strconv.Itoa(c.nextID)
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

// handle reads one message of the CLI. It returns the reply when the turn ended.
func (b *claudeCodeBackend) handle(c *ccConv, p *ccProc, m ccMessage, text *strings.Builder, onEvent func(Event)) (*Response, error) {
	switch m.Type {
	case "system":
		if m.Subtype != "init" {
			return nil, nil
		}
		if m.SessionID != "" {
			c.session = m.SessionID
		}
		if err := checkInit(m); err != nil {
			return nil, err
		}
		c.initOK = true
	case "assistant":
		if m.Message == nil || (m.ParentToolUseID != nil && *m.ParentToolUseID != "") {
			return nil, nil
		}
		if !c.initOK {
			// Without its init message the session's tools cannot be checked: fail closed.
			return nil, errors.New("claude_code: the claude CLI answered before reporting its session (no init message), so massgen cannot check which tools it offers")
		}
		c.usage.add(m.Message.ID, m.Message.Usage)
		for _, bl := range m.Message.Content {
			switch bl.Type {
			case "text":
				text.WriteString(bl.Text)
				onEvent(Event{Kind: EventTextDelta, Text: bl.Text})
			case "tool_use":
				if !ccOwnTool(bl.Name) {
					return nil, fmt.Errorf("%w (it called %s)", ErrClaudeCodeOwnTools, bl.Name)
				}
				if name, ok := strings.CutPrefix(bl.Name, ccToolPrefix); ok && bl.ID != "" && !c.pendingID(bl.ID) {
					c.uses = append(c.uses, ccUse{id: bl.ID, name: name})
				}
			}
		}
	case "result":
		if m.SessionID != "" {
			c.session = m.SessionID
		}
		c.usage.end(m.Usage, m.TotalCostUSD)
		c.uses = nil
		c.mu.Lock()
		c.proc, c.last = nil, p
		c.mu.Unlock()
		p.finish()
		if m.IsError || (m.Subtype != "" && m.Subtype != "success") {
			why := strings.TrimSpace(m.Result)
			if why == "" {
				why = strings.Join(m.Errors, "; ")
			}
			return nil, fmt.Errorf("claude_code: the claude CLI ended its turn with %s: %s", cmpOr(m.Subtype, "an error"), cmpOr(why, "no details"))
		}
		final := m.Result
		if strings.TrimSpace(final) == "" {
			final = text.String()
		}
		return &Response{Text: final, Usage: c.usage.take()}, nil
	}
	return nil, nil
}

// pendingID reports whether a call with this id was already returned (the CLI repeats nothing,
// but an id must never be reused).
func (c *ccConv) pendingID(id string) bool {
	_, ok := c.pending[id]
	return ok
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkInit refuses a session that offers the model anything but the bridge's tools, or that
// could not reach the bridge.
func checkInit(m ccMessage) error {
	var own []string
	for _, t := range m.Tools {
		if !ccOwnTool(t) {
			own = append(own, t)
		}
	}
	if len(own) > 0 {
		return fmt.Errorf("%w: %s", ErrClaudeCodeOwnTools, strings.Join(own, ", "))
	}
	for _, s := range m.MCPServers {
		if s.Name == ccServerName {
			if s.Status != "connected" {
				return fmt.Errorf("claude_code: the claude CLI could not connect to massgen's tool server (status %q)", s.Status)
			}
			return nil
		}
	}
	return errors.New("claude_code: the claude CLI did not load massgen's tool server")
}

// ccOwnTool reports whether a tool the CLI offers is one of the bridge's (or the MCP resource
// readers, which can only read from the bridge, the one server it has).
func ccOwnTool(name string) bool {
	return strings.HasPrefix(name, ccToolPrefix) || name == "ListMcpResourcesTool" || name == "ReadMcpResourceTool"
}

// ccPrompt is the first user message of a conversation: the last message, after the earlier
// turns of a multi-turn session written out.
func ccPrompt(msgs []Message) string {
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

// ccTurnUsage counts a turn's tokens: from each assistant message as it arrives (the CLI repeats
// a message's usage on each of its content blocks, so per message id the largest counts), then
// from the result message, whose totals are exact. A turn that never reaches its result (the
// execution ended at an accepted workflow call) is counted from its messages.
type ccTurnUsage struct {
	byMsg    map[string]Usage
	total    Usage // of this turn so far
	reported Usage // of this turn, already returned
	ended    bool  // the result came: the next take starts a new turn
}

func (u *ccTurnUsage) add(id string, cu *ccUsage) {
	if cu == nil {
		return
	}
	if u.byMsg == nil {
		u.byMsg = map[string]Usage{}
	}
	n, old := cu.usage(), u.byMsg[id]
	n = maxUsage(n, old)
	u.byMsg[id] = n
	u.total = addUsage(u.total, subUsage(n, old))
}

// end takes the result's totals (when larger) and its cost, and starts a new turn once they are
// taken. The cost is the whole turn's: the orchestrator lets it stand for the turn's calls.
func (u *ccTurnUsage) end(cu *ccUsage, costUSD float64) {
	u.total = maxUsage(u.total, cu.usage())
	u.total.CostUSD = max(u.total.CostUSD, costUSD)
	u.ended = true
}

func maxUsage(a, b Usage) Usage {
	return Usage{InputTokens: max(a.InputTokens, b.InputTokens), OutputTokens: max(a.OutputTokens, b.OutputTokens),
		CachedInputTokens: max(a.CachedInputTokens, b.CachedInputTokens), CacheWriteTokens: max(a.CacheWriteTokens, b.CacheWriteTokens),
		ReasoningTokens: max(a.ReasoningTokens, b.ReasoningTokens), CostUSD: max(a.CostUSD, b.CostUSD)}
}

func addUsage(a, b Usage) Usage { a.Add(b); return a }

func subUsage(a, b Usage) Usage {
	return Usage{InputTokens: a.InputTokens - b.InputTokens, OutputTokens: a.OutputTokens - b.OutputTokens,
		CachedInputTokens: a.CachedInputTokens - b.CachedInputTokens, CacheWriteTokens: a.CacheWriteTokens - b.CacheWriteTokens,
		ReasoningTokens: a.ReasoningTokens - b.ReasoningTokens, CostUSD: a.CostUSD - b.CostUSD}
}

// take returns what was counted since the last take.
func (u *ccTurnUsage) take() Usage {
	d := subUsage(u.total, u.reported)
	u.reported = u.total
	if u.ended {
		*u = ccTurnUsage{}
	}
	return d
}

// reportsCost: the CLI's result carries total_cost_usd.
func (b *claudeCodeBackend) reportsCost() bool { return true }
