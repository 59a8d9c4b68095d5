// Package customtools offers the config's custom_tools (MassGen's Python functions named by
// file and function) as tools. Every call is a python3 process in the agent's command sandbox
// (execute_command's, with the agent's policy): the arguments go to it as JSON on stdin, the
// result comes back as JSON on stdout, under a timeout. A tool's schema comes from the config or
// from reading the function's signature, type hints and docstring once, sandboxed too, cached
// for the run.
package customtools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/sandbox"
)

// runnerPy imports the tool's file and calls or describes its functions (see its header).
//
//go:embed runner.py
var runnerPy string

const (
	// runnerEnv carries the runner's text to python3 -c.
	runnerEnv = "MASSGEN_TOOL_RUNNER"
	// requestEOF ends the request's here-document; a one-line JSON object never equals it.
	requestEOF = "MASSGEN_TOOL_REQUEST_EOF"
	// maxRequest keeps the command line under the kernel's limit for one argument (128 KiB).
	maxRequest = 100 << 10
	// maxAnswer caps what a call may answer.
	maxAnswer = 1 << 20
	// describeTimeout bounds reading one file's functions.
	describeTimeout = 60 * time.Second
	// workspaceArg is the argument MassGen fills with the agent's workspace.
	workspaceArg = "agent_cwd"
)

// Cache holds, for one run, what reading the functions learnt (by file and function), so each
// is read once however many agents offer it. It is safe for concurrent use.
type Cache struct {
	mu sync.Mutex
	m  map[[2]string]description
}

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{m: map[[2]string]description{}} }

func (c *Cache) get(file, fn string) (description, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[[2]string{file, fn}]
	return d, ok
}

func (c *Cache) put(file, fn string, d description) {
	c.mu.Lock()
	c.m[[2]string{file, fn}] = d
	c.mu.Unlock()
}

// description is what the runner read of one function.
type description struct {
	Parameters  map[string]any `json:"parameters"`
	Description string         `json:"description"`
	Accepts     []string       `json:"accepts"`
	VarKwargs   bool           `json:"var_kwargs"`
}

// Options build one agent's custom tools.
type Options struct {
	Config *configs.Config
	Agent  int // index in Config.Agents
	// Sandbox is what reading the functions runs under: the agent's coordination sandbox.
	Sandbox filesystem.CommandSandbox
	// Describe reads the functions that have no configured schema or description, once per
	// Cache. Without it (deciding only) nothing runs: such tools are offered with an empty
	// schema and the function's name as description.
	Describe bool
	Cache    *Cache // nil: a new one
	// LookPath finds python3 (default: on PATH, as the sandbox's commands see it, skipping
	// those Shaped refuses).
	LookPath func(sb filesystem.CommandSandbox) (string, error)
	// Shaped says why some agent could change what lies at a path ("" when none can). A tool
	// whose file, or the folder holding it (its imports come from there first), lies in such a
	// place is refused: an agent would run its code with the tool's env and in every agent's
	// sandbox that offers the tool. nil: no such check.
	Shaped func(path string) string
	Logger *zap.Logger
}

// Provider is one agent's custom tools (a filesystem.Custom). It is safe for concurrent use.
type Provider struct {
	agentID, backendType string
	python               string
	tools                []*tool
	byName               map[string]*tool
	log                  *zap.Logger
}

type tool struct {
	configs.CustomFunction
	params      map[string]any
	description string
	accepts     []string // nil: unknown (not read)
	varKwargs   bool
}

// New builds the agent's custom tools. Problems of the config or of a function (a file or
// function that does not exist, a module it imports that is missing, no python3) come back as a
// *configs.ValidationError naming the config's lines.
func New(ctx context.Context, o Options) (*Provider, error) {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Cache == nil {
		o.Cache = NewCache()
	}
	if o.LookPath == nil {
		o.LookPath = func(sb filesystem.CommandSandbox) (string, error) { return interpreter(sb, o.Shaped) }
	}
	cfg := o.Config
	ac := cfg.Agents[o.Agent]
	fns, probs := cfg.CustomFunctions(o.Agent)
	if len(probs) > 0 {
		return nil, &configs.ValidationError{Problems: probs}
	}
	p := &Provider{agentID: ac.ID, backendType: ac.Backend.Type, byName: map[string]*tool{},
		log: o.Logger.With(zap.String("component", "custom_tools"))}
	for _, f := range fns {
		// The file is resolved once, before any agent acts (the sandbox takes resolved roots);
		// if its name is later swapped for a link, the sandbox grants nothing there.
		if dir, err := filepath.EvalSymlinks(filepath.Dir(f.Path)); err == nil {
			f.Path = filepath.Join(dir, filepath.Base(f.Path))
		}
		if o.Shaped != nil {
			for _, place := range []string{f.Path, filepath.Dir(f.Path)} {
				if why := o.Shaped(place); why != "" {
					return nil, &configs.ValidationError{Problems: []configs.Problem{p.problem(cfg, f.Key+".path",
						"custom tool %s: its file %s lies where an agent could change it (%s: %s); the tool runs that code, and the folder's modules, with its env and in the sandbox of every agent offered it. Move it out of every path an agent may write (workspaces, writable context paths)",
						f.Name, f.Path, place, why)}}
				}
			}
		}
		t := &tool{CustomFunction: f, params: f.Parameters, description: f.Description}
		p.tools = append(p.tools, t)
		p.byName[t.Name] = t
	}
	if len(p.tools) == 0 {
		return p, nil
	}
	python, err := o.LookPath(o.Sandbox)
	if err != nil && o.Describe {
		return nil, &configs.ValidationError{Problems: []configs.Problem{p.problem(cfg, p.tools[0].Key, "custom tools %s: %v", p.names(), err)}}
	}
	p.python = python
	if o.Describe {
		if probs := p.describe(ctx, cfg, o); len(probs) > 0 {
			return nil, &configs.ValidationError{Problems: probs}
		}
	}
	for _, t := range p.tools {
		t.finish(ac.Backend.CWD != "")
	}
	return p, nil
}

func (p *Provider) names() string {
	names := make([]string, len(p.tools))
	for i, t := range p.tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func (p *Provider) problem(cfg *configs.Config, key, format string, a ...any) configs.Problem {
	file, line := cfg.Position(key)
	return configs.Problem{File: file, Line: line, Key: key, Message: key + ": " + fmt.Sprintf(format, a...)}
}

// finish settles what the model is offered: the schema without the arguments the config or
// massgen fill in, and a description.
func (t *tool) finish(hasWorkspace bool) {
	hide := slices.Collect(maps.Keys(t.Preset))
	if hasWorkspace && (slices.Contains(t.accepts, workspaceArg) || t.varKwargs) {
		hide = append(hide, workspaceArg)
	}
	if t.params == nil {
		t.params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	t.params = withoutArgs(t.params, hide)
	t.params["type"] = "object" // a configured schema may leave it out
	if t.description == "" {
		t.description = fmt.Sprintf("The Python function %s of %s.", t.Function, filepath.Base(t.Path))
	}
}

// withoutArgs is schema without the properties named in hide (a copy).
func withoutArgs(schema map[string]any, hide []string) map[string]any {
	out := maps.Clone(schema)
	props, ok := schema["properties"].(map[string]any)
	if !ok {
		return out
	}
	props = maps.Clone(props)
	for _, h := range hide {
		delete(props, h)
	}
	out["properties"] = props
	if req, ok := schema["required"].([]any); ok {
		var keep []any
		for _, r := range req {
			if s, _ := r.(string); !slices.Contains(hide, s) {
				keep = append(keep, r)
			}
		}
		if len(keep) > 0 {
			out["required"] = keep
		} else {
			delete(out, "required")
		}
	}
	return out
}

// Tools are the tools offered, in config order.
func (p *Provider) Tools() []filesystem.Tool {
	out := make([]filesystem.Tool, len(p.tools))
	for i, t := range p.tools {
		out[i] = filesystem.Tool{Name: t.Name, Description: t.description, Parameters: t.params}
	}
	return out
}

// callAnswer is the runner's answer to a call.
type callAnswer struct {
	OK    bool   `json:"ok"`
	Text  string `json:"text"`
	Error string `json:"error"`
	Kind  string `json:"kind"`
	Trace string `json:"trace"`
}

// Call runs one call of the named tool in sb. Failures (the function raised, timed out, could
// not start) are error Results, never panics.
func (p *Provider) Call(ctx context.Context, name string, args map[string]any, sb filesystem.CommandSandbox) filesystem.Result {
	t, ok := p.byName[name]
	if !ok {
		return errorResult(fmt.Sprintf("unknown custom tool %q", name), nil)
	}
	if p.python == "" {
		return errorResult(name+": no python3 that can run in the command sandbox", nil)
	}
	if args == nil {
		args = map[string]any{}
	}
	ctxVals := map[string]any{"agent_id": p.agentID, "backend_name": p.backendType}
	if sb.Workspace != "" {
		ctxVals[workspaceArg] = sb.Workspace
	}
	req := map[string]any{"op": "call", "file": t.Path, "function": t.Function, "args": args,
		"preset": t.Preset, "context": ctxVals}
	var ans callAnswer
	res, err := p.run(ctx, sb, t.Path, t.Env, req, time.Duration(t.TimeoutSeconds)*time.Second, &ans)
	p.log.Debug("custom tool call", zap.String("tool", name), zap.String("sandbox", string(res.Sandbox)),
		zap.Int64("duration_ms", res.DurationMS), zap.Int("exit_code", res.ExitCode), zap.Bool("ok", ans.OK), zap.Error(err))
	extra := map[string]any{}
	if len(res.Removed) > 0 {
		extra["removed_system_paths"] = res.Removed
	}
	if len(res.Restored) > 0 {
		extra["restored_paths"] = res.Restored
	}
	switch {
	case errors.Is(err, context.Canceled):
		return errorResult(name+": cancelled", extra)
	case res.TimedOut:
		return errorResult(fmt.Sprintf("%s: no result within %ds; the call was stopped (timeout_seconds in its custom_tools entry)", name, t.TimeoutSeconds), extra)
	case err != nil:
		return errorResult(fmt.Sprintf("%s: %v", name, err), extra)
	case !ans.OK:
		if ans.Trace != "" {
			extra["traceback"] = ans.Trace
		}
		return errorResult(fmt.Sprintf("%s: %s", name, ans.Error), extra)
	}
	extra["result"] = ans.Text
	b, merr := json.Marshal(extra)
	if merr != nil {
		return errorResult(fmt.Sprintf("%s: encoding the result: %v", name, merr), nil)
	}
	return filesystem.Result{Content: string(b)}
}

func errorResult(msg string, extra map[string]any) filesystem.Result {
	m := maps.Clone(extra)
	if m == nil {
		m = map[string]any{}
	}
	m["error"] = msg
	b, _ := json.Marshal(m)
	return filesystem.Result{Content: string(b), IsError: true, Message: msg}
}

// errNoAnswer: the runner wrote no answer (python3 could not start, or died).
var errNoAnswer = errors.New("the Python runner gave no answer")

// run runs the runner on req in sb, reading file besides what sb's policy lets it read, and
// decodes its answer into ans.
func (p *Provider) run(ctx context.Context, sb filesystem.CommandSandbox, file string, env map[string]string, req any, timeout time.Duration, ans any) (sandbox.Result, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("encoding the arguments: %w", err)
	}
	if len(body) > maxRequest {
		return sandbox.Result{}, fmt.Errorf("the arguments are %d bytes; at most %d are passed to a custom tool", len(body), maxRequest)
	}
	var cmd strings.Builder
	if sb.Workspace == "" {
		cmd.WriteString(`cd "$TMPDIR" || exit 97` + "\n")
	}
	fmt.Fprintf(&cmd, "exec %s -I -B -c \"$%s\" <<'%s'\n%s\n%s\n", shellQuote(p.python), runnerEnv, requestEOF, body, requestEOF)
	pol := sb.Policy
	pol.Read = append(slices.Clone(pol.Read), file)
	vars := []string{runnerEnv + "=" + runnerPy}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		vars = append(vars, k+"="+env[k])
	}
	res, err := sandbox.Run(ctx, sandbox.Options{
		Mode: sb.Mode, Command: cmd.String(), Dir: sb.Workspace, Timeout: timeout, MaxOutput: maxAnswer,
		Policy: pol, Env: vars, Trash: sb.Trash, Log: sb.Log, Limits: sb.Limits, Network: sb.Network,
	})
	if err != nil || res.TimedOut {
		return res, err
	}
	if jerr := json.Unmarshal([]byte(strings.TrimSpace(res.Stdout)), ans); jerr != nil {
		why := fmt.Sprintf("exit status %d", res.ExitCode)
		if res.Truncated {
			why = fmt.Sprintf("its answer is larger than %d bytes", maxAnswer)
		}
		if res.Limit != "" {
			why += "; " + res.Limit
		}
		if tail := tail(res.Stderr, 800); tail != "" {
			why += "; stderr: " + tail
		}
		return res, fmt.Errorf("%w (%s)", errNoAnswer, why)
	}
	return res, nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// describeAnswer is the runner's answer to a describe request.
type describeAnswer struct {
	OK        bool                       `json:"ok"`
	Kind      string                     `json:"kind"`
	Module    string                     `json:"module"`
	Line      int                        `json:"line"`
	Error     string                     `json:"error"`
	Functions map[string]json.RawMessage `json:"functions"`
}

type describedFunction struct {
	OK    bool   `json:"ok"`
	Kind  string `json:"kind"`
	Error string `json:"error"`
	description
}

// describe reads, one process per file, the functions whose schema or description the config
// does not give and the cache does not hold.
func (p *Provider) describe(ctx context.Context, cfg *configs.Config, o Options) []configs.Problem {
	byFile := map[string][]*tool{}
	for _, t := range p.tools {
		if d, ok := o.Cache.get(t.Path, t.Function); ok {
			t.apply(d)
			continue
		}
		byFile[t.Path] = append(byFile[t.Path], t)
	}
	files := slices.Sorted(maps.Keys(byFile))
	var probs []configs.Problem
	for _, file := range files {
		ts := byFile[file]
		var fns []string
		for _, t := range ts {
			if !slices.Contains(fns, t.Function) {
				fns = append(fns, t.Function)
			}
		}
		var ans describeAnswer
		dctx, cancel := context.WithTimeout(ctx, describeTimeout)
		sb := o.Sandbox
		sb.Workspace = "" // loading a file needs no workspace (deciding only, there may be none yet)
		res, err := p.run(dctx, sb, file, ts[0].Env, map[string]any{"op": "describe", "file": file, "functions": fns}, describeTimeout, &ans)
		cancel()
		key := ts[0].Key + ".path"
		switch {
		case res.TimedOut:
			probs = append(probs, p.problem(cfg, key, "custom tool %s: loading %s took longer than %s", ts[0].Name, file, describeTimeout))
			continue
		case err != nil:
			probs = append(probs, p.problem(cfg, key, "custom tool %s: reading %s with %s in the command sandbox failed: %v", ts[0].Name, file, p.python, err))
			continue
		case !ans.OK:
			probs = append(probs, p.problem(cfg, key, "custom tool %s: %s", ts[0].Name, loadFailure(file, p.python, ans)))
			continue
		}
		for _, t := range ts {
			var df describedFunction
			if raw, ok := ans.Functions[t.Function]; !ok || json.Unmarshal(raw, &df) != nil {
				probs = append(probs, p.problem(cfg, t.FunctionKey, "custom tool %s: the runner did not describe %s", t.Name, t.Function))
				continue
			}
			if !df.OK {
				probs = append(probs, p.problem(cfg, t.FunctionKey, "custom tool %s: %s: %s", t.Name, file, df.Error))
				continue
			}
			o.Cache.put(file, t.Function, df.description)
			t.apply(df.description)
		}
	}
	for _, t := range p.tools {
		if t.accepts == nil || t.varKwargs {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(t.Preset)) {
			if !slices.Contains(t.accepts, k) {
				probs = append(probs, p.problem(cfg, t.Key+".preset_args", "custom tool %s: %s has no parameter %s (its parameters: %s)", t.Name, t.Function, k, strings.Join(t.accepts, ", ")))
			}
		}
	}
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
	return probs
}

// apply fills in what the config left out.
func (t *tool) apply(d description) {
	if t.params == nil {
		t.params = d.Parameters
	}
	if t.description == "" {
		t.description = d.Description
	}
	t.accepts, t.varKwargs = d.Accepts, d.VarKwargs
	if t.accepts == nil {
		t.accepts = []string{}
	}
}

// loadFailure says why file could not be loaded, naming the missing module.
func loadFailure(file, python string, a describeAnswer) string {
	at := file
	if a.Line > 0 {
		at = fmt.Sprintf("%s:%d", file, a.Line)
	}
	switch a.Kind {
	case "import":
		mod := a.Module
		if mod == "" {
			return fmt.Sprintf("%s: %s", at, a.Error)
		}
		if mod == "massgen" || strings.HasPrefix(mod, "massgen.") {
			return fmt.Sprintf("%s imports %s, a module of MassGen's Python package, which is not installed for %s (massgen itself provides only massgen.tool's ExecutionResult, TextContent and context_params to tools); pip install massgen, or remove the import", at, mod, python)
		}
		top, _, _ := strings.Cut(mod, ".")
		return fmt.Sprintf("%s imports the Python module %s, which is not installed for %s or not readable inside the command sandbox (pip install %s)", at, mod, python, top)
	case "syntax":
		return fmt.Sprintf("%s: %s", at, a.Error)
	case "load":
		return fmt.Sprintf("loading %s failed: %s", at, a.Error)
	}
	return fmt.Sprintf("%s: %s", at, a.Error)
}

// Interpreter returns the python3 a process in sb can run: the first python3 on PATH that lies
// where the sandbox lets commands read (itself, or the file it links to). Without a sandbox
// (command_sandbox: none), the first on PATH.
func Interpreter(sb filesystem.CommandSandbox) (string, error) { return interpreter(sb, nil) }

// interpreter is Interpreter skipping a python3 that lies where shaped says an agent could
// change it (itself, the file it links to, or their folders).
func interpreter(sb filesystem.CommandSandbox, shaped func(string) string) (string, error) {
	var found, refused []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		cand := filepath.Join(dir, "python3")
		fi, err := os.Stat(cand)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 || slices.Contains(found, cand) {
			continue
		}
		found = append(found, cand)
		if shaped != nil {
			real, _ := filepath.EvalSymlinks(cand)
			if why := firstShaped(shaped, cand, dir, real, filepath.Dir(real)); why != "" {
				refused = append(refused, cand+" ("+why+")")
				continue
			}
		}
		if sb.Mode == sandbox.ModeNone {
			return cand, nil
		}
		if readable(sb.Policy, cand) {
			return cand, nil
		}
		if real, err := filepath.EvalSymlinks(cand); err == nil && readable(sb.Policy, real) {
			return real, nil
		}
	}
	if len(found) == 0 {
		return "", errors.New("python3 is not on PATH (install Python 3)")
	}
	if len(refused) == len(found) {
		return "", fmt.Errorf("python3 on PATH lies where an agent could change it: %s; put a python3 no agent may write first on PATH", strings.Join(refused, ", "))
	}
	return "", fmt.Errorf("python3 on PATH (%s) lies where the command sandbox does not let commands read (such as your home directory); install a system python3 (in /usr/bin), or give the agent read access to it", strings.Join(found, ", "))
}

// firstShaped is shaped's first verdict among paths ("" when none is shaped).
func firstShaped(shaped func(string) string, paths ...string) string {
	for _, p := range paths {
		if p == "" || p == "." {
			continue
		}
		if why := shaped(p); why != "" {
			return why
		}
	}
	return ""
}

// readable: commands in a sandbox with pol can read path.
func readable(pol sandbox.Policy, path string) bool {
	roots := slices.Concat(sandbox.SystemReadDirs, pol.Read, pol.Write)
	return pathx.WithinAny(path, roots) && !pathx.WithinAny(path, pol.Hide)
}
