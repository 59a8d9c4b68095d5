package configs

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strings"
)

// examplesFS holds the built-in configs: MassGen's own examples (Apache-2.0, LICENSE alongside)
// and our scripted demos. Every .yaml file under examples/ is picked up.
//
//go:embed examples
var examplesFS embed.FS

var typeOfConfig = reflect.TypeFor[Config]()

// Examples lists the built-in config names (path under examples/ without .yaml), sorted, e.g.
// "basic/multi/three_agents_default" or "demo/two_agents_deliver".
func Examples() []string {
	var names []string
	_ = fs.WalkDir(examplesFS, "examples", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := path.Ext(p); ext == ".yaml" || ext == ".yml" {
			names = append(names, strings.TrimSuffix(strings.TrimPrefix(p, "examples/"), ext))
		}
		return nil
	})
	sort.Strings(names)
	return names
}

// Example returns the text of a built-in config by name (with or without .yaml).
func Example(name string) ([]byte, error) {
	src, err := builtin(name)
	if err != nil {
		return nil, err
	}
	return src.data, nil
}

// builtin finds a built-in config: the exact name under examples/, else a unique base name
// ("three_agents_default" for "basic/multi/three_agents_default").
func builtin(name string) (source, error) {
	clean := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "@examples/"), ".yaml"), ".yml")
	clean = strings.Trim(path.Clean("/"+clean), "/")
	all := Examples()
	var match []string
	for _, n := range all {
		if n == clean {
			match = []string{n}
			break
		}
		if path.Base(n) == clean {
			match = append(match, n)
		}
	}
	switch len(match) {
	case 0:
		if s := suggestExample(clean, all); s != "" {
			return source{}, fmt.Errorf("no built-in config %q; did you mean @examples/%s? (see `massgen configs list`)", name, s)
		}
		return source{}, fmt.Errorf("no built-in config %q (see `massgen configs list`)", name)
	case 1:
	default:
		return source{}, fmt.Errorf("built-in config %q is ambiguous: %s", name, strings.Join(match, ", "))
	}
	for _, ext := range []string{".yaml", ".yml"} {
		if data, err := examplesFS.ReadFile("examples/" + match[0] + ext); err == nil {
			return source{display: "@examples/" + match[0] + ext, origin: "@examples/" + match[0], data: data}, nil
		}
	}
	return source{}, fmt.Errorf("built-in config %q: not readable", name)
}

// suggestExample returns the built-in a mistyped name most likely meant, or "": the closest full
// name within a few typos, else the closest base name (the name may be given either way).
func suggestExample(clean string, all []string) string {
	if s := suggest(clean, all); s != "" {
		return s
	}
	byBase := map[string][]string{}
	var bases []string
	for _, n := range all {
		b := path.Base(n)
		if len(byBase[b]) == 0 {
			bases = append(bases, b)
		}
		byBase[b] = append(byBase[b], n)
	}
	if b := suggest(path.Base(clean), bases); b != "" && len(byBase[b]) == 1 {
		return byBase[b][0]
	}
	return ""
}

// Description is a config's first line when it is a comment ("# Two GPT-5 agents with ..."),
// without the "#": what `configs list` shows for a built-in (every built-in has one).
func Description(data []byte) string {
	first, _, _ := strings.Cut(string(data), "\n")
	first = strings.TrimSpace(strings.TrimSuffix(first, "\r"))
	if !strings.HasPrefix(first, "#") {
		return ""
	}
	return strings.TrimSpace(strings.TrimLeft(first, "#"))
}
