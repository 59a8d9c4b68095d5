package configs

import (
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen/internal/layout"
)

// UserConfigDir is MassGen's per-user folder: $XDG_CONFIG_HOME/massgen when XDG_CONFIG_HOME is
// an absolute path (the XDG rule: a relative one is ignored), else <home>/.config/massgen; ""
// when neither is known. It holds config.yaml, .env and the trust store.
func UserConfigDir(lookupEnv func(string) (string, bool), home string) string {
	if lookupEnv != nil {
		if x, ok := lookupEnv("XDG_CONFIG_HOME"); ok && filepath.IsAbs(x) {
			return filepath.Join(x, "massgen")
		}
	}
	if filepath.IsAbs(home) {
		return filepath.Join(home, ".config", "massgen")
	}
	return ""
}

// ConfigCandidates are the files looked for, in this order, when --config is not given:
// ./.massgen/config.yaml (the project's), UserConfigDir()/config.yaml (MassGen's location,
// ~/.config/massgen/config.yaml by default), then ~/.massgen/config.yaml. Unknown folders are
// left out.
func ConfigCandidates(baseDir, home string, lookupEnv func(string) (string, bool)) []string {
	var out []string
	if baseDir != "" {
		out = append(out, layout.OfProject(baseDir).ConfigFile())
	}
	if d := UserConfigDir(lookupEnv, home); d != "" {
		out = append(out, filepath.Join(d, "config.yaml"))
	}
	if home != "" {
		out = append(out, layout.OfProject(home).ConfigFile()) // ~/.massgen is laid out as a project's
	}
	return out
}

// DefaultConfigName returns the config used when --config is not given: the first of
// ConfigCandidates that is a file. shadowed lists the user-level files (~/.config/massgen/,
// ~/.massgen/) that exist but are not used because another user-level file comes first, for
// callers to say so; a project's own config overriding the user's is the point and not listed.
// ok is false when none exists.
func DefaultConfigName(baseDir, home string, lookupEnv func(string) (string, bool)) (name string, shadowed []string, ok bool) {
	for i, p := range ConfigCandidates(baseDir, home, lookupEnv) {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			continue
		}
		switch {
		case !ok:
			name, ok = p, true
			if i == 0 && baseDir != "" { // the project's config
				return name, nil, true
			}
		default:
			shadowed = append(shadowed, p)
		}
	}
	return name, shadowed, ok
}

// EnvFiles are the .env files merged, lowest priority first: ~/.massgen/.env,
// UserConfigDir()/.env (where MassGen's setup saves keys), ./.env. The real environment is
// consulted above them all (Config.LookupEnv).
func EnvFiles(baseDir, home string, lookupEnv func(string) (string, bool)) []string {
	var files []string
	if home != "" {
		files = append(files, layout.OfProject(home).EnvFile())
	}
	if d := UserConfigDir(lookupEnv, home); d != "" {
		files = append(files, filepath.Join(d, ".env"))
	}
	if baseDir != "" {
		files = append(files, filepath.Join(baseDir, ".env"))
	}
	return files
}
