// Package hooks runs the user's pre- and post-tool-use hooks: external commands run through the
// system shell (`/bin/sh -c` on Unix, `cmd.exe /S /C` on Windows: internal/sysshell) that
// receive one tool call as JSON on stdin. A hook runs outside every sandbox, so it gets a minimal
// environment (never massgen's API keys), only from files the user approved (see
// permissions/trust), in an empty private folder, and the programs and scripts its command line
// names (Analyze) run from the exact bytes that were approved: each is opened once, hashed,
// checked and run from that copy (a private file no agent can reach, see launch.Image).
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/launch"
	"github.com/massgen-go/massgen/internal/sysshell"
)

// Hook is a hook ready to run: as configured, the rules file that defines it, and the programs
// and scripts its command line names, each with the hash it must have.
type Hook struct {
	configs.Hook
	// File is the rules file that defines it ("" when built in code): a stale approval names it.
	File     string
	Programs []Program
}

// Set is an agent's hooks with what runs them.
type Set struct {
	Pre, Post []Hook
	Runner    *Runner
}

// Prepare readies hooks that need no approval (built-in configs, tests): each program and
// script keeps the content it has now. baseDir and environ are as for Analyze.
func Prepare(hs []configs.Hook, baseDir string, environ []string) ([]Hook, error) {
	out := make([]Hook, 0, len(hs))
	for _, h := range hs {
		progs, err := Analyze(h.Command, baseDir, environ)
		if err != nil {
			return nil, fmt.Errorf("hook %q: %w", h.Command, err)
		}
		for i := range progs {
			if progs[i].Sum, err = launch.Sum(progs[i].Real); err != nil {
				return nil, fmt.Errorf("hook %q: %w", h.Command, err)
			}
		}
		out = append(out, Hook{Hook: h, Programs: progs})
	}
	return out, nil
}

// Runner runs hooks. Its zero value works: each run then gets a temporary folder and reads its
// programs anew.
type Runner struct {
	// Area is the private area hooks run in (an empty folder of their own per run).
	Area *launch.Area
	// Images keeps the hashed copies of programs and scripts for the run.
	Images *launch.Images
}

// StaleError is a hook whose program or script changed since it was approved.
type StaleError struct {
	Hook string
	File string // the rules file (the approval to renew); "" for rules built in code
	Err  *launch.StaleError
}

func (e *StaleError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("its approval is stale: %v, and it was not run", e.Err)
	}
	return fmt.Sprintf("its approval is stale: %v, and it was not run; review it, then approve %s again with: massgen permissions trust %s", e.Err, e.File, e.File)
}

// DefaultTimeout applies when a hook sets none.
const DefaultTimeout = 30 * time.Second

// Events a hook runs on.
const (
	PreToolUse  = "pre_tool_use"
	PostToolUse = "post_tool_use"
)

// Input is what a hook reads on stdin.
type Input struct {
	Event     string         `json:"event"`
	Agent     string         `json:"agent"`
	Role      string         `json:"role"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Decision  Decision       `json:"decision"`
	Result    *string        `json:"result,omitempty"`
	IsError   *bool          `json:"is_error,omitempty"`
	// Workspace is the agent's workspace, given as MASSGEN_WORKSPACE (not on stdin).
	Workspace string `json:"-"`
}

// Decision is the permission decision the hook is told about.
type Decision struct {
	Allow  bool   `json:"allow"`
	Ask    bool   `json:"ask,omitempty"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// Matches reports whether h applies to a tool known by any of names (its full name, the name
// without its MCP prefix). An empty matcher or "*" matches every tool.
func Matches(h configs.Hook, names ...string) bool {
	if h.Matcher == "" || h.Matcher == "*" {
		return true
	}
	for _, n := range names {
		if ok, _ := filepath.Match(h.Matcher, n); ok {
			return true
		}
	}
	return false
}

// Verdict is what the pre-tool-use hooks said about a call.
type Verdict int

const (
	Keep  Verdict = iota // every hook exited 0 without a decision: the policy's decision stands
	Allow                // a hook printed {"decision": "allow"}: it settles a question
	Deny                 // a hook refused (exit 2, or {"decision": "deny"})
	Fail                 // a hook failed (could not start, timed out, other exit status)
)

// Outcome is the verdict of Pre, with the hook that gave it and its reason.
type Outcome struct {
	Verdict Verdict
	Hook    string // the hook's command ("" for Keep)
	Reason  string
}

// Pre runs the pre-tool-use hooks in order until one denies or fails. environ is the process
// environment the minimal one is taken from (os.Environ()).
func (r *Runner) Pre(ctx context.Context, hs []Hook, names []string, in Input, environ []string) Outcome {
	out := Outcome{Verdict: Keep}
	for _, h := range hs {
		if !Matches(h.Hook, names...) {
			continue
		}
		res, err := r.Run(ctx, h, in, environ)
		switch {
		case err != nil:
			return Outcome{Verdict: Fail, Hook: h.Command, Reason: err.Error()}
		case res.Code == 2:
			msg := strings.TrimSpace(res.Stderr)
			if msg == "" {
				msg = "no reason given"
			}
			return Outcome{Verdict: Deny, Hook: h.Command, Reason: msg}
		case res.Code != 0:
			return Outcome{Verdict: Fail, Hook: h.Command, Reason: fmt.Sprintf("exited with status %d: %s", res.Code, strings.TrimSpace(res.Stderr))}
		}
		// Exit 0 may carry {"decision": "allow"|"deny", "reason": "..."}.
		var o struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}
		if s := strings.TrimSpace(res.Stdout); strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &o) == nil {
			switch strings.ToLower(o.Decision) {
			case "deny", "block":
				return Outcome{Verdict: Deny, Hook: h.Command, Reason: o.Reason}
			case "allow", "approve":
				if out.Verdict == Keep {
					out = Outcome{Verdict: Allow, Hook: h.Command}
				}
			}
		}
	}
	return out
}

// Failure is a post-tool-use hook that failed.
type Failure struct {
	Hook   string
	Status int
	Stderr string
	Err    error
}

// Post runs the post-tool-use hooks and returns those that failed (the call already happened).
func (r *Runner) Post(ctx context.Context, hs []Hook, names []string, in Input, environ []string) []Failure {
	var fails []Failure
	for _, h := range hs {
		if !Matches(h.Hook, names...) {
			continue
		}
		res, err := r.Run(ctx, h, in, environ)
		if err != nil || res.Code != 0 {
			fails = append(fails, Failure{Hook: h.Command, Status: res.Code, Stderr: res.Stderr, Err: err})
		}
	}
	return fails
}

// Result is how one hook run ended.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs one hook through the system shell (sysshell.Command) in an empty private folder,
// the call as JSON on stdin and MinimalEnv(environ, in) as its environment. Each program and
// script its command line names is opened once, hashed and checked against its Sum, and the
// command runs it from that copy; one that changed is not run (a *StaleError). err is set when
// it could not run or timed out; otherwise Code is its exit status.
func (r *Runner) Run(ctx context.Context, h Hook, in Input, environ []string) (Result, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return Result{Code: -1}, fmt.Errorf("encoding the call: %w", err)
	}
	timeout := DefaultTimeout
	if h.TimeoutSeconds > 0 {
		timeout = time.Duration(h.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir, images, done, err := r.prepare()
	if err != nil {
		return Result{Code: -1}, err
	}
	defer done()
	paths := make([]string, len(h.Programs))
	for i, p := range h.Programs {
		img, err := images.Get(p.Real, p.Sum)
		var se *launch.StaleError
		if errors.As(err, &se) {
			return Result{Code: -1}, &StaleError{Hook: h.Command, File: h.File, Err: se}
		}
		if err != nil {
			return Result{Code: -1}, fmt.Errorf("hook %q: %w", h.Command, err)
		}
		paths[i] = img.Path()
	}
	cmd, err := sysshell.Command(ctx, rewrite(h.Command, h.Programs, paths))
	if err != nil {
		return Result{Code: -1}, fmt.Errorf("hook %q: %w", h.Command, err)
	}
	cmd.Dir = dir
	cmd.Env = MinimalEnv(environ, in)
	cmd.Stdin = bytes.NewReader(data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	res := Result{Code: -1, Stdout: stdout.String(), Stderr: stderr.String()}
	if ctx.Err() != nil {
		return res, fmt.Errorf("timed out after %s", timeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.Code = ee.ExitCode()
		return res, nil
	}
	if err != nil {
		return res, err
	}
	res.Code = 0
	return res, nil
}

// prepare returns the run's empty private folder and the images to run from, and what to do
// when the run is over.
func (r *Runner) prepare() (string, *launch.Images, func(), error) {
	area := (*launch.Area)(nil)
	var owned []func()
	if r != nil {
		area = r.Area
	}
	if area == nil {
		a, err := launch.NewArea(launch.Base(nil))
		if err != nil {
			return "", nil, nil, fmt.Errorf("hook: %w", err)
		}
		area = a
		owned = append(owned, func() { a.Close() })
	}
	dir, err := area.Mkdir("hook")
	if err != nil {
		for _, f := range owned {
			f()
		}
		return "", nil, nil, fmt.Errorf("hook: %w", err)
	}
	var images *launch.Images
	if r != nil {
		images = r.Images
	}
	if images == nil {
		images = launch.NewImages(area)
		owned = append(owned, images.Close)
	}
	return dir, images, func() {
		os.RemoveAll(dir)
		for i := len(owned) - 1; i >= 0; i-- {
			owned[i]()
		}
	}, nil
}

// passed are the variables a hook inherits from massgen's environment (LC_* too), named in
// upper case: Windows spells some in mixed case (Path, SystemRoot) and compares them without
// case. The Windows ones are what programs there need to start (SystemRoot, PATHEXT, ComSpec)
// and the user's own folders, as HOME is on Unix.
var passed = map[string]bool{
	"PATH": true, "HOME": true, "LANG": true, "TERM": true, "TZ": true, "USER": true,
	"LOGNAME": true, "TMPDIR": true,
	"PATHEXT": true, "SYSTEMROOT": true, "SYSTEMDRIVE": true, "WINDIR": true, "COMSPEC": true,
	"TEMP": true, "TMP": true, "USERPROFILE": true, "USERNAME": true, "OS": true,
	"PROCESSOR_ARCHITECTURE": true, "NUMBER_OF_PROCESSORS": true, "PROGRAMFILES": true, "PROGRAMDATA": true,
}

// MinimalEnv is a hook's environment: the variables of passed (PATH, HOME, LANG, LC_*, TERM, TZ,
// USER, LOGNAME, TMPDIR and their Windows counterparts)
// from environ, plus MASSGEN_HOOK_EVENT, MASSGEN_AGENT, MASSGEN_ROLE, MASSGEN_TOOL and (when
// known) MASSGEN_WORKSPACE. Nothing else: API keys, tokens and massgen's own settings stay out.
func MinimalEnv(environ []string, in Input) []string {
	env := make([]string, 0, 16)
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if ok && (passed[strings.ToUpper(k)] || strings.HasPrefix(k, "LC_")) {
			env = append(env, kv)
		}
	}
	// Python never puts the working folder or a script's own folder on its module path.
	env = append(env, "PYTHONSAFEPATH=1")
	env = append(env, "MASSGEN_HOOK_EVENT="+in.Event, "MASSGEN_AGENT="+in.Agent, "MASSGEN_ROLE="+in.Role, "MASSGEN_TOOL="+in.Tool)
	if in.Workspace != "" {
		env = append(env, "MASSGEN_WORKSPACE="+in.Workspace)
	}
	return env
}
