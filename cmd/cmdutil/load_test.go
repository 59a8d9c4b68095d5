package cmdutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without --config the user's config is found in MassGen's location ($XDG_CONFIG_HOME/massgen/
// or ~/.config/massgen/) before ~/.massgen/, and a file that is not used is named.
func TestLoadConfigDefaultLookup(t *testing.T) {
	root := t.TempDir()
	wd, home, xdg := filepath.Join(root, "wd"), filepath.Join(root, "home"), filepath.Join(root, "xdg")
	put := func(p, model string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("agent:\n  id: a\n  backend: {type: openai, model: "+model+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(home, ".massgen", "config.yaml"), "legacy")
	put(filepath.Join(xdg, "massgen", "config.yaml"), "xdg")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": xdg}
	ios, _, _ := TestStreams("")
	f := &Factory{IO: ios, Getwd: func() (string, error) { return wd, nil }, HomeDir: func() (string, error) { return home, nil },
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	cfg, warnings, err := f.LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Agents[0].Backend.Model; got != "xdg" {
		t.Errorf("model = %q: the XDG config must come first", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].String(), filepath.Join(home, ".massgen", "config.yaml")+": warning: not used: "+filepath.Join(xdg, "massgen", "config.yaml")+" comes first") {
		t.Errorf("warnings = %v", warnings)
	}
	// The project's own config comes before both, and then neither user file is a surprise.
	put(filepath.Join(wd, ".massgen", "config.yaml"), "project")
	cfg, warnings, err = f.LoadConfig("")
	if err != nil || cfg.Agents[0].Backend.Model != "project" || len(warnings) != 0 {
		t.Fatalf("cfg %v, warnings %v, err %v", cfg, warnings, err)
	}
	// None at all: exit 2 naming the places.
	delete(env, "XDG_CONFIG_HOME")
	f.Getwd = func() (string, error) { return root, nil }
	f.HomeDir = func() (string, error) { return filepath.Join(root, "nohome"), nil }
	if _, _, err := f.LoadConfig(""); CodeOf(err) != ExitUsage || !strings.Contains(err.Error(), "~/.config/massgen/config.yaml") {
		t.Errorf("err = %v", err)
	}
}
