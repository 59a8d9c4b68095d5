package configs

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/joho/godotenv"
	"gopkg.in/yaml.v3"
)

// builtinEnv returns the lowest layer of the .env chain: values massgen ships with. MassGen's
// equivalent is the package's own .env; we ship none, so only harmless defaults live here.
func builtinEnv() map[string]string {
	return map[string]string{}
}

// loadEnvChain merges built-in defaults and then files (EnvFiles: later ones win), and returns
// the files it read (Config.EnvFilesLoaded: they hold secrets, so agents may not read them). The
// real environment is consulted on top of the result by Config.LookupEnv; the process
// environment is never modified. A missing file is skipped; an unreadable or malformed one is
// an error.
func loadEnvChain(files []string) (map[string]string, []string, error) {
	env := builtinEnv()
	var loaded []string
	for _, f := range files {
		m, err := godotenv.Read(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		loaded = append(loaded, f)
		for k, v := range m {
			env[k] = v
		}
	}
	return env, loaded, nil
}

// varRE matches ${NAME}. Only the braced form is expanded, so a literal "$5" in a prompt stays.
var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// runtimePlaceholders are ${...} names filled in at run time, not from the environment
// (MassGen's ${cwd} in MCP args; the scripted backend's own placeholders).
func isRuntimePlaceholder(name string) bool {
	switch name {
	case "cwd", "WORKSPACE", "TEMP_WORKSPACE":
		return true
	}
	return strings.HasPrefix(name, "CONTEXT_")
}

// noExpand are paths whose text is left alone: prompts (which may quote shell or JavaScript
// `${x}`) and scripted-backend steps (their placeholders are filled at run time).
func noExpand(path string) bool {
	return strings.HasSuffix(path, ".system_message") || strings.HasSuffix(path, ".script") || strings.Contains(path, ".script[")
}

// expandVars replaces ${VAR} in every string scalar of the tree with its value from lookup.
// Undefined variables are left as written and reported, except that an api_key made only of an
// undefined variable becomes empty, so the backend reports the missing key by its usual name.
func (d *document) expandVars(lookup func(string) (string, bool), warn func(line int, msg string)) {
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], joinPath(path, n.Content[i].Value))
			}
		case yaml.AliasNode:
			if seen[n.Alias] {
				return
			}
			if !d.aliases().follow(n) {
				return
			}
			walk(n.Alias, path)
			d.aliases().leave()
		case yaml.ScalarNode:
			if !strings.Contains(n.Value, "${") || noExpand(path) {
				return
			}
			var missing []string
			out := varRE.ReplaceAllStringFunc(n.Value, func(m string) string {
				name := m[2 : len(m)-1]
				if v, ok := lookup(name); ok {
					return v
				}
				if !isRuntimePlaceholder(name) {
					missing = append(missing, name)
				}
				return m
			})
			for _, name := range missing {
				warn(n.Line, fmt.Sprintf("%s: ${%s} is not set (left as written)", path, name))
			}
			if strings.HasSuffix(path, ".api_key") && len(missing) > 0 && varRE.FindString(out) == strings.TrimSpace(out) {
				out = ""
			}
			n.Value = out
			if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
				n.Tag = "" // a plain ${PORT} may stand for a number: let the decoder resolve it
			}
		}
	}
	walk(d.root, "")
}
