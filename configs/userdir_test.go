package configs

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestUserConfigDir(t *testing.T) {
	tests := []struct {
		name string
		env  env
		home string
		want string
	}{
		{"XDG_CONFIG_HOME", env{"XDG_CONFIG_HOME": "/xdg"}, "/home/u", "/xdg/massgen"},
		{"default under home", nil, "/home/u", "/home/u/.config/massgen"},
		{"relative XDG_CONFIG_HOME is ignored", env{"XDG_CONFIG_HOME": "rel"}, "/home/u", "/home/u/.config/massgen"},
		{"nothing known", nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UserConfigDir(tt.env.lookup, tt.home); got != tt.want {
				t.Errorf("UserConfigDir = %q, want %q", got, tt.want)
			}
		})
	}
}

// Without --config: ./.massgen/config.yaml, then $XDG_CONFIG_HOME/massgen/config.yaml (or
// ~/.config/massgen/config.yaml), then ~/.massgen/config.yaml; a user-level file hidden by
// another is returned as shadowed.
func TestDefaultConfigName(t *testing.T) {
	const (
		project = "project/.massgen/config.yaml"
		xdg     = "xdg/massgen/config.yaml"
		dotcfg  = "home/.config/massgen/config.yaml"
		legacy  = "home/.massgen/config.yaml"
	)
	tests := []struct {
		name         string
		files        []string
		xdg          bool // XDG_CONFIG_HOME is set
		want         string
		wantShadowed []string
	}{
		{"none", nil, false, "", nil},
		{"legacy only", []string{legacy}, false, legacy, nil},
		{"~/.config before ~/.massgen", []string{dotcfg, legacy}, false, dotcfg, []string{legacy}},
		{"XDG_CONFIG_HOME replaces ~/.config", []string{dotcfg, xdg}, true, xdg, nil},
		{"project first, the user's files are not mentioned", []string{project, xdg, legacy}, true, project, nil},
		{"a directory is not a config", []string{legacy, "home/.config/massgen/config.yaml/x"}, false, legacy, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tt.files {
				write(t, root, f, "agents: []\n")
			}
			e := env{}
			if tt.xdg {
				e["XDG_CONFIG_HOME"] = filepath.Join(root, "xdg")
			}
			got, shadowed, ok := DefaultConfigName(filepath.Join(root, "project"), filepath.Join(root, "home"), e.lookup)
			rel := func(p string) string {
				r, _ := filepath.Rel(root, p)
				return r
			}
			if ok != (tt.want != "") || (ok && rel(got) != tt.want) {
				t.Errorf("DefaultConfigName = %q, %v; want %q", got, ok, tt.want)
			}
			var sh []string
			for _, s := range shadowed {
				sh = append(sh, rel(s))
			}
			if !slices.Equal(sh, tt.wantShadowed) {
				t.Errorf("shadowed = %q, want %q", sh, tt.wantShadowed)
			}
		})
	}
}
