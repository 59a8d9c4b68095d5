package app

import (
	"path/filepath"

	"github.com/massgen-go/massgen/configs"
)

// --yes answers every question with its default, the context-path prompt's included: its
// highlighted "Yes (write access for the final agent)", the current directory. It does so only
// where that answer would be the run's only context path: no --context, no resumed session
// (its own paths are restored), none in the config (a config that names its context paths has
// chosen them; --yes adds nothing to them), and some agent has a workspace (as the prompt asks
// only then). The home folder and the filesystem root are never added this way: write access
// to every file of the user takes an explicit --context.

// yesContextPath is the context path --yes adds (ok false when none), and the line that says
// so, or why it added none.
func yesContextPath(opts *RunOptions, cfg *configs.Config, wd, home string) (cp configs.ContextPath, ok bool, note string) {
	if !opts.Yes || len(opts.Contexts) > 0 || opts.resuming() || len(cfg.Orchestrator.ContextPaths) > 0 || !cfg.HasWorkspaces() {
		return configs.ContextPath{}, false, ""
	}
	dir := filepath.Clean(wd)
	if dir == filepath.Dir(dir) || (home != "" && dir == filepath.Clean(home)) {
		return configs.ContextPath{}, false, "--yes: the current directory is your home folder or the filesystem root: not added as a context path (pass --context . to share it)."
	}
	return configs.ContextPath{Path: dir, Permission: "write"}, true,
		"--yes: added the current directory as a context path with write access (the prompt's default; --context chooses others)."
}
