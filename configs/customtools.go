package configs

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// CustomToolPrefix starts the name of every custom tool as offered to a model (MassGen's
// custom_tool__<name>).
const CustomToolPrefix = "custom_tool__"

// maxToolName is the longest tool name every provider accepts (OpenAI's limit).
const maxToolName = 64

// CustomTool is one entry of a backend's custom_tools: Python functions of one file offered as
// tools (MassGen's format). name, function, description, parameters and preset_args take one
// value, shared by every function, or a list with one value per function.
type CustomTool struct {
	Name        StringList `yaml:"name,omitempty" json:"name,omitempty"`
	Function    StringList `yaml:"function,omitempty" json:"function,omitempty"`
	Path        string     `yaml:"path,omitempty" json:"path,omitempty"`
	Description StringList `yaml:"description,omitempty" json:"description,omitempty"`
	PresetArgs  any        `yaml:"preset_args,omitempty" json:"preset_args,omitempty"`
	Category    string     `yaml:"category,omitempty" json:"category,omitempty"`
	// Parameters is a JSON schema for the function's arguments (massgen's own key): without
	// it the schema is read from the function's signature, type hints and docstring.
	Parameters any `yaml:"parameters,omitempty" json:"parameters,omitempty"`
	// TimeoutSeconds bounds one call (massgen's own key; default DefaultCustomToolTimeout).
	TimeoutSeconds int `yaml:"timeout_seconds,omitempty" json:"timeout_seconds,omitempty"`
	// Env are environment variables for the tool's process (massgen's own key): commands get
	// none of massgen's secrets otherwise (write OPENAI_API_KEY: ${OPENAI_API_KEY}).
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`

	// builtinProblem says why an entry without path: names no built-in function massgen found
	// (builtintools.go).
	builtinProblem string
}

// DefaultCustomToolTimeout bounds a custom tool call whose entry sets no timeout_seconds, in seconds.
const DefaultCustomToolTimeout = 300

// StringList is a YAML string or list of strings.
type StringList []string

// UnmarshalYAML takes a scalar or a list of scalars.
func (s *StringList) UnmarshalYAML(n *yaml.Node) error {
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			*s = nil
			return nil
		}
		*s = StringList{n.Value}
		return nil
	case yaml.SequenceNode:
		out := make(StringList, 0, len(n.Content))
		for _, it := range n.Content {
			it = deref(it)
			if it.Kind != yaml.ScalarNode || it.Tag == "!!null" {
				return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: expected a string, found %s", it.Line, kindName(it))}}
			}
			out = append(out, it.Value)
		}
		*s = out
		return nil
	}
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: expected a string or a list of strings, found %s", n.Line, kindName(n))}}
}

// CustomFunction is one function of a custom_tools entry, as offered: what the entry says of
// it, each shared-or-listed value picked for it.
type CustomFunction struct {
	// Name is the tool's name as offered: custom_tool__<name, or the function's name>.
	Name     string
	Function string
	// Path is the .py file, absolute after Load.
	Path        string
	Description string
	// Parameters is the configured JSON schema (nil: read from the function).
	Parameters map[string]any
	// Preset are arguments the config fixes: hidden from the model, which cannot override them.
	Preset map[string]any
	// TimeoutSeconds bounds one call.
	TimeoutSeconds int
	// Env is added to the process's environment.
	Env map[string]string
	// Key is the entry's key path (agents[0].backend.custom_tools[1]); FunctionKey the
	// function's (…function or …function[2]).
	Key, FunctionKey string
}

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// CustomFunctions expands agent i's custom_tools into one CustomFunction per function. Errors
// name the key at fault; an entry with errors yields no function.
func (c *Config) CustomFunctions(i int) ([]CustomFunction, []Problem) {
	return c.customFunctions(i, func(key, msg string) Problem { return c.problem(key, "", "%s", msg) })
}

func (c *Config) customFunctions(i int, problem func(key, msg string) Problem) ([]CustomFunction, []Problem) {
	if i < 0 || i >= len(c.Agents) {
		return nil, nil
	}
	var out []CustomFunction
	var probs []Problem
	seen := map[string]string{}
	for j, t := range c.Agents[i].Backend.CustomTools {
		key := fmt.Sprintf("agents[%d].backend.custom_tools[%d]", i, j)
		fns, ps := expandCustomTool(t, key)
		for _, p := range ps {
			probs = append(probs, problem(p.key, p.key+": "+p.msg))
		}
		for _, f := range fns {
			if other, dup := seen[f.Name]; dup {
				probs = append(probs, problem(f.FunctionKey, fmt.Sprintf("%s: two custom tools are named %s (the other is %s); give one a different name with name:", f.FunctionKey, f.Name, other)))
				continue
			}
			seen[f.Name] = f.FunctionKey
			out = append(out, f)
		}
	}
	return out, probs
}

type keyProblem struct{ key, msg string }

func expandCustomTool(t CustomTool, key string) ([]CustomFunction, []keyProblem) {
	var probs []keyProblem
	bad := func(k, format string, a ...any) { probs = append(probs, keyProblem{k, fmt.Sprintf(format, a...)}) }
	n := len(t.Function)
	if n == 0 {
		bad(key, "missing function: (the name of a function in path:, or a list of names)")
		return nil, probs
	}
	if strings.TrimSpace(t.Path) == "" {
		msg := t.builtinProblem
		if msg == "" {
			msg = fmt.Sprintf("missing path: %s would be one of MassGen's built-in tool functions, found only in a MassGen checkout; copy the function into a .py file and name it in path:", strings.Join(t.Function, ", "))
		}
		bad(key, "%s", msg)
	} else if !strings.HasSuffix(t.Path, ".py") {
		bad(key+".path", "%q is not a .py file (MassGen's module names are not supported; name the file)", t.Path)
	}
	pick := func(name string, vals StringList) []string {
		switch len(vals) {
		case 0:
			return make([]string, n)
		case 1:
			if n == 1 || name != "name" {
				out := make([]string, n)
				for i := range out {
					out[i] = vals[0]
				}
				return out
			}
		case n:
			return vals
		}
		bad(key+"."+name, "%d values for %d functions: give one value for all (not for name:) or one per function", len(vals), n)
		return nil
	}
	names, descs := pick("name", t.Name), pick("description", t.Description)
	presets := pickMaps(t.PresetArgs, n, key+".preset_args", bad)
	params := pickMaps(t.Parameters, n, key+".parameters", bad)
	for k, m := range params {
		if typ, ok := m["type"]; ok && typ != "object" {
			bad(key+".parameters", "the schema of %s has type %v: the arguments are a JSON object (type: object)", t.Function[k], typ)
			break
		}
	}
	if t.TimeoutSeconds < 0 {
		bad(key+".timeout_seconds", "must not be negative (got %d)", t.TimeoutSeconds)
	}
	for _, k := range slices.Sorted(maps.Keys(t.Env)) {
		switch {
		case !envNameRE.MatchString(k):
			bad(key+".env."+k, "%q is not an environment variable name", k)
		case k == "HOME" || k == "TMPDIR" || strings.HasPrefix(k, "MASSGEN_"):
			bad(key+".env."+k, "%s is set by massgen for the tool's process", k)
		}
	}
	var out []CustomFunction
	for k, fn := range t.Function {
		fk := key + ".function"
		if len(t.Function) > 1 || len(t.Name) > 1 {
			fk = fmt.Sprintf("%s.function[%d]", key, k)
		}
		if !pyIdentRE.MatchString(fn) {
			bad(fk, "%q is not a Python function name", fn)
			continue
		}
		name := fn
		if names != nil && strings.TrimSpace(names[k]) != "" {
			name = strings.TrimSpace(names[k])
		}
		full := name
		if !strings.HasPrefix(full, CustomToolPrefix) {
			full = CustomToolPrefix + name
		}
		if !toolNameRE.MatchString(full) || len(full) > maxToolName {
			bad(fk, "tool name %q: use letters, digits, '_' and '-' only, at most %d characters with the %s prefix", name, maxToolName, CustomToolPrefix)
			continue
		}
		f := CustomFunction{Name: full, Function: fn, Path: t.Path, Key: key, FunctionKey: fk, TimeoutSeconds: t.TimeoutSeconds, Env: t.Env}
		if f.TimeoutSeconds == 0 {
			f.TimeoutSeconds = DefaultCustomToolTimeout
		}
		if descs != nil {
			f.Description = strings.TrimSpace(descs[k])
		}
		if presets != nil {
			f.Preset = presets[k]
		}
		if params != nil {
			f.Parameters = params[k]
		}
		out = append(out, f)
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return out, nil
}

var (
	pyIdentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// pickMaps reads a mapping shared by n functions, or a list of n mappings (nil items allowed).
func pickMaps(v any, n int, key string, bad func(k, format string, a ...any)) []map[string]any {
	if v == nil {
		return nil
	}
	asMap := func(x any, k string) (map[string]any, bool) {
		switch m := x.(type) {
		case nil:
			return nil, true
		case map[string]any:
			return m, true
		}
		bad(k, "expected a mapping, found %T", x)
		return nil, false
	}
	out := make([]map[string]any, n)
	if list, ok := v.([]any); ok {
		if len(list) != n {
			bad(key, "%d mappings for %d functions: give one mapping for all or one per function", len(list), n)
			return nil
		}
		for i, it := range list {
			m, ok := asMap(it, fmt.Sprintf("%s[%d]", key, i))
			if !ok {
				return nil
			}
			out[i] = m
		}
		return out
	}
	m, ok := asMap(v, key)
	if !ok {
		return nil
	}
	for i := range out {
		out[i] = m
	}
	return out
}

// validateCustomTools reports custom_tools entries that cannot be read (validate, before the
// config knows its lines).
func (c *Config) validateCustomTools(d *document, i int) []Problem {
	_, probs := c.customFunctions(i, func(key, msg string) Problem {
		return Problem{File: d.file, Line: d.lineOf(key), Key: key, Message: msg}
	})
	return probs
}

// preflightCustomTools reports what keeps agent i's custom tools from running here: no
// python3 on PATH, a file that does not exist. Whether the function exists and its imports
// resolve is learnt by running python3 (internal/customtools).
func (c *Config) preflightCustomTools(i int, lookPath func(string) (string, error)) []Problem {
	fns, _ := c.CustomFunctions(i)
	if len(fns) == 0 {
		return nil
	}
	var probs []Problem
	if _, err := lookPath("python3"); err != nil {
		names := make([]string, len(fns))
		for k, f := range fns {
			names[k] = f.Name
		}
		key := fmt.Sprintf("agents[%d].backend.custom_tools", i)
		probs = append(probs, c.problem(key, "", "%s: the custom tools %s need python3, which is not on PATH (install Python 3)", key, strings.Join(names, ", ")))
	}
	checked := map[string]bool{}
	for _, f := range fns {
		if checked[f.Key] {
			continue
		}
		checked[f.Key] = true
		if err := customToolFile(f.Path); err != nil {
			probs = append(probs, c.problem(f.Key+".path", "", "%s.path: custom tool %s: %v", f.Key, f.Name, err))
		}
	}
	return probs
}

// customToolFile checks that path is a regular file that can be read. A symbolic link is
// refused: the file is made readable to the tool's sandboxed process, and a link could be
// pointed elsewhere by an agent that may write where it lies.
func customToolFile(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		target, _ := filepath.EvalSymlinks(path)
		return fmt.Errorf("%s is a symbolic link: point path: at the file itself (%s)", path, target)
	case errors.Is(err, fs.ErrNotExist):
		if strings.Contains(filepath.ToSlash(path), "massgen/tool/") {
			return fmt.Errorf("%s does not exist: it is a file from MassGen's repository; run from a MassGen checkout or copy the file and point path: at it", path)
		}
		return fmt.Errorf("%s does not exist", path)
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// relocateCustomTools makes agent a's custom tool paths absolute: against the current
// directory, as MassGen resolves them.
func (c *Config) relocateCustomTools(a *Agent, home string) {
	for j := range a.Backend.CustomTools {
		t := &a.Backend.CustomTools[j]
		if p := strings.TrimSpace(t.Path); p != "" {
			t.Path = resolveAgainst(p, c.BaseDir, home)
		}
	}
}

// redactCustomTools is tools with their env values masked (a copy when there are any).
func redactCustomTools(tools []CustomTool) []CustomTool {
	if !slices.ContainsFunc(tools, func(t CustomTool) bool { return len(t.Env) > 0 }) {
		return tools
	}
	out := slices.Clone(tools)
	for j := range out {
		if len(out[j].Env) == 0 {
			continue
		}
		env := make(map[string]string, len(out[j].Env))
		for k := range out[j].Env {
			env[k] = redacted
		}
		out[j].Env = env
	}
	return out
}
