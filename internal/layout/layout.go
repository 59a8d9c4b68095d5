// Package layout names, once, what massgen keeps in a project's .massgen folder (spec:
// ".massgen Directory Structure"): the agents' workspaces, snapshots and temporary workspaces,
// sessions, run logs, the trash, the run lock, the project's permission rules and massgen's own
// state. (*configs.Config).Layout builds one from a config (the storage folders the config moves
// elsewhere included); the packages below configs (logging, wsowner, the trash, the sandbox's
// and the permission engine's protected names) read it or are handed its paths. No other file
// spells these names (TestNamesSpelledOnce).
package layout

import "path/filepath"

// DirName is the name of massgen's folder, in a project (and in the user's home).
const DirName = ".massgen"

// Names inside a .massgen folder.
const (
	workspaces     = "workspaces"
	snapshots      = "snapshots"
	tempWorkspaces = "temp_workspaces"
	sessions       = "sessions"
	logs           = "logs"
	trash          = "trash" // deleted files are kept here (filesystem's trash)
	runLock        = "run.lock"
	projectRules   = "permissions.yaml"
	state          = "state"
	configFile     = "config.yaml"
	envFile        = ".env"
)

// names are the names above, for the test that no other file spells them.
func names() []string {
	return []string{DirName, workspaces, snapshots, tempWorkspaces, sessions, logs, trash, runLock,
		projectRules, state, configFile, envFile}
}

// Layout is one .massgen folder and where each kind of state lives. The zero Layout is the
// relative folder .massgen.
type Layout struct {
	dir string
	// The storage folders a config moves elsewhere (snapshot_storage,
	// agent_temporary_workspace, session_storage); "" keeps the default under dir.
	snapshots, temp, sessions string
}

// At is the layout of the .massgen folder dir.
func At(dir string) Layout { return Layout{dir: filepath.Clean(dir)} }

// OfProject is the layout of the .massgen folder of the project folder dir.
func OfProject(dir string) Layout { return At(filepath.Join(dir, DirName)) }

// WithStorage is l with the storage folders a config names (each "" keeps l's).
func (l Layout) WithStorage(snapshots, tempWorkspaces, sessions string) Layout {
	for _, f := range []struct {
		to *string
		v  string
	}{{&l.snapshots, snapshots}, {&l.temp, tempWorkspaces}, {&l.sessions, sessions}} {
		if f.v != "" {
			*f.to = f.v
		}
	}
	return l
}

func (l Layout) in(name string) string {
	if l.dir == "" {
		return filepath.Join(DirName, name)
	}
	return filepath.Join(l.dir, name)
}

// Dir is the .massgen folder.
func (l Layout) Dir() string {
	if l.dir == "" {
		return DirName
	}
	return l.dir
}

// Workspaces holds the agents' workspaces given as relative cwd.
func (l Layout) Workspaces() string { return l.in(workspaces) }

// Snapshots holds each agent's latest shared work (snapshot_storage by default).
func (l Layout) Snapshots() string { return l.or(l.snapshots, snapshots) }

// TempWorkspaces holds, per agent, the copies of the others' snapshots it sees
// (agent_temporary_workspace by default).
func (l Layout) TempWorkspaces() string { return l.or(l.temp, tempWorkspaces) }

// Sessions holds the multi-turn sessions (session_storage by default).
func (l Layout) Sessions() string { return l.or(l.sessions, sessions) }

// Logs holds one folder per run (logging).
func (l Layout) Logs() string { return l.in(logs) }

// Trash holds what the agents, the sandbox's clean-up and undo removed, one folder per run.
func (l Layout) Trash() string { return l.in(trash) }

// RunLock is the lock file a run and the commands that change the project's state take.
func (l Layout) RunLock() string { return l.in(runLock) }

// ProjectRules is the project's permission rules file.
func (l Layout) ProjectRules() string { return l.in(projectRules) }

// State holds massgen's own records (the workspaces it owns, below OwnedWorkspaces).
func (l Layout) State() string { return l.in(state) }

// OwnedWorkspaces holds the records of the workspaces massgen owns (wsowner).
func (l Layout) OwnedWorkspaces() string { return filepath.Join(l.State(), workspaces) }

// ConfigFile is the config a run uses when none is named (in a project's .massgen folder,
// else in the user's).
func (l Layout) ConfigFile() string { return l.in(configFile) }

// EnvFile is the .env file in the folder (the user's ~/.massgen/.env is read for API keys).
func (l Layout) EnvFile() string { return l.in(envFile) }

func (l Layout) or(configured, name string) string {
	if configured != "" {
		return configured
	}
	return l.in(name)
}

// IsProjectRules reports whether path names a project rules file: permissions.yaml directly in
// a .massgen folder.
func IsProjectRules(path string) bool {
	return filepath.Base(path) == projectRules && filepath.Base(filepath.Dir(path)) == DirName
}

// Enclosing is the nearest folder above p named .massgen ("" when there is none).
func Enclosing(p string) string {
	for d := filepath.Dir(filepath.Clean(p)); ; d = filepath.Dir(d) {
		if filepath.Base(d) == DirName {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
