package filesystem

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/filesystem/sandbox"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

const (
	defaultCommandTimeout = 60
	maxCommandTimeout     = 600
	maxCommandOutput      = 64 << 10
)

type commandResult struct {
	Command string `json:"command"`
	WorkDir string `json:"work_dir"`
	Success bool   `json:"success"`
	// Removed lists system paths (.git, .env, .massgen) the command created outside the
	// workspace, which were removed (see systemNames).
	Removed []string `json:"removed_system_paths,omitempty"`
	sandbox.Result
}

func (r commandResult) failure() string {
	switch {
	case r.Success:
		return ""
	case r.TimedOut:
		return "the command timed out"
	}
	return fmt.Sprintf("the command exited with status %d", r.ExitCode)
}

// sandboxPolicy is what commands may touch: the agent's roots, with protected and
// default-excluded paths under writable roots kept read-only and private paths hidden.
func (t *Toolset) sandboxPolicy() sandbox.Policy {
	var p sandbox.Policy
	for _, r := range t.pol.ReadableRoots() {
		p.Read = append(p.Read, resolveRoot(r))
	}
	writable := t.pol.WritableRoots()
	if ws := t.pol.Spec().Workspace; ws != "" && t.pol.CheckPath(ws, permissions.Write).Allow {
		// WritableRoots drops roots nested in others; the workspace is listed on its own so
		// that it stays writable when it lies in a read-only part of a writable root (the
		// default <project>/.massgen/workspaces/<id> with the project a writable context path).
		writable = append(writable, ws)
	}
	for _, w := range writable {
		p.Write = append(p.Write, resolveRoot(w))
		for _, k := range t.pol.ExcludedUnder(w) {
			p.Keep = append(p.Keep, resolveRoot(k))
		}
	}
	for _, h := range t.pol.Spec().Private {
		p.Hide = append(p.Hide, resolveRoot(h))
	}
	return p
}

func (t *Toolset) executeCommand(ctx context.Context, c *call) (any, error) {
	command, err := c.str("command", true)
	if err != nil {
		return nil, err
	}
	wd, err := c.str("work_dir", false)
	if err != nil {
		return nil, err
	}
	timeout, err := c.integer("timeout", defaultCommandTimeout)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = defaultCommandTimeout
	}
	if timeout > maxCommandTimeout {
		timeout = maxCommandTimeout
	}
	// The working directory was walked once by the decision: the command starts in that
	// directory (a handle), whatever its path leads to by now.
	arg := "work_dir"
	if wd == "" {
		if t.pol.Spec().Workspace == "" {
			return nil, fmt.Errorf("work_dir is required: this agent has no workspace")
		}
		arg = toolargs.DefaultWorkDirArg
	}
	w, d, err := c.dirOf(arg)
	if err != nil {
		return nil, fmt.Errorf("work_dir: %w", err)
	}
	defer d.Close()
	dirFile, err := d.File()
	if err != nil {
		return nil, fmt.Errorf("work_dir: %w", err)
	}
	defer dirFile.Close()
	pol := t.sandboxPolicy()
	inv, pol, note := t.beforeCommand(ctx, pol) // change journal: see journal_command.go
	started := time.Now()
	res, err := sandbox.Run(ctx, sandbox.Options{
		Mode: t.o.Sandbox, Command: command, Dir: w.Path, DirHandle: dirFile,
		Timeout: time.Duration(timeout) * time.Second, MaxOutput: maxCommandOutput,
		Policy: pol,
	})
	out := commandResult{Command: command, WorkDir: w.Path, Success: res.ExitCode == 0 && !res.TimedOut, Result: res}
	if t.o.Sandbox != sandbox.ModeNone {
		if removed := t.removeNewSystemPaths(pol, started); len(removed) > 0 {
			out.Removed = removed
			out.Stderr += fmt.Sprintf("\nmassgen: removed %s: .git, .env and .massgen are never created outside your workspace\n", strings.Join(removed, ", "))
		}
	}
	t.afterCommand(ctx, inv, pol.Keep)
	out.Stderr += note
	if err != nil {
		return nil, err
	}
	return out, nil
}

// systemNames are the default-excluded names whose mere creation in a user's directory is
// dangerous: .git (hooks and core.fsmonitor run code in the user's next git command), .env
// (read by the next massgen run: OPENAI_BASE_URL and friends) and .massgen (permissions.yaml:
// project rules of the next run). The kernel sandbox keeps existing ones read-only but cannot
// stop a command from creating a new one in a writable directory, so what a command created is
// removed right after it.
var systemNames = map[string]bool{".git": true, ".env": true, ".massgen": true}

// removeNewSystemPaths removes .git/.env/.massgen entries under the writable roots (outside the
// workspace) that were not there when the command started (pol.Keep lists those).
func (t *Toolset) removeNewSystemPaths(pol sandbox.Policy, started time.Time) []string {
	existed := map[string]bool{}
	for _, k := range pol.Keep {
		existed[k] = true
	}
	ws := ""
	if w := t.pol.Spec().Workspace; w != "" {
		ws = resolveRoot(w)
	}
	var removed []string
	for _, root := range pol.Write {
		if ws != "" && under(root, ws) {
			continue
		}
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if p != root && ((ws != "" && p == ws) || t.isPrivate(p)) {
				return filepath.SkipDir
			}
			if p == root || !systemNames[strings.ToLower(d.Name())] && !existed[p] {
				return nil
			}
			if existed[p] {
				if d.IsDir() {
					return filepath.SkipDir // read-only for the command: nothing new inside
				}
				return nil
			}
			if born, ok := birthTime(p); ok && born.Before(started.Add(-time.Second)) {
				// Older than the command (a directory massgen could not list before and the
				// command opened up): the user's, not the command's. Never removed.
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if err := os.RemoveAll(p); err != nil {
				t.log.Warn("could not remove a system path a command created", zap.String("path", p), zap.Error(err))
			} else {
				removed = append(removed, p)
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		})
	}
	return removed
}

// birthTime is the creation time of p (statx), when the filesystem records one.
func birthTime(p string) (time.Time, bool) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &st); err != nil || st.Mask&unix.STATX_BTIME == 0 {
		return time.Time{}, false
	}
	return time.Unix(st.Btime.Sec, int64(st.Btime.Nsec)), true
}
