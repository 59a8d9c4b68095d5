package app

import (
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

// TestYesContextPath: --yes adds the current directory (write) only where the prompt's answer
// would be the run's only context path, and never the home folder or the filesystem root.
func TestYesContextPath(t *testing.T) {
	wd, home := t.TempDir(), t.TempDir()
	ws := configs.Agent{ID: "a", Backend: configs.Backend{CWD: filepath.Join(wd, ".massgen", "workspaces", "w")}}
	withPaths := &configs.Config{Agents: []configs.Agent{ws}}
	withPaths.Orchestrator.ContextPaths = []configs.ContextPath{{Path: filepath.Join(wd, "src"), Permission: "read"}}
	for _, tt := range []struct {
		name    string
		opts    RunOptions
		cfg     *configs.Config
		wd      string
		wantAdd bool
		note    bool
	}{
		{"--yes, workspace, nothing named: the current directory", RunOptions{Yes: true}, &configs.Config{Agents: []configs.Agent{ws}}, wd, true, true},
		{"no --yes", RunOptions{}, &configs.Config{Agents: []configs.Agent{ws}}, wd, false, false},
		{"--context given", RunOptions{Yes: true, Contexts: []string{"src"}}, &configs.Config{Agents: []configs.Agent{ws}}, wd, false, false},
		{"resuming", RunOptions{Yes: true, Continue: true}, &configs.Config{Agents: []configs.Agent{ws}}, wd, false, false},
		{"the config names its paths", RunOptions{Yes: true}, withPaths, wd, false, false},
		{"no workspace", RunOptions{Yes: true}, &configs.Config{Agents: []configs.Agent{{ID: "a"}}}, wd, false, false},
		{"the home folder", RunOptions{Yes: true}, &configs.Config{Agents: []configs.Agent{ws}}, home, false, true},
		{"the filesystem root", RunOptions{Yes: true}, &configs.Config{Agents: []configs.Agent{ws}}, filepath.VolumeName(wd) + string(filepath.Separator), false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cp, ok, note := yesContextPath(&tt.opts, tt.cfg, tt.wd, home)
			if ok != tt.wantAdd || (note != "") != tt.note {
				t.Fatalf("added %v (%+v), note %q", ok, cp, note)
			}
			if ok && (cp.Path != filepath.Clean(tt.wd) || cp.Permission != "write") {
				t.Errorf("context path %+v, want %s (write)", cp, tt.wd)
			}
		})
	}
}
