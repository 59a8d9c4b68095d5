// Package mcpclient connects agents to their MCP servers: Connect starts an agent's configured
// servers and offers their tools as filesystem.External (the Toolset checks every call with the
// permission layer before it is forwarded). The run reaches Connect through internal/agentenv;
// Runner, which does the same for every agent of a config, serves the tests.
package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/buildinfo"
	"github.com/massgen-go/massgen/internal/launch"
	"github.com/massgen-go/massgen/internal/vocab"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// StartTimeout bounds how long one server may take to start and answer initialize + tools/list.
const StartTimeout = 60 * time.Second

// DefaultCallTimeout bounds one tool call when Options.CallTimeout is zero, so a server that
// never answers cannot hold an agent until the run's own timeout.
const DefaultCallTimeout = 10 * time.Minute

// stderrLimit is how much of a server's stderr is kept for error reports (the tail).
const stderrLimit = 8 << 10

// Implementation is how massgen introduces itself to MCP peers (clients and servers alike).
func Implementation() *mcp.Implementation {
	return &mcp.Implementation{Name: "massgen", Version: buildinfo.Version()}
}

// Connect starts every server and lists its tools. Each server that came up is returned under its
// name; each one that did not is reported in the error list (with the tail of its stderr) and left
// out, so the run goes on without it. Servers stop when ctx is done or when Close is called.
//
// allowedDirs are the agent's readable roots; they are given to the MCP filesystem server when
// its config names no directory (see FilesystemArgs).
func Connect(ctx context.Context, servers []configs.MCPServer, allowedDirs []string, logger *zap.Logger) (map[string]filesystem.External, []error) {
	return ConnectWith(ctx, Options{Servers: servers, AllowedDirs: allowedDirs, Logger: logger})
}

// Options configure ConnectWith.
type Options struct {
	Servers []configs.MCPServer
	// AllowedDirs are the agent's readable roots (see FilesystemArgs).
	AllowedDirs []string
	// WorkDir is the agent's workspace: the permission layer resolves relative paths against it,
	// so relative path arguments for the filesystem server (which would resolve them against its
	// first directory) are made absolute against it (without it they are refused), and ${cwd}
	// stands for it. A server never runs there: see PrivateDir.
	WorkDir string
	// PrivateDir is a private directory of massgen's (internal/launch's Area) in which each
	// stdio server gets an empty working directory of its own, removed when it stops: a
	// server's working directory is where python3 -m and npx look first, so it must be a place
	// no agent can write. "": launch.Base's folder.
	PrivateDir string
	// BaseDir is what a relative program or script path in a server's entry is relative to
	// (massgen's working directory, where the config's other relative paths resolve). "": the
	// current directory.
	BaseDir string
	// Shaped says why an agent could change what lies at path (it may write it, or massgen
	// copies agents' work there), or "" when none can. A server whose program, script, working
	// directory or search path (PATH, PYTHONPATH, NODE_PATH...) lies in such a place does not
	// start. nil: no such check (tests).
	Shaped func(path string) string
	Logger *zap.Logger
	// CallTimeout bounds each tool call (0: DefaultCallTimeout); a call past it is an error
	// result and the request is cancelled on the server.
	CallTimeout time.Duration
	// StartTimeout bounds one server's start (0: StartTimeout). A test whose npx server installs
	// from an empty cache on a loaded machine needs more.
	StartTimeout time.Duration
}

// ConnectWith is Connect with the agent's workspace (see Options.WorkDir).
func ConnectWith(ctx context.Context, o Options) (map[string]filesystem.External, []error) {
	servers, allowedDirs, logger := o.Servers, o.AllowedDirs, o.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	out := map[string]filesystem.External{}
	var errs []error
	seen := map[string]bool{}
	var valid []configs.MCPServer
	for i, s := range servers {
		switch {
		case s.Name == "":
			errs = append(errs, fmt.Errorf("mcp_servers[%d]: missing name", i))
		case strings.Contains(s.Name, "__"):
			// "__" separates server and tool in mcp__<server>__<tool>.
			errs = append(errs, fmt.Errorf("mcp server %q: name must not contain \"__\"", s.Name))
		case seen[s.Name]:
			errs = append(errs, fmt.Errorf("mcp server %q: duplicate name", s.Name))
		default:
			seen[s.Name] = true
			valid = append(valid, s)
		}
	}

	type res struct {
		c   *Client
		err error
	}
	results := make([]res, len(valid))
	var wg sync.WaitGroup
	for i, s := range valid {
		wg.Go(func() {
			c, err := dial(ctx, s, allowedDirs, o, logger)
			if c != nil {
				c.callTimeout = o.CallTimeout
				if c.callTimeout <= 0 {
					c.callTimeout = DefaultCallTimeout
				}
			}
			results[i] = res{c, err}
		})
	}
	wg.Wait()
	for i, r := range results {
		if r.err != nil {
			logger.Warn("mcp server failed to start", zap.String("server", valid[i].Name), zap.Error(r.err))
			errs = append(errs, r.err)
			continue
		}
		out[valid[i].Name] = r.c
	}
	return out, errs
}

// Close stops every server in ext that Connect started.
func Close(ext map[string]filesystem.External) error {
	var errs []error
	for _, e := range ext {
		if c, ok := e.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// Client is one connected MCP server. It implements filesystem.External.
type Client struct {
	name    string
	workDir string
	fs      bool // the MCP filesystem server: relative paths are made absolute
	session *mcp.ClientSession
	tools   []filesystem.Tool
	stderr  *tailBuffer
	logger  *zap.Logger
	// callTimeout bounds one call (0: none, for a Client built without ConnectWith).
	callTimeout time.Duration

	closeOnce sync.Once
	closeErr  error
	stop      func() bool
	// dir is the server's private working directory, removed once it stopped.
	dir string
}

var _ filesystem.External = (*Client)(nil)

// Name is the server's configured name.
func (c *Client) Name() string { return c.name }

// Tools lists the server's tools with their bare names (the Toolset adds mcp__<server>__).
func (c *Client) Tools() []filesystem.Tool { return slices.Clone(c.tools) }

// Call forwards one call. Permission checks happened before (in the Toolset); failures of the
// server or the transport come back as error results, never as panics or run failures.
func (c *Client) Call(ctx context.Context, name string, args map[string]any) filesystem.Result {
	if args == nil {
		args = map[string]any{}
	}
	if c.fs {
		abs, err := c.absolutePaths(name, args)
		if err != nil {
			return errorResult(fmt.Sprintf("mcp server %q: tool %q: %v", c.name, name, err))
		}
		args = abs
	}
	if c.callTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.callTimeout, errCallTimeout)
		defer cancel()
	}
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		msg := fmt.Sprintf("mcp server %q: tool %q: %v", c.name, name, err)
		if errors.Is(context.Cause(ctx), errCallTimeout) {
			msg = fmt.Sprintf("mcp server %q: tool %q: no answer within %s; the call was cancelled", c.name, name, c.callTimeout)
		}
		if tail := c.stderr.String(); tail != "" && errors.Is(err, mcp.ErrConnectionClosed) {
			msg += "; stderr: " + tail
		}
		return errorResult(msg)
	}
	text := contentText(res.Content)
	if res.IsError {
		return errorResult(text)
	}
	body := map[string]any{"result": text}
	if res.StructuredContent != nil && text == "" {
		body["structured"] = res.StructuredContent
	}
	b, err := json.Marshal(body)
	if err != nil {
		return errorResult(fmt.Sprintf("mcp server %q: tool %q: encoding result: %v", c.name, name, err))
	}
	return filesystem.Result{Content: string(b)}
}

var errCallTimeout = errors.New("mcp tool call timed out")

// Close ends the session and stops the server process (stdin closed, then SIGTERM, then kill).
func (c *Client) Close() error {
	if c.stop != nil {
		c.stop()
	}
	return c.shutdown()
}

// shutdown closes the session once; it is what the context's AfterFunc runs (it must not touch
// c.stop, which dial sets after registering it).
func (c *Client) shutdown() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.session.Close()
		if c.dir != "" {
			c.closeErr = errors.Join(c.closeErr, os.RemoveAll(c.dir))
		}
	})
	return c.closeErr
}

func errorResult(msg string) filesystem.Result {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return filesystem.Result{Content: string(b), IsError: true}
}

// contentText flattens MCP content into text for the model.
func contentText(cs []mcp.Content) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		switch v := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, v.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", v.MIMEType, len(v.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", v.MIMEType, len(v.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", v.URI))
		case *mcp.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				parts = append(parts, v.Resource.Text)
			} else if v.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", v.Resource.URI))
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	return strings.Join(parts, "\n")
}

// dial starts (or reaches) one server, initializes the session and lists its tools.
func dial(ctx context.Context, s configs.MCPServer, allowedDirs []string, o Options, logger *zap.Logger) (*Client, error) {
	workDir := o.WorkDir
	s, err := expandCWD(s, workDir)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: %w", s.Name, err)
	}
	stderr := &tailBuffer{limit: stderrLimit}
	var dir string
	if isStdio(s) {
		if dir, err = serverDir(s.Name, o); err != nil {
			return nil, fmt.Errorf("mcp server %q: %w", s.Name, err)
		}
	}
	transport, err := transportFor(s, allowedDirs, dir, o, stderr)
	if err != nil {
		if dir != "" {
			os.RemoveAll(dir)
		}
		return nil, fmt.Errorf("mcp server %q: %w", s.Name, err)
	}
	// No roots capability: the filesystem server would otherwise replace the directories we
	// started it with by whatever roots the client announces.
	client := mcp.NewClient(Implementation(), &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})

	start := o.StartTimeout
	if start <= 0 {
		start = StartTimeout
	}
	startCtx, cancel := context.WithTimeout(ctx, start)
	defer cancel()
	session, err := client.Connect(startCtx, transport, nil)
	if err != nil {
		if dir != "" {
			os.RemoveAll(dir)
		}
		return nil, startError(s.Name, err, stderr)
	}
	c := &Client{name: s.Name, workDir: workDir, fs: IsFilesystemServer(s), session: session, stderr: stderr, logger: logger, dir: dir}
	for t, err := range session.Tools(startCtx, nil) {
		if err != nil {
			_ = c.shutdown()
			return nil, startError(s.Name, fmt.Errorf("listing tools: %w", err), stderr)
		}
		c.tools = append(c.tools, toolFromMCP(t))
	}
	c.stop = context.AfterFunc(ctx, func() { _ = c.shutdown() })
	logger.Info("mcp server connected", zap.String("server", s.Name), zap.Int("tools", len(c.tools)))
	return c, nil
}

func startError(name string, err error, stderr *tailBuffer) error {
	if tail := strings.TrimSpace(stderr.String()); tail != "" {
		return fmt.Errorf("mcp server %q failed to start: %w; stderr: %s", name, err, tail)
	}
	return fmt.Errorf("mcp server %q failed to start: %w", name, err)
}

func toolFromMCP(t *mcp.Tool) filesystem.Tool {
	params := map[string]any{}
	switch v := t.InputSchema.(type) {
	case map[string]any:
		params = v
	case nil:
	default:
		if b, err := json.Marshal(v); err == nil {
			_ = json.Unmarshal(b, &params)
		}
	}
	// Providers refuse a whole request over one bad tool schema, so a server's broken schema
	// (not an object, properties that are not an object) is reduced to what they accept.
	if typ, ok := params["type"]; !ok {
		params["type"] = "object"
	} else if typ != "object" {
		params = map[string]any{"type": "object"}
	}
	if p, ok := params["properties"]; ok {
		if _, isMap := p.(map[string]any); !isMap {
			delete(params, "properties")
		}
	}
	if req, ok := params["required"]; ok {
		switch req.(type) {
		case []any, []string:
		default:
			delete(params, "required")
		}
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return filesystem.Tool{
		Name:        t.Name,
		Description: desc,
		Parameters:  params,
		Write:       permissions.IsWriteTool(t.Name),
		ReadOnly:    t.Annotations != nil && t.Annotations.ReadOnlyHint,
	}
}

// serverType is the server's transport type (stdio when it names a command, else http).
func serverType(s configs.MCPServer) vocab.MCPTransport {
	typ := s.Type
	if typ == "" {
		switch {
		case s.Command != "":
			typ = vocab.MCPStdio
		case s.URL != "":
			typ = vocab.MCPStreamableHTTP
		}
	}
	return typ
}

func isStdio(s configs.MCPServer) bool { return serverType(s) == vocab.MCPStdio }

// serverDir makes the server's private, empty working directory.
func serverDir(name string, o Options) (string, error) {
	parent := o.PrivateDir
	if parent == "" {
		parent = launch.Base(nil)
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return "", fmt.Errorf("its private working directory: %w", err)
		}
	}
	dir, err := os.MkdirTemp(parent, "mcp-")
	if err != nil {
		return "", fmt.Errorf("its private working directory: %w", err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if o.Shaped != nil {
		// npx looks for node_modules in the parents of its working directory too.
		for d := dir; ; d = filepath.Dir(d) {
			if why := o.Shaped(d); why != "" {
				os.RemoveAll(dir)
				return "", fmt.Errorf("its private working directory %s lies in %s, and %s; set XDG_RUNTIME_DIR (or XDG_CACHE_HOME) to a folder no agent may write", dir, d, why)
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return dir, nil
}

// transportFor builds the SDK transport for one configured server; a stdio server runs in dir.
func transportFor(s configs.MCPServer, allowedDirs []string, dir string, o Options, stderr io.Writer) (mcp.Transport, error) {
	typ := serverType(s)
	switch typ {
	case vocab.MCPStdio:
		if s.Command == "" {
			return nil, errors.New("type stdio needs a command")
		}
		args := s.Args
		if IsFilesystemServer(s) {
			args = FilesystemArgs(s, allowedDirs)
		}
		env := serverEnv(os.Environ(), s.Env)
		prog, args, err := placeProgram(s.Command, args, env, o)
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(prog, args...)
		cmd.Args[0] = s.Command
		cmd.Env = env
		cmd.Dir = dir
		cmd.Stderr = stderr
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
	case vocab.MCPStreamableHTTP, vocab.MCPHTTP:
		if s.URL == "" {
			return nil, fmt.Errorf("type %s needs a url", s.Type)
		}
		return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: http.DefaultClient}, nil
	case vocab.MCPSSE:
		if s.URL == "" {
			return nil, errors.New("type sse needs a url")
		}
		return &mcp.SSEClientTransport{Endpoint: s.URL}, nil
	case "":
		return nil, errors.New("needs a command (stdio) or a url (http)")
	default: // a type configs did not decode
		return nil, &vocab.UnknownError{Noun: "type", Value: string(typ), Known: vocab.Words[vocab.MCPTransport]()}
	}
}

// inheritedEnv are the variables a stdio server gets from our environment, as in the official
// MCP SDKs' default environment (plus locale, temp dir and proxies): API keys and other secrets
// of the massgen process are NOT passed on unless the server's `env:` names them, and neither
// are search paths (PYTHONPATH, NODE_PATH...).
var inheritedEnv = []string{
	"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
}

// baseEnv is set for every stdio server unless its entry says otherwise: Python never puts the
// working directory or the script's folder on its module path.
var baseEnv = []string{"PYTHONSAFEPATH=1"}

func serverEnv(environ []string, extra map[string]string) []string {
	var env []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(inheritedEnv, k) {
			if _, override := extra[k]; !override {
				env = append(env, kv)
			}
		}
	}
	for _, kv := range baseEnv {
		k, _, _ := strings.Cut(kv, "=")
		if _, override := extra[k]; !override {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// searchPathVars are the variables naming places a server loads code from: each absolute
// entry must lie where no agent can change it.
var searchPathVars = []string{"PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE",
	"NODE_PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES"}

// placeProgram finds the program a stdio server runs and the script it gives an interpreter
// (python3 server.py): a relative path is relative to o.BaseDir (the server's own working
// directory is empty), the script argument is made absolute. With o.Shaped, a program, script,
// #! interpreter or search-path entry an agent could change refuses the server.
func placeProgram(command string, args, env []string, o Options) (string, []string, error) {
	base := o.BaseDir
	if base == "" {
		base, _ = os.Getwd()
	}
	prog, err := launch.Resolve(command, base, exec.LookPath)
	if err != nil {
		return "", nil, fmt.Errorf("program %v", err)
	}
	files := []launch.File{prog}
	name := launch.InterpreterName(command)
	if name == "" {
		name = launch.InterpreterName(prog.Real)
	}
	if idx, _ := launch.ScriptIndex(name, args, nil); idx >= 0 {
		script, err := launch.ResolveScript(args[idx], base)
		if err != nil {
			return "", nil, fmt.Errorf("script %v", err)
		}
		args = slices.Clone(args)
		args[idx] = script.Path
		files = append(files, script)
	}
	if o.Shaped == nil {
		return prog.Path, args, nil
	}
	if in, err := launch.Interpreters(prog, exec.LookPath); err == nil {
		files = append(files, in...)
	}
	for _, f := range files {
		if why := f.ShapedBy(o.Shaped); why != "" {
			return "", nil, errors.New(why + "; it was not started. Move it out of every path an agent may write (workspaces, writable context paths), or name a program outside them")
		}
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if !slices.Contains(searchPathVars, k) {
			continue
		}
		for _, d := range filepath.SplitList(v) {
			if !filepath.IsAbs(d) {
				continue // relative to the server's empty working directory
			}
			if why := o.Shaped(filepath.Clean(d)); why != "" {
				return "", nil, fmt.Errorf("its %s names %s, and %s; it was not started (remove that entry)", k, d, why)
			}
		}
	}
	return prog.Path, args, nil
}

// IsFilesystemServer reports whether s runs @modelcontextprotocol/server-filesystem (by npm
// package name, its mcp-server-filesystem binary, or a path to its script).
func IsFilesystemServer(s configs.MCPServer) bool {
	return fsMarkerIndex(s) != -2
}

// fsMarkerIndex returns the index of the arg naming the filesystem server, -1 when the command
// itself is the server (so every arg is a directory), -2 when s is not the filesystem server.
func fsMarkerIndex(s configs.MCPServer) int {
	if strings.Contains(filepath.Base(s.Command), "server-filesystem") {
		return -1
	}
	for i, a := range s.Args {
		if strings.Contains(a, "server-filesystem") {
			return i
		}
	}
	return -2
}

// FilesystemArgs returns the args the MCP filesystem server is started with. That server only
// accepts directories (spec 001: given a file it crashed), so every path argument that is a file
// is replaced by its parent directory and duplicates are dropped; the permission layer still
// limits access to that one file. When the config names no directory at all, the agent's
// allowedDirs (its readable roots; files again replaced by their parent) are appended: MassGen's
// convention is that the filesystem server is given the agent's managed paths automatically.
// Options (args starting with "-") are kept as they are.
func FilesystemArgs(s configs.MCPServer, allowedDirs []string) []string {
	idx := fsMarkerIndex(s)
	if idx == -2 {
		return s.Args
	}
	head := slices.Clone(s.Args[:idx+1])
	seen := map[string]bool{}
	var dirs []string
	add := func(p string) {
		d := dirOf(p)
		if d == "" || seen[d] {
			return
		}
		seen[d] = true
		dirs = append(dirs, d)
	}
	var opts []string
	for _, a := range s.Args[idx+1:] {
		if strings.HasPrefix(a, "-") {
			opts = append(opts, a)
			continue
		}
		add(a)
	}
	if len(dirs) == 0 {
		for _, d := range allowedDirs {
			add(d)
		}
	}
	return append(append(head, opts...), dirs...)
}

// dirOf returns p (cleaned, ~ expanded) or, when p is an existing file, its parent directory.
func dirOf(p string) string {
	if p == "" {
		return ""
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	p = filepath.Clean(p)
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		return filepath.Dir(p)
	}
	return p
}

// tailBuffer keeps the last limit bytes written to it; safe for concurrent use (exec copies the
// child's stderr from its own goroutine).
type tailBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.limit; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// absolutePaths returns args with every relative path argument made absolute against the
// workspace, as the permission layer resolved it: the filesystem server would resolve it against
// its first directory instead, which may be the parent of a file context path (a sibling read).
// Paths it cannot place are refused.
func (c *Client) absolutePaths(tool string, args map[string]any) (map[string]any, error) {
	found, err := permissions.ExtractPaths(filesystem.Table(), toolargs.MCPName(c.name, tool), args)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	for _, pa := range found {
		p := pa.Path
		if p == "" || filepath.IsAbs(p) || p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "file://") {
			continue
		}
		if c.workDir == "" {
			return nil, fmt.Errorf("relative path %q: use an absolute path", p)
		}
		if out == nil {
			out = cloneArgs(args)
		}
		if !setArg(out, pa.Arg, filepath.Join(c.workDir, p)) {
			return nil, fmt.Errorf("relative path %q in %s: use an absolute path", p, pa.Arg)
		}
	}
	if out == nil {
		return args, nil
	}
	return out, nil
}

// cloneArgs deep-copies JSON-shaped arguments.
func cloneArgs(args map[string]any) map[string]any {
	var clone func(v any) any
	clone = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			m := make(map[string]any, len(t))
			for k, x := range t {
				m[k] = clone(x)
			}
			return m
		case []any:
			l := make([]any, len(t))
			for i, x := range t {
				l[i] = clone(x)
			}
			return l
		case []string:
			return slices.Clone(t)
		default:
			return v
		}
	}
	return clone(args).(map[string]any)
}

// setArg sets a top-level argument named like ExtractPaths names them: "path" or "paths[2]".
func setArg(args map[string]any, arg, val string) bool {
	name, idx, isList := strings.Cut(arg, "[")
	if !isList {
		if _, ok := args[name].(string); !ok {
			return false
		}
		args[name] = val
		return true
	}
	var i int
	if n, err := fmt.Sscanf(idx, "%d]", &i); n != 1 || err != nil || fmt.Sprintf("%d]", i) != idx {
		return false
	}
	switch l := args[name].(type) {
	case []any:
		if i < 0 || i >= len(l) {
			return false
		}
		l[i] = val
	case []string:
		if i < 0 || i >= len(l) {
			return false
		}
		l[i] = val
	default:
		return false
	}
	return true
}

// cwdVar is MassGen's placeholder for the agent's workspace in MCP server configs (e.g.
// playwright's --output-dir=${cwd}); the config loader leaves it for us.
const cwdVar = "${cwd}"

// expandCWD fills ${cwd} into the command, args, env values and url.
func expandCWD(s configs.MCPServer, workDir string) (configs.MCPServer, error) {
	uses := strings.Contains(s.Command, cwdVar) || strings.Contains(s.URL, cwdVar) ||
		slices.ContainsFunc(s.Args, func(a string) bool { return strings.Contains(a, cwdVar) })
	for _, v := range s.Env {
		uses = uses || strings.Contains(v, cwdVar)
	}
	if !uses {
		return s, nil
	}
	if workDir == "" {
		return s, errors.New("uses ${cwd} but the agent has no workspace (backend.cwd)")
	}
	r := strings.NewReplacer(cwdVar, workDir)
	s.Command, s.URL = r.Replace(s.Command), r.Replace(s.URL)
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = r.Replace(a)
	}
	s.Args = args
	if s.Env != nil {
		env := make(map[string]string, len(s.Env))
		for k, v := range s.Env {
			env[k] = r.Replace(v)
		}
		s.Env = env
	}
	return s, nil
}
