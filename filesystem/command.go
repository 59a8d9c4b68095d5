package filesystem

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/permissions"
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
	sandbox.Result
}

func (r commandResult) failure() string {
	switch {
	case r.Success:
		return ""
	case r.TimedOut && r.Limit != "":
		return "the command timed out; " + r.Limit
	case r.TimedOut:
		return "the command timed out"
	case r.Limit != "":
		// "killed: memory limit 2048 MiB (exit status 137)"
		return fmt.Sprintf("%s (exit status %d)", r.Limit, r.ExitCode)
	}
	return fmt.Sprintf("the command exited with status %d", r.ExitCode)
}

// sandboxPolicy is what commands may touch: the agent's roots, with protected and
// default-excluded paths under writable roots kept read-only and private paths hidden. Every
// root is the canonical path resolved once when the agent's environment was built (the Policy's
// roots.Set): nothing is resolved again here, and the sandbox's own walk from / follows no link,
// so a link retargeted since cannot move a mount. Keep paths are found below those canonical
// roots without following links: a Keep path that is a symbolic link (`ln -s /anywhere
// node_modules`) is protected as the link, never as what it points to.
func (t *Toolset) sandboxPolicy() sandbox.Policy { return sandboxPolicyOf(t.pol) }

func sandboxPolicyOf(pol *permissions.Policy) sandbox.Policy {
	var p sandbox.Policy
	set := pol.Managed()
	// ReadableRoots drops roots nested in others; a temp workspace nested in a private path
	// (<project>/.massgen/temp_workspaces/<id> with the temp workspace root private) must be
	// listed on its own to stay visible: the deeper entry decides.
	p.Read = pol.ReadableRoots()
	for _, r := range append(slices.Clone(set.Temp), set.ReadOnly...) {
		if pol.CheckCanonical(r.Path, permissions.Read).Allow {
			p.Read = append(p.Read, r.Path)
		}
	}
	writable := pol.WritableRoots()
	if ws := set.Workspace; ws != nil && pol.CheckCanonical(ws.Path, permissions.Write).Allow {
		// WritableRoots drops roots nested in others; the workspace is listed on its own so
		// that it stays writable when it lies in a read-only part of a writable root (the
		// default <project>/.massgen/workspaces/<id> with the project a writable context path).
		writable = append(writable, ws.Path)
		p.Own = append(p.Own, ws.Path)
	}
	for _, w := range writable {
		p.Write = append(p.Write, w)
		p.Keep = append(p.Keep, pol.ExcludedUnder(w)...)
	}
	for _, h := range set.Private {
		p.Hide = append(p.Hide, h.Path)
	}
	return p
}

// SandboxPolicy is what the agent's commands may touch under pol (as execute_command's).
func SandboxPolicy(pol *permissions.Policy) sandbox.Policy { return sandboxPolicyOf(pol) }

// SandboxWorkspace is the agent's workspace as resolved when its environment was built (the
// working directory of its custom tools' processes), or "" when it has none.
func SandboxWorkspace(pol *permissions.Policy) string {
	if ws := pol.Managed().Workspace; ws != nil {
		return ws.Path
	}
	return ""
}

// trashFromDir moves what a command's clean-up takes away (name in the opened directory dir)
// to the run's trash, when there is one.
func (t *Toolset) trashFromDir(dir *os.File, name, path string) (string, error) {
	if t.o.TrashDir == "" {
		return "", errNoTrash
	}
	// The directory is reached through its descriptor, not by its path again.
	d, err := safefs.FromFile(dir, filepath.Dir(path))
	if err != nil {
		return "", err
	}
	defer d.Close()
	fi, err := d.Lstat(name)
	if err != nil {
		return "", err
	}
	e, err := t.trash(d, name, path, fi)
	if err != nil {
		return "", err
	}
	return e.ID, nil
}
