// Package fakeclaude is a stand-in for the claude CLI (Claude Code) in tests: it speaks the CLI's
// stream-json protocol on stdin and stdout, connects to the MCP server its --mcp-config names,
// and plays a script of replies and tool calls through that server, choosing the script's part
// from the tools it is offered. Tests run it by re-executing their own binary under the name
// "claude" (see IsInvoked and Main); it is never part of massgen itself.
package fakeclaude

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The environment variables a test sets for the fake.
const (
	// EnvScript names the JSON file holding the Script.
	EnvScript = "MASSGEN_FAKE_CLAUDE_SCRIPT"
	// EnvLog names a file the fake appends one JSON line to per thing it did (Record).
	EnvLog = "MASSGEN_FAKE_CLAUDE_LOG"
	// EnvState names a directory where the fake keeps each session's place in its script, so a
	// resumed session (--resume) goes on where the last run stopped.
	EnvState = "MASSGEN_FAKE_CLAUDE_STATE"
)

// Script says what the fake does. The part played is chosen from the tools offered: Vote when
// vote is offered, else Coordination when new_answer is, else Final. Vote defaults to
// Coordination.
type Script struct {
	Coordination []Step `json:"coordination,omitempty"`
	Vote         []Step `json:"vote,omitempty"`
	Final        []Step `json:"final,omitempty"`
	// OwnTools are reported in the init message as if the CLI offered tools of its own.
	OwnTools []string `json:"own_tools,omitempty"`
	// NoInit leaves the init message out, as a CLI that does not report its session.
	NoInit bool `json:"no_init,omitempty"`
}

// Step is one thing the model does.
type Step struct {
	// Text is a reply text (an assistant message).
	Text string `json:"text,omitempty"`
	// Tool is a tool to call through the MCP server with Args. A string argument "$VOTE" is
	// replaced by the first agent id vote offers; "$CWD" by the fake's working directory.
	Tool string         `json:"tool,omitempty"`
	Args map[string]any `json:"args,omitempty"`
	// End ends the turn here (a result message); the next user message plays on.
	End bool `json:"end,omitempty"`
	// Block starts a child process in the fake's process group, writes its pid to the file
	// PidFile, and then never answers.
	Block   bool   `json:"block,omitempty"`
	PidFile string `json:"pid_file,omitempty"`
	// Stray calls a tool of this name that the CLI does not have: as the real CLI does, the
	// fake answers it with an error result itself (the model sees "No such tool available").
	Stray string `json:"stray,omitempty"`
}

// Record is one line of the log.
type Record struct {
	Event   string   `json:"event"` // start, user, calling (a call sent), call (its answer), result
	PID     int      `json:"pid"`
	Args    []string `json:"args,omitempty"`    // start: the command line
	Session string   `json:"session,omitempty"` // start, result
	Tools   []string `json:"tools,omitempty"`   // start: offered by the MCP server
	Text    string   `json:"text,omitempty"`    // user, result
	Tool    string   `json:"tool,omitempty"`    // call
	Input   string   `json:"input,omitempty"`   // call: the arguments (JSON)
	Output  string   `json:"output,omitempty"`  // call
	IsError bool     `json:"is_error,omitempty"`
	Env     []string `json:"env,omitempty"` // start: the names of the environment's variables
	MCP     string   `json:"mcp,omitempty"` // start: the bridge's status in the init message
	Dir     string   `json:"dir,omitempty"` // start: the working directory
}

// ReadLog reads the records of a log file.
func ReadLog(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("fakeclaude log: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

// IsInvoked reports whether this process was started as the fake (its name is "claude").
func IsInvoked() bool { return filepath.Base(os.Args[0]) == "claude" }

// Install makes dir/claude a link to the running test binary, so that with dir first on PATH
// the binary is re-executed as the fake.
func Install(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return os.Symlink(self, filepath.Join(dir, "claude"))
}

// Setup prepares dir for running the fake with script: dir/bin/claude (Install), the script, a
// state folder. It returns the environment a process needs to run it as its claude CLI (PATH
// with dir/bin first, and the fake's variables), and the log file.
func Setup(dir string, script Script) (env []string, log string, err error) {
	bin, state := filepath.Join(dir, "bin"), filepath.Join(dir, "state")
	for _, d := range []string{bin, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, "", err
		}
	}
	if err := Install(bin); err != nil {
		return nil, "", err
	}
	data, err := json.Marshal(script)
	if err != nil {
		return nil, "", err
	}
	scriptPath := filepath.Join(dir, "script.json")
	if err := os.WriteFile(scriptPath, data, 0o644); err != nil {
		return nil, "", err
	}
	log = filepath.Join(dir, "log.jsonl")
	return []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		EnvScript + "=" + scriptPath, EnvLog + "=" + log, EnvState + "=" + state,
	}, log, nil
}

// setting returns the fake's variable name, or else the file Setup put beside the fake's bin
// folder (the fake is run as <dir>/bin/claude; massgen passes the CLI only the environment it
// needs, not the test's variables).
func setting(name, file string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	self := os.Args[0]
	if !filepath.IsAbs(self) {
		if p, err := exec.LookPath(self); err == nil {
			self = p
		}
	}
	return filepath.Join(filepath.Dir(filepath.Dir(self)), file)
}

// Main runs the fake on the process's own arguments and streams; it returns the exit code.
func Main() int {
	f := &fake{out: bufio.NewWriter(os.Stdout), pid: os.Getpid()}
	if err := f.run(os.Args[1:], os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "fake claude:", err)
		return 3
	}
	return 0
}

type fake struct {
	out     *bufio.Writer
	outMu   sync.Mutex
	pid     int
	session string
	msgs    int
	log     string
	script  Script
	steps   []Step
	place   int
	tools   []*mcp.Tool
	mcp     *mcp.ClientSession
}

// flags the backend must pass: without them Claude Code would run tools of its own.
func checkFlags(args []string) (mcpConfig, resume string, err error) {
	need := map[string]bool{"-p": false, "--strict-mcp-config": false, "--tools \"\"": false, "--input-format stream-json": false, "--output-format stream-json": false}
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		switch {
		case a == "--tools":
			if next != "" {
				return "", "", fmt.Errorf("--tools %q: the fake wants --tools \"\"", next)
			}
			need["--tools \"\""] = true
			i++
		case a == "--input-format" || a == "--output-format":
			need[a+" "+next] = true
			i++
		case strings.HasPrefix(a, "--mcp-config="):
			mcpConfig = strings.TrimPrefix(a, "--mcp-config=")
		case strings.HasPrefix(a, "--resume="):
			resume = strings.TrimPrefix(a, "--resume=")
		case a == "--dangerously-skip-permissions" || strings.HasPrefix(a, "--permission-mode=bypass"):
			return "", "", fmt.Errorf("%s must not be passed", a)
		default:
			if _, ok := need[a]; ok {
				need[a] = true
			}
		}
	}
	for k, ok := range need {
		if !ok {
			return "", "", fmt.Errorf("missing flag %s", k)
		}
	}
	if mcpConfig == "" {
		return "", "", errors.New("missing --mcp-config")
	}
	return mcpConfig, resume, nil
}

func (f *fake) run(args []string, stdin io.Reader) error {
	f.log = setting(EnvLog, "log.jsonl")
	cfgArg, resume, err := checkFlags(args)
	if err != nil {
		return err
	}
	if err := f.loadScript(); err != nil {
		return err
	}
	url, alwaysLoad, err := serverURL(cfgArg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	// As the real CLI: it keeps sessions per working directory, so a session saved elsewhere
	// is not found.
	f.session = resume
	if f.session == "" {
		f.session = "session-" + strconv.Itoa(f.pid) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	} else if _, err := os.Stat(f.statePath()); err != nil {
		fmt.Fprintf(os.Stderr, "No conversation found with session ID: %s\n", resume)
		f.record(Record{Event: "start", Args: args, Session: resume, Text: "No conversation found"})
		os.Exit(1)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "fake-claude", Version: "1"}, nil)
	status := "connected"
	connect := func() error {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			status = "failed"
			return nil
		}
		f.mcp = cs
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			return fmt.Errorf("listing tools: %w", err)
		}
		f.tools = lt.Tools
		return nil
	}
	// As the real CLI: MCP servers are connected in the background, and the session starts
	// with the server "pending", unless MCP_CONNECTION_NONBLOCKING=0 or the server's entry
	// says alwaysLoad.
	if os.Getenv("MCP_CONNECTION_NONBLOCKING") == "0" || alwaysLoad {
		if err := connect(); err != nil {
			return err
		}
	} else {
		status = "pending"
	}
	defer func() {
		if f.mcp != nil {
			f.mcp.Close()
		}
	}()
	if status == "pending" {
		if err := connect(); err != nil { // connected by the time the model calls a tool
			return err
		}
	}
	f.chooseSteps()
	f.place = f.loadPlace()
	names := f.toolNames()
	var envNames []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		envNames = append(envNames, k)
	}
	cwd, _ := os.Getwd()
	f.record(Record{Event: "start", Args: args, Session: f.session, Tools: names, Env: envNames, MCP: status, Dir: cwd})

	in := bufio.NewReader(stdin)
	first := true
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var msg struct {
				Type    string `json:"type"`
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			}
			if jerr := json.Unmarshal(line, &msg); jerr != nil || msg.Type != "user" {
				return fmt.Errorf("bad input line %q", line)
			}
			f.record(Record{Event: "user", Text: msg.Message.Content})
			if first && !f.script.NoInit {
				tools := slices.Clone(f.script.OwnTools)
				for _, n := range names {
					tools = append(tools, "mcp__massgen__"+n)
				}
				f.emit(map[string]any{"type": "system", "subtype": "init", "session_id": f.session, "tools": tools,
					"mcp_servers": []any{map[string]any{"name": "massgen", "status": status}}, "model": "fake"})
				f.savePlace() // the session exists from its first message on
				first = false
			}
			if err := f.turn(ctx); err != nil {
				return err
			}
		}
		if err != nil {
			return nil // end of input: the session is saved, exit
		}
	}
}

func (f *fake) loadScript() error {
	data, err := os.ReadFile(setting(EnvScript, "script.json"))
	if err != nil {
		return err
	}
	return json.Unmarshal(data, &f.script)
}

// serverURL reads the URL of the "massgen" server from the --mcp-config file (or JSON), and
// whether its entry says alwaysLoad.
func serverURL(arg string) (string, bool, error) {
	data := []byte(arg)
	if !strings.HasPrefix(strings.TrimSpace(arg), "{") {
		var err error
		if data, err = os.ReadFile(arg); err != nil {
			return "", false, err
		}
	}
	var cfg struct {
		MCPServers map[string]struct {
			Type       string `json:"type"`
			URL        string `json:"url"`
			AlwaysLoad bool   `json:"alwaysLoad"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return "", false, fmt.Errorf("--mcp-config: %w", err)
	}
	if len(cfg.MCPServers) != 1 {
		return "", false, fmt.Errorf("--mcp-config names %d servers, want only massgen", len(cfg.MCPServers))
	}
	s, ok := cfg.MCPServers["massgen"]
	if !ok || s.Type != "http" || s.URL == "" {
		return "", false, fmt.Errorf("--mcp-config: no http server named massgen: %s", data)
	}
	return s.URL, s.AlwaysLoad, nil
}

func (f *fake) toolNames() []string {
	var names []string
	for _, t := range f.tools {
		names = append(names, t.Name)
	}
	return names
}

func (f *fake) offered(name string) *mcp.Tool {
	for _, t := range f.tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func (f *fake) chooseSteps() {
	switch {
	case f.offered("vote") != nil && f.script.Vote != nil:
		f.steps = f.script.Vote
	case f.offered("new_answer") != nil:
		f.steps = f.script.Coordination
	default:
		f.steps = f.script.Final
	}
}

// turn plays steps until an End step or the end of the script, then sends the result.
func (f *fake) turn(ctx context.Context) error {
	reply := ""
	n := 0 // assistant messages in this turn
	for f.place < len(f.steps) {
		st := f.steps[f.place]
		f.place++
		switch {
		case st.Block:
			return f.block(st)
		case st.Stray != "":
			n++
			f.stray(st.Stray, n)
		case st.Tool != "":
			n++
			if err := f.call(ctx, st, n); err != nil {
				return err
			}
		case st.Text != "":
			n++
			reply = st.Text
			f.assistant(n, map[string]any{"type": "text", "text": st.Text})
		}
		if st.End {
			break
		}
	}
	if reply == "" {
		reply = "done"
	}
	f.savePlace()
	k := int64(max(n, 1))
	f.emit(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": reply, "session_id": f.session,
		"usage":          map[string]any{"input_tokens": 100 * k, "cache_read_input_tokens": 50 * k, "output_tokens": 20 * k},
		"total_cost_usd": 0.01 * float64(k)})
	f.record(Record{Event: "result", Session: f.session, Text: reply})
	return nil
}

// assistant emits an assistant message whose usage is what the CLI shows mid-stream: the
// input, and one output token.
func (f *fake) assistant(n int, block map[string]any) {
	f.msgs++
	f.emit(map[string]any{"type": "assistant", "session_id": f.session, "parent_tool_use_id": nil,
		"message": map[string]any{"id": "msg_" + strconv.Itoa(f.pid) + "_" + strconv.Itoa(f.msgs), "role": "assistant",
			"content": []any{block}, "usage": map[string]any{"input_tokens": 100, "cache_read_input_tokens": 50, "output_tokens": 1}}})
}

func (f *fake) call(ctx context.Context, st Step, n int) error {
	if f.mcp == nil {
		return errors.New("no MCP server")
	}
	args := f.substitute(st.Args)
	id := "toolu_" + strconv.Itoa(f.pid) + "_" + strconv.Itoa(f.msgs+1)
	f.assistant(n, map[string]any{"type": "tool_use", "id": id, "name": "mcp__massgen__" + st.Tool, "input": args})
	input, _ := json.Marshal(args)
	// A workflow call accepted by the orchestrator is never answered: log it before.
	f.record(Record{Event: "calling", Tool: st.Tool, Input: string(input)})
	res, err := f.mcp.CallTool(ctx, &mcp.CallToolParams{Name: st.Tool, Arguments: args})
	out, isErr := "", false
	if err != nil {
		out, isErr = err.Error(), true
	} else {
		isErr = res.IsError
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				out += t.Text
			}
		}
	}
	f.record(Record{Event: "call", Tool: st.Tool, Input: string(input), Output: out, IsError: isErr})
	f.emit(map[string]any{"type": "user", "session_id": f.session, "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": out, "is_error": isErr}}}})
	return nil
}

// stray calls a tool the CLI does not have; the CLI answers with an error result itself.
func (f *fake) stray(name string, n int) {
	id := "toolu_" + strconv.Itoa(f.pid) + "_" + strconv.Itoa(f.msgs+1)
	f.assistant(n, map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}})
	out := "<tool_use_error>Error: No such tool available: " + name + "</tool_use_error>"
	f.record(Record{Event: "stray", Tool: name, Output: out, IsError: true})
	f.emit(map[string]any{"type": "user", "session_id": f.session, "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": out, "is_error": true}}}})
}

func (f *fake) substitute(args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		if s, ok := v.(string); ok {
			switch s {
			case "$VOTE":
				v = f.firstVoteTarget()
			case "$CWD":
				v, _ = os.Getwd()
			}
		}
		out[k] = v
	}
	return out
}

// firstVoteTarget is the first agent id in vote's schema.
func (f *fake) firstVoteTarget() string {
	t := f.offered("vote")
	if t == nil {
		return ""
	}
	var schema struct {
		Properties struct {
			AgentID struct {
				Enum []string `json:"enum"`
			} `json:"agent_id"`
		} `json:"properties"`
	}
	data, _ := json.Marshal(t.InputSchema)
	_ = json.Unmarshal(data, &schema)
	if len(schema.Properties.AgentID.Enum) == 0 {
		return ""
	}
	return schema.Properties.AgentID.Enum[0]
}

// block starts a child in the fake's process group and waits for ever: ending the process
// group must end both.
func (f *fake) block(st Step) error {
	child := exec.Command("sleep", "600")
	if err := child.Start(); err != nil {
		return err
	}
	if st.PidFile != "" {
		if err := os.WriteFile(st.PidFile, []byte(strconv.Itoa(child.Process.Pid)), 0o644); err != nil {
			return err
		}
	}
	select {}
}

func (f *fake) emit(v any) {
	data, _ := json.Marshal(v)
	f.outMu.Lock()
	defer f.outMu.Unlock()
	f.out.Write(append(data, '\n'))
	f.out.Flush()
}

func (f *fake) record(r Record) {
	if f.log == "" {
		return
	}
	r.PID = f.pid
	data, _ := json.Marshal(r)
	fh, err := os.OpenFile(f.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer fh.Close()
	fh.Write(append(data, '\n'))
}

// statePath is where the session's place in the script is kept: per working directory, as
// the real CLI keeps its sessions.
func (f *fake) statePath() string {
	dir := setting(EnvState, "state")
	cwd, _ := os.Getwd()
	sum := sha256.Sum256([]byte(cwd))
	return filepath.Join(dir, hex.EncodeToString(sum[:8])+"-"+f.session)
}

func (f *fake) loadPlace() int {
	p := f.statePath()
	if p == "" {
		return 0
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

func (f *fake) savePlace() {
	if p := f.statePath(); p != "" {
		_ = os.WriteFile(p, []byte(strconv.Itoa(f.place)), 0o644)
	}
}
